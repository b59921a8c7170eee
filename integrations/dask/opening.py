"""What the dask functions accept as a place: a URL or path, a store, a group, or an array."""

from __future__ import annotations

import os
from typing import Any

import zarrkit


def open_source(
    source: Any, path: str, *, mode: str, storage_options: dict | None, **create: Any
) -> Any:
    """The zarrkit Array at `source` / `path` (an Array given is used as it is; `path` in a
    Group is below the group), opened or created with `mode` as `zarrkit.open_array` does."""
    if isinstance(source, zarrkit.Array):
        if path or storage_options:
            raise TypeError(
                "path= and storage_options= are for a URL, a store or a group, "
                "not an open zarrkit Array"
            )
        return source
    if isinstance(source, zarrkit.Group):
        path = "/".join(p for p in (source.path, path.strip("/")) if p)
        source = source.store
    if isinstance(source, os.PathLike):
        source = os.fspath(source)
    return zarrkit.open_array(
        source, path=path, mode=mode, storage_options=storage_options, **create
    )
