"""The import boundaries of the architecture, declared as import-linter contracts in
pyproject.toml (`[tool.importlinter]`) and checked here on the installed layout: plugins and
the example packages use only the plugin contract, apps and integrations only the public
modules, the kernel names no plugin, API layer, app or integration, creation sits below the
hierarchy and the hierarchy below the API layer, indexing stands apart from the kernel, and no
siblings import each other in a circle.

import-linter reads a package's files where it is installed; zarrkit's folders map onto one
package (`[tool.setuptools] package-dir`), which setuptools' editable finder hides, so the check
runs on the tree of symlinks that mypy's script lays out (`scripts/typecheck.py`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import typecheck  # noqa: E402  (the layout mypy checks, from the project's own script)

CONTRACTS = {
    c["id"]: c
    for c in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"][
        "contracts"
    ]
}
#: kernel modules a plugin may use, and those apps and integrations may use besides
PLUGIN_CONTRACT = {"zarrkit.abc", "zarrkit.helpers", "zarrkit.errors"}
PUBLIC = PLUGIN_CONTRACT | {"zarrkit.config", "zarrkit.registry", "zarrkit.hooks"}
#: the kernel modules `zarrkit.abc` may build on: they import no contract
FOUNDATIONS = {
    f"zarrkit.{name}"
    for name in (
        "errors",
        "config",
        "entry_points",
        "executor",
        "forksafe",
        "buffers",
        "hooks",
        "documents",
    )
}


def kernel_modules() -> set[str]:
    """Every module and package directly in core/, as `zarrkit.<name>`."""
    core = ROOT / "core"
    return {
        f"zarrkit.{path.stem if path.is_file() else path.name}"
        for path in core.iterdir()
        if (path.suffix == ".py" and not path.name.startswith("__"))
        or (path.is_dir() and (path / "__init__.py").exists())
    }


def lint_imports(tree: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run(
        [
            str(Path(sys.executable).parent / "lint-imports"),
            "--config",
            str(ROOT / "pyproject.toml"),
            "--no-cache",
            "--no-logo",
        ],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    built = tmp_path / "tree"
    typecheck.build_tree(built)
    return built


def test_the_import_contracts_hold(tree: Path) -> None:
    result = lint_imports(tree)
    if result.returncode != 0:
        pytest.fail(f"import-linter:\n{result.stdout}{result.stderr}", pytrace=False)
    assert f"Contracts: {len(CONTRACTS)} kept, 0 broken." in result.stdout


def test_each_contract_names_every_kernel_module() -> None:
    """A kernel module left out of a list would be open to every importer: the lists are the
    kernel's modules minus what each kind of importer may use."""
    kernel = kernel_modules()
    assert len(kernel) > 20
    assert set(CONTRACTS["kernel"]["source_modules"]) == kernel
    plugins_forbidden: Any = set(CONTRACTS["plugins"]["forbidden_modules"])
    assert kernel - PLUGIN_CONTRACT <= plugins_forbidden
    assert plugins_forbidden & PLUGIN_CONTRACT == set()
    apps_forbidden = set(CONTRACTS["apps"]["forbidden_modules"])
    assert kernel - PUBLIC <= apps_forbidden
    assert apps_forbidden & PUBLIC == set()
    # the contracts build on the kernel's foundations only, so the kernel can import them
    abc_forbidden = set(CONTRACTS["abc"]["forbidden_modules"])
    assert abc_forbidden == kernel - FOUNDATIONS - {"zarrkit.abc"} | {"zarrkit.helpers"}
    # indexing (zarrkit.indexing, its own folder) stands apart from the kernel but for errors
    assert set(CONTRACTS["indexing"]["forbidden_modules"]) >= kernel - {"zarrkit.errors"}


@pytest.mark.parametrize(
    "module, source, broken",
    [
        # a plugin reaching into the kernel's registry instead of the contract
        ("plugins/_probe.py", "from zarrkit import registry\n", "plugins and the example"),
        # the kernel naming a concrete store
        ("engine/_probe.py", "from zarrkit.plugins.stores import memory\n", "the kernel names no"),
        # creation reaching up into the hierarchy, inside a function
        ("creation/_probe.py", "def f():\n    from zarrkit import hierarchy\n", "creation sits"),
        # two plugin modules importing each other
        ("plugins/_probe.py", "from zarrkit.plugins import _probe2\n", "no import cycles"),
    ],
)
def test_a_broken_boundary_fails_the_check(
    tree: Path, module: str, source: str, broken: str
) -> None:
    _add(tree / "zarrkit" / module, source)
    _add(tree / "zarrkit" / "plugins" / "_probe2.py", "from zarrkit.plugins import _probe\n")
    result = lint_imports(tree)
    assert result.returncode != 0
    broken_lines = result.stdout.split("Broken contracts", 1)[1]
    assert broken in broken_lines.replace("\n", " ")


def _add(path: Path, source: str) -> None:
    """Write a module into the tree, never through a symlink into the repository: a linked
    folder on the way is replaced by a copy first."""
    folder = path.parent
    if folder.is_symlink():
        target = folder.resolve()
        folder.unlink()
        shutil.copytree(target, folder, symlinks=True)
    assert not folder.is_symlink()
    path.write_text(source)


def test_the_public_surface_names_only_what_exists() -> None:
    import zarrkit.abc

    missing = [name for name in zarrkit.abc.__all__ if not hasattr(zarrkit.abc, name)]
    assert not missing


def test_importing_the_kernel_leaves_the_applications_unimported() -> None:
    """At run time too: importing every kernel module loads no app, integration, plugin or
    the API layer (which `import zarrkit` re-exports lazily)."""
    core = ROOT / "core"
    modules = sorted(
        ".".join(("zarrkit", *path.relative_to(core).with_suffix("").parts)).removesuffix(
            ".__init__"
        )
        for path in core.rglob("*.py")
        if path.name != "__main__.py"
    )
    outside = ("zarrkit.cli", "zarrkit.transfer", "zarrkit.plugins", "zarrkit.dask")
    outside += ("zarrkit.xarray", "zarrkit.zarr_python", "zarrkit.api", "zarrkit.views")
    script = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        f"print(sorted(n for n in sys.modules if n.startswith({outside!r})))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert len(modules) > 40
    assert result.stdout.strip() == "[]"
