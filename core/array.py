"""Arrays: numpy-style reads and writes over chunks in a store.

A read turns the selection into per-chunk projections (`indexing`), fetches the chunks a batch
at a time, decodes them on the shared thread pool and copies each into the output. A write is
the reverse, reading back only chunks the selection covers partly; a chunk left equal to the
fill value is erased rather than stored (unless `write_empty_chunks`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import numpy as np

from . import config, executor, indexing
from .codec_chain import CodecChain
from .data_type import cast_values, check_representable
from .errors import CodecChainError, ReadOnlyError, SelectionError, ValueCastError
from .metadata import ArrayMetadata
from .node import Node

#: chunks fetched per store batch; bounds the memory a read or write holds in encoded form
_BATCH_CHUNKS = 256


class Array(Node):

    # -- metadata ----------------------------------------------------------------------------
    def _set_metadata(self, metadata: ArrayMetadata) -> None:
        super()._set_metadata(metadata)
        self._chain = self._codec_chain(metadata)
        store = self._store
        for transformer in metadata.storage_transformers:
            store = transformer.wrap(store, self._path)
        self._chunk_store = store

    def _codec_chain(self, metadata: ArrayMetadata) -> CodecChain:
        """The array's codec chain, validated now so a bad one is refused when the array is
        opened, with the document it came from."""
        try:
            chain = CodecChain(metadata.codecs, metadata.data_type, metadata.fill_value)
            uniform = metadata.chunk_grid.uniform_chunk_shape
            if uniform is not None:
                chain.bind(uniform)
        except CodecChainError as exc:
            skipped = ", ".join(repr(s.name) for s in metadata.skipped)
            if skipped:
                exc.detail += f" (left out as not understood: {skipped})"
            raise exc.locate(where=self._where())
        return chain

    @property
    def shape(self) -> tuple[int, ...]:
        return self._meta.shape

    @property
    def ndim(self) -> int:
        return len(self._meta.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self._meta.shape, dtype=np.int64))

    @property
    def dtype(self) -> np.dtype:
        return self._meta.dtype

    @property
    def data_type(self) -> Any:
        return self._meta.data_type

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def chunks(self) -> tuple[int, ...] | None:
        return self._meta.chunk_grid.uniform_chunk_shape

    @property
    def cdata_shape(self) -> tuple[int, ...]:
        return self._meta.chunk_grid.grid_shape(self.shape)

    @property
    def nchunks(self) -> int:
        return int(np.prod(self.cdata_shape, dtype=np.int64))

    @property
    def fill_value(self) -> Any:
        return self._meta.fill_value

    @property
    def dimension_names(self) -> tuple[str | None, ...] | None:
        return self._meta.dimension_names

    @property
    def codecs(self) -> tuple[Any, ...]:
        return self._meta.codecs

    @property
    def read_only(self) -> bool:
        return super().read_only or not self._meta.writeable

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __repr__(self) -> str:
        return f"<zarrkit.Array {self.name!r} shape={self.shape} dtype={self.dtype} store={self._store}>"

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = np.asarray(self[...])
        return out if dtype is None else out.astype(dtype)

    @property
    def info(self) -> "ArrayInfo":
        return ArrayInfo.of(self)

    # -- indexing ----------------------------------------------------------------------------
    def __getitem__(self, selection: Any) -> Any:
        return self._read(self._indexer(selection))

    def __setitem__(self, selection: Any, value: Any) -> None:
        self._write(self._indexer(selection), value)

    def _indexer(self, selection: Any) -> Any:
        """`a[...]` follows numpy: one array in the selection indexes that dimension
        (orthogonal), arrays in every position or a full-shape mask pick points (vindex)."""
        grid = self._meta.chunk_grid
        items = selection if isinstance(selection, tuple) else (selection,)
        arrays = [i for i in items if isinstance(i, (list, np.ndarray)) and np.ndim(i) > 0]
        if not arrays:
            return indexing.basic_indexer(selection, self.shape, grid)
        if len(items) == 1 and np.asarray(arrays[0]).dtype == bool and np.ndim(arrays[0]) > 1:
            return indexing.vectorized_indexer(selection, self.shape, grid)
        if len(arrays) == 1:
            if _advanced_apart(items, self.ndim):
                raise SelectionError(
                    "an index array and integers separated by a slice: numpy would move the "
                    "array's dimension to the front; use a.oindex[...] (dimensions stay in place)")
            return indexing.orthogonal_indexer(selection, self.shape, grid)
        if len(arrays) == len(items) == self.ndim:
            return indexing.vectorized_indexer(selection, self.shape, grid)
        raise SelectionError(
            "this mix of several index arrays with other indices is ambiguous; use "
            "a.oindex[...] (each array indexes its own dimension) or a.vindex[...] (points)")

    @property
    def oindex(self) -> "_Indexed":
        return _Indexed(self, indexing.orthogonal_indexer)

    @property
    def vindex(self) -> "_Indexed":
        return _Indexed(self, indexing.vectorized_indexer)

    def get_basic_selection(self, selection: Any = Ellipsis) -> Any:
        return self[selection]

    def get_orthogonal_selection(self, selection: Any) -> Any:
        return self.oindex[selection]

    def get_coordinate_selection(self, selection: Any) -> Any:
        return self.vindex[selection]

    def set_basic_selection(self, selection: Any, value: Any) -> None:
        self[selection] = value

    def set_orthogonal_selection(self, selection: Any, value: Any) -> None:
        self.oindex[selection] = value

    def set_coordinate_selection(self, selection: Any, value: Any) -> None:
        self.vindex[selection] = value

    # -- the chunk engine --------------------------------------------------------------------
    def _chunk_key(self, coords: Sequence[int]) -> str:
        return self._format.chunk_key(self._path, self._meta.chunk_key_encoding.encode(coords))

    def _read(self, indexer: Any) -> Any:
        meta = self._meta
        out = np.empty(indexer.shape, dtype=meta.dtype)
        grid = meta.chunk_grid
        fill = meta.fill_value
        chain = self._chain
        for batch in _batches(indexer, _BATCH_CHUNKS):
            keys = [self._chunk_key(p.coords) for p in batch]
            blobs = self._chunk_store.get_many(keys)

            def work(items: Sequence[tuple[Any, str]]) -> None:
                for proj, key in items:
                    blob = blobs.get(key)
                    if blob is None:
                        out[proj.out_selection] = fill
                    else:
                        chunk = chain.bind(grid.chunk_shape(proj.coords)).decode(blob, key)
                        out[proj.out_selection] = chunk[proj.chunk_selection]

            executor.run_batched(work, list(zip(batch, keys)))
        return out[()] if out.shape == () else out

    def _write(self, indexer: Any, value: Any) -> None:
        self._check_writeable()
        value = self._prepare_value(value, indexer.shape)
        meta = self._meta
        grid = meta.chunk_grid
        fill = meta.fill_value
        fill_bytes = np.asarray(fill, dtype=meta.dtype).tobytes()
        write_empty = config.get().write_empty_chunks
        for batch in _batches(indexer, _BATCH_CHUNKS):
            keys = [self._chunk_key(p.coords) for p in batch]
            partial = [k for p, k in zip(batch, keys) if not p.is_complete]
            existing = self._chunk_store.get_many(partial) if partial else {}
            encoded: dict[str, Any] = {}
            empty: list[str] = []

            def work(items: Sequence[tuple[Any, str]]) -> None:
                for proj, key in items:
                    shape = grid.chunk_shape(proj.coords)
                    chain = self._chain.bind(shape)
                    chunk = self._chunk_for_write(proj, key, shape, chain, existing.get(key))
                    chunk[proj.chunk_selection] = value[proj.out_selection]
                    if not write_empty and _equals_fill(chunk, fill_bytes):
                        empty.append(key)
                    else:
                        encoded[key] = chain.encode(chunk)

            executor.run_batched(work, list(zip(batch, keys)))
            if encoded:
                self._chunk_store.set_many(encoded)
            if empty:
                self._chunk_store.erase_many(empty)

    def _chunk_for_write(self, proj: Any, key: str, shape: tuple[int, ...], chain: Any,
                         blob: Any) -> np.ndarray:
        """The chunk a write starts from: old contents where the write covers it partly."""
        fill = self._meta.fill_value
        if proj.is_complete:
            if self._chunk_inside_array(proj.coords, shape):
                return np.empty(shape, dtype=self.dtype)
            return np.full(shape, fill, dtype=self.dtype)
        if blob is None:
            return np.full(shape, fill, dtype=self.dtype)
        chunk = chain.decode(blob, key)
        return chunk if chunk.flags.writeable and chunk.flags.c_contiguous else np.array(chunk)

    def _chunk_inside_array(self, coords: Sequence[int], shape: Sequence[int]) -> bool:
        grid = self._meta.chunk_grid
        return all(int(grid.chunk_start(d, c)) + n <= s
                   for d, (c, n, s) in enumerate(zip(coords, shape, self.shape)))

    def _prepare_value(self, value: Any, shape: tuple[int, ...]) -> np.ndarray:
        """Cast and broadcast a written value up front, so a bad one writes nothing."""
        data_type = self._meta.data_type
        if isinstance(value, Array):
            value = value[...]
        if np.ndim(value) == 0 and not isinstance(value, np.ndarray):
            arr = np.asarray(data_type.cast_scalar(value), dtype=self.dtype)
        else:
            source = np.asarray(value)
            if source.dtype == self.dtype:
                arr = source
            else:
                try:
                    arr = cast_values(source, data_type)
                except (TypeError, ValueError, OverflowError) as exc:
                    raise ValueCastError(f"cannot store values of dtype {source.dtype} in an array "
                                         f"of {data_type.describe()}: {exc}") from None
                check_representable(source, arr, data_type)
        while arr.ndim > len(shape) and arr.shape[0] == 1:
            arr = arr[0]
        try:
            return np.broadcast_to(arr, shape)
        except ValueError:
            raise ValueCastError(f"a value of shape {np.shape(value)} cannot be written to a "
                                 f"selection of shape {shape}") from None

    def _check_writeable(self) -> None:
        super()._check_writeable()
        if not self._meta.writeable:
            names = ", ".join(s.name for s in self._meta.skipped)
            raise ReadOnlyError(f"array {self.name!r} cannot be written: it uses extensions this "
                                f"installation does not understand ({names})")

    # -- shape changes -----------------------------------------------------------------------
    def resize(self, *shape: Any) -> None:
        """Change the shape. Data outside the new shape is dropped, so growing again shows fill."""
        new = tuple(int(n) for n in (shape[0] if len(shape) == 1 and np.ndim(shape[0]) > 0
                                     else shape))
        old = self.shape
        if len(new) != len(old) or any(n < 0 for n in new):
            raise ValueError(f"new shape {new} must have {len(old)} non-negative dimensions")
        self._check_writeable()
        self._clear_outside(old, new)
        grid = self._meta.chunk_grid.resized(new)
        self._rewrite_metadata(shape=list(new), chunk_grid=grid.to_json(self._meta.format))

    def _clear_outside(self, old: tuple[int, ...], new: tuple[int, ...]) -> None:
        grid = self._meta.chunk_grid
        old_grid, new_grid = grid.grid_shape(old), grid.grid_shape(new)
        # chunks straddling the new edge: set the part beyond it to the fill value
        for d in range(len(old)):
            if new[d] >= old[d] or new_grid[d] == 0:
                continue
            last = new_grid[d] - 1
            start = int(grid.chunk_start(d, np.int64(last)))
            end = min(old[d], start + grid.chunk_shape((0,) * len(old))[d])
            if end > new[d] and new[d] > start:
                sel = [slice(None)] * len(old)
                sel[d] = slice(new[d], end)
                self._write(indexing.basic_indexer(tuple(sel), old, grid), self.fill_value)
        # chunks wholly outside: erase
        keys = [self._chunk_key(c) for c in _outside_coords(old_grid, new_grid)]
        if keys:
            self._chunk_store.erase_many(keys)

    def append(self, data: Any, axis: int = 0) -> tuple[int, ...]:
        data = np.asanyarray(data)
        old = self.shape
        if not -self.ndim <= axis < self.ndim:
            raise ValueCastError(f"cannot append along axis {axis} of an array of shape {old}")
        axis = axis % self.ndim
        expected = old[:axis] + old[axis + 1:]
        if data.ndim != self.ndim or data.shape[:axis] + data.shape[axis + 1:] != expected:
            raise ValueCastError(f"cannot append data of shape {data.shape} to an array of shape "
                                 f"{old} along axis {axis}")
        self._prepare_value(data, data.shape)  # refuse unrepresentable values before resizing
        new = list(old)
        new[axis] += data.shape[axis]
        self.resize(tuple(new))
        sel = [slice(None)] * self.ndim
        sel[axis] = slice(old[axis], new[axis])
        self[tuple(sel)] = data
        return self.shape


class _Indexed:
    """`array.oindex[...]` / `array.vindex[...]`."""

    def __init__(self, array: Array, make_indexer: Any):
        self._array = array
        self._make = make_indexer

    def _indexer(self, selection: Any) -> Any:
        meta = self._array.metadata
        return self._make(selection, meta.shape, meta.chunk_grid)

    def __getitem__(self, selection: Any) -> Any:
        return self._array._read(self._indexer(selection))

    def __setitem__(self, selection: Any, value: Any) -> None:
        self._array._write(self._indexer(selection), value)


@dataclass(frozen=True)
class ArrayInfo:
    path: str
    shape: tuple[int, ...]
    data_type: Any
    chunks: tuple[int, ...] | None
    fill_value: Any
    codecs: list[Any]
    dimension_names: Any
    store: str
    nbytes: int
    read_only: bool

    @classmethod
    def of(cls, array: Array) -> "ArrayInfo":
        meta = array.metadata
        return cls(array.name, array.shape, meta.data_type.to_json(meta.format), array.chunks,
                   meta.data_type.fill_to_json(meta.fill_value, meta.format),
                   [c.to_json(meta.format) for c in meta.codecs], array.dimension_names,
                   str(array.store), array.nbytes, array.read_only)

    def __str__(self) -> str:
        rows = [("Type", "zarrkit.Array"), *((k, v) for k, v in self.__dict__.items())]
        return "\n".join(f"{k:<16}: {v}" for k, v in rows)


def _advanced_apart(items: tuple, ndim: int) -> bool:
    """Whether the integers and the array of a selection are not all adjacent: then numpy puts
    the array's dimension first rather than where it stands, which orthogonal indexing does not."""
    positions, at = [], 0
    for item in items:
        if item is Ellipsis:
            at += ndim - (len(items) - 1)
            continue
        if not isinstance(item, slice):
            positions.append(at)
        at += 1
    return bool(positions) and positions[-1] - positions[0] + 1 != len(positions)


def _batches(indexer: Iterable[Any], size: int) -> Iterable[list[Any]]:
    it = iter(indexer)
    while batch := list(itertools.islice(it, size)):
        yield batch


def _equals_fill(chunk: np.ndarray, fill_bytes: bytes) -> bool:
    """Whether every element of a chunk has exactly the fill value's bytes (NaN payloads too)."""
    itemsize = len(fill_bytes)
    if chunk.size == 0 or itemsize == 0:
        return True
    data = np.ascontiguousarray(chunk).reshape(-1).view(np.uint8)
    if itemsize in (1, 2, 4, 8):
        word = np.dtype(f"u{itemsize}")
        return bool((data.view(word) == np.frombuffer(fill_bytes, dtype=word)[0]).all())
    return bool((data.reshape(-1, itemsize) == np.frombuffer(fill_bytes, dtype=np.uint8)).all())


def _outside_coords(old_grid: Sequence[int], new_grid: Sequence[int]) -> Iterable[tuple[int, ...]]:
    """Chunk coordinates of the old grid that lie wholly outside the new one, each once."""
    ndim = len(old_grid)
    for d in range(ndim):
        if new_grid[d] >= old_grid[d]:
            continue
        ranges = [range(min(new_grid[i], old_grid[i])) if i < d else range(old_grid[i])
                  for i in range(ndim)]
        ranges[d] = range(new_grid[d], old_grid[d])
        yield from itertools.product(*ranges)
