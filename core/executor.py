"""The one thread pool for chunk work.

Work is handed out in batches, one per thread, because a pool task costs tens of microseconds
and chunks can be cheaper than that. The calling thread takes a batch itself, and a call made
while the pool is busy with an outer call (from a pool thread, or from the caller's own share)
runs inline, so nested use can never deadlock the pool. A call whose outer call had a single
item did not use the pool, so it spreads out: a read of one shard decodes its inner chunks on
every thread.

A forked child starts with no pool: the parent's pool object would still count its threads,
which the child does not have, and its first batch would wait for them forever.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
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


def run_batched(work: Callable[[D], None], items: D, *, parallel: bool = True) -> None:
    """Run `work` over `items` split into one batch per thread; re-raise the first error.

    Each batch is a run of consecutive items (`_runs`).

    `parallel=False` runs it all in the caller: for work that holds the GIL most of the time
    (tiny chunks), threads only take turns with the GIL and are slower than one thread."""
    n = min(threads(), len(items)) if parallel else 1
    if n <= 1 or getattr(_local, "worker", False):
        work(items)
        return
    batches = _runs(items, n)
    pool = _chunk_pool.get(max(1, threads() - 1))
    futures = [pool.submit(work, batch) for batch in batches[1:]]
    error: BaseException | None = None
    _local.worker = True  # the caller's share runs nested calls inline too, as workers do
    try:
        work(batches[0])
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


def _runs(items: D, n: int) -> list[D]:
    """`items` cut into `n` runs of consecutive items, their lengths at most one apart.

    Neighbouring chunks share the output's memory pages and a store's folders. Interleaved
    batches (every n-th item) put two threads on the same fresh pages of a read's output at
    once, where both fault on a page only one of them maps; a thread with a run of its own
    first-touches pages no other thread does."""
    size, extra = divmod(len(items), n)
    bounds = [i * size + min(i, extra) for i in range(n + 1)]
    return [items[bounds[i] : bounds[i + 1]] for i in range(n)]


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
