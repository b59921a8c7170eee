"""Arrays: numpy-style reads and writes over chunks in a store.

A read turns the selection into per-chunk projections (`indexing`), fetches the chunks a batch
at a time, decodes them on the shared thread pool and copies each into the output. A write is
the reverse, reading back only chunks the selection covers partly; a chunk left equal to the
fill value is erased rather than stored (unless `write_empty_chunks`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Future, wait
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import config, engine, executor, indexing
from .codec_chain import CodecChain
from .data_type import cast_values, check_representable
from .errors import (
    CodecChainError,
    InvalidKeyError,
    MetadataError,
    ReadOnlyError,
    SelectionError,
    ValueCastError,
)
from .metadata import ArrayMetadata
from .node import Node
from .store import check_fits, limiting_values, unguarded_update


class Array(Node):
    # -- metadata ----------------------------------------------------------------------------
    def _set_metadata(self, metadata: ArrayMetadata) -> None:
        super()._set_metadata(metadata)
        self._chain = self._codec_chain(metadata)
        store = self._store
        for transformer in metadata.storage_transformers:
            store = transformer.wrap(store, self._path)
        self._chunk_store = store
        uniform = metadata.chunk_grid.uniform_chunk_shape  # (a guess for irregular grids)
        self._nbytes = metadata.dtype.itemsize * (math.prod(uniform) if uniform else 1 << 20)
        self._value_limit = engine.value_limit(
            metadata.data_type.item_size, math.prod(uniform) if uniform else None
        )
        self._inner = self._inner_chunks(uniform)
        self._lasting = engine.range_cache(store)  # shard indexes this handle has read
        self._check_chunk_keys(metadata)

    def _check_chunk_keys(self, metadata: ArrayMetadata) -> None:
        """Refuse, before anything is read or written, an array whose chunk keys are longer
        than the store can hold (a v2 array of 130 dimensions names a chunk '1.1.[...].1', 259
        bytes): the key of the last chunk, whose indices have the most digits, is checked."""
        name_limit = getattr(self._chunk_store, "name_limit", None)
        if name_limit is None or name_limit() is None:
            return
        last = tuple(max(0, n - 1) for n in metadata.chunk_grid.grid_shape(metadata.shape))
        key = self._format.chunk_key(self._path, metadata.chunk_key_encoding.encode(last))
        try:
            check_fits(self._chunk_store, key)
        except InvalidKeyError as exc:
            raise InvalidKeyError(
                f"{self._where()}: the array's chunk keys cannot be stored: {exc}"
            ) from None

    def _inner_chunks(self, uniform: tuple[int, ...] | None) -> tuple[int, ...] | None:
        """The chunks inside each chunk of a regular grid, when the array->bytes codec stores
        them so (sharding) and no array->array codec before it changes their coordinates."""
        if uniform is None:
            return None
        bound = self._chain.bind(uniform)
        if bound.array_array:
            return None
        codec, spec = bound.array_bytes
        inner = codec.inner_chunk_shape(spec)
        return tuple(inner) if inner is not None else None

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
            exc.locate(where=self._where())
            raise
        return chain

    @property
    def shape(self) -> tuple[int, ...]:
        return self._meta.shape

    @property
    def ndim(self) -> int:
        return len(self._meta.shape)

    @property
    def size(self) -> int:
        return math.prod(self._meta.shape)  # exact: numpy's int64 product wraps

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
        """The shape of the chunks values are encoded in: for a sharded array the inner
        chunks (see `shards`), else the grid's chunks; None for an irregular grid."""
        return self._inner or self._meta.chunk_grid.uniform_chunk_shape

    @property
    def shards(self) -> tuple[int, ...] | None:
        """The shape of the stored values (the grid's chunks) when each holds several encoded
        chunks (sharding), else None."""
        return self._meta.chunk_grid.uniform_chunk_shape if self._inner else None

    @property
    def cdata_shape(self) -> tuple[int, ...]:
        """Chunks per dimension (inner chunks for a sharded array, as in zarr-python)."""
        if self._inner:
            return tuple(-(-n // c) for n, c in zip(self.shape, self._inner))
        return self._meta.chunk_grid.grid_shape(self.shape)

    @property
    def nchunks(self) -> int:
        return math.prod(self.cdata_shape)

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

    def to_dask(self, chunks: Any = None) -> Any:
        """A lazy dask array over this one, one task per stored chunk (per shard) unless
        `chunks` says otherwise: `zarrkit.dask.from_zarrkit(self, chunks=chunks)`."""
        try:
            from zarrkit.dask import from_zarrkit
        except ImportError as exc:
            from .errors import PluginLoadError

            raise PluginLoadError("Array.to_dask needs dask: pip install 'zarrkit[dask]'") from exc
        return from_zarrkit(self, chunks=chunks)

    @property
    def info(self) -> ArrayInfo:
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
                    "array's dimension to the front; use a.oindex[...] (dimensions stay in place)"
                )
            return indexing.orthogonal_indexer(selection, self.shape, grid)
        if len(arrays) == len(items) == self.ndim:
            return indexing.vectorized_indexer(selection, self.shape, grid)
        raise SelectionError(
            "this mix of several index arrays with other indices is ambiguous; use "
            "a.oindex[...] (each array indexes its own dimension) or a.vindex[...] (points)"
        )

    @property
    def oindex(self) -> _Indexed:
        return _Indexed(self, indexing.orthogonal_indexer)

    @property
    def vindex(self) -> _Indexed:
        return _Indexed(self, indexing.vectorized_indexer)

    @property
    def blocks(self) -> _Indexed:
        """Whole chunks by their grid positions: `a.blocks[1, 2:4]` (see `get_block_selection`)."""
        return _Indexed(self, indexing.block_indexer)

    # The get_* methods take `out=`: an existing array of the selection's shape to read into
    # (and return), so repeated reads reuse one buffer and chunks decode straight into it.
    def get_basic_selection(
        self, selection: Any = Ellipsis, *, out: np.ndarray | None = None
    ) -> Any:
        return self._read(self._indexer(selection), out)

    def get_orthogonal_selection(self, selection: Any, *, out: np.ndarray | None = None) -> Any:
        return self._read(self.oindex._indexer(selection), out)

    def get_coordinate_selection(self, selection: Any, *, out: np.ndarray | None = None) -> Any:
        return self._read(self.vindex._indexer(selection), out)

    def get_mask_selection(self, mask: Any, *, out: np.ndarray | None = None) -> Any:
        """The elements where `mask` (a boolean array of the array's shape) is True, in C
        order, as a 1-D array."""
        return self._read(self._mask_indexer(mask), out)

    def get_block_selection(self, selection: Any, *, out: np.ndarray | None = None) -> Any:
        """Whole chunks by their grid positions: per dimension an int (one chunk; the
        dimension stays) or a slice of step 1 over the chunk grid, clamped to the grid as
        Python clamps slices (zarr-python 3.4 raises for a start beyond the grid). The chunks
        of a sharded array are its shards, as in zarr-python."""
        return self._read(self.blocks._indexer(selection), out)

    # -- many selections at once -------------------------------------------------------------
    def read_async(
        self, selection: Any = Ellipsis, *, out: np.ndarray | None = None
    ) -> Future[Any]:
        """`self[selection]` started now and returned as a future, so that many reads wait on
        the store together: on an object store, 100 windows cost about one round trip of
        latency rather than 100. The selection is checked before this returns; at most the
        `io_concurrency` setting of reads and writes run at once."""
        indexer = self._indexer(selection)
        if out is not None:
            _checked_out(out, indexer.shape)
        return executor.io_pool().submit(self._read, indexer, out)

    def write_async(self, selection: Any, value: Any) -> Future[None]:
        """`self[selection] = value` started now, as `read_async`. Writes to overlapping
        selections started together land in no particular order."""
        self._check_writeable()
        indexer = self._indexer(selection)
        prepared = self._prepare_value(value, indexer.shape)
        return executor.io_pool().submit(self._write, indexer, prepared)

    def get_many(self, selections: Iterable[Any]) -> list[Any]:
        """`[self[s] for s in selections]`, read at once (see `read_async`)."""
        return [f.result() for f in [self.read_async(s) for s in selections]]

    def set_many(self, items: Iterable[tuple[Any, Any]]) -> None:
        """`self[s] = v` for each (selection, value), written at once (see `write_async`);
        every selection and value is checked before anything is written."""
        prepared = []
        self._check_writeable()
        for selection, value in items:
            indexer = self._indexer(selection)
            prepared.append((indexer, self._prepare_value(value, indexer.shape)))
        pool = executor.io_pool()
        futures = [pool.submit(self._write, i, v) for i, v in prepared]
        wait(futures)  # every write has ended before the first error is raised
        for future in futures:
            future.result()

    def set_basic_selection(self, selection: Any, value: Any) -> None:
        self[selection] = value

    def set_orthogonal_selection(self, selection: Any, value: Any) -> None:
        self.oindex[selection] = value

    def set_coordinate_selection(self, selection: Any, value: Any) -> None:
        self.vindex[selection] = value

    def set_mask_selection(self, mask: Any, value: Any) -> None:
        self._write(self._mask_indexer(mask), value)

    def set_block_selection(self, selection: Any, value: Any) -> None:
        self.blocks[selection] = value

    def _mask_indexer(self, mask: Any) -> Any:
        m = np.asarray(mask)
        if m.dtype != bool or m.shape != self.shape:
            got = f"dtype {m.dtype}" if m.dtype != bool else f"shape {m.shape}"
            raise SelectionError(
                f"a mask selection is a boolean array of the array's shape {self.shape}; got {got}"
            )
        return indexing.vectorized_indexer(m, self.shape, self._meta.chunk_grid)

    # -- the chunk engine --------------------------------------------------------------------
    def _chunk_key(self, coords: Sequence[int]) -> str:
        return self._format.chunk_key(self._path, self._meta.chunk_key_encoding.encode(coords))

    def _bound(self, coords: Sequence[int]) -> Any:
        """The codec chain bound to the shape of the chunk at `coords`."""
        return self._chain.bind(self._meta.chunk_grid.chunk_shape(coords))

    def _chunk_nbytes(self) -> int:
        return self._nbytes

    def _batch_size(self) -> int:
        return engine.batch_size(self._chunk_nbytes(), self._chunk_store)

    def _read(self, indexer: Any, out: np.ndarray | None = None) -> Any:
        """Each pool thread takes a share of a batch, fetches it (whole values in one
        `read_many`; partial decodes, e.g. inside shards, as rounds of `get_ranges`), decodes
        it and copies each chunk's part into the output (`out`, when given)."""
        given = out is not None
        if not given:
            out = _result(indexer.shape, self._meta.dtype)
        elif _checked_out(out, indexer.shape).dtype != self._meta.dtype:
            out[...] = self._read(indexer)  # another data type: cast as numpy assigns
            return out
        fill = self._meta.fill_value
        store = self._chunk_store
        orthogonal = getattr(indexer, "orthogonal", False)
        uniform = self._meta.chunk_grid.uniform_chunk_shape
        single = self._chain.bind(uniform) if uniform is not None else None
        # chunks are decoded straight into the output only where out[out_selection] is a view
        # (a fancy index makes a copy); whole_selection: the chunk selection of a whole regular
        # chunk (one tuple compare instead of a loop)
        plain = indexer.plain
        whole_selection = tuple(slice(0, n) for n in uniform) if uniform and plain else None

        fetch = engine.fetch_size(store, self._chunk_nbytes())

        path, encode_key = self._path, self._meta.chunk_key_encoding.encode
        chunk_key = self._format.chunk_key

        def work(batch: Sequence[Any]) -> None:
            whole, partial = [], []
            if single is not None and not single.can_decode_partial:  # (the common case)
                whole = [(proj, chunk_key(path, encode_key(proj.coords)), single) for proj in batch]
                batch = ()
            for proj in batch:
                key = chunk_key(path, encode_key(proj.coords))
                chain = single or self._bound(proj.coords)
                if chain.can_decode_partial and not proj.is_complete:
                    region = indexing.chunk_region(
                        proj.chunk_selection, chain.spec.shape, orthogonal
                    )
                    partial.append(
                        (
                            proj,
                            key,
                            chain.decode_partial(region, key),
                            [lo for lo, _ in region.bounds()],
                        )
                    )
                else:
                    whole.append((proj, key, chain))
            with limiting_values(self._value_limit), store.reading() as source:
                read(whole, partial, source)

        def read(whole: list, partial: list, source: Any) -> None:
            """Read and decode a share: whole chunks from `source` a group at a time, chunks
            read in part through partial decodes."""
            for group in _groups(whole, fetch):
                blobs = source.read_many([key for _, key, _ in group])
                for proj, key, chain in group:
                    blob = blobs.get(key)
                    if blob is None:
                        out[proj.out_selection] = fill
                    elif (
                        plain
                        and chain.into
                        and proj.is_complete
                        and (
                            proj.chunk_selection == whole_selection
                            or _whole_chunk(proj.chunk_selection, chain.spec.shape)
                        )
                    ):
                        chain.decode_into(blob, out[proj.out_selection], key)
                    elif proj.is_complete:
                        _place(out, proj, chain.decode_scratch(blob, key))
                    else:
                        _place(out, proj, chain.decode_scratch(blob, key, proj.chunk_selection))
                # nothing may hold this group's values while the next group is read, so a
                # store's reused read buffer (`buffers.reusable`) is free again for it
                del blobs, blob
            if partial:
                boxes = engine.drive(
                    store, [(key, gen) for _, key, gen, _ in partial], self._lasting
                )
                for (proj, _, _, origin), box in zip(partial, boxes):
                    if box is None:
                        out[proj.out_selection] = fill
                    else:
                        out[proj.out_selection] = box[
                            indexing.shifted(proj.chunk_selection, origin)
                        ]

        threaded = engine.parallel(self._chunk_nbytes())
        try:
            for batch in _batches(indexer, self._batch_size()):
                executor.run_batched(work, batch, parallel=threaded)
        except MemoryError:
            raise self._unallocatable() from None
        return out[()] if out.shape == () and not given else out

    def _write(self, indexer: Any, value: Any) -> None:
        """Per batch, holding its keys' locks (this process's threads): a batch of wholly
        written chunks has nothing to decode, so each pool thread encodes its share and stores
        it every few chunks, through one `store.writing()` per share (a store may keep lookups
        from one call to the next). A batch that covers some chunks partly goes through
        `_update`: nothing of it is stored until every chunk is encoded, so a chunk that fails
        to decode leaves the batch unwritten."""
        self._check_writeable()
        value = self._prepare_value(value, indexer.shape)
        meta = self._meta
        fill = meta.fill_value
        write_empty = config.get().write_empty_chunks or meta.keep_fill_chunks
        store = self._chunk_store
        orthogonal = getattr(indexer, "orthogonal", False)
        first_fill = (
            None
            if meta.dtype.hasobject
            else np.asarray(fill, dtype=meta.dtype).reshape(1).view(np.uint8).tobytes()
        )

        def stream(batch: Sequence[tuple[Any, str]]) -> None:
            with store.writing() as target:
                encode(batch, {}, target)

        def encode(
            batch: Sequence[tuple[Any, str]], existing: dict[str, Any], target: Any = None
        ) -> dict[str, Any]:
            """Encode a share of a batch over the `existing` values of the chunks it covers
            partly; with a `target`, store it there as it goes."""
            mine: dict[str, Any] = {}
            for proj, key in batch:
                chain = self._bound(proj.coords)
                if not proj.is_complete and chain.can_encode_partial:
                    region = indexing.chunk_region(
                        proj.chunk_selection, chain.spec.shape, orthogonal
                    )
                    data = chain.encode_partial(
                        existing.pop(key, None), region, _updater(proj, value), key
                    )
                else:
                    if (
                        chain.takes_views
                        and proj.is_complete
                        and _whole_chunk(proj.chunk_selection, chain.spec.shape)
                    ):
                        chunk = value[proj.out_selection]  # the chunk as it is: no copy
                    else:
                        chunk = self._chunk_for_write(proj, key, chain, existing.pop(key, None))
                        chunk[proj.chunk_selection] = value[proj.out_selection]
                    data = (
                        None
                        if not write_empty
                        and _maybe_fill(chunk, first_fill)
                        and meta.data_type.chunk_equals_fill(chunk, fill)
                        else chain.encode(chunk)
                    )
                mine[key] = data
                if target is not None and len(mine) >= streamed:
                    _store_results(target, mine)
                    mine = {}
            if target is not None:
                _store_results(target, mine)
            return mine

        threaded = engine.parallel_writes(self._chunk_nbytes(), store)
        uniform = meta.chunk_grid.uniform_chunk_shape
        streamed = engine.stream_size(
            store,
            self._chunk_nbytes(),
            views=uniform is not None and self._chain.bind(uniform).passes_views,
        )
        try:
            for batch in _batches(indexer, self._batch_size()):
                items = [(proj, self._chunk_key(proj.coords)) for proj in batch]
                with engine.locked([key for _, key in items]):
                    try:
                        if all(proj.is_complete for proj in batch):
                            # nothing to decode, so nothing can fail half way: each thread
                            # stores as it goes, overlapping its writes with the other
                            # threads' encoding
                            executor.run_batched(stream, items, parallel=threaded)
                        else:
                            _update(store, items, encode, threaded, self._value_limit)
                    finally:
                        if self._lasting is not None:
                            self._lasting.invalidate()
        except MemoryError:
            raise self._unallocatable() from None

    def _unallocatable(self) -> MetadataError:
        """What a chunk this process cannot allocate is reported as: its metadata declares
        chunks too large for this machine (a regular grid may allow up to 2**63 - 1 bytes)."""
        shape = self._meta.chunk_grid.uniform_chunk_shape
        what = f"chunks of shape {shape} ({self._nbytes} bytes each)" if shape else "chunks"
        return MetadataError(
            f"cannot allocate memory for a chunk: the array's {what} are too "
            f"large for this process",
            key="chunk_grid",
            where=self._where(),
        )

    def _chunk_for_write(self, proj: Any, key: str, chain: Any, blob: Any) -> np.ndarray:
        """The chunk a write starts from: old contents where the write covers it partly."""
        fill = self._meta.fill_value
        shape = chain.spec.shape
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
        if grid.uniform_chunk_shape is not None:  # chunk i starts at i * size
            return all((c + 1) * n <= s for c, n, s in zip(coords, shape, self.shape))
        return all(
            int(grid.chunk_start(d, c)) + n <= s
            for d, (c, n, s) in enumerate(zip(coords, shape, self.shape))
        )

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
                    raise ValueCastError(
                        f"cannot store values of dtype {source.dtype} in an array "
                        f"of {data_type.describe()}: {exc}"
                    ) from None
                check_representable(source, arr, data_type)
        while arr.ndim > len(shape) and arr.shape[0] == 1:
            arr = arr[0]
        try:
            return np.broadcast_to(arr, shape)
        except ValueError:
            raise ValueCastError(
                f"a value of shape {np.shape(value)} cannot be written to a "
                f"selection of shape {shape}"
            ) from None

    def _check_writeable(self) -> None:
        super()._check_writeable()
        if not self._meta.writeable:
            names = ", ".join(s.name for s in self._meta.skipped)
            raise ReadOnlyError(
                f"array {self.name!r} cannot be written: it uses extensions this "
                f"installation does not understand ({names})"
            )

    # -- shape changes -----------------------------------------------------------------------
    def resize(self, *shape: Any) -> None:
        """Change the shape. Data outside the new shape is dropped, so growing again shows fill."""
        new = tuple(
            int(n) for n in (shape[0] if len(shape) == 1 and np.ndim(shape[0]) > 0 else shape)
        )
        old = self.shape
        if len(new) != len(old) or any(n < 0 for n in new):
            raise ValueError(f"new shape {new} must have {len(old)} non-negative dimensions")
        self._check_writeable()
        self._clear_outside(old, new)
        self._rewrite_metadata(shape=new)

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
            try:
                self._chunk_store.erase_many(keys)
            finally:
                if self._lasting is not None:
                    self._lasting.invalidate()

    def append(self, data: Any, axis: int = 0) -> tuple[int, ...]:
        data = np.asanyarray(data)
        old = self.shape
        if not -self.ndim <= axis < self.ndim:
            raise ValueCastError(f"cannot append along axis {axis} of an array of shape {old}")
        axis = axis % self.ndim
        expected = old[:axis] + old[axis + 1 :]
        if data.ndim != self.ndim or data.shape[:axis] + data.shape[axis + 1 :] != expected:
            raise ValueCastError(
                f"cannot append data of shape {data.shape} to an array of shape "
                f"{old} along axis {axis}"
            )
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
    shards: tuple[int, ...] | None
    fill_value: Any
    codecs: list[Any]
    dimension_names: Any
    store: str
    nbytes: int
    read_only: bool

    @classmethod
    def of(cls, array: Array) -> ArrayInfo:
        meta = array.metadata
        return cls(
            array.name,
            array.shape,
            meta.data_type.to_json(meta.format),
            array.chunks,
            array.shards,
            meta.data_type.fill_to_json(meta.fill_value, meta.format),
            [c.to_json(meta.format) for c in meta.codecs],
            array.dimension_names,
            str(array.store),
            array.nbytes,
            array.read_only,
        )

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


def _checked_out(out: Any, shape: Sequence[int]) -> np.ndarray:
    """The caller's array for a read (`out=`), checked before anything is read."""
    if not isinstance(out, np.ndarray):
        raise TypeError(f"out must be a numpy array, got {type(out).__name__}")
    if out.shape != tuple(shape):
        raise ValueError(f"out has shape {out.shape}; the selection's shape is {tuple(shape)}")
    if not out.flags.writeable:
        raise ValueError("out is read-only")
    return out


def _update(
    store: Any, items: Sequence[tuple[Any, str]], encode: Any, threaded: bool, limit: int
) -> None:
    """Write a batch that covers some chunks partly: the whole chunks are encoded first, then
    the partly covered ones are read, merged and written in one `store.update_many` (safe
    against writers in other processes on a store that has `safe_updates`, unless the
    `safe_updates` setting is off), then the whole chunks are stored. The old values are read
    under the store's value `limit` (`limiting_values`)."""
    whole = [item for item in items if item[0].is_complete]
    parts = [item for item in items if not item[0].is_complete]
    results: dict[str, Any] = {}
    if whole:
        executor.run_batched(
            lambda share: results.update(encode(share, {})), whole, parallel=threaded
        )

    def compute(keys: Sequence[str], old: Mapping[str, Any]) -> dict[str, Any]:
        wanted = set(keys)
        existing = dict(old)
        new: dict[str, Any] = {}
        executor.run_batched(
            lambda share: new.update(encode(share, existing)),
            [item for item in parts if item[1] in wanted],
            parallel=threaded,
        )
        return new

    keys = [key for _, key in parts]
    with limiting_values(limit):
        if config.get().safe_updates:
            store.update_many(keys, compute)
        else:
            unguarded_update(store, keys, compute)
    _store_results(store, results)


def _result(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """The array a read returns; a selection too large to hold is refused as a selection."""
    try:
        return np.empty(shape, dtype=dtype)
    except (ValueError, MemoryError):
        nbytes = math.prod(shape) * dtype.itemsize
        raise SelectionError(
            f"the selection has shape {shape} ({nbytes} bytes): too large "
            f"to hold in memory; read it in parts"
        ) from None


def _store_results(store: Any, results: dict[str, Any]) -> None:
    """Encoded chunks in one `set_many`; chunks now all fill (None) in one `erase_many`."""
    encoded = {k: v for k, v in results.items() if v is not None}
    if encoded:
        store.set_many(encoded)
    empty = [k for k, v in results.items() if v is None]
    if empty:
        store.erase_many(empty)


def _place(out: np.ndarray, proj: Any, chunk: np.ndarray) -> None:
    out[proj.out_selection] = chunk[proj.chunk_selection]


def _maybe_fill(chunk: np.ndarray, first_fill: bytes | None) -> bool:
    """A cheap first look before the data type's full fill check: a chunk whose first element
    is not the fill value (bytewise) is not all fill. Object types are always checked fully."""
    if first_fill is None or chunk.size == 0:
        return True
    return first_bytes(chunk) == first_fill


def first_bytes(chunk: np.ndarray) -> bytes:
    """The bytes of a chunk's first element, without copying a strided chunk (and not through
    a numpy scalar, which drops the trailing NULs of fixed-size bytes)."""
    one = chunk.reshape(1) if chunk.ndim == 0 else chunk[(slice(0, 1),) * chunk.ndim]
    return one.tobytes()


def _whole_chunk(chunk_selection: tuple, shape: tuple[int, ...]) -> bool:
    """Whether a chunk selection is the whole chunk in order (then out[out_selection] has the
    chunk's shape and the chunk can be decoded straight into it)."""
    for item, n in zip(chunk_selection, shape):
        if (
            type(item) is not slice
            or item.start != 0
            or item.stop != n
            or item.step not in (None, 1)
        ):
            return False
    return len(chunk_selection) == len(shape) > 0  # (a 0-d out[()] is a copy, not a view)


def _updater(proj: Any, value: np.ndarray) -> Any:
    """What a partial encoder calls to write this projection's values into a chunk."""

    def update(chunk: np.ndarray) -> None:
        chunk[proj.chunk_selection] = value[proj.out_selection]

    return update


def _groups(items: list[Any], size: int) -> Iterable[list[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _batches(indexer: Iterable[Any], size: int) -> Iterable[list[Any]]:
    it = iter(indexer)
    while batch := list(itertools.islice(it, size)):
        yield batch


def _outside_coords(old_grid: Sequence[int], new_grid: Sequence[int]) -> Iterable[tuple[int, ...]]:
    """Chunk coordinates of the old grid that lie wholly outside the new one, each once."""
    ndim = len(old_grid)
    for d in range(ndim):
        if new_grid[d] >= old_grid[d]:
            continue
        ranges = [
            range(min(new_grid[i], old_grid[i])) if i < d else range(old_grid[i])
            for i in range(ndim)
        ]
        ranges[d] = range(new_grid[d], old_grid[d])
        yield from itertools.product(*ranges)
