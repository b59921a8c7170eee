"""The documentation site builds, strictly, and documents every public name.

`mkdocs build --strict` (mkdocs.yml) fails on a broken link or anchor, a page left out of the
nav and an API directive that names nothing. What it cannot see is checked here against the
build: every name of each public module (its `__all__`; for `zarrkit.errors` and
`zarrkit.config`, which have none, the public names defined there) has a docstring, as
mkdocstrings reads it from the source, and a place in the API reference (the site's
`objects.inv`, which lists every object the reference renders)."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import time
import types
import zlib
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]

PUBLIC_MODULES = [
    "zarrkit",
    "zarrkit.api",
    "zarrkit.abc",
    "zarrkit.helpers",
    "zarrkit.errors",
    "zarrkit.config",
    "zarrkit.storage",
    "zarrkit.codecs",
    "zarrkit.transfer",
    "zarrkit.dask",
    "zarrkit.xarray",
    "zarrkit.zarr_python",
    "zarrkit_testing",
]

#: names that are not objects of their own to document (the version string)
NOT_DOCUMENTED = {"zarrkit.__version__"}

#: the calls a user meets first: their docstrings say what each argument is and which zarrkit
#: errors they raise (a Google-style `Args:` and `Raises:` section)
ENTRY_POINTS = [
    "zarrkit.api.synchronous.open",
    "zarrkit.api.synchronous.open_array",
    "zarrkit.api.synchronous.open_group",
    "zarrkit.api.synchronous.open_consolidated",
    "zarrkit.api.synchronous.consolidate_metadata",
    "zarrkit.api.synchronous.create_group",
    "zarrkit.api.creation.arrays.create_array",
    "zarrkit.array.Array.__getitem__",
    "zarrkit.array.Array.__setitem__",
    "zarrkit.array.Array.get_many",
    "zarrkit.array.Array.set_many",
    "zarrkit.array.Array.resize",
    "zarrkit.api.arrays.Array.append",
    "zarrkit.hierarchy.Group.__getitem__",
    "zarrkit.api.groups.Group.create_array",
    "zarrkit.hierarchy.Group.create_group",
    "zarrkit.hierarchy.Group.members",
    "zarrkit.api.groups.Group.move",
    "zarrkit.store_opening.open_store",
]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    started = time.monotonic()
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        # (Material's notice of its own end of life is not a warning about the site)
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert build.returncode == 0, build.stderr[-5000:]
    assert "WARNING" not in build.stderr, build.stderr[-5000:]
    print(f"site built in {time.monotonic() - started:.1f} s")
    return out


def public_names() -> list[tuple[str, str, Any]]:
    """(module, name, object) for every public name of the public modules."""
    found = []
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        names = getattr(module, "__all__", None)
        if names is None:
            names = [
                n
                for n, v in vars(module).items()
                if not n.startswith("_") and getattr(v, "__module__", None) == module_name
            ]
        found.extend(
            (module_name, name, getattr(module, name))
            for name in names
            if f"{module_name}.{name}" not in NOT_DOCUMENTED
        )
    return found


def canonical(module: str, name: str, value: Any) -> str:
    """Where the object is defined (`zarrkit.open` -> `zarrkit.api.synchronous.open`), which is
    the path the reference renders it under; a value that is no class or function is
    documented where the module names it."""
    if isinstance(value, type | types.FunctionType) and "<" not in value.__qualname__:
        return f"{value.__module__}.{value.__qualname__}"
    return f"{module}.{name}"


def inventory(site: Path) -> set[str]:
    raw = (site / "objects.inv").read_bytes()
    body = zlib.decompress(raw.split(b"\n", 4)[4]).decode()
    return {line.split(" ", 1)[0] for line in body.splitlines() if line}


def test_the_site_builds_strictly(site: Path) -> None:
    for page in ["index.html", "guide/arrays.html", "api/zarrkit.html", "changelog.html"]:
        assert (site / page).is_file(), page
    # the changelog page is CHANGELOG.md itself, included
    assert "Keep a Changelog" in (site / "changelog.html").read_text(encoding="utf-8")


def test_every_public_name_has_a_docstring(site: Path) -> None:
    import griffe

    loader = griffe.GriffeLoader(search_paths=[str(ROOT / "build" / "docs-src")])
    for package in ("zarrkit", "zarrkit_testing"):
        loader.load(package)
    collection = loader.modules_collection
    missing = []
    for module, name, value in public_names():
        where = canonical(module, name, value)
        for path in (where, f"{module}.{name}"):
            try:
                found = collection[path]
                target = found.final_target if found.is_alias else found
                break
            except (KeyError, griffe.AliasResolutionError, griffe.CyclicAliasError):
                continue
        else:
            missing.append(f"{module}.{name} (not found at {where})")
            continue
        if not (target.docstring and target.docstring.value.strip()):
            missing.append(f"{module}.{name} ({target.path})")
    assert not missing, "public names without a docstring:\n" + "\n".join(missing)


def test_every_public_name_is_in_the_api_reference(site: Path) -> None:
    rendered = inventory(site)
    absent = [
        f"{module}.{name}"
        for module, name, value in public_names()
        if canonical(module, name, value) not in rendered and f"{module}.{name}" not in rendered
    ]
    assert not absent, "public names the API pages do not show:\n" + "\n".join(absent)


def test_the_entry_points_say_their_arguments_and_errors(site: Path) -> None:
    import griffe

    import zarrkit.errors

    loader = griffe.GriffeLoader(search_paths=[str(ROOT / "build" / "docs-src")])
    collection = loader.load("zarrkit").modules_collection
    problems = []
    for path in ENTRY_POINTS:
        function = collection[path]
        sections = {
            section.kind.value: section
            for section in function.docstring.parse("google")
            if section.kind.value in ("parameters", "raises")
        }
        wanted = {p.name for p in function.parameters if p.name not in ("self", "args", "kwargs")}
        given = {p.name.lstrip("*") for p in getattr(sections.get("parameters"), "value", [])}
        if wanted - given:
            problems.append(f"{path}: arguments not described: {sorted(wanted - given)}")
        raised = [str(r.annotation) for r in getattr(sections.get("raises"), "value", [])]
        if not raised:
            problems.append(f"{path}: no Raises section")
        unknown = [r for r in raised if not hasattr(zarrkit.errors, r.rsplit(".", 1)[-1])]
        if unknown:
            problems.append(f"{path}: raises what zarrkit.errors does not have: {unknown}")
    assert not problems, "\n".join(problems)
