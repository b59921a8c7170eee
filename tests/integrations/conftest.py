"""What xarray's own test modules need of pytest when zarrkit's suite runs their classes
(tests/integrations/test_xarray_backend_suite.py): the marks xarray's repository registers in
its own configuration, which its wheel does not ship, and its `skip_if_param` mark; and the
tables of that module (`NOT_APPLICABLE` and its `duplicate()`: deselected; `XFAIL`: strict
xfails), each entry with its reason, applied here and the deselections listed with their
reasons in the summary."""

from __future__ import annotations

from collections import Counter

import pytest

_DESELECTED = pytest.StashKey[Counter[str]]()

#: marks xarray's tests use that zarrkit's pyproject does not declare (--strict-markers)
_XARRAY_MARKS = {
    "asyncio": "xarray's async tests (run by pytest-asyncio, which zarrkit does not install)",
    "skip_if_param": "xarray's: skip a parametrized test for the given parameter values",
    "flaky": "xarray's: a test its CI reruns",
    "skip_with_dask_array": "xarray's: a test that does not apply to dask arrays",
}


def pytest_configure(config: pytest.Config) -> None:
    for name, text in _XARRAY_MARKS.items():
        config.addinivalue_line("markers", f"{name}: {text}")


def _listed(table: dict[str, str], item: pytest.Item) -> str | None:
    """The reason `table` gives for `item`: keyed by a test's name ("test_x", every
    parametrization) or by the start of one parametrization's name ("test_x[2-")."""
    name = item.name
    for key, reason in table.items():
        if name == key or name.partition("[")[0] == key or ("[" in key and name.startswith(key)):
            return reason
    return None


@pytest.hookimpl(trylast=True)  # after -k and -m, so the summary counts only what they kept
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """xarray's `skip_if_param(reason=..., condition=..., **params)`: skip where the test's
    parameters take all of the given values (as xarray's own conftest does). Then the
    module's `NOT_APPLICABLE` and `XFAIL` tables."""
    kept, dropped = [], []
    reasons: Counter[str] = Counter()
    for item in items:
        module = getattr(item, "module", None)
        not_applicable = _listed(getattr(module, "NOT_APPLICABLE", {}), item)
        if not_applicable is None and hasattr(module, "duplicate"):
            not_applicable = module.duplicate(item)
        if not_applicable is not None:
            dropped.append(item)
            reasons[not_applicable] += 1
            continue
        kept.append(item)
        xfail = _listed(getattr(module, "XFAIL", {}), item)
        if xfail is not None:
            item.add_marker(pytest.mark.xfail(reason=xfail, strict=True))
        callspec = getattr(item, "callspec", None)
        for mark in item.iter_markers("skip_if_param"):
            wanted = {k: v for k, v in mark.kwargs.items() if k not in ("reason", "condition")}
            if not mark.kwargs.get("condition", True) or callspec is None:
                continue
            if all(callspec.params.get(k, object()) == v for k, v in wanted.items()):
                item.add_marker(pytest.mark.skip(reason=mark.kwargs.get("reason", "")))
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
        config.stash[_DESELECTED] = reasons


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    reasons = terminalreporter.config.stash.get(_DESELECTED, None)
    if reasons:
        terminalreporter.section("xarray's tests deselected, and why")
        for reason, count in reasons.most_common():
            terminalreporter.write_line(f"{count:4d}  {reason}")
