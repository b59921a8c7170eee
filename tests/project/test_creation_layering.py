"""Creation sits below the hierarchy: `creation` imports neither `hierarchy` nor `api` (not
even inside a function), and `hierarchy` does not import `api`, so `Group.create_array`
reaches creation without an import cycle or a private name."""

from __future__ import annotations

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "core"


def imported(module: str) -> set[str]:
    """The kernel modules `core/<module>.py` (or every file of the package `core/<module>/`)
    imports anywhere in its body, relative or not; a package's imports of its own modules are
    not counted."""
    package = CORE / module
    paths = sorted(package.glob("*.py")) if package.is_dir() else [CORE / f"{module}.py"]
    found = set()
    for path in paths:
        found |= _imported_by(ast.parse(path.read_text(encoding="utf-8")), package.is_dir())
    return found


def _imported_by(tree: ast.AST, in_package: bool) -> set[str]:
    kernel_level = 2 if in_package else 1  # the relative level that reaches `zarrkit`
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level == kernel_level or base.startswith("zarrkit"):
                name = base.removeprefix("zarrkit").lstrip(".")
                found.add(name.split(".")[0] if name else "")
                if not name:
                    found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("zarrkit."):
                    found.add(alias.name.split(".")[1])
    return found


def test_creation_imports_neither_hierarchy_nor_api() -> None:
    assert {"hierarchy", "api"}.isdisjoint(imported("creation"))
    assert {"hierarchy", "api", "creation"}.isdisjoint(imported("paths"))


def test_hierarchy_does_not_import_api() -> None:
    uses = imported("hierarchy")
    assert "api" not in uses
    assert "creation" in uses  # Group.create_array calls creation's public functions


def test_group_create_array_uses_no_private_creation_name() -> None:
    source = (CORE / "hierarchy.py").read_text(encoding="utf-8")
    assert "_create_array_in" not in source and "_create_group_in" not in source
