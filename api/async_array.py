"""`zarrkit.AsyncArray`: zarr-python 3's `AsyncArray`, the face of an array an event loop
awaits. It is the same array as `zarrkit.Array` (one handle, one chunk engine). Reads go
through the engine's awaited path, whose requests on an async store are the store's own
coroutines, and the reads of one array started in the same turn of the event loop are read
as one plan (`zarrkit.views.batched`: 100 windows gathered at once fetch each chunk, shard
index and byte range once); writes are `Array.write_awaitable`; metadata work (resizing,
counting stored chunks) runs on the I/O pool. `AsyncArray(array)` wraps a synchronous
array, `as_sync()` gives it back.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self

import numpy as np

from zarrkit.api.arrays import Array, ArrayInfo
from zarrkit.api.pooled import in_pool
from zarrkit.array import ArrayConfig, checked_out
from zarrkit.errors import ArgumentError
from zarrkit.views.batched import batched_read

#: what an `AsyncArray` shows of its array as it is, without I/O (zarr-python's properties)
_PROPERTIES = (
    "attrs",
    "basename",
    "cdata_shape",
    "chunks",
    "codecs",
    "compressors",
    "config",
    "data_type",
    "dimension_names",
    "dtype",
    "fill_value",
    "filters",
    "info",
    "metadata",
    "name",
    "nbytes",
    "nchunks",
    "ndim",
    "order",
    "path",
    "read_chunk_sizes",
    "read_only",
    "serializer",
    "shape",
    "shards",
    "size",
    "store",
    "write_chunk_sizes",
)


def _check_zarr_python_options(fields: Any, prototype: Any) -> None:
    """zarr-python's `fields` (structured dtypes) and `prototype` (its buffer classes):
    zarrkit reads into numpy arrays and has no field selection."""
    if fields is not None:
        raise ArgumentError("fields: zarrkit has no field selection; select from the result")
    if prototype is not None and type(prototype).__module__.split(".")[0] != "zarr":
        raise ArgumentError(f"prototype must be None, got {prototype!r}")


class AsyncArray:
    """An array whose reads, writes and store queries are coroutines (zarr-python's
    `AsyncArray`). `array` is the synchronous `zarrkit.Array` it is a face of."""

    __slots__ = ("_array",)

    # (properties of the synchronous face, made below from `_PROPERTIES`; no I/O)
    attrs: Any
    chunks: tuple[int, ...] | None
    dtype: np.dtype
    fill_value: Any
    metadata: Any
    name: str
    ndim: int
    path: str
    read_only: bool
    shape: tuple[int, ...]
    shards: tuple[int, ...] | None
    size: int
    store: Any

    def __init__(self, array: Array) -> None:
        if not isinstance(array, Array):
            raise ArgumentError(f"AsyncArray wraps a zarrkit.Array, got {type(array).__name__}")
        self._array = array

    def as_sync(self) -> Array:
        """The synchronous face of this array: the same handle and chunk engine."""
        return self._array

    @classmethod
    async def open(
        cls, store: Any, zarr_format: Any = 3, *, config: Any = None, path: str | None = ""
    ) -> AsyncArray:
        """The array at `path` in `store` (a path, URL or store object), read-only as
        zarr-python opens it, of `zarr_format` (None: any). Raises `NodeNotFoundError`
        when there is none, or a group."""
        from zarrkit.api.synchronous import open_array

        array = await in_pool(
            open_array, store, path=path, mode="r", zarr_format=zarr_format, config=config
        )
        return cls(array)

    def __repr__(self) -> str:
        return "<AsyncArray" + repr(self._array).removeprefix("<Array")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AsyncArray):
            return NotImplemented
        return self._array == other._array

    def __hash__(self) -> int:
        return hash(self._array)

    def with_config(self, config: ArrayConfig | Mapping[str, Any]) -> AsyncArray:
        """This array with other runtime settings (`Array.with_config`)."""
        return AsyncArray(self._array.with_config(config))

    # -- reads --------------------------------------------------------------------------------
    async def getitem(self, selection: Any, *, prototype: Any = None) -> Any:
        """`array[selection]`, awaited (numpy's indexing, as `Array.__getitem__`). Reads of
        this array started together (`asyncio.gather`) share one plan. Raises
        `SelectionError` for a bad selection (before anything is read), `ChunkDecodeError`
        for a chunk it needs that does not decode, `StoreError` when the store fails."""
        _check_zarr_python_options(None, prototype)
        return await self._read(selection)

    async def _read(
        self, selection: Any, kind: str = "basic", out: np.ndarray | None = None
    ) -> Any:
        """The selection (indexed as `kind` says: `Array.read_awaitable`'s kinds) checked at
        once, then read with the other reads of this array started in this turn of the loop."""
        array = self._array
        indexer = array._indexer_of(kind, selection)
        if out is not None:
            checked_out(out, indexer.shape)
        values = await batched_read(array._engine, indexer, out)
        if out is None and array._config.order == "F" and np.ndim(values) > 1:
            return np.asfortranarray(values)
        return values

    async def get_basic_selection(
        self,
        selection: Any = Ellipsis,
        *,
        out: np.ndarray | None = None,
        prototype: Any = None,
        fields: Any = None,
    ) -> Any:
        """Integers and slices; `out`: an array of the selection's shape read into."""
        _check_zarr_python_options(fields, prototype)
        return await self._read(selection, out=out)

    async def get_orthogonal_selection(
        self,
        selection: Any,
        *,
        out: np.ndarray | None = None,
        fields: Any = None,
        prototype: Any = None,
    ) -> Any:
        """Each index array selects along its own dimension (`array.oindex[...]`)."""
        _check_zarr_python_options(fields, prototype)
        return await self._read(selection, "orthogonal", out)

    async def get_coordinate_selection(
        self,
        selection: Any,
        *,
        out: np.ndarray | None = None,
        fields: Any = None,
        prototype: Any = None,
    ) -> Any:
        """Points, one index array per dimension (`array.vindex[...]`)."""
        _check_zarr_python_options(fields, prototype)
        return await self._read(selection, "coordinate", out)

    async def get_mask_selection(
        self,
        mask: Any,
        *,
        out: np.ndarray | None = None,
        fields: Any = None,
        prototype: Any = None,
    ) -> Any:
        """The elements where `mask` (booleans of the array's shape) is True, in C order."""
        _check_zarr_python_options(fields, prototype)
        return await self._read(mask, "mask", out)

    async def get_block_selection(
        self,
        selection: Any,
        *,
        out: np.ndarray | None = None,
        fields: Any = None,
        prototype: Any = None,
    ) -> Any:
        """Whole chunks by their grid positions (`array.blocks[...]`)."""
        _check_zarr_python_options(fields, prototype)
        return await self._read(selection, "block", out)

    # -- writes -------------------------------------------------------------------------------
    async def setitem(self, selection: Any, value: Any, prototype: Any = None) -> None:
        """`array[selection] = value`, awaited. The selection and value are checked before
        anything is written (`SelectionError`, `ValueCastError`, `ReadOnlyError`)."""
        _check_zarr_python_options(None, prototype)
        await self._array.write_awaitable(selection, value)

    async def set_basic_selection(
        self, selection: Any, value: Any, *, fields: Any = None, prototype: Any = None
    ) -> None:
        _check_zarr_python_options(fields, prototype)
        await self._array.write_awaitable(selection, value)

    async def set_orthogonal_selection(
        self, selection: Any, value: Any, *, fields: Any = None, prototype: Any = None
    ) -> None:
        _check_zarr_python_options(fields, prototype)
        await self._array.write_awaitable(selection, value, kind="orthogonal")

    async def set_coordinate_selection(
        self, selection: Any, value: Any, *, fields: Any = None, prototype: Any = None
    ) -> None:
        _check_zarr_python_options(fields, prototype)
        await self._array.write_awaitable(selection, value, kind="coordinate")

    async def set_mask_selection(
        self, mask: Any, value: Any, *, fields: Any = None, prototype: Any = None
    ) -> None:
        _check_zarr_python_options(fields, prototype)
        await self._array.write_awaitable(mask, value, kind="mask")

    async def set_block_selection(
        self, selection: Any, value: Any, *, fields: Any = None, prototype: Any = None
    ) -> None:
        _check_zarr_python_options(fields, prototype)
        await self._array.write_awaitable(selection, value, kind="block")

    # -- shape, attributes and what the store holds ---------------------------------------------
    async def resize(self, new_shape: Any, delete_outside_chunks: bool = True) -> None:
        """Change the shape (`Array.resize`); chunks wholly outside it are erased."""
        if not delete_outside_chunks:
            raise ArgumentError(
                "delete_outside_chunks=False: zarrkit always erases the chunks outside the "
                "new shape (growing again must show the fill value)"
            )
        await in_pool(self._array.resize, new_shape)

    async def append(self, data: Any, axis: int = 0) -> tuple[int, ...]:
        """`data` appended along `axis`; the new shape."""
        return await in_pool(self._array.append, data, axis)

    async def update_attributes(self, new_attributes: Mapping[str, Any]) -> Self:
        """The attributes updated with `new_attributes` and stored; this array."""
        await in_pool(self._array.update_attributes, new_attributes)
        return self

    async def info_complete(self) -> ArrayInfo:
        """`info` with bytes stored and chunks initialized, which only the store can say."""
        return await in_pool(self._array.info_complete)

    async def nchunks_initialized(self) -> int:
        """How many chunks are stored (for a sharded array, the chunks of stored shards)."""
        count: int = await in_pool(lambda: self._array.nchunks_initialized)
        return count

    async def nbytes_stored(self) -> int:
        """Bytes the array takes in its store (metadata and chunks)."""
        return await in_pool(self._array.nbytes_stored)


def _shown(name: str) -> property:
    def get(self: AsyncArray) -> Any:
        return getattr(self._array, name)

    get.__name__ = name
    get.__doc__ = f"`Array.{name}` of the synchronous face (no I/O)."
    return property(get)


for _name in _PROPERTIES:
    setattr(AsyncArray, _name, _shown(_name))
