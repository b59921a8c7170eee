"""Awaited reads of one array started in the same turn of the event loop, read as one: 100
windows gathered at once (`asyncio.gather` over `AsyncArray.getitem`, a tile server answering
many requests, `read_many_async` of views) share one plan (`together.read_together`), so a
chunk, a shard index or a byte range that several of them need is fetched once.

Each read joins its array handle's batch for this turn of the loop (`batched_read`): the
first one of the turn schedules the batch to start once the turn ends (`loop.call_soon`), so
the reads a gather starts all join it and a lone read waits no longer than that turn. Then a
batch of one reads as an awaited read alone does (`awaiting.read`); a batch of several reads
together, each read into an array of its own and handed its values (or its error) when the
batch ends. A store without awaitable reads has no batches: each read goes to the I/O pool.

Cancelling: a cancelled read's values are dropped while the others go on; once no read of a
batch waits for it any more, the batch is cancelled, its requests with it, and the last read
cancelled returns when nothing of the batch runs. Errors: a chunk that does not decode fails
the reads that need it; a store call that fails for a key (`StoreError.key`) fails the reads
that need that chunk or shard, and the others are read again together; a failure that names
no key the batch needs fails them all.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from typing import Any

import numpy as np

from zarrkit.abc.store import AwaitableReads
from zarrkit.engine import ChunkEngine, awaiting
from zarrkit.indexing import Indexer

from .together import Reading, read_together


class _Caller:
    """One read waiting in a batch: its selection, the array it asked to be read into (None:
    a new one) and the future its values come in."""

    __slots__ = ("future", "indexer", "out")

    def __init__(self, indexer: Indexer, out: np.ndarray | None, future: asyncio.Future[Any]):
        self.indexer = indexer
        self.out = out
        self.future = future


class _Batch:
    """The reads of one engine joined in one turn of a loop; `task` reads them once the turn
    has ended (None until then)."""

    __slots__ = ("callers", "task")

    def __init__(self) -> None:
        self.callers: list[_Caller] = []
        self.task: asyncio.Task[None] | None = None


#: per event loop, the batch of each engine that reads of this turn join
_JOINING: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[ChunkEngine, _Batch]] = (
    weakref.WeakKeyDictionary()
)
_LOCK = threading.Lock()  # (loops in several threads join batches of their own)


async def batched_read(engine: ChunkEngine, indexer: Indexer, out: np.ndarray | None) -> Any:
    """The values of a checked selection (`indexer`; into `out` when given, of its shape),
    as `ChunkEngine.read` returns them, read with every other awaited read of `engine`
    started in this turn of the running loop. Raises what the read of it raises."""
    if not isinstance(engine.store, AwaitableReads):
        return await awaiting.read(engine, indexer, out)
    batch, caller = _join(engine, indexer, out)
    try:
        return await caller.future
    except asyncio.CancelledError:
        await _left(batch)
        raise


def _join(engine: ChunkEngine, indexer: Indexer, out: np.ndarray | None) -> tuple[_Batch, _Caller]:
    loop = asyncio.get_running_loop()
    with _LOCK:
        joining = _JOINING.setdefault(loop, {})
    batch = joining.get(engine)
    if batch is None:
        batch = joining[engine] = _Batch()
        loop.call_soon(_start, loop, joining, engine)
    caller = _Caller(indexer, out, loop.create_future())
    batch.callers.append(caller)
    return batch, caller


def _start(
    loop: asyncio.AbstractEventLoop, joining: dict[ChunkEngine, _Batch], engine: ChunkEngine
) -> None:
    """The turn has ended: the batch starts with the reads still waiting."""
    batch = joining.pop(engine)
    waiting = [c for c in batch.callers if not c.future.done()]
    if waiting:
        batch.task = loop.create_task(_read(engine, waiting))


async def _left(batch: _Batch) -> None:
    """A read of `batch` was cancelled. Once no read waits for the batch, it is cancelled
    and this returns when nothing of it runs."""
    task = batch.task
    if task is None or task.done() or not all(c.future.done() for c in batch.callers):
        return
    task.cancel()
    await asyncio.wait([task])


async def _read(engine: ChunkEngine, callers: list[_Caller]) -> None:
    """A batch read, each caller handed its values or its error."""
    try:
        if len(callers) == 1:
            await _read_alone(engine, callers[0])
            return
        while callers := [c for c in callers if not c.future.done()]:
            readings = [Reading(c.indexer) for c in callers]
            try:
                await read_together(engine, readings)
            except Exception as error:
                for caller in _needing(engine, callers, error):
                    _hand(caller, error=error)
                continue  # (the others again)
            for caller, reading in zip(callers, readings):
                if reading.error is not None:
                    _hand(caller, error=reading.error)
                else:
                    _hand(caller, _values(caller, reading.out))
    finally:
        for caller in callers:  # (this batch was cancelled, as when its loop closes)
            if not caller.future.done():
                caller.future.cancel()


async def _read_alone(engine: ChunkEngine, caller: _Caller) -> None:
    """A batch of one, read as an awaited read of it alone is: into the caller's `out` when
    it has the array's data type (else into a new array, then copied)."""
    into = caller.out if caller.out is not None and caller.out.dtype == engine.dtype else None
    try:
        values = await awaiting.read(engine, caller.indexer, into)
    except Exception as error:
        _hand(caller, error=error)
        return
    _hand(caller, values if into is caller.out else _values(caller, np.asarray(values)))


def _values(caller: _Caller, out: Any) -> Any:
    """What a caller's read returns: its values, copied into its `out` (cast as numpy
    assigns) when it gave one; a 0-d result as a scalar otherwise."""
    if caller.future.done():  # (cancelled: its `out` is left alone)
        return None
    if caller.out is not None:
        caller.out[...] = out
        return caller.out
    return out[()] if out.shape == () else out


def _hand(caller: _Caller, values: Any = None, error: BaseException | None = None) -> None:
    """The caller's values or error, unless it was cancelled meanwhile."""
    if caller.future.done():
        return
    if error is not None:
        caller.future.set_exception(error)
    else:
        caller.future.set_result(values)


def _needing(engine: ChunkEngine, callers: list[_Caller], error: Exception) -> list[_Caller]:
    """The callers a failed store call fails: those reading the key it names (a chunk or a
    shard), or all of them when it names none of theirs."""
    key = getattr(error, "key", None)
    needing = [c for c in callers if key is not None and key in engine.keys(list(c.indexer))]
    return needing or callers


__all__ = ["batched_read"]
