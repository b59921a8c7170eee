"""zarrkit's own plugins (`plugins/`) and the example packages (`examples/`) see exactly what a
third party sees: they import only the plugin-author surface `zarrkit.abc` and `zarrkit.errors`
(plus their own package; tests also the user API and `zarrkit_testing`). Every import is
checked, inside functions too, relative ones resolved, and `importlib.import_module` of a
literal name: a plugin that reaches into a kernel module fails here, naming file and line."""

from __future__ import annotations

import ast
import importlib.util
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: what any plugin module may import of zarrkit
PUBLIC = ("zarrkit.abc", "zarrkit.errors")
#: what a plugin's tests may import besides: the user API, its settings and the test suites
FOR_TESTS = ("zarrkit", "zarrkit.config", "zarrkit_testing")


@dataclass(frozen=True)
class Source:
    """A file to check: its path, the package it belongs to (for relative imports), the
    packages it counts as its own, and whether it is a test."""

    path: Path
    package: str
    own: tuple[str, ...]
    is_test: bool


def sources() -> Iterator[Source]:
    for path in sorted((ROOT / "plugins").rglob("*.py")):
        parts = path.relative_to(ROOT / "plugins").with_suffix("").parts
        package = ".".join(("zarrkit.plugins", *parts[:-1]))
        yield Source(path, package, ("zarrkit.plugins",), False)
    for example in sorted(p for p in (ROOT / "examples").iterdir() if p.is_dir()):
        own = tuple(p.name for p in (example / "src").iterdir() if p.is_dir())
        for path in sorted((example / "src").rglob("*.py")):
            package = ".".join(path.parent.relative_to(example / "src").parts)
            yield Source(path, package, own, False)
        for path in sorted((example / "tests").rglob("*.py")):
            yield Source(path, "", own, True)


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def imported_modules(tree: ast.AST, package: str) -> Iterator[tuple[int, str]]:
    """(line, absolute module name) of every import in the tree, at any depth."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                if node.level > 1:
                    base = base[: len(base) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            for alias in node.names:
                # `from zarrkit import config` imports the module zarrkit.config
                full = f"{module}.{alias.name}"
                yield node.lineno, full if module == "zarrkit" and _is_module(full) else module
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, (ast.Attribute, ast.Name))
            and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id)
            in ("import_module", "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            yield node.lineno, node.args[0].value


def _within(module: str, roots: tuple[str, ...]) -> bool:
    return any(module == root or module.startswith(root + ".") for root in roots)


def violations(source: str, package: str, own: tuple[str, ...], is_test: bool) -> list[str]:
    """The imports of zarrkit modules in `source` outside what a plugin may use."""
    allowed = PUBLIC + own
    out = []
    for line, module in imported_modules(ast.parse(source), package):
        if module.split(".")[0] != "zarrkit" or _within(module, allowed):
            continue
        if is_test and (module in FOR_TESTS or _within(module, ("zarrkit_testing",))):
            continue
        if f"line {line}: {module}" not in out:
            out.append(f"line {line}: {module}")
    return out


def test_plugins_and_examples_import_only_the_public_surface() -> None:
    found = {}
    checked = 0
    for src in sources():
        checked += 1
        bad = violations(src.path.read_text(encoding="utf-8"), src.package, src.own, src.is_test)
        if bad:
            found[str(src.path.relative_to(ROOT))] = bad
    assert checked > 50  # every plugin module and both examples were looked at
    assert not found, f"kernel internals imported outside zarrkit.abc / zarrkit.errors: {found}"


@pytest.mark.parametrize(
    "snippet, package, expected",
    [
        ("from zarrkit.abc import Store, names\nfrom zarrkit.errors import StoreError", "", []),
        ("from zarrkit.codec_chain import CodecChain", "", ["line 1: zarrkit.codec_chain"]),
        ("import zarrkit.buffers", "", ["line 1: zarrkit.buffers"]),
        ("from zarrkit import forksafe", "", ["line 1: zarrkit.forksafe"]),
        # a function-level import, as the kernel's back doors used to be
        (
            "def f():\n    from zarrkit.store_opening import open_store\n    return open_store",
            "",
            ["line 2: zarrkit.store_opening"],
        ),
        # relative imports: inside the plugins package is fine, reaching up into the kernel not
        ("from .spellings import draft_uri", "zarrkit.plugins.codecs", []),
        ("from ...codec import Codec", "zarrkit.plugins.codecs", ["line 1: zarrkit.codec"]),
        (
            "import importlib\nimportlib.import_module('zarrkit.registry')",
            "",
            ["line 2: zarrkit.registry"],
        ),
        ("import numpy\nfrom zarrkit.plugins.codecs import bytes", "", []),
    ],
)
def test_the_check_catches_kernel_imports(snippet: str, package: str, expected: list) -> None:
    """The check itself fails on an import of a kernel module, wherever it is written."""
    assert violations(textwrap.dedent(snippet), package, ("zarrkit.plugins",), False) == expected


def test_tests_may_use_the_user_api_but_not_the_kernel() -> None:
    ok = "import zarrkit as zk\nfrom zarrkit import config\nfrom zarrkit_testing import CodecTests"
    assert violations(ok, "", (), True) == []
    # (zarrkit_testing is a distribution of its own, outside zarrkit: not the kernel's)
    assert violations(ok, "", (), False) == [
        "line 1: zarrkit",
        "line 2: zarrkit.config",
    ]
    assert violations("from zarrkit.registry import register", "", (), True) == [
        "line 1: zarrkit.registry"
    ]


def test_the_public_surface_names_only_what_exists() -> None:
    import zarrkit.abc

    missing = [name for name in zarrkit.abc.__all__ if not hasattr(zarrkit.abc, name)]
    assert not missing
