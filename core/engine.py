"""The chunk engine's machinery that is not about one array: how many chunks a batch holds,
per-key locks for read-modify-write, driving partial decodes, and coalescing byte ranges.

Each thread of the pool takes a share of a batch and does its own store calls for it (one
`read_many` / `read_ranges` / `set_many` per share and round), so I/O of a local store overlaps
across threads as decoding does, and a remote store still sees whole batches.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from . import config, executor, forksafe
from .codec import Lasting, RangeReads
from .store import DEFAULT_VALUE_LIMIT, ByteRange, Range

#: encoded plus decoded bytes a batch may hold per thread
_BYTES_PER_THREAD = 16 << 20
#: bounds on the chunks of one batch (per-batch overhead vs. memory and latency)
_MIN_PER_THREAD = 2
_MAX_PER_THREAD = 64
#: the most chunks of a batch for a store that asks for big calls (`preferred_fetch_bytes`)
_MAX_BATCH = 4096


def batch_size(chunk_nbytes: int, store: Any = None) -> int:
    """Chunks per batch: a working set of about `_BYTES_PER_THREAD` per thread, at least two
    and at most `_MAX_PER_THREAD` chunks per thread.

    The upper bound is for small chunks. A batch's projections and keys (a handful of small
    objects per chunk) live until the batch is done; thousands of them at once are walked and
    promoted by the garbage collector, and a full collection then runs inside the read: 10,000
    chunks of 800 bytes in batches of 4096 spent ~2 µs per chunk in the collector, in batches
    of 128 almost nothing. A store whose calls are expensive (remote: `preferred_fetch_bytes`)
    gets batches of up to that many bytes, at most `_MAX_BATCH` chunks, as each batch is a
    round trip."""
    threads = executor.threads()
    nbytes = max(1, chunk_nbytes)
    per_thread = max(_MIN_PER_THREAD, min(_MAX_PER_THREAD, _BYTES_PER_THREAD // nbytes))
    batch = per_thread * threads
    wanted = getattr(store, "preferred_fetch_bytes", None)
    if wanted:
        batch = max(batch, min(_MAX_BATCH, int(wanted) // nbytes))
    return int(batch)


#: a stored chunk may be this many times its decoded size (a data type widened by an array
#: codec before it is stored, incompressible data grown by a compressor) ...
_VALUE_FACTOR = 4
#: ... plus this much (headers, checksums, a shard's index of up to 64 Ki inner chunks)
_VALUE_SLACK = 1 << 20


def value_limit(item_size: int | None, chunk_elements: int | None) -> int:
    """The most bytes a read of one stored chunk may hold (`store.limiting_values`), from the
    chunk's decoded size: far above what any chain stores, yet near the chunk's size, so a
    hostile value (an endless HTTP body, a zip bomb) is refused before it fills memory. A
    variable-length data type or an irregular grid has no such size: the default limit."""
    if item_size is None or chunk_elements is None:
        return DEFAULT_VALUE_LIMIT
    return _VALUE_FACTOR * item_size * chunk_elements + _VALUE_SLACK


#: chunks smaller than this are read and written on one thread (see `parallel`)
_PARALLEL_MIN_BYTES = 32 << 10


def parallel(chunk_nbytes: int) -> bool:
    """Whether threads help: per chunk the engine holds the GIL for ~10-20 µs of Python, and
    only decoding, encoding and I/O run without it; below ~32 KiB of chunk two threads mostly
    wait for each other (measured: 800-byte chunks read in 25 µs each on one thread, 39 µs on
    two)."""
    return chunk_nbytes >= _PARALLEL_MIN_BYTES


def parallel_writes(chunk_nbytes: int, store: Any) -> bool:
    """`parallel`, or a store whose writes block long enough for threads to overlap them
    (`Store.blocking_writes`)."""
    return parallel(chunk_nbytes) or bool(store.blocking_writes)


#: chunk bytes a writing thread encodes before it stores them, unless the store says otherwise,
#: and the most chunks it gathers
_STREAM_BYTES = 256 << 10
_STREAM_MAX = 64
#: the same for values that are views of the written array (see `stream_size`)
_VIEW_STREAM_BYTES = 16 << 20


def stream_size(store: Any, chunk_nbytes: int, *, views: bool = False) -> int:
    """Chunks a writing thread encodes between two `set_many` calls. Big chunks go one at a
    time: a value freed before the next is encoded lets malloc hand the same memory back,
    while a group of big values freed at once is returned to the OS and faulted in afresh on
    the next group (a 512 MiB write of 256 KiB zstd chunks in groups of 8: 97,000 page faults
    and ~15% more CPU). Tiny chunks go in groups, as a store call has its own fixed cost; a
    store whose calls are expensive (remote) sets `preferred_store_bytes` higher.

    `views`: the values are mostly views of the written array (an uncompressed chain; only
    chunks at the array's edge are copies), which hold no memory of their own, so they go in
    groups of up to `_VIEW_STREAM_BYTES`: a file store then looks up each folder once per
    group rather than once per chunk (512 MiB in 256x256 chunks on two threads: 0.304 ->
    0.261 s, median of 12 alternating, and half the thread switches)."""
    want = store.preferred_store_bytes or (_VIEW_STREAM_BYTES if views else _STREAM_BYTES)
    return max(1, min(_STREAM_MAX, int(want) // max(1, chunk_nbytes)))


#: chunk bytes a thread asks the store for at once, unless the store says otherwise
_FETCH_BYTES = 1 << 20


def fetch_size(store: Any, chunk_nbytes: int) -> int:
    """Chunks per `read_many` within a thread's share. Small groups let the allocator reuse the
    memory of the values just decoded (a whole share of fresh values costs page faults on
    every batch: ~20% of a local read); a store whose calls are expensive (remote, high
    latency) sets `preferred_fetch_bytes` higher to get whole shares at once."""
    want = store.preferred_fetch_bytes or _FETCH_BYTES
    return max(1, int(want) // max(1, chunk_nbytes))


# -- per-key locks ---------------------------------------------------------------------------------
_STRIPES = 1024
_locks = [forksafe.lock() for _ in range(_STRIPES)]


@contextmanager
def locked(keys: Sequence[str]) -> Iterator[None]:
    """Hold the locks of `keys` (striped by hash) for a read-modify-write, so two threads of
    this process writing different parts of one stored value cannot lose each other's update.
    Locks are taken in one global order, so writers never deadlock. Per process only: writers
    in other processes (or machines) are kept apart by the store's `update_many`."""
    stripes = sorted({hash(k) % _STRIPES for k in keys})
    taken = []
    try:
        for s in stripes:
            _locks[s].acquire()
            taken.append(s)
        yield
    finally:
        for s in reversed(taken):
            _locks[s].release()


# -- answers that last (shard indexes) -------------------------------------------------------------
#: bytes of `Lasting` answers one array handle keeps
_LASTING_BYTES = 16 << 20


class RangeCache:
    """The answers to `Lasting` reads (shard indexes) one array handle has fetched, so a
    shard's index is read once however many windows touch it. A read that finds another
    thread fetching the same range waits for that answer instead of asking again, so many
    selections read at once (`Array.get_many`) fetch each index once too. Writes through the
    handle call `invalidate`; an answer fetched across an invalidation is not kept. Only
    values that exist are kept (an absent shard may be written by someone else)."""

    def __init__(self, max_bytes: int = _LASTING_BYTES) -> None:
        self._lock = forksafe.lock()
        self._answers: OrderedDict[tuple[str, Range], bytes] = OrderedDict()
        self._fetching: dict[tuple[str, Range], threading.Event] = {}
        self._bytes = 0
        self._max = max_bytes
        self._generation = 0

    def claim(
        self, wanted: Sequence[tuple[str, Range]]
    ) -> tuple[dict[tuple[str, Range], bytes], list, list, int]:
        """(answers known, ranges this caller must fetch, events of ranges being fetched by
        others, the generation its fetches belong to)."""
        known, mine, waits = {}, [], []
        with self._lock:
            for item in dict.fromkeys(wanted):
                if item in self._answers:
                    self._answers.move_to_end(item)
                    known[item] = self._answers[item]
                elif item in self._fetching:
                    waits.append((item, self._fetching[item]))
                else:
                    self._fetching[item] = threading.Event()
                    mine.append(item)
            return known, mine, waits, self._generation

    def settle(
        self,
        fetched: dict[tuple[str, Range], Any],
        claimed: Sequence[tuple[str, Range]],
        generation: int,
    ) -> None:
        """Keep what was fetched (unless invalidated meanwhile) and wake whoever waits; called
        with an empty `fetched` when the fetch failed, so the waiters fetch for themselves."""
        with self._lock:
            for item in claimed:
                value = fetched.get(item)
                if value is not None and generation == self._generation:
                    value = bytes(value)
                    if item not in self._answers:
                        self._bytes += len(value)
                    self._answers[item] = value
                event = self._fetching.pop(item, None)
                if event is not None:
                    event.set()
            while self._bytes > self._max and self._answers:
                _, dropped = self._answers.popitem(last=False)
                self._bytes -= len(dropped)

    def get(self, item: tuple[str, Range]) -> bytes | None:
        with self._lock:
            return self._answers.get(item)

    def invalidate(self) -> None:
        with self._lock:
            self._generation += 1
            self._answers.clear()
            self._bytes = 0


_INDEX_CACHE = ("remote", "always", "never")


def range_cache(store: Any) -> RangeCache | None:
    """A cache for an array handle on `store`, per the `index_cache` setting: by default only
    where a read is a round trip (the store asks for big calls), since a kept index does not
    see a shard rewritten by another writer until the array is opened again."""
    choice = config.get().index_cache
    if choice not in _INDEX_CACHE:
        raise ValueError(
            f"the index_cache setting (ZARRKIT_INDEX_CACHE) must be one of "
            f"{_INDEX_CACHE}, got {choice!r}"
        )
    if choice == "always" or (choice == "remote" and store.preferred_fetch_bytes):
        return RangeCache()
    return None


def _lasting_answers(
    store: Any, requests: list[tuple[str, Any]], cache: RangeCache | None
) -> list[Any]:
    """`fetch_ranges` for a round holding `Lasting` requests: those come from `cache` when
    it has them (or from the thread already fetching them), the rest from the store."""
    plain = [(key, rng.range if isinstance(rng, Lasting) else rng) for key, rng in requests]
    if cache is None:
        return fetch_ranges(store, plain)
    lasting = [(key, rng.range) for key, rng in requests if isinstance(rng, Lasting)]
    known, mine, waits, generation = cache.claim(lasting)
    others = [r for r, (_, rng) in zip(plain, requests) if not isinstance(rng, Lasting)]
    fetched: dict[tuple[str, Range], Any] = {}
    try:
        answers = fetch_ranges(store, [*mine, *others])
        fetched = dict(zip(mine, answers[: len(mine)]))
        by_request = dict(zip(others, answers[len(mine) :]))
    finally:
        cache.settle(fetched, mine, generation)
    late = []
    for item, event in waits:
        event.wait()
        value = cache.get(item)
        if value is None:  # that fetch failed, the value was absent, or a write cleared it
            late.append(item)
        else:
            fetched[item] = value
    if late:
        fetched.update(zip(late, fetch_ranges(store, late)))
    out = []
    for (_key, rng), item in zip(requests, plain):
        if isinstance(rng, Lasting):
            out.append(known[item] if item in known else fetched[item])
        else:
            out.append(by_request[item])
    return out


# -- partial decodes --------------------------------------------------------------------------------
def drive(
    store: Any, reads: Sequence[tuple[str, RangeReads[Any]]], cache: RangeCache | None = None
) -> list[Any]:
    """Run partial decodes of several stored values in lockstep: each round's byte ranges of
    every value go to the store in one `get_ranges` call. Returns each decode's result.
    `Lasting` requests are answered from `cache` where it can (see `RangeCache`)."""
    results: list[Any] = [None] * len(reads)
    pending: list[tuple[int, list[Any]]] = []
    for i, (_, gen) in enumerate(reads):
        _step(gen, None, i, results, pending)
    while pending:
        requests = [(reads[i][0], r) for i, ranges in pending for r in ranges]
        if any(isinstance(r, Lasting) for _, r in requests):
            answers = _lasting_answers(store, requests, cache)
        else:
            answers = fetch_ranges(store, requests)
        current, pending, at = pending, [], 0
        for i, ranges in current:
            _step(reads[i][1], answers[at : at + len(ranges)], i, results, pending)
            at += len(ranges)
    return results


def _step(
    gen: RangeReads[Any],
    answer: Any,
    i: int,
    results: list[Any],
    pending: list[tuple[int, list[Range]]],
) -> None:
    try:
        pending.append((i, gen.send(answer)))
    except StopIteration as stop:
        results[i] = stop.value


def fetch_ranges(store: Any, requests: Sequence[tuple[str, Range | None]]) -> list[Any]:
    """`store.read_ranges`, with adjacent or overlapping byte ranges of one key merged into one
    read (inner chunks stored side by side in a shard come back in one request)."""
    if len(requests) < 2:
        return store.read_ranges(list(requests))
    merged, parts = coalesce(requests)
    if len(merged) == len(requests):
        return store.read_ranges(list(requests))
    answers = store.read_ranges(merged)
    out: list[Any] = []
    for which, start, length in parts:
        data = answers[which]
        if data is None or length is None:
            out.append(data)
        else:
            out.append(memoryview(data)[start : start + length])
    return out


def coalesce(
    requests: Sequence[tuple[str, Range | None]],
) -> tuple[list[tuple[str, Range | None]], list[tuple[int, int, int | None]]]:
    """Merged requests, and for each original request (index into merged, start inside the
    merged answer, length; length None: the whole answer)."""
    merged: list[tuple[str, Range | None]] = []
    parts: list[tuple[int, int, int | None]] = [(0, 0, None)] * len(requests)
    bounded = []
    for i, (key, rng) in enumerate(requests):
        if isinstance(rng, ByteRange) and rng.length is not None:
            bounded.append((key, rng.offset, rng.offset + rng.length, i))
        else:
            parts[i] = (len(merged), 0, None)
            merged.append((key, rng))
    bounded.sort()
    run: list[tuple[str, int, int, int]] = []
    end = 0
    for item in bounded:
        if run and (item[0] != run[0][0] or item[1] > end):
            _close(run, merged, parts)
            run = []
        end = item[2] if not run else max(end, item[2])
        run.append(item)
    if run:
        _close(run, merged, parts)
    return merged, parts


def _close(run: list[tuple[str, int, int, int]], merged: list, parts: list) -> None:
    key, start = run[0][0], run[0][1]
    stop = max(r[2] for r in run)
    which = len(merged)
    merged.append((key, ByteRange(start, stop - start)))
    for _, a, b, i in run:
        parts[i] = (which, a - start, b - a)
