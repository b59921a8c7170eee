"""Type-check the installed layout of zarrkit with mypy.

The distribution maps folders onto one import package (`core/` is `zarrkit`, `plugins/` is
`zarrkit.plugins`, `integrations/dask` is `zarrkit.dask`, ...), which mypy cannot follow through
setuptools' editable-install finder. This script mirrors that mapping as a tree of symlinks under
`build/typecheck/`, runs `mypy -p zarrkit` (and the repository's other packages) on it, and prints errors under the real file paths.
Exit status is mypy's.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TREE = ROOT / "build" / "typecheck"
#: outside TREE, which is rebuilt each run, so mypy re-checks only what changed
CACHE = ROOT / "build" / "mypy_cache"


#: distributions of this repository besides zarrkit, checked with it: import name -> folder
SIDE_PACKAGES = {"zarrkit_testing": ROOT / "testing" / "zarrkit_testing"}


def package_dirs() -> dict[str, Path]:
    """The `package-dir` table of pyproject, as import name -> folder, and the side packages."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    mapping = config["tool"]["setuptools"]["package-dir"]
    return {**{name: ROOT / folder for name, folder in mapping.items()}, **SIDE_PACKAGES}


def build_tree(tree: Path = TREE) -> None:
    """Symlink every mapped folder's entries at its import path under `tree` (the tests'
    import-linter check builds one of its own)."""
    if tree.exists():
        subprocess.run(["rm", "-rf", str(tree)], check=True)
    dirs = package_dirs()
    for name in sorted(dirs, key=lambda n: n.count(".")):
        target = tree.joinpath(*name.split("."))
        target.mkdir(parents=True, exist_ok=True)
        for entry in dirs[name].iterdir():
            if entry.name == "__pycache__" or (target / entry.name).exists():
                continue
            if entry.is_dir() and f"{name}.{entry.name}" in dirs:
                continue  # mapped separately; its own folder is linked entry by entry
            (target / entry.name).symlink_to(entry)


def main(argv: list[str]) -> int:
    build_tree()
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(CACHE),
            "-p",
            "zarrkit",
            *(arg for name in SIDE_PACKAGES for arg in ("-p", name)),
            *argv,
        ],
        cwd=TREE,
        capture_output=True,
        text=True,
    )
    dirs = package_dirs()
    output = result.stdout + result.stderr
    for name in sorted(dirs, key=lambda n: -n.count(".")):
        prefix = "/".join(name.split(".")) + "/"
        folder = str(dirs[name].relative_to(ROOT)) + "/"
        output = "\n".join(
            folder + line[len(prefix) :] if line.startswith(prefix) else line
            for line in output.splitlines()
        )
    print(output)
    return result.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
