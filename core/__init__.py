"""zarrkit: Zarr arrays and groups, as a small kernel plus entry-point plugins."""

from __future__ import annotations

__version__ = "0.1.0"

_API = {
    "create_array", "open_array", "create_group", "open_group", "open", "Array", "Group",
}


def __getattr__(name: str):
    if name in _API:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'zarrkit' has no attribute {name!r}")
