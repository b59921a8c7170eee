"""The kernel (`core/`, the package `zarrkit`) does not import the applications built on it
(`apps/`: `zarrkit.cli`, `zarrkit.transfer`): they may change or be left out without touching
it. `core/__main__.py` is a program entry, not a module anything imports."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "core"
APPS = ("zarrkit.cli", "zarrkit.transfer")


def imported_names(path: Path) -> set[str]:
    """Every module an import statement in `path` names, relative ones made absolute."""
    package = "zarrkit." + ".".join(path.relative_to(CORE).parent.parts)
    package = package.rstrip(".")
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            module = ".".join(p for p in (base, node.module or "") if p)
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


def test_no_kernel_module_imports_an_application() -> None:
    offenders = {
        str(path.relative_to(CORE)): sorted(n for n in imported_names(path) if n.startswith(APPS))
        for path in sorted(CORE.rglob("*.py"))
        if path.name != "__main__.py"
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_importing_the_kernel_leaves_the_applications_unimported() -> None:
    script = (
        "import importlib, pkgutil, sys, zarrkit\n"
        "for m in pkgutil.walk_packages(zarrkit.__path__, 'zarrkit.'):\n"
        "    if m.name.startswith(('zarrkit.cli', 'zarrkit.transfer', 'zarrkit.plugins',\n"
        "                          'zarrkit.dask', 'zarrkit.xarray', 'zarrkit.__main__')):\n"
        "        continue\n"
        "    importlib.import_module(m.name)\n"
        "print(sorted(n for n in sys.modules if n.startswith(('zarrkit.cli', 'zarrkit.transfer'))))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
