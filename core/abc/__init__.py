"""zarrkit's public surface for plugin authors: everything a codec, data type, store, chunk
grid, chunk key encoding, memory layout or storage transformer may use of zarrkit, and all that
zarrkit's own plugins use (an import-linter contract in pyproject.toml holds them to it). Errors
come from `zarrkit.errors`; conformance suites for a plugin's tests from `zarrkit_testing`.
Anything else in zarrkit is the kernel's and may change without notice.

One module per kind, each re-exported here:

- `zarrkit.abc.codec`: the three codec bases (`ArrayArrayCodec`, `ArrayBytesCodec`,
  `BytesBytesCodec`), each with only the methods of its kind; the capabilities a codec declares
  by deriving from them (partial decoding and encoding, decoding into a buffer, by prefix, in
  batches); `ChunkSpec`, `Region` and partial-read helpers; `CodecChain` / `ChunkPlan` for a
  codec that runs codecs of its own (sharding's inner chunks).
- `zarrkit.abc.data_type`: `DataType`, `data_type_from_native`.
- `zarrkit.abc.store`: `Store`, byte ranges, key and mode checks, read limits, optimistic
  updates, and `open_store` for a store that wraps another opened by URL.
- `zarrkit.abc.chunk_grid`, `.chunk_key_encoding`, `.memory_layout`, `.storage_transformer`:
  one contract each.
- `zarrkit.abc.metadata_field`: `MetadataField`, a top-level document field a package
  understands (read and written through its hooks), and `FieldSite`.
- `zarrkit.abc.extension`: what every extension shares: names per format, reading a
  configuration with errors that name the field, resolving an extension nested in another's
  configuration through the registry.
- `zarrkit.abc.runtime`: settings, the shared thread pool, fork-safe locks, per-thread buffers.
- `zarrkit.abc.format`: what a Zarr format plugin (the `zarrkit.formats` group) uses: the
  `Format` base, document checks, metadata objects, registry lookups.
- `zarrkit.abc.hooks`: `hookimpl`, for a module under the `zarrkit.hooks` entry-point group.

Why these helpers are public: each is something a plugin otherwise has to re-implement and
would get subtly different from the kernel (key rules, read limits, decompression-bomb
errors, fork safety), or something only the kernel can give (the registry, the thread pool,
a bound codec chain).
"""

from __future__ import annotations

from .chunk_grid import ChunkGrid
from .chunk_key_encoding import ChunkKeyEncoding
from .codec import (
    ArrayArrayCodec,
    ArrayArrayElementwise,
    ArrayArrayPartialDecode,
    ArrayArrayPartialEncode,
    ArrayBytesCodec,
    ArrayBytesDecodeInto,
    ArrayBytesPartialDecode,
    ArrayBytesPartialEncode,
    BytesBytesCodec,
    BytesBytesDecodeBatch,
    BytesBytesDecodeInto,
    BytesBytesDecodePrefix,
    BytesBytesPartialDecode,
    CacheableRange,
    ChunkPlan,
    ChunkSpec,
    Codec,
    CodecChain,
    CodecKind,
    DecodeInto,
    RangeReads,
    Region,
    as_bytes_view,
    decoded_too_large,
    evolve_codecs,
    lockstep,
    shift_range,
)
from .data_type import DataType, data_type_from_native
from .extension import (
    FORMATS,
    V2,
    V3,
    V3_DRAFT_2020,
    Extension,
    ExtensionNames,
    SkippedExtension,
    check_known_fields,
    config_value,
    extension_from_json,
    named_config,
    names,
    parse_named_config,
)
from .hooks import hookimpl
from .memory_layout import MemoryLayout
from .metadata_field import FieldSite, MetadataField
from .runtime import (
    InFlightLimit,
    Settings,
    after_fork_in_child,
    at_fork,
    fork_waits_for,
    gather_limited,
    lock,
    reusable,
    rlock,
    run_batched,
    settings,
    thread_buffer,
)
from .storage_transformer import StorageTransformer
from .store import (
    NETWORK_MAX_BLOCK,
    NETWORK_MAX_GAP,
    Absence,
    AwaitableReads,
    ByteRange,
    Range,
    ReadPlan,
    Store,
    StoreCapabilities,
    StoreLike,
    SuffixRange,
    Update,
    check_key,
    check_mode,
    check_prefix,
    is_empty_read,
    is_valid_key,
    limiting_listings,
    listing_limit,
    open_store,
    optimistic_update,
    plan_reads,
    scheme_of,
    value_limit,
    write_back,
)

__all__ = [
    "FORMATS",
    "NETWORK_MAX_BLOCK",
    "NETWORK_MAX_GAP",
    "V2",
    "V3",
    "V3_DRAFT_2020",
    "Absence",
    "ArrayArrayCodec",
    "ArrayArrayElementwise",
    "ArrayArrayPartialDecode",
    "ArrayArrayPartialEncode",
    "ArrayBytesCodec",
    "ArrayBytesDecodeInto",
    "ArrayBytesPartialDecode",
    "ArrayBytesPartialEncode",
    "AwaitableReads",
    "ByteRange",
    "BytesBytesCodec",
    "BytesBytesDecodeBatch",
    "BytesBytesDecodeInto",
    "BytesBytesDecodePrefix",
    "BytesBytesPartialDecode",
    "CacheableRange",
    "ChunkGrid",
    "ChunkKeyEncoding",
    "ChunkPlan",
    "ChunkSpec",
    "Codec",
    "CodecChain",
    "CodecKind",
    "DataType",
    "DecodeInto",
    "Extension",
    "ExtensionNames",
    "FieldSite",
    "InFlightLimit",
    "MemoryLayout",
    "MetadataField",
    "Range",
    "RangeReads",
    "ReadPlan",
    "Region",
    "Settings",
    "SkippedExtension",
    "StorageTransformer",
    "Store",
    "StoreCapabilities",
    "StoreLike",
    "SuffixRange",
    "Update",
    "after_fork_in_child",
    "as_bytes_view",
    "at_fork",
    "check_key",
    "check_known_fields",
    "check_mode",
    "check_prefix",
    "config_value",
    "data_type_from_native",
    "decoded_too_large",
    "evolve_codecs",
    "extension_from_json",
    "fork_waits_for",
    "gather_limited",
    "hookimpl",
    "is_empty_read",
    "is_valid_key",
    "limiting_listings",
    "listing_limit",
    "lock",
    "lockstep",
    "named_config",
    "names",
    "open_store",
    "optimistic_update",
    "parse_named_config",
    "plan_reads",
    "reusable",
    "rlock",
    "run_batched",
    "scheme_of",
    "settings",
    "shift_range",
    "thread_buffer",
    "value_limit",
    "write_back",
]
