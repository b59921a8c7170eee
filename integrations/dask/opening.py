"""What the dask functions accept as a place: a URL or path, a store, or an array."""

from __future__ import annotations

import os
from typing import Any

import zarrkit
from zarrkit.errors import NodeNotFoundError


def open_source(source: Any, path: str, *, mode: str, storage_options: dict | None,
                **create: Any) -> Any:
    """The zarrkit Array at `source` / `path` (an Array given is used as it is)."""
    if isinstance(source, zarrkit.Array):
        if path or storage_options:
            raise TypeError("path= and storage_options= are for a URL or a store, not an "
                            "open zarrkit Array")
        return source
    if isinstance(source, zarrkit.Group):
        return _member(source, path)
    if isinstance(source, os.PathLike):
        source = os.fspath(source)
    return zarrkit.open_array(source, path=path, mode=mode, storage_options=storage_options,
                              **create)


def _member(group: Any, path: str) -> Any:
    node = group[path] if path else group
    if not isinstance(node, zarrkit.Array):
        raise NodeNotFoundError(node.path or "/", group.store, what="array (found a group)")
    return node
