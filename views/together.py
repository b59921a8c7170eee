"""Selections of one array read together and awaited: what `ChunkEngine.read_many` does for
threads, done for an event loop. The selections are grouped as `read_many` groups them (in
the order of the first chunk they touch, each group touching at most `GROUP_BYTES` of
chunks); a group's whole chunks are fetched in one awaited call and its partial decodes
(inner chunks of shards) run in one lockstep (`awaiting.drive`), so a chunk, a shard index
or a byte range several selections need is fetched once and neighbouring ranges merge. A
selection too big for a group is read alone, as an awaited read of it alone goes
(`awaiting.read`). At most two groups are read at once, as a read holds at most two batches.

Requests are the store's own coroutines (`AwaitableReads`); decoding runs on the chunk pool.
"""

from __future__ import annotations

import asyncio
from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrkit import executor
from zarrkit.abc.codec import RangeReads
from zarrkit.engine import ChunkEngine, awaiting, parallel
from zarrkit.engine.chunks import (
    GROUP_BYTES,
    PartialRead,
    ReadJob,
    WholeReads,
    first_chunk,
    result_array,
)
from zarrkit.engine.sizing import selection_groups
from zarrkit.errors import SelectionError
from zarrkit.indexing import Indexer

#: groups of selections read at once (each holds its chunks' stored values while it decodes)
_GROUPS_AT_ONCE = 2


@dataclass(eq=False, slots=True)
class Reading:
    """One selection read together with others: its values land in `out` (a new array, made
    by the read); `error` is what kept it from being read, when something did (a chunk it
    needs that does not decode, a selection too large to hold)."""

    indexer: Indexer
    out: np.ndarray | None = None
    error: BaseException | None = None


async def read_together(engine: ChunkEngine, readings: Sequence[Reading]) -> None:
    """Read the selections of `readings` in a few groups (see the module's docstring), each
    reading's values into a new array (`out`) or what failed it into its `error`. A failure
    that is no one selection's (a store call that fails) is raised, once the reads still
    running are cancelled. `engine.store` has awaitable reads (`zarrkit.abc.AwaitableReads`)."""
    for reading in readings:
        try:
            reading.out = result_array(reading.indexer.shape, engine.dtype)
        except SelectionError as error:  # (too large to hold)
            reading.error = error
    order = sorted((r for r in readings if r.error is None), key=lambda r: first_chunk(r.indexer))
    costs = [engine.group_cost(r.indexer) for r in order]
    groups = [[order[i] for i in g] for g in selection_groups(costs, GROUP_BYTES, 1)]
    reads = (
        _read_group(engine, group) if len(group) > 1 else _read_alone(engine, group[0])
        for group in groups
    )
    await awaiting.in_turn(reads, at_once=_GROUPS_AT_ONCE)


async def _read_alone(engine: ChunkEngine, reading: Reading) -> None:
    """A selection read as an awaited read of it alone reads it, in batches; whatever fails
    it is its own."""
    try:
        await awaiting.read(engine, reading.indexer, reading.out)
    except Exception as error:
        reading.error = error


async def _read_group(engine: ChunkEngine, group: Sequence[Reading]) -> None:
    """Selections read as one (`ChunkEngine._read_together`, awaited): every chunk any of
    them reads whole fetched once in one call and decoded on the chunk pool, a share per
    thread; their partial decodes driven in one lockstep."""
    store: Any = engine.store
    jobs = [(r, ReadJob(engine, r.indexer, r.out)) for r in group if r.out is not None]
    plans = [job.plan(list(reading.indexer)) for reading, job in jobs]
    keys = list(dict.fromkeys(key for whole, _ in plans for key in whole.keys))
    if keys:
        limit = engine.value_limit
        blobs = await awaiting.on_loop(store.reads_loop(), store.read_many_async(keys, limit))
        n = min(executor.threads(), len(keys)) if parallel(engine.chunk_nbytes) else 1
        shares = [[(*j, whole[i::n]) for j, (whole, _) in zip(jobs, plans)] for i in range(n)]
        await asyncio.gather(*[_on_cpu(_decode_share, blobs, share) for share in shares])
        del blobs
    parts = [(*j, item) for j, (_, partial) in zip(jobs, plans) for item in partial]
    if parts:
        decodes = [(item.key, _guarded(item.decode)) for _, _, item in parts]
        boxes = await awaiting.drive(engine, store, decodes)
        await _on_cpu(_place_all, parts, boxes)


def _on_cpu(call: Any, *args: Any) -> Any:
    return awaiting.awaited(executor.chunk_pool().submit(call, *args))


def _decode_share(blobs: dict[str, Any], share: list[tuple[Reading, ReadJob, WholeReads]]) -> None:
    """A thread's share of the group's whole chunks, decoded into their selections' outputs;
    a chunk that does not decode fails the selection it is decoded for, and the others go on."""
    for reading, job, whole in share:
        if whole and reading.error is None:
            try:
                job.decode_whole(blobs, whole)
            except Exception as error:
                reading.error = error


@dataclass(frozen=True, slots=True)
class _Failed:
    """In place of a partial decode's result: what it raised."""

    error: Exception


def _guarded(decode: RangeReads[Any]) -> Generator[Any, Any, Any]:
    """A partial decode whose error becomes its result (`_Failed`), so that it fails the
    selection it is for rather than the lockstep of every selection."""
    try:
        return (yield from decode)
    except Exception as error:
        return _Failed(error)


def _place_all(parts: Sequence[tuple[Reading, ReadJob, PartialRead]], boxes: Sequence[Any]) -> None:
    for (reading, job, item), box in zip(parts, boxes):
        if isinstance(box, _Failed):
            reading.error = reading.error or box.error
        elif reading.error is None:
            job.place(item, box)


__all__ = ["Reading", "read_together"]
