"""Lazy dask arrays whose tasks read through zarrkit."""

from __future__ import annotations

import json
import os
from typing import Any

import dask.array as da
from dask.base import tokenize
from zarrkit.errors import SelectionError

from .opening import open_source


def from_zarrkit(
    source: Any,
    path: str = "",
    *,
    chunks: Any = None,
    storage_options: dict | None = None,
    name: str | None = None,
    inline_array: bool = False,
) -> da.Array:
    """A dask array reading the zarrkit array at `source` (a URL or path, a zarrkit Store, or
    a zarrkit Array) and `path` inside it, as `dask.array.from_zarr` does for zarr-python.

    `chunks` (anything `dask.array.from_array` takes) defaults to the stored chunks: the
    shards of a sharded array, so each task reads whole stored values and no two tasks read
    the same one. `inline_array` as in `dask.array.from_array`."""
    array = open_source(source, path, mode="r", storage_options=storage_options)
    if chunks is None:
        chunks = _stored_blocks(array)
    if name is None:
        name = "from-zarrkit-" + tokenize(_identity(array), chunks)
    lazy: da.Array = da.from_array(
        array,
        chunks=chunks,
        name=name,
        inline_array=inline_array,
        asarray=False,
        fancy=False,
        meta=_meta(array),
    )
    return lazy


def storage_chunks(array: Any) -> tuple[int, ...]:
    """The shape of the array's stored values: its shards, else its chunks."""
    grid = array.metadata.chunk_grid.uniform_chunk_shape
    if grid is None:
        raise SelectionError(
            f"array {array.name!r} has an irregular chunk grid: pass chunks= "
            f"to choose the dask blocks"
        )
    return tuple(max(1, int(n)) for n in grid)


def _stored_blocks(array: Any) -> tuple[int, ...] | tuple[tuple[int, ...], ...]:
    """Dask blocks that are the stored values: `storage_chunks`, or for an irregular grid its
    chunk lengths per dimension (dask takes blocks of varying lengths as they are)."""
    if array.metadata.chunk_grid.uniform_chunk_shape is not None:
        return storage_chunks(array)
    return tuple(sizes or (0,) for sizes in array.write_chunk_sizes)


def _identity(array: Any) -> str:
    """What names the data a task graph reads: store, path and metadata, so a graph is built
    once per array, not once per handle (a dask key must not change with the handle's id)."""
    store = array.store
    where = getattr(store, "url", None) or repr(store)
    document = json.dumps(array.metadata.to_json(), sort_keys=True, default=str)
    return f"{type(store).__name__}|{where}|{os.fspath(array.path)}|{document}"


def _meta(array: Any) -> Any:
    import numpy as np

    return np.empty((0,) * array.ndim, dtype=array.dtype)
