"""The chunk engine of one array handle: reads and writes the chunks of checked selections.

A read turns the selection's per-chunk projections into batches; each thread of the pool takes
a share of a batch, fetches it (whole values a group at a time through the store's
`reading()`; chunks read in part, e.g. inside shards, as partial decodes run in lockstep),
decodes it and copies each chunk's part into the output. A write is the reverse, reading back
only chunks the selection covers partly (read-modify-write under per-key locks); a chunk left
equal to the fill value is erased rather than stored (unless `write_empty_chunks`). On a store
whose calls are round trips, fetching and storing run beside decoding and encoding
(`ReadJob.read_ahead`, `ChunkEngine._write_uploading`; see `overlapped_io`).

Each read or write is one job object (`ReadJob`, `_Write`) holding what its threads' shares
need, fixed before the first share runs.
"""

from __future__ import annotations

import itertools
import math
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, as_completed, wait
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol

import numpy as np

from .. import config, executor, indexing
from ..abc.codec import RangeReads
from ..abc.format import ArrayMetadata
from ..abc.store import Store, limiting_values, unguarded_update
from ..codec_chain import ChunkPlan, CodecChain
from ..errors import MetadataError, SelectionError
from ..indexing import ChunkProjection, Indexer
from .locks import locked
from .overlapped_io import Uploads, fetch, settle
from .ranges import drive, range_cache
from .sizing import (
    batch_size,
    fetch_size,
    parallel,
    parallel_writes,
    read_batch_size,
    selection_groups,
    stream_size,
    unit_size,
    value_limit,
)

# Chunks read whole and chunks written are kept as side-by-side lists, one object per batch:
# the per-chunk loops zip them, so nothing is built or called per chunk beyond the key.


@dataclass(frozen=True, slots=True)
class WholeReads:
    """Chunks read whole: their projections, store keys and plans, side by side."""

    projections: Sequence[ChunkProjection]
    keys: Sequence[str]
    plans: Sequence[ChunkPlan]

    def __len__(self) -> int:
        return len(self.keys)

    def __getitem__(self, part: slice) -> WholeReads:
        return WholeReads(self.projections[part], self.keys[part], self.plans[part])

    def __iter__(self) -> Iterator[tuple[ChunkProjection, str, ChunkPlan]]:
        return zip(self.projections, self.keys, self.plans)


@dataclass(slots=True)
class PartialRead:
    """A chunk read in part: its projection, store key, partial decode (run by `drive`) and
    where the decoded box starts in the chunk."""

    proj: ChunkProjection
    key: str
    decode: RangeReads[np.ndarray | None]
    origin: list[int]


@dataclass(frozen=True, slots=True)
class ChunkWrites:
    """Chunks written: their projections and store keys, side by side."""

    projections: Sequence[ChunkProjection]
    keys: Sequence[str]

    def __len__(self) -> int:
        return len(self.keys)

    def __getitem__(self, part: slice) -> ChunkWrites:
        return ChunkWrites(self.projections[part], self.keys[part])

    def __iter__(self) -> Iterator[tuple[ChunkProjection, str]]:
        return zip(self.projections, self.keys)

    def where(self, keep: Callable[[ChunkProjection, str], bool]) -> ChunkWrites:
        """The chunks for which `keep(projection, key)` holds."""
        kept = [(proj, key) for proj, key in self if keep(proj, key)]
        return ChunkWrites([proj for proj, _ in kept], [key for _, key in kept])


@dataclass(frozen=True, slots=True)
class FetchUnit:
    """Chunks read whole whose stored values are on their way (one `read_many`)."""

    reads: WholeReads
    values: Future[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class BatchAhead:
    """A batch being read ahead: its chunks read whole, a unit at a time, and its chunks read
    in part."""

    units: list[FetchUnit]
    partial: list[PartialRead]


#: decoded bytes the selections `read_many` reads as one may touch: what they hold at once
GROUP_BYTES = 64 << 20
#: a partial decode reads the inner chunks around a selection: counted as this many times it
_PARTIAL_FACTOR = 4
#: groups of chunks `write_many` writes at once (at least one per thread)
_GROUPS_AT_ONCE = 8


class _Target(Protocol):
    """Where encoded chunks go: a store, or a write's `Uploads` to one."""

    def set_many(self, items: Mapping[str, Any]) -> None: ...

    def erase_many(self, keys: Iterable[str]) -> None: ...


class ChunkEngine:
    """Reads and writes chunks for one array handle, built again whenever its metadata
    changes. It holds what every read and write of the handle shares: the chain bound to a
    regular grid's chunks, the most bytes one stored chunk may hold (`value_limit`), and the
    answers that last (shard indexes, `RangeCache`) this handle has read."""

    def __init__(
        self,
        metadata: ArrayMetadata,
        chain: CodecChain,
        store: Store,
        chunk_key: Callable[[str, str], str],
        path: str,
        where: str,
        write_empty: bool | None = None,
    ) -> None:
        self.metadata = metadata
        #: store chunks equal to the fill value (None: the `write_empty_chunks` setting)
        self.write_empty = write_empty
        self.chain = chain
        #: the store chunks are read from and written to (storage transformers applied)
        self.store = store
        #: where the array is, for errors
        self.where = where
        self._key_of = chunk_key
        self._path = path
        self._encode_key = metadata.chunk_key_encoding.encode
        self.dtype: np.dtype = metadata.data_type.native
        uniform = metadata.chunk_grid.uniform_chunk_shape
        #: the chain every chunk is bound to on a regular grid (None: irregular)
        self.regular_plan = chain.bind(uniform) if uniform is not None else None
        #: the chunk selection of a whole regular chunk (one tuple compare instead of a loop)
        self.whole_selection = tuple(slice(0, n) for n in uniform) if uniform else None
        #: decoded bytes of a chunk (a guess for irregular grids)
        self.chunk_nbytes = self.dtype.itemsize * (math.prod(uniform) if uniform else 1 << 20)
        self.value_limit = value_limit(
            metadata.data_type.stored_size, math.prod(uniform) if uniform else None
        )
        #: the shard indexes this handle has read (None: not kept, per `index_cache`)
        self.index_cache = range_cache(store)

    # -- keys and chains ---------------------------------------------------------------------
    def chunk_key(self, coords: Sequence[int]) -> str:
        return self._key_of(self._path, self._encode_key(coords))

    def keys(self, projections: Iterable[ChunkProjection]) -> list[str]:
        """The store keys of the projections' chunks (the format's `chunk_key` of the array's
        path and the key encoding's name for each chunk)."""
        key_of, path, encode = self._key_of, self._path, self._encode_key
        return [key_of(path, encode(proj.coords)) for proj in projections]

    def writes(self, projections: Sequence[ChunkProjection]) -> ChunkWrites:
        """The projections' chunks as the work of a write."""
        return ChunkWrites(projections, self.keys(projections))

    def bound(self, coords: Sequence[int]) -> ChunkPlan:
        """The codec chain bound to the shape of the chunk at `coords`."""
        return self.chain.bind(self.metadata.chunk_grid.chunk_shape(coords))

    # -- reads -------------------------------------------------------------------------------
    def read(self, indexer: Indexer, out: np.ndarray | None = None) -> Any:
        """The selection's values, in `out` when given (of the selection's shape, checked by
        the caller; another data type is cast as numpy assigns). A 0-d result without `out`
        is returned as a scalar, as numpy indexing does."""
        given = out is not None
        if out is None:
            out = result_array(indexer.shape, self.dtype)
        elif out.dtype != self.dtype:
            out[...] = self.read(indexer)
            return out
        job = ReadJob(self, indexer, out)
        threaded = parallel(self.chunk_nbytes)
        if self.store.capabilities.preferred_fetch_bytes:
            size = batch_size(self.chunk_nbytes, self.store)
        else:
            size = read_batch_size(self.chunk_nbytes, self.store, indexer.band)
        batches = chunk_batches(indexer, size)
        try:
            if self.store.capabilities.preferred_fetch_bytes:
                job.read_ahead(batches, threaded)
            else:
                for batch in batches:
                    executor.run_in_parts(job.share, batch, parallel=threaded, min_part=job.fetch)
        except MemoryError:
            raise self._unallocatable() from None
        return out[()] if out.shape == () and not given else out

    def read_async(self, indexer: Indexer, out: np.ndarray | None = None) -> Future[Any]:
        """`read` started now on the io pool (at most `io_concurrency` reads and writes at
        once), so that many reads wait on the store together."""
        return executor.io_pool().submit(self.read, indexer, out)

    def read_many(self, indexers: Iterable[Indexer]) -> list[Any]:
        """`read` of each selection, read together: in groups (`sizing.selection_groups`: at
        least one per thread, each touching at most `GROUP_BYTES` of chunks), each read as
        one (`_read_together`) on the io pool. Selections are grouped in the order of the first
        chunk they touch, so a group's selections share chunks and each group reads its own
        part of the array. A selection too big for a group is read alone, as `read` reads
        it. Every selection is resolved before any is read."""
        indexers = list(indexers)
        order = sorted(range(len(indexers)), key=lambda i: first_chunk(indexers[i]))
        costs = [self.group_cost(indexers[i]) for i in order]
        pool = executor.io_pool()
        futures = [
            (g, pool.submit(self._read_together, [indexers[order[i]] for i in g]))
            for g in selection_groups(costs, GROUP_BYTES, executor.threads())
        ]
        results: list[Any] = [None] * len(indexers)
        try:
            for g, future in futures:
                for i, value in zip(g, future.result()):
                    results[order[i]] = value
        finally:
            settle(future for _, future in futures)
        return results

    def group_cost(self, indexer: Indexer) -> int:
        """The decoded bytes a read of the selection may touch at once: its chunks, or, with a
        chain that decodes part of a chunk, a few times the selection (the inner chunks around
        it) when that is less."""
        whole = indexer.n_chunks * self.chunk_nbytes
        plan = self.regular_plan
        if plan is None or not plan.can_decode_partial:
            return whole
        return min(whole, _PARTIAL_FACTOR * math.prod(indexer.shape) * self.dtype.itemsize)

    def _read_together(self, indexers: Sequence[Indexer]) -> list[Any]:
        """Selections read as one: every chunk any of them reads whole is fetched once, in
        one `read_many`, and the partial decodes of all of them run in lockstep (`drive`),
        so each round is one store call whose byte ranges merge across the selections (100
        windows of a sharded array: a request or two per shard, not one per window and
        shard; an inner chunk several windows share is fetched once)."""
        if len(indexers) == 1:
            return [self.read(indexers[0])]
        try:
            jobs = [ReadJob(self, ix, result_array(ix.shape, self.dtype)) for ix in indexers]
            whole: dict[ReadJob, WholeReads] = {}
            parts: list[tuple[ReadJob, PartialRead]] = []
            for job, indexer in zip(jobs, indexers):
                chunks, partial = job.plan(list(indexer))
                whole[job] = chunks
                parts.extend((job, item) for item in partial)
            with limiting_values(self.value_limit), self.store.reading() as source:
                keys = list(dict.fromkeys(key for reads in whole.values() for key in reads.keys))
                if keys:
                    blobs = source.read_many(keys)
                    for job, chunks in whole.items():
                        job.decode_whole(blobs, chunks)
                    del blobs
                if parts:
                    boxes = drive(
                        self.store, [(p.key, p.decode) for _, p in parts], self.index_cache
                    )
                    for (job, item), box in zip(parts, boxes):
                        job.place(item, box)
        except MemoryError:
            raise self._unallocatable() from None
        return [job.out[()] if job.out.shape == () else job.out for job in jobs]

    # -- writes ------------------------------------------------------------------------------
    def write(self, indexer: Indexer, value: np.ndarray) -> None:
        """Store `value` (of the array's data type, broadcast to the selection's shape) in the
        selection. Per batch, holding its keys' locks (this process's threads): a batch of
        wholly written chunks has nothing to decode, so each pool thread encodes its share and
        stores it every few chunks, through one `store.writing()` per share (a store may keep
        lookups from one call to the next). A batch that covers some chunks partly goes
        through `_Write.update`: nothing of it is stored until every chunk is encoded, so a
        chunk that fails to decode leaves the batch unwritten."""
        job = _Write(self, indexer, value)
        threaded = parallel_writes(self.chunk_nbytes, self.store)
        batches = chunk_batches(indexer, batch_size(self.chunk_nbytes, self.store))
        try:
            if self.store.capabilities.preferred_store_bytes:
                self._write_uploading(job, batches, threaded)
            else:
                for batch in batches:
                    self._write_batch(job, batch, threaded)
        except MemoryError:
            raise self._unallocatable() from None

    def _write_uploading(
        self, job: _Write, batches: Iterator[list[ChunkProjection]], threaded: bool
    ) -> None:
        """`write` to a store whose calls are round trips: wholly written chunks are stored
        on the transfer pool while the next ones encode (`Uploads`: at most eight groups in
        flight, each stored under its keys' locks); a batch covering chunks partly goes
        through `_write_batch`. Returns once every group is stored; the first store error is
        raised as it is."""
        uploads = Uploads(self.store, self.forget_indexes)
        try:
            for batch in batches:
                if all(proj.is_complete for proj in batch):
                    items = self.writes(batch)
                    executor.run_batched(partial(job.encode_to, uploads), items, parallel=threaded)
                else:
                    self._write_batch(job, batch, threaded)
        except BaseException:
            uploads.wait()
            raise
        uploads.finish()

    def _write_batch(self, job: _Write, batch: list[ChunkProjection], threaded: bool) -> None:
        items = self.writes(batch)
        with locked(items.keys):
            try:
                if all(proj.is_complete for proj in batch):
                    # nothing to decode, so nothing can fail half way: each thread stores as
                    # it goes, overlapping its writes with the other threads' encoding
                    executor.run_batched(job.stream, items, parallel=threaded)
                else:
                    job.update(items, threaded)
            finally:
                self.forget_indexes()

    def write_async(self, indexer: Indexer, value: np.ndarray) -> Future[None]:
        """`write` started now, as `read_async`."""
        return executor.io_pool().submit(self.write, indexer, value)

    def write_many(self, items: Iterable[tuple[Indexer, np.ndarray]]) -> None:
        """`write` of each (selection, value), written as one: each chunk any of them touches
        is written once, with every selection's values in it in the order given (where
        selections overlap, the later one's values stay), so 100 windows in four shards cost
        a read and a write of each shard, not 100 of each. The chunks go in groups
        (`batch_size` of them; a few groups at once on the io pool, each under its keys'
        locks); a chunk that no selection covers whole is read back once, through
        `store.update_many`. Every group has ended before the first error is raised."""
        items = list(items)
        if len(items) == 1:
            self.write(*items[0])
            return
        many = _WriteMany(self, items)
        groups = _groups(many.keys(), batch_size(self.chunk_nbytes, self.store))
        pool, most = executor.io_pool(), max(_GROUPS_AT_ONCE, executor.threads())
        running: set[Future[None]] = set()
        done: list[Future[None]] = []
        try:
            for group in groups:
                if len(running) >= most:
                    finished, running = wait(running, return_when=FIRST_COMPLETED)
                    done.extend(finished)
                    if any(f.exception() is not None for f in finished):
                        break
                running.add(pool.submit(many.write, group))
        finally:
            wait(running)
        for future in [*done, *running]:
            future.result()

    def erase(self, coords: Iterable[Sequence[int]]) -> None:
        """Erase the chunks at `coords` (those wholly outside a shrunk array)."""
        keys = [self.chunk_key(c) for c in coords]
        if keys:
            try:
                self.store.erase_many(keys)
            finally:
                self.forget_indexes()

    def forget_indexes(self) -> None:
        """Drop the kept shard indexes: this handle has written chunks."""
        if self.index_cache is not None:
            self.index_cache.invalidate()

    def _unallocatable(self) -> MetadataError:
        """What a chunk this process cannot allocate is reported as: its metadata declares
        chunks too large for this machine (a regular grid may allow up to 2**63 - 1 bytes)."""
        shape = self.metadata.chunk_grid.uniform_chunk_shape
        what = f"chunks of shape {shape} ({self.chunk_nbytes} bytes each)" if shape else "chunks"
        return MetadataError(
            f"cannot allocate memory for a chunk: the array's {what} are too "
            f"large for this process",
            field="chunk_grid",
            where=self.where,
        )


class ReadJob:
    """One selection being read into `out`."""

    __slots__ = ("engine", "fetch", "orthogonal", "out", "plain", "whole_selection")

    def __init__(self, engine: ChunkEngine, indexer: Indexer, out: np.ndarray) -> None:
        self.engine = engine
        self.out = out
        self.orthogonal: bool = getattr(indexer, "orthogonal", False)
        # chunks are decoded straight into the output only where out[out_selection] is a
        # view (a fancy index makes a copy)
        self.plain = indexer.plain
        self.whole_selection = engine.whole_selection if indexer.plain else None
        self.fetch = fetch_size(engine.store, engine.chunk_nbytes)

    def share(self, parts: Iterable[Sequence[ChunkProjection]]) -> None:
        """A thread's share of a batch, part by part: fetched, decoded and copied into the
        output, through one `store.reading()` (each folder opened once per share)."""
        engine = self.engine
        with limiting_values(engine.value_limit), engine.store.reading() as source:
            for batch in parts:
                whole, partial = self.plan(batch)
                self._read_whole(whole, source)
                if partial:
                    self._read_partial(partial)

    def plan(self, batch: Sequence[ChunkProjection]) -> tuple[WholeReads, list[PartialRead]]:
        """Which chunks are read whole and which in part (a chain that can decode part of a
        chunk, for a chunk the selection covers partly)."""
        engine = self.engine
        regular = engine.regular_plan
        keys = engine.keys(batch)
        if regular is not None and not regular.can_decode_partial:  # (the common case)
            return WholeReads(batch, keys, [regular] * len(keys)), []
        projections: list[ChunkProjection] = []
        whole_keys: list[str] = []
        plans: list[ChunkPlan] = []
        partial: list[PartialRead] = []
        for proj, key in zip(batch, keys):
            chain = regular if regular is not None else engine.bound(proj.coords)
            if chain.can_decode_partial and not proj.is_complete:
                region = indexing.chunk_region(
                    proj.chunk_selection, chain.spec.shape, self.orthogonal
                )
                origin = [lo for lo, _ in region.bounds()]
                partial.append(PartialRead(proj, key, chain.decode_partial(region, key), origin))
            else:
                projections.append(proj)
                whole_keys.append(key)
                plans.append(chain)
        return WholeReads(projections, whole_keys, plans), partial

    def _read_whole(self, whole: WholeReads, source: Store) -> None:
        """Chunks read whole, from `source` a group at a time."""
        for group in _groups(whole, self.fetch):
            blobs = source.read_many(group.keys)
            self.decode_whole(blobs, group)
            # nothing may hold this group's values while the next group is read, so a
            # store's reused read buffer (`buffers.reusable`) is free again for it
            del blobs

    def decode_whole(self, blobs: Mapping[str, Any], group: WholeReads) -> None:
        """Chunks read whole, their stored values in `blobs`, decoded into the output."""
        out, plain, whole_selection = self.out, self.plain, self.whole_selection
        fill = self.engine.metadata.fill_value
        for proj, key, chain in group:
            blob = blobs.get(key)
            if blob is None:
                out[proj.out_selection] = fill
            elif (
                plain
                and chain.decodes_into
                and proj.is_complete
                and (
                    proj.chunk_selection == whole_selection
                    or _whole_chunk(proj.chunk_selection, chain.spec.shape)
                )
            ):
                chain.decode_into(blob, out[proj.out_selection], key)
            elif proj.is_complete:
                _place(out, proj, chain.decode_transient(blob, key))
            else:
                _place(out, proj, chain.decode_transient(blob, key, proj.chunk_selection))

    # -- reading ahead (stores whose calls are round trips) -----------------------------------
    def read_ahead(self, batches: Iterator[list[ChunkProjection]], threaded: bool) -> None:
        """Read batches from a store whose calls are round trips, each batch's next one
        fetched while it decodes, so that the network and the CPU work at once: a batch's
        whole chunks are fetched in units (`unit_size`), each one `read_many` on the transfer
        pool, all started before the batch before it decodes; each unit decodes on the
        engine's threads once its values are in, in the order the units complete (a server
        answers in its own order). At most two batches of stored values are held (the one
        decoding and the one on its way), and the link always has a batch's requests to
        serve."""
        ahead: deque[BatchAhead] = deque()
        try:
            for batch in batches:
                ahead.append(self._fetch(batch))
                if len(ahead) > 1:
                    self._decode(ahead.popleft(), threaded)
            while ahead:
                self._decode(ahead.popleft(), threaded)
        finally:
            settle(unit.values for batch in ahead for unit in batch.units)

    def _fetch(self, batch: Sequence[ChunkProjection]) -> BatchAhead:
        """A batch planned and its whole chunks' fetch started, in units of `unit_size`
        chunks: each unit decodes as soon as its values are in, so the last answers are
        followed by one unit's decoding, not the whole batch's."""
        whole, partial = self.plan(batch)
        engine = self.engine
        size = unit_size(engine.chunk_nbytes)
        units = [whole[i : i + size] for i in range(0, len(whole), size)]
        limit = engine.value_limit
        return BatchAhead(
            [FetchUnit(unit, fetch(engine.store, unit.keys, limit)) for unit in units], partial
        )

    def _decode(self, batch: BatchAhead, threaded: bool) -> None:
        """A batch fetched ahead, decoded on the engine's threads a unit at a time, each unit
        as soon as its values are in; its chunks read in part read now, as a `share` reads
        them."""
        units, parts = batch.units, batch.partial
        try:
            which = {unit.values: unit.reads for unit in units}
            for future in as_completed(which):
                blobs = future.result()
                executor.run_batched(
                    partial(self.decode_whole, blobs),
                    which.pop(future),
                    parallel=threaded,
                    min_part=1,
                )
                del blobs
        except BaseException:
            settle(unit.values for unit in units)
            raise
        if parts:
            executor.run_batched(self._partial_share, parts, parallel=threaded)

    def _partial_share(self, partial: Sequence[PartialRead]) -> None:
        with limiting_values(self.engine.value_limit):
            self._read_partial(partial)

    def _read_partial(self, partial: Sequence[PartialRead]) -> None:
        """Chunks read in part: their partial decodes run in lockstep, one store call per
        round for the whole share."""
        engine = self.engine
        out, fill = self.out, engine.metadata.fill_value
        boxes = drive(engine.store, [(p.key, p.decode) for p in partial], engine.index_cache)
        for item, box in zip(partial, boxes):  # (`place`, inlined)
            proj = item.proj
            if box is None:
                out[proj.out_selection] = fill
            else:
                out[proj.out_selection] = box[indexing.shifted(proj.chunk_selection, item.origin)]

    def place(self, item: PartialRead, box: np.ndarray | None) -> None:
        """A partial decode's box (None: the chunk is absent) copied into the output."""
        proj, origin = item.proj, item.origin
        if box is None:
            self.out[proj.out_selection] = self.engine.metadata.fill_value
        else:
            self.out[proj.out_selection] = box[indexing.shifted(proj.chunk_selection, origin)]


class _Write:
    """One selection being written with `value`."""

    __slots__ = (
        "data_type",
        "engine",
        "fill",
        "first_fill",
        "orthogonal",
        "streamed",
        "value",
        "write_empty",
    )

    def __init__(self, engine: ChunkEngine, indexer: Indexer, value: np.ndarray) -> None:
        meta = engine.metadata
        self.engine = engine
        self.value = value
        self.orthogonal: bool = getattr(indexer, "orthogonal", False)
        self.data_type = meta.data_type
        self.fill = meta.fill_value
        wanted = engine.write_empty
        if wanted is None:
            wanted = config.get().write_empty_chunks
        self.write_empty = wanted or meta.keep_fill_chunks
        dtype = engine.dtype
        self.first_fill = (
            None
            if dtype.hasobject
            else np.asarray(self.fill, dtype=dtype).reshape(1).view(np.uint8).tobytes()
        )
        regular = engine.regular_plan
        self.streamed = stream_size(
            engine.store,
            engine.chunk_nbytes,
            views=regular is not None and regular.passes_views,
        )

    def stream(self, batch: ChunkWrites) -> None:
        """A thread's share of wholly written chunks, stored as they are encoded."""
        with self.engine.store.writing() as target:
            self.encode(batch, {}, target)

    def encode_to(self, uploads: Uploads, batch: ChunkWrites) -> None:
        """A thread's share of wholly written chunks, handed on to `uploads` as they are
        encoded, its first groups small (`Uploads.group_size`)."""
        self.encode(batch, {}, uploads, uploads.group_size)

    def encode(
        self,
        batch: ChunkWrites,
        existing: dict[str, Any],
        target: _Target | None = None,
        group_size: Callable[[int], int] | None = None,
    ) -> dict[str, Any]:
        """Encode a share of a batch over the `existing` values of the chunks it covers
        partly; with a `target`, store it there as it goes, in groups of `streamed` chunks
        or of what `group_size` makes of that. The new values by key (None: the chunk is all
        fill, to be erased)."""
        bound, streamed, value = self.engine.bound, self.streamed, self.value
        group = streamed if group_size is None else group_size(streamed)
        write_empty, first_fill, fill = self.write_empty, self.first_fill, self.fill
        equals_fill = self.data_type.chunk_equals_fill
        mine: dict[str, Any] = {}
        for proj, key in batch:
            chain = bound(proj.coords)
            if not proj.is_complete and chain.can_encode_partial:
                mine[key] = self._encode_partial(proj, key, chain, existing.pop(key, None))
                continue
            if (
                chain.takes_views
                and proj.is_complete
                and _whole_chunk(proj.chunk_selection, chain.spec.shape)
            ):
                chunk = value[proj.out_selection]  # the chunk as it is: no copy
            else:
                chunk = self.merged(proj, key, chain, existing.pop(key, None))
            # a chunk all fill is erased rather than stored (`encoded`, inlined: tiny chunks
            # feel each call)
            if not write_empty and _maybe_fill(chunk, first_fill) and equals_fill(chunk, fill):
                mine[key] = None
            else:
                mine[key] = chain.encode(chunk, key)
            if target is not None and len(mine) >= group:
                _store_results(target, mine)
                mine = {}
                if group_size is not None:
                    group = group_size(streamed)
        if target is not None:
            _store_results(target, mine)
        return mine

    def encoded(self, chunk: np.ndarray, chain: ChunkPlan) -> Any:
        """The chunk's new stored value; None for a chunk all fill, which is erased rather
        than stored, unless fill chunks are kept (a cheap look at its first element before
        the data type's full check)."""
        if (
            not self.write_empty
            and _maybe_fill(chunk, self.first_fill)
            and self.data_type.chunk_equals_fill(chunk, self.fill)
        ):
            return None
        return chain.encode(chunk)

    def _encode_partial(self, proj: ChunkProjection, key: str, chain: ChunkPlan, old: Any) -> Any:
        """The new value of a chunk the chain re-encodes from its old value itself."""
        region = indexing.chunk_region(proj.chunk_selection, chain.spec.shape, self.orthogonal)
        return chain.encode_partial(old, region, _updater(proj, self.value), key)

    def merged(self, proj: ChunkProjection, key: str, chain: ChunkPlan, old: Any) -> np.ndarray:
        """The chunk to encode: the written values over what it starts from, which is its old
        contents (`old`, decoded) where the write covers it partly."""
        dtype, shape = self.engine.dtype, chain.spec.shape
        if proj.is_complete:
            if self._inside_array(proj.coords, shape):
                chunk = np.empty(shape, dtype=dtype)
            else:
                chunk = np.full(shape, self.fill, dtype=dtype)
        elif old is None:
            chunk = np.full(shape, self.fill, dtype=dtype)
        else:
            chunk = chain.decode(old, key)
            if not (chunk.flags.writeable and chunk.flags.c_contiguous):
                chunk = np.array(chunk)
        chunk[proj.chunk_selection] = self.value[proj.out_selection]
        return chunk

    def _inside_array(self, coords: Sequence[int], shape: Sequence[int]) -> bool:
        meta = self.engine.metadata
        grid, array_shape = meta.chunk_grid, meta.shape
        if grid.uniform_chunk_shape is not None:  # chunk i starts at i * size
            return all((c + 1) * n <= s for c, n, s in zip(coords, shape, array_shape))
        return all(
            int(grid.chunk_start(d, np.asarray(c))) + n <= s
            for d, (c, n, s) in enumerate(zip(coords, shape, array_shape))
        )

    def update(self, items: ChunkWrites, threaded: bool) -> None:
        """Write a batch that covers some chunks partly: the whole chunks are encoded first,
        then the partly covered ones are read, merged and written in one `store.update_many`
        (safe against writers in other processes on a store that has `safe_updates`, unless
        the `safe_updates` setting is off), then the whole chunks are stored. The old values
        are read under the engine's value limit (`limiting_values`)."""
        store = self.engine.store
        whole = items.where(lambda proj, _: proj.is_complete)
        parts = items.where(lambda proj, _: not proj.is_complete)
        results: dict[str, Any] = {}
        if whole:
            executor.run_batched(partial(self._encode_into, results, {}), whole, parallel=threaded)
        keys = parts.keys
        merge = partial(self._merge, parts, threaded)
        with limiting_values(self.engine.value_limit):
            if config.get().safe_updates:
                store.update_many(keys, merge)
            else:
                unguarded_update(store, keys, merge)
        _store_results(store, results)

    def _encode_into(
        self, results: dict[str, Any], existing: dict[str, Any], share: ChunkWrites
    ) -> None:
        results.update(self.encode(share, existing))

    def _merge(
        self,
        parts: ChunkWrites,
        threaded: bool,
        keys: Sequence[str],
        old: Mapping[str, Any],
    ) -> dict[str, Any]:
        """`store.update_many`'s compute: the new values of the partly covered chunks `keys`
        from their `old` values."""
        wanted = set(keys)
        new: dict[str, Any] = {}
        executor.run_batched(
            partial(self._encode_into, new, dict(old)),
            parts.where(lambda _, key: key in wanted),
            parallel=threaded,
        )
        return new


class _WriteMany:
    """Many selections written as one (`ChunkEngine.write_many`): for each chunk, the writes
    that touch it, in the order given."""

    __slots__ = ("engine", "writes")

    def __init__(self, engine: ChunkEngine, items: Sequence[tuple[Indexer, np.ndarray]]) -> None:
        self.engine = engine
        self.writes: dict[str, list[tuple[_Write, ChunkProjection]]] = {}
        for indexer, value in items:
            job = _Write(engine, indexer, value)
            projections = list(indexer)
            for proj, key in zip(projections, engine.keys(projections)):
                self.writes.setdefault(key, []).append((job, proj))

    def keys(self) -> list[str]:
        return sorted(self.writes)

    def write(self, keys: Sequence[str]) -> None:
        """One group of chunks, under their keys' locks: those some selection covers whole
        are encoded first, then the others are read, merged and written in one
        `store.update_many` (as `_Write.update` does), then the first ones are stored."""
        engine = self.engine
        store = engine.store
        covered = [k for k in keys if any(p.is_complete for _, p in self.writes[k])]
        parts = sorted(set(keys).difference(covered))
        with locked(keys):
            try:
                results = {key: self.encode(key, None) for key in covered}
                if parts:
                    with limiting_values(engine.value_limit):
                        if config.get().safe_updates:
                            store.update_many(parts, self.merge)
                        else:
                            unguarded_update(store, parts, self.merge)
                _store_results(store, results)
            finally:
                engine.forget_indexes()

    def merge(self, keys: Sequence[str], old: Mapping[str, Any]) -> dict[str, Any]:
        """`store.update_many`'s compute."""
        return {key: self.encode(key, old.get(key)) for key in keys}

    def encode(self, key: str, old: Any) -> Any:
        """The chunk's new value from its `old` one (not needed when a write covers it whole:
        the chunk starts from the last such write)."""
        writes = self.writes[key]
        first, proj = writes[0]
        chain = self.engine.bound(proj.coords)
        whole = [i for i, (_, p) in enumerate(writes) if p.is_complete]
        if not whole and chain.can_encode_partial:
            shape = chain.spec.shape
            region = indexing.union_region(
                [indexing.chunk_region(p.chunk_selection, shape, j.orthogonal) for j, p in writes]
            )
            return chain.encode_partial(old, region, partial(_apply, writes), key)
        if whole:
            writes = writes[whole[-1] :]
        job, proj = writes[0]
        chunk = job.merged(proj, key, chain, old)
        _apply(writes[1:], chunk)
        return first.encoded(chunk, chain)


def _apply(writes: Sequence[tuple[_Write, ChunkProjection]], chunk: np.ndarray) -> None:
    """The writes' values placed in a chunk, in order."""
    for job, proj in writes:
        chunk[proj.chunk_selection] = job.value[proj.out_selection]


def result_array(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """The array a read returns; a selection too large to hold is refused as a selection."""
    try:
        return np.empty(shape, dtype=dtype)
    except (ValueError, MemoryError):
        nbytes = math.prod(shape) * dtype.itemsize
        raise SelectionError(
            f"the selection has shape {shape} ({nbytes} bytes): too large "
            f"to hold in memory; read it in parts"
        ) from None


def first_chunk(indexer: Indexer) -> tuple[int, ...]:
    """The grid coordinates of the first chunk a selection touches (() for none)."""
    first = next(iter(indexer), None)
    return () if first is None else tuple(first.coords)


def _store_results(store: _Target, results: dict[str, Any]) -> None:
    """Encoded chunks in one `set_many`; chunks now all fill (None) in one `erase_many`."""
    encoded = {k: v for k, v in results.items() if v is not None}
    if encoded:
        store.set_many(encoded)
    empty = [k for k, v in results.items() if v is None]
    if empty:
        store.erase_many(empty)


def _place(out: np.ndarray, proj: ChunkProjection, chunk: np.ndarray) -> None:
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


def _updater(proj: ChunkProjection, value: np.ndarray) -> Callable[[np.ndarray], None]:
    """What a partial encoder calls to write this projection's values into a chunk."""

    def update(chunk: np.ndarray) -> None:
        chunk[proj.chunk_selection] = value[proj.out_selection]

    return update


def _groups(items: executor.D, size: int) -> Iterator[executor.D]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def chunk_batches(indexer: Iterable[ChunkProjection], size: int) -> Iterator[list[ChunkProjection]]:
    it = iter(indexer)
    while batch := list(itertools.islice(it, size)):
        yield batch
