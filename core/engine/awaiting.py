"""The chunk engine's path for an event loop: a read or write that a coroutine awaits
(`Array.read_awaitable`, `write_awaitable`; `zarrkit.AsyncArray` reads through `read` and
`drive`, many reads at once in one plan: `zarrkit.views.batched`).

A read is split in two. Fetching the stored bytes is awaited: on a store with awaitable
reads (`AwaitableReads`: obstore, fsspec, zarr-python's stores) they are the store's own
coroutines, run on the loop its client belongs to and bounded by the same concurrency limit as
its synchronous reads, with no thread blocked on a request. Decoding runs on the chunk pool and
is awaited there. Other stores are read on the I/O pool, as are writes.

Awaiting never blocks the running loop. A cancelled await returns only once nothing of it is
still running: requests in flight are cancelled (their connections released by the client),
work a thread has started is let finish. So a cancelled write leaves each chunk as it was or as
written, and a cancelled read into `out=` may have filled part of it.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Awaitable, Coroutine, Generator, Iterable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

import numpy as np

from .. import executor
from ..abc.codec import CacheableRange, RangeReads, lockstep
from ..abc.store import AwaitableReads, Range
from ..indexing import ChunkProjection, Indexer
from ..read_plan import plan_reads
from .chunks import ChunkEngine, PartialRead, ReadJob, chunk_batches, result_array
from .ranges import RangeCache
from .sizing import batch_size, parallel

T = TypeVar("T")


# -- awaiting work that runs elsewhere ------------------------------------------------------------
async def awaited(future: Future[T]) -> T:
    """The result of `future` (a pool's), awaited without blocking the loop. Cancelled, it
    cancels the work if it has not started and otherwise waits for it to end before the
    cancellation goes on, so nothing of it runs once the caller has been told."""
    waiting = asyncio.wrap_future(future)
    try:
        return await asyncio.shield(waiting)
    except asyncio.CancelledError:
        if not future.cancel():
            await asyncio.wait([waiting])
        raise


async def on_loop(loop: asyncio.AbstractEventLoop | None, coro: Coroutine[Any, Any, T]) -> T:
    """`coro` run on `loop` (a store client's; None or the running loop: here) and awaited
    here. Cancelled, the task there is cancelled, and this returns once it has ended."""
    here = asyncio.get_running_loop()
    if loop is None or loop is here:
        return await coro
    ended = here.create_future()

    def end() -> None:
        if not ended.done():
            ended.set_result(None)

    async def run() -> T:
        try:
            return await coro
        finally:
            if not here.is_closed():  # (a caller's loop may end before this does)
                here.call_soon_threadsafe(end)

    future = asyncio.run_coroutine_threadsafe(run(), loop)
    try:
        return await asyncio.wrap_future(future)
    except asyncio.CancelledError:
        future.cancel()
        if not ended.done() and not loop.is_closed():
            await asyncio.wait([ended])
        raise


def _on_cpu(call: Any, *args: Any) -> Awaitable[Any]:
    return awaited(executor.chunk_pool().submit(call, *args))


# -- reads ------------------------------------------------------------------------------------------
async def read(engine: ChunkEngine, indexer: Indexer, out: np.ndarray | None) -> Any:
    """The selection's values (into `out` when given, checked by the caller), as
    `ChunkEngine.read` returns them."""
    store = engine.store
    if not isinstance(store, AwaitableReads) or (out is not None and out.dtype != engine.dtype):
        return await awaited(executor.io_pool().submit(engine.read, indexer, out))
    given = out is not None
    target = result_array(indexer.shape, engine.dtype) if out is None else out
    job = ReadJob(engine, indexer, target)
    # a batch is read while the one before it decodes, as the synchronous read reads ahead
    # (`ReadJob.read_ahead`): at most two batches held
    batches = chunk_batches(indexer, batch_size(engine.chunk_nbytes, store))
    await in_turn((_read_batch(engine, store, job, batch) for batch in batches), at_once=2)
    return target[()] if target.shape == () and not given else target


async def in_turn(steps: Iterable[Coroutine[Any, Any, None]], at_once: int) -> None:
    """Await `steps` in their order with up to `at_once` of them running: each is started when
    the oldest of those running is done (the next under way while one finishes). When one
    fails, or the caller is cancelled, those still running are cancelled and awaited before
    the error goes on, and a second failure among them is not reported again."""
    running: list[asyncio.Task[None]] = []
    try:
        for step in steps:
            if len(running) >= at_once:
                await running[0]  # (still listed: cancelled with the rest if this is)
                running.pop(0)
            running.append(asyncio.ensure_future(step))
        while running:
            await running[0]
            running.pop(0)
    finally:
        for task in running:
            task.cancel()
        if running:
            await asyncio.wait(running)
        for task in running:
            if not task.cancelled():
                task.exception()


async def _read_batch(
    engine: ChunkEngine, store: AwaitableReads, job: ReadJob, batch: list[ChunkProjection]
) -> None:
    """A batch: its whole chunks fetched in one call and decoded on the chunk pool (shared out
    among its threads as `run_batched` shares them); its chunks read in part driven round by
    round."""
    whole, parts = job.plan(batch)
    if whole:
        keys = list(dict.fromkeys(whole.keys))
        blobs = await on_loop(store.reads_loop(), store.read_many_async(keys, engine.value_limit))
        n = min(executor.threads(), len(whole)) if parallel(engine.chunk_nbytes) else 1
        runs = executor.Runs(len(whole), n, min_part=1)
        await _all(
            [
                _on_cpu(
                    executor.share_of,
                    partial(executor.each_part, partial(job.decode_whole, blobs)),
                    whole,
                    runs,
                    i,
                )
                for i in range(n)
            ]
        )
        del blobs
    if parts:
        boxes = await drive(engine, store, [(p.key, p.decode) for p in parts])
        await _on_cpu(_place_all, job, parts, boxes)


async def _all(calls: list[Awaitable[T]]) -> list[T]:
    """Every call's result; all have ended before the first error is raised (so nothing of
    a failed read runs on)."""
    results = await asyncio.gather(*calls, return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return results  # type: ignore[return-value]


def _place_all(job: ReadJob, parts: Sequence[PartialRead], boxes: Sequence[Any]) -> None:
    for item, box in zip(parts, boxes):
        job.place(item, box)


async def drive(
    engine: ChunkEngine, store: AwaitableReads, reads: Sequence[tuple[str, RangeReads[Any]]]
) -> list[Any]:
    """`ranges.drive`, awaited: the partial decodes run in lockstep, in a lane per thread
    (`parallel` chunks) stepped on the chunk pool at once, so the last step, which decodes
    the inner chunks, runs on every thread; each round of all lanes is one awaited call."""
    n = min(executor.threads(), len(reads)) if parallel(engine.chunk_nbytes) else 1
    size = max(1, -(-len(reads) // max(1, n)))
    lanes = [
        lockstep([_keyed(*read) for read in reads[i : i + size]])
        for i in range(0, len(reads), size)
    ]
    steps = await _all([_on_cpu(_step, lane, None) for lane in lanes])
    while going := [i for i, step in enumerate(steps) if not step.done]:
        asked = [steps[i].value for i in going]
        answers = iter(await _answers(engine, store, [r for ranges in asked for r in ranges]))
        sends = [
            _on_cpu(_step, lanes[i], [next(answers) for _ in ranges])
            for i, ranges in zip(going, asked)
        ]
        for i, step in zip(going, await _all(sends)):
            steps[i] = step
    return [result for step in steps for result in step.value]


@dataclass(frozen=True, slots=True)
class _Stepped:
    """Where a lockstep run is after one step: the next round's requests, or its results."""

    done: bool
    value: Any


def _step(rounds: Generator[Any, Any, Any], answers: Any) -> _Stepped:
    # (a StopIteration must not cross a future: a coroutine would turn it into an error)
    try:
        return _Stepped(False, next(rounds) if answers is None else rounds.send(answers))
    except StopIteration as stop:
        return _Stepped(True, stop.value)


def _keyed(key: str, gen: RangeReads[Any]) -> Generator[list[Any], list[Any], Any]:
    try:
        ranges = next(gen)
        while True:
            answers = yield [(key, r) for r in ranges]
            ranges = gen.send(answers)
    except StopIteration as stop:
        return stop.value


async def _answers(engine: ChunkEngine, store: AwaitableReads, requests: list[Any]) -> list[Any]:
    """One round's answers; `CacheableRange` ranges (shard indexes) through the handle's cache, so
    many awaited reads of one shard fetch its index once."""
    cache = engine.index_cache
    plain = [(key, rng.range if isinstance(rng, CacheableRange) else rng) for key, rng in requests]
    if cache is None or not any(isinstance(rng, CacheableRange) for _, rng in requests):
        return await _fetch_ranges(engine, store, plain)
    lasting = [(key, rng.range) for key, rng in requests if isinstance(rng, CacheableRange)]
    known, mine, waits, generation = cache.claim(lasting)
    others = [r for r, (_, rng) in zip(plain, requests) if not isinstance(rng, CacheableRange)]
    fetched: dict[tuple[str, Range], Any] = {}
    inflight = _inflight(cache)
    done = asyncio.get_running_loop().create_future()
    for item in mine:
        inflight[item] = done
    try:
        answers = await _fetch_ranges(engine, store, [*mine, *others])
        fetched = dict(zip(mine, answers[: len(mine)]))
        by_request = dict(zip(others, answers[len(mine) :]))
    finally:
        cache.settle(fetched, mine, generation)
        for item in mine:
            inflight.pop(item, None)
        done.set_result(None)
    late = []
    for item, event in waits:
        fetching = inflight.get(item)
        if fetching is not None:  # another awaited read of this loop: its answer is near
            await asyncio.wait([fetching])
        elif not event.is_set():  # a thread's: not waited for here, fetched again
            late.append(item)
            continue
        value = cache.get(item)
        if value is None:
            late.append(item)
        else:
            fetched[item] = value
    if late:
        fetched.update(zip(late, await _fetch_ranges(engine, store, late)))
    return [
        (known[item] if item in known else fetched[item])
        if isinstance(rng, CacheableRange)
        else by_request[item]
        for (_key, rng), item in zip(requests, plain)
    ]


#: per range cache and event loop, the `CacheableRange` ranges an awaited read there is fetching
_Inflight = dict[tuple[str, Range], "asyncio.Future[None]"]
_INFLIGHT: weakref.WeakKeyDictionary[RangeCache, dict[asyncio.AbstractEventLoop, _Inflight]] = (
    weakref.WeakKeyDictionary()
)


def _inflight(cache: RangeCache) -> _Inflight:
    """The ranges of `cache` being fetched by awaited reads of the running loop (a loop's
    own futures only: another loop's cannot be awaited here)."""
    loops = _INFLIGHT.setdefault(cache, weakref.WeakKeyDictionary())  # type: ignore[arg-type]
    return loops.setdefault(asyncio.get_running_loop(), {})


async def _fetch_ranges(
    engine: ChunkEngine, store: AwaitableReads, requests: Sequence[tuple[str, Range | None]]
) -> list[Any]:
    """`ranges.fetch_ranges`, awaited: adjacent ranges of one key merged into one request."""
    loop, limit = store.reads_loop(), engine.value_limit
    plan = plan_reads(requests)
    if not plan.merges:
        return await on_loop(loop, store.read_ranges_async(list(requests), limit))
    return plan.views(await on_loop(loop, store.read_ranges_async(plan.reads, limit)))


# -- writes -----------------------------------------------------------------------------------------
async def write(engine: ChunkEngine, indexer: Indexer, value: np.ndarray) -> None:
    """`ChunkEngine.write`, awaited: the write runs on the I/O pool. Cancelled once it has
    started, it is let finish (see the module's docstring)."""
    await awaited(executor.io_pool().submit(engine.write, indexer, value))


__all__ = ["awaited", "drive", "on_loop", "read", "write"]
