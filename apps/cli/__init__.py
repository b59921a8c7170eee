"""The `zarrkit` command line (also `python -m zarrkit`): an application on zarrkit's public
API, shipped in the same distribution but outside the kernel (the kernel never imports it).

Commands:
  info      what an array or group is: format, data type, shapes, codecs, bytes stored, ratio
  tree      the hierarchy below a node, one line per member
  ls        the members of a group, one per line
  check     decode every chunk, verify checksums and shard indexes; exit 1 on any fault
  plugins   list installed extensions and hook plugins; `--check` loads and verifies them
  convert   convert a hierarchy to another zarr format
  copy      copy a hierarchy to another store in the same format
"""

from .main import build_parser, main

__all__ = ["build_parser", "main"]
