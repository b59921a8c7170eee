"""How the engine divides work: chunks per batch, per store call and per thread, whether
threads help at all, and how many bytes one stored chunk may hold."""

from __future__ import annotations

from collections.abc import Sequence

from .. import executor
from ..abc.store import DEFAULT_VALUE_LIMIT, Store

#: encoded plus decoded bytes a batch may hold per thread
_BYTES_PER_THREAD = 16 << 20
#: bounds on the chunks of one batch (per-batch overhead vs. memory and latency)
_MIN_PER_THREAD = 2
_MAX_PER_THREAD = 64
#: the most chunks of a batch for a store that asks for big calls (`preferred_fetch_bytes`)
_MAX_BATCH = 4096


def batch_size(chunk_nbytes: int, store: Store | None = None) -> int:
    """Chunks per batch: a working set of about `_BYTES_PER_THREAD` per thread, at least two
    and at most `_MAX_PER_THREAD` chunks per thread.

    The upper bound is for small chunks. A batch's projections and keys (a handful of small
    objects per chunk) live until the batch is done; thousands of them at once are walked and
    promoted by the garbage collector, and a full collection then runs inside the read (with
    thousands of tiny chunks per batch the collector's share is a large part of each chunk's
    cost; with a hundred or so it is negligible). A store whose calls are expensive (remote: `preferred_fetch_bytes`)
    gets batches of up to that many bytes, at most `_MAX_BATCH` chunks, as each batch is a
    round trip."""
    threads = executor.threads()
    nbytes = max(1, chunk_nbytes)
    per_thread = max(_MIN_PER_THREAD, min(_MAX_PER_THREAD, _BYTES_PER_THREAD // nbytes))
    batch = per_thread * threads
    wanted = None if store is None else store.capabilities.preferred_fetch_bytes
    if wanted:
        batch = max(batch, min(_MAX_BATCH, int(wanted) // nbytes))
    return int(batch)


def read_batch_size(chunk_nbytes: int, store: Store, band: int) -> int:
    """`batch_size` for a whole read from a store of cheap calls, rounded up to whole bands of
    the selection per thread (`Indexer.band`) where that stays within `_MAX_PER_THREAD` chunks
    per thread. The threads take a batch in runs, one each: runs of whole bands write slabs of
    the output no other thread touches, where runs that split bands (two shards of one row of
    four) have both threads first touch the same pages of a fresh output at once, each getting
    a huge page cleared that the kernel then throws away. A read holds only a fetch group of
    values per thread, so a longer batch costs projections, not memory."""
    size = batch_size(chunk_nbytes, store)
    whole = max(1, band) * executor.threads()  # (an empty selection has bands of none)
    rounded = -(-size // whole) * whole
    return rounded if rounded <= _MAX_PER_THREAD * executor.threads() else size


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
    """Whether threads help: per chunk the engine holds the GIL for its Python, and only
    decoding, encoding and I/O run without it; below `_PARALLEL_MIN_BYTES` of chunk the Python
    is most of the work, so two threads mostly wait for each other and are slower than one."""
    return chunk_nbytes >= _PARALLEL_MIN_BYTES


def parallel_writes(chunk_nbytes: int, store: Store) -> bool:
    """`parallel`, or a store whose writes block long enough for threads to overlap them
    (`StoreCapabilities.blocking_writes`)."""
    return parallel(chunk_nbytes) or store.capabilities.blocking_writes


#: chunk bytes a writing thread encodes before it stores them, unless the store says otherwise,
#: and the most chunks it gathers
_STREAM_BYTES = 256 << 10
_STREAM_MAX = 64
#: the same for values that are views of the written array (see `stream_size`)
_VIEW_STREAM_BYTES = 16 << 20


def stream_size(store: Store, chunk_nbytes: int, *, views: bool = False) -> int:
    """Chunks a writing thread encodes between two `set_many` calls. Big chunks go one at a
    time: a value freed before the next is encoded lets malloc hand the same memory back,
    while a group of big values freed at once is returned to the OS and faulted in afresh on
    the next group, a page at a time. Tiny chunks go in groups, as a store call has its own fixed cost; a
    store whose calls are expensive (remote) sets its `preferred_store_bytes` higher.

    `views`: the values are mostly views of the written array (an uncompressed chain; only
    chunks at the array's edge are copies), which hold no memory of their own, so they go in
    groups of up to `_VIEW_STREAM_BYTES`: a file store then looks up each folder once per
    group rather than once per chunk, and the writing threads switch half as often."""
    want = store.capabilities.preferred_store_bytes or (
        _VIEW_STREAM_BYTES if views else _STREAM_BYTES
    )
    return max(1, min(_STREAM_MAX, int(want) // max(1, chunk_nbytes)))


#: chunk bytes a thread asks the store for at once, unless the store says otherwise
_FETCH_BYTES = 1 << 20


def fetch_size(store: Store, chunk_nbytes: int) -> int:
    """Chunks per `read_many` within a thread's share. Small groups let the allocator reuse the
    memory of the values just decoded (a whole share of fresh values is faulted in afresh on
    every batch); a store whose calls are expensive (remote, high
    latency) sets its `preferred_fetch_bytes` higher to get whole shares at once."""
    want = store.capabilities.preferred_fetch_bytes or _FETCH_BYTES
    return max(1, int(want) // max(1, chunk_nbytes))


#: chunk bytes a whole read fetches per store call while it reads ahead (see `unit_size`)
_UNIT_BYTES = 2 << 20


def unit_size(chunk_nbytes: int) -> int:
    """Chunks per store call of a read that reads ahead (a remote store): its batches are
    fetched in units of this many chunks, all at once, each unit decoded as soon as its
    values are in, whichever unit that is. The decoding then follows the answers closely;
    with whole batches, the whole last batch was decoded only after its last answer."""
    return max(1, _UNIT_BYTES // max(1, chunk_nbytes))


def selection_groups(costs: Sequence[int], budget: int, at_least: int) -> list[list[int]]:
    """Groups of items (selections of `read_many`, each with its cost), each group read as
    one on one thread: an item costing more than `budget` alone, the others in runs of
    consecutive items (neighbouring selections often share chunks, whose reads then merge)
    of at most `budget` each, and at least `at_least` runs where there are that many items
    (one per thread)."""
    alone = [[i] for i, cost in enumerate(costs) if cost > budget]
    rest = [i for i, cost in enumerate(costs) if cost <= budget]
    most = -(-len(rest) // max(1, at_least))  # items per run when there are `at_least` runs
    runs: list[list[int]] = []
    run: list[int] = []
    total = 0
    for i in rest:
        if run and (len(run) >= most or total + costs[i] > budget):
            runs.append(run)
            run, total = [], 0
        run.append(i)
        total += costs[i]
    if run:
        runs.append(run)
    return alone + runs
