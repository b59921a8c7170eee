"""The one thread pool for chunk work.

Work is handed out as one pool task per thread, because a pool task costs tens of microseconds
and chunks can be cheaper than that; each task then works through the items `Runs` hands it.
The calling thread takes a share itself, and a call made while the pool is busy with an outer
call (from a pool thread, or from the caller's own share) runs inline, so nested use can never
deadlock the pool. A call whose outer call had a single item did not use the pool, so it spreads
out: a read of one shard decodes its inner chunks on every thread.

A forked child starts with no pool: the parent's pool object would still count its threads,
which the child does not have, and its first batch would wait for them forever.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Protocol, Self, TypeVar

from . import config, forksafe


class Divisible(Protocol):
    """What `run_batched` shares out among threads: a sized sequence whose slices are of its
    own kind (a list, or the engine's side-by-side lists of chunks)."""

    def __len__(self) -> int: ...

    def __getitem__(self, part: slice, /) -> Self: ...


D = TypeVar("D", bound=Divisible)

_lock = forksafe.lock()
_local = threading.local()


class _Pool:
    """A thread pool of the size last asked for: a new size (the `threads` or `io_concurrency`
    setting changed) replaces it, the old one finishing its work on its own."""

    def __init__(self, prefix: str) -> None:
        self._prefix = prefix
        self._pool: ThreadPoolExecutor | None = None
        self._size = 0

    def get(self, size: int) -> ThreadPoolExecutor:
        with _lock:
            if self._pool is None or self._size != size:
                if self._pool is not None:
                    self._pool.shutdown(wait=False)
                self._pool = ThreadPoolExecutor(
                    max_workers=size, thread_name_prefix=self._prefix, initializer=_mark_worker
                )
                self._size = size
            return self._pool

    def forget(self) -> None:
        self._pool, self._size = None, 0


#: chunk work (`run_batched`), whole reads and writes at once (`io_pool`), and store calls
#: the engine waits on beside its chunk work (`transfer_pool`)
_chunk_pool = _Pool("zarrkit")
_io = _Pool("zarrkit-io")
_transfer = _Pool("zarrkit-transfer")


def _forget_pool() -> None:
    """In a forked child: the pools' threads stayed behind in the parent."""
    global _local
    _chunk_pool.forget()
    _io.forget()
    _transfer.forget()
    _local = threading.local()


forksafe.at_fork(_forget_pool)


def _mark_worker() -> None:
    _local.worker = True


def threads() -> int:
    return max(1, config.get().threads)


def run_batched(
    work: Callable[[D], None], items: D, *, parallel: bool = True, min_part: int | None = None
) -> None:
    """Run `work` over `items` on the calling thread and the pool's; re-raise the first error.

    Each thread owns a run of consecutive items (`Runs`). By default `work` gets a thread's
    whole run in one call, and a thread whose run is done takes over a run no thread has
    started. With `min_part`, `work` gets a run in parts of at least that many items, and a
    thread whose run is done takes parts from the end of another's.

    `parallel=False` runs it all in the caller: for work that holds the GIL most of the time
    (tiny chunks), threads only take turns with the GIL and are slower than one thread."""
    run_in_parts(partial(each_part, work), items, parallel=parallel, min_part=min_part)


def run_in_parts(
    work: Callable[[Iterator[D]], None],
    items: D,
    *,
    parallel: bool = True,
    min_part: int | None = None,
) -> None:
    """`run_batched`, with `work` called once per thread on the parts it is handed as they
    come (so that what it sets up for a share, a store's `reading()`, serves all of its
    parts). With `min_part` a thread whose run is done takes parts from the end of the run
    with the most left (`Runs`)."""
    n = min(threads(), len(items)) if parallel else 1
    if n <= 1 or getattr(_local, "worker", False):
        work(iter((items,)))
        return
    runs = Runs(len(items), n, min_part)
    pool = _chunk_pool.get(max(1, threads() - 1))
    futures = [pool.submit(share_of, work, items, runs, owner) for owner in range(1, n)]
    error: BaseException | None = None
    _local.worker = True  # the caller's share runs nested calls inline too, as workers do
    try:
        share_of(work, items, runs, 0)
    except BaseException as exc:  # still wait for the others before raising
        error = exc
    finally:
        _local.worker = False
    for future in futures:
        try:
            future.result()
        except BaseException as exc:
            error = error or exc
    if error is not None:
        raise error


def share_of(work: Callable[[Iterator[D]], None], items: D, runs: Runs, owner: int) -> None:
    """Thread `owner`'s share of `run_in_parts`: `work` on the parts `runs` hands it; after
    an error nothing more is handed out to any thread."""
    try:
        work(_parts(items, runs, owner))
    except BaseException:
        runs.stop()
        raise


def _parts(items: D, runs: Runs, owner: int) -> Iterator[D]:
    while (span := runs.next(owner)) is not None:
        yield items[span.start : span.stop]


def each_part(work: Callable[[D], None], parts: Iterator[D]) -> None:
    """`work` on each part in turn: a per-part `work` as `run_in_parts` (or `share_of`) takes it."""
    for part in parts:
        work(part)


class Runs:
    """How the items of a `run_batched` or `run_in_parts` call are handed out.

    Each of the `n` threads owns a run of consecutive items (lengths at most one apart), and
    a thread whose run is done takes parts from the end of the longest run left. Without
    `min_part` a run is one part; with it, parts of `min_part` items or more (about
    `_PARTS_PER_THREAD` per thread), so that threads end a batch together when one is held
    up (page faults, a busy pool).

    Runs, not one queue in order nor every n-th item: a thread's items are then neighbours,
    which share a store's folders, and the threads work in places far apart. Two threads that
    first touch the same 2 MiB of a fresh output at once each get a huge page cleared for it,
    and the kernel throws one away: with a read's chunks handed out in order, both threads
    start each row of chunks together and clear most of the output twice."""

    __slots__ = ("_back", "_front", "_lock", "_unit")

    def __init__(self, total: int, n: int, min_part: int | None = None) -> None:
        if min_part is not None:  # (no run shorter than a part: fewer runs than threads)
            n = max(1, min(n, total // min_part))
        size, extra = divmod(total, n)
        bounds = [i * size + min(i, extra) for i in range(n + 1)]
        if min_part is None:
            self._unit = size + 1
        else:
            self._unit = max(min_part, -(-total // (n * _PARTS_PER_THREAD)))
        self._front = bounds[:-1]
        self._back = bounds[1:]
        self._lock = threading.Lock()

    def next(self, owner: int) -> slice | None:
        """The next items for thread `owner`, None when every run is handed out."""
        with self._lock:
            front, back, unit = self._front, self._back, self._unit
            if owner >= len(front):  # (more owners than runs: they start on the first)
                owner = 0
            lo = front[owner]
            if lo < back[owner]:
                front[owner] = stop = min(back[owner], lo + unit)
                return slice(lo, stop)
            other = max(range(len(front)), key=lambda i: back[i] - front[i])
            hi = back[other]
            if front[other] >= hi:
                return None
            back[other] = start = max(front[other], hi - unit)
            return slice(start, hi)

    def stop(self) -> None:
        """Hand out nothing more (a thread's work failed)."""
        with self._lock:
            self._back[:] = self._front


#: parts per thread of a `min_part` call: enough that the threads end a batch together, few
#: enough that the per-part work stays small
_PARTS_PER_THREAD = 16


# -- whole reads and writes at once (`Array.read_async`, `get_many`) --------------------------------
def io_pool() -> ThreadPoolExecutor:
    """Threads that each run one whole read or write, `io_concurrency` of them: their time goes
    to waiting on a store, which costs no CPU, so there are as many as requests should be in
    flight. Each runs its chunk work inline (as a pool worker does), since handing it to the
    CPU-sized pool would queue one selection's round trips behind another's."""
    return _io.get(max(1, config.get().io_concurrency))


def transfer_pool() -> ThreadPoolExecutor:
    """Threads that wait on a remote store while the engine's threads decode or encode: a
    whole read's next batch fetched while the current one decodes, a write's uploads while
    its next chunks encode. A task here only calls the store (never waits on another task
    or on the other pools), so a full pool delays transfers but cannot deadlock; it has
    `io_concurrency` threads, as many as whole reads and writes may run at once. Its
    threads run nested chunk work inline, as pool workers do."""
    return _transfer.get(max(1, config.get().io_concurrency))


def chunk_pool() -> ThreadPoolExecutor:
    """The threads `run_batched` hands chunk work to, for work an event loop awaits
    (`engine.awaiting`: decoding what an awaited read fetched) rather than a thread joins."""
    return _chunk_pool.get(max(1, threads() - 1))
