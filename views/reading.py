"""Reading and writing views through the chunk engine: each view is one engine selection on
its base array (`planning`), and many views of an array are read as the engine reads many
selections, in one plan (`Array.get_many`'s): a chunk or shard several views share is fetched
once and the byte ranges of their inner chunks are coalesced.

This module hands views' selections to the kernel's engine; awaited reads on a store with
awaitable reads go there through `batched` (the reads of one array started in one turn of the
loop, joined) and `together` (several selections read as one awaited plan).
"""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import numpy as np

from zarrkit import indexing
from zarrkit.abc.store import AwaitableReads
from zarrkit.errors import ValueCastError

from .batched import batched_read
from .planning import CoordinatePlan, OrthogonalPlan, Plan, plan

if TYPE_CHECKING:
    from zarrkit.array import Array
    from zarrkit.indexing import Indexer

    from .view import LazyArray


def read_many(views: Iterable[LazyArray]) -> list[np.ndarray]:
    """The values of each view, in order, read together: the views of one array are read in
    one plan of the engine (as `Array.get_many` reads selections), so chunks and shards they
    share are fetched once and 100 windows of a sharded array cost a few requests per shard.

    views: `zarrkit.LazyArray`s, of one array or of several (each array's are read together).
    Raises the errors a read raises (`StoreError`, `ChunkDecodeError`, ...); every view is
    planned before anything is read.
    """
    views = list(views)
    plans = [plan(v.transform) for v in views]
    results: list[Any] = [None] * len(views)
    by_array: dict[int, list[int]] = {}
    for i, view in enumerate(views):
        by_array.setdefault(id(view.array), []).append(i)
    for members in by_array.values():
        array = views[members[0]].array
        reading = [i for i in members if views[i].size]
        answers = array._engine.read_many(_indexer(array, plans[i]) for i in reading)
        for i, answer in zip(reading, answers):
            results[i] = plans[i].to_view(np.asarray(answer))
        for i in members:
            if not views[i].size:
                results[i] = np.empty(views[i].shape, dtype=array.dtype)
    return results


def started(views: Sequence[LazyArray]) -> Future[list[np.ndarray]]:
    """`read_many(views)` started now, as a future. It runs on a thread of its own, outside
    the engine's pools, because `read_many` waits on those pools."""
    return _planner().submit(read_many, views)


async def read_many_async(views: Iterable[LazyArray]) -> list[np.ndarray]:
    """`read_many(views)`, awaited: the event loop runs on while the views are read.

    Views of arrays whose stores have awaitable reads (`zarrkit.abc.AwaitableReads`: obstore,
    fsspec, zarr-python's stores) are read natively, the requests the store's own coroutines,
    and with every other awaited read of their array started in this turn of the loop, in one
    plan (`batched`); once one fails, the others are cancelled. Other views are read by
    `read_many` on a thread.

    views: `zarrkit.LazyArray`s. Raises what `read_many` raises.
    """
    views = list(views)
    if not all(isinstance(v.array._engine.store, AwaitableReads) for v in views):
        return await asyncio.wrap_future(started(views))
    plans = [plan(v.transform) for v in views]
    reads = [asyncio.ensure_future(_read_natively(v, found)) for v, found in zip(views, plans)]
    try:
        return list(await asyncio.gather(*reads))
    finally:
        for read in reads:
            read.cancel()
        if reads:
            await asyncio.wait(reads)


async def _read_natively(view: LazyArray, found: Plan) -> np.ndarray:
    array = view.array
    if not view.size:
        return np.empty(view.shape, dtype=array.dtype)
    values = await batched_read(array._engine, _indexer(array, found), None)
    return found.to_view(np.asarray(values))


def read_one(view: LazyArray) -> np.ndarray:
    """The values of one view, as an array of its shape."""
    if not view.size:
        return np.empty(view.shape, dtype=view.dtype)
    found = plan(view.transform)
    array = view.array
    if isinstance(found, OrthogonalPlan):
        values = array.oindex[found.selection]
    else:
        values = array.vindex[found.coordinates]
    return found.to_view(np.asarray(values))


def write(view: LazyArray, value: Any) -> None:
    """Write `value` (broadcast to the view's shape as numpy assigns) to the view's elements
    of its base array. Raises `ValueCastError` for a value that does not broadcast or cast,
    `ReadOnlyError` for an array opened read-only."""
    found = plan(view.transform)
    array = view.array
    scalar = np.ndim(value) == 0 and not isinstance(value, np.ndarray)
    # (a view or an array as the value is read whole here, through its __array__)
    values = value if scalar else _broadcast(np.asarray(value), view.shape)
    if not view.size:
        return
    if isinstance(found, OrthogonalPlan):
        selection, kept = found.for_write(np.broadcast_to(values, view.shape))
        array.oindex[selection] = value if scalar else kept
    else:
        coordinates, flat = found.for_write(np.broadcast_to(values, view.shape), array.shape)
        array.vindex[coordinates] = value if scalar else flat


def _broadcast(value: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """`value` broadcast to `shape` as numpy assigns: leading length-1 axes beyond the
    selection's dimensions are dropped first."""
    while value.ndim > len(shape) and value.shape[0] == 1:
        value = value[0]
    try:
        return np.broadcast_to(value, shape)
    except ValueError:
        raise ValueCastError(
            f"a value of shape {value.shape} cannot be written to a view of shape {shape}"
        ) from None


def _indexer(array: Array, found: Plan) -> Indexer:
    grid = array.metadata.chunk_grid
    if isinstance(found, CoordinatePlan):
        return indexing.vectorized_indexer(found.coordinates, array.shape, grid)
    return indexing.orthogonal_indexer(found.selection, array.shape, grid)


@functools.cache
def _planner() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=4, thread_name_prefix="zarrkit-views")


# a forked child inherits the pool without its threads: it makes a new one
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_planner.cache_clear)
