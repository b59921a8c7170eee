"""The `zarrkit` command line (also `python -m zarrkit`): an application on zarrkit's public
API, shipped in the same distribution but outside the kernel (the kernel never imports it).

Commands:
  plugins   list installed extensions and hook plugins; `--check` loads and verifies them
  convert   convert a hierarchy to another zarr format
  copy      copy a hierarchy to another store in the same format
"""

from .main import build_parser, main

__all__ = ["build_parser", "main"]
