"""The store contract: `Store` (what it can do declared in its `StoreCapabilities`: readable,
writeable, listable, ...; checked per operation), the
byte ranges a read may ask for (`ByteRange`, `SuffixRange`, `Range`), and the helpers every
backend needs to behave alike:

- `check_key`, `check_prefix`, `check_mode`: the key and mode rules, one error for each;
- `value_limit`: the most bytes one value read on this thread may hold (a backend that cannot
  size a value before holding it reads at most this much);
- `Update`, `optimistic_update`, `write_back`: read-modify-write of several keys, retried
  when another writer got there first (for `Store.update_many`);
- `open_store`, `scheme_of`: a store that wraps another opens the inner one by URL;
- `plan_reads`, `ReadPlan`, `is_empty_read`: a batch of byte-range reads planned as fewer,
  larger reads (`NETWORK_MAX_GAP`, `NETWORK_MAX_BLOCK`: the merging of network stores);
- `AwaitableReads`: what a store whose client is asynchronous adds so that awaited reads
  are its own coroutines;
- `Absence`: what `Store.diagnose` answers when a node is not found (no such folder or
  bucket, not Zarr, no permission), so the error can say which.
"""

from __future__ import annotations

from ..read_plan import (
    NETWORK_MAX_BLOCK,
    NETWORK_MAX_GAP,
    ReadPlan,
    is_empty_read,
    plan_reads,
)
from ..store import (
    Absence,
    AwaitableReads,
    ByteRange,
    Range,
    Store,
    StoreCapabilities,
    SuffixRange,
    Update,
    check_key,
    check_mode,
    check_prefix,
    is_valid_key,
    limiting_listings,
    listing_limit,
    optimistic_update,
    value_limit,
    write_back,
)
from ..store_opening import StoreLike, open_store, scheme_of

__all__ = [
    "NETWORK_MAX_BLOCK",
    "NETWORK_MAX_GAP",
    "Absence",
    "AwaitableReads",
    "ByteRange",
    "Range",
    "ReadPlan",
    "Store",
    "StoreCapabilities",
    "StoreLike",
    "SuffixRange",
    "Update",
    "check_key",
    "check_mode",
    "check_prefix",
    "is_empty_read",
    "is_valid_key",
    "limiting_listings",
    "listing_limit",
    "open_store",
    "optimistic_update",
    "plan_reads",
    "scheme_of",
    "value_limit",
    "write_back",
]
