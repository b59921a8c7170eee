"""mkdocs hooks of the documentation site (mkdocs.yml names this file).

The distribution maps folders onto one import package (`core/` is `zarrkit`, `api/` is
`zarrkit.api`, `integrations/dask` is `zarrkit.dask`, ...), which mkdocstrings' static reader
(griffe) cannot follow through setuptools' editable-install finder. Before each build this lays
the installed layout out as a tree of symlinks under `build/docs-src/` (as scripts/typecheck.py
does for mypy), and mkdocs.yml points mkdocstrings at it: the API reference is read from the
source without importing zarrkit or its optional dependencies.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TREE = ROOT / "build" / "docs-src"


def on_startup(command: str, dirty: bool) -> None:
    """Lay the tree out before any plugin's `on_config`: mkdocstrings looks its search paths up
    there, and one that does not exist yet is dropped (griffe would then find the editable
    install's `zarrkit`, which lacks the packages mapped from other folders)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from typecheck import build_tree
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    build_tree(TREE)
