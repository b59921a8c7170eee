"""The chunk engine: reads and writes the chunks of a selection for an array handle.

`ChunkEngine` (`chunks.py`) is built once per array handle from its metadata, codec chain and
store, and is what `Array` hands each checked selection to. The modules beside it hold what is
not about one array: how work is divided (`sizing`), per-key locks for read-modify-write
(`locks`), byte ranges for partial decodes (`ranges`), and keeping a remote store busy while
the CPU works (`overlapped_io`).

Each thread of the pool takes a share of a batch and does its own store calls for it (one
`read_many` / `read_ranges` / `set_many` per share and round), so I/O of a local store overlaps
across threads as decoding does, and a remote store still sees whole batches. On a store whose
calls are round trips (`preferred_fetch_bytes`, `preferred_store_bytes`), a whole read's next
batch is fetched while one decodes (in units, each decoded once its answers are in) and a
write's encoded groups are stored while the next ones encode, both on the transfer pool
(`executor.transfer_pool`).
"""

from __future__ import annotations

from .chunks import ChunkEngine
from .locks import locked
from .ranges import RangeCache, drive, fetch_ranges, range_cache
from .sizing import (
    batch_size,
    fetch_size,
    parallel,
    parallel_writes,
    read_batch_size,
    stream_size,
    unit_size,
    value_limit,
)

__all__ = [
    "ChunkEngine",
    "RangeCache",
    "batch_size",
    "drive",
    "fetch_ranges",
    "fetch_size",
    "locked",
    "parallel",
    "parallel_writes",
    "range_cache",
    "read_batch_size",
    "stream_size",
    "unit_size",
    "value_limit",
]
