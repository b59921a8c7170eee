"""zarrkit's contracts for plugin authors: what a codec, data type, store, chunk grid, chunk
key encoding, memory layout, storage transformer, metadata field or format implements and is
handed, defined here; the kernel is built on them and imports them from here. Plugins import
`zarrkit.abc`, `zarrkit.helpers` (what the kernel does for a plugin that asks: codec chains,
nested extensions, opening stores, the registries) and `zarrkit.errors`, nothing else (an
import-linter contract in pyproject.toml holds them to it). Conformance suites for a plugin's
tests come from `zarrkit_testing`. Anything else in zarrkit is the kernel's and may change
without notice.

One module per kind, each re-exported here:

- `zarrkit.abc.codec`: the three codec bases (`ArrayArrayCodec`, `ArrayBytesCodec`,
  `BytesBytesCodec`), each with only the methods of its kind; the capabilities a codec declares
  by deriving from them (partial decoding and encoding, decoding into a buffer, by prefix, in
  batches, a v3 equivalent); `ChunkSpec`, `Region` and partial-read helpers.
- `zarrkit.abc.data_type`: `DataType`.
- `zarrkit.abc.store`: `Store` and its `StoreCapabilities`, byte ranges, key and mode checks,
  read limits, writing back an update.
- `zarrkit.abc.chunk_grid`, `.chunk_key_encoding`, `.memory_layout`, `.storage_transformer`:
  one contract each.
- `zarrkit.abc.metadata_field`: `MetadataField`, a top-level document field a package
  understands (read and written through its hooks), and `FieldSite`.
- `zarrkit.abc.extension`: what every extension shares: names per format, reading a
  configuration with errors that name the field.
- `zarrkit.abc.format`: the `Format` contract of a Zarr format plugin (the `zarrkit.formats`
  group), the metadata model it reads documents into and the document checks every format
  shares (not re-exported here).
- `zarrkit.abc.runtime`: settings, the shared thread pool, fork-safe locks, per-thread buffers.
- `zarrkit.abc.hooks`: `hookimpl`, for a module under the `zarrkit.hooks` entry-point group.

These modules import nothing of the kernel but its foundations (errors, settings, the thread
pool, fork safety, buffers, hooks, JSON documents), which import no contract; an import-linter
contract holds them to it, so the kernel can build on them without a cycle. The helpers beside
the contracts are those a plugin would otherwise re-implement and get subtly different from
the kernel (key rules, read limits, decompression-bomb errors, fork safety).
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

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
    ChunkSpec,
    Codec,
    CodecKind,
    RangeReads,
    Region,
    V3Equivalent,
    as_bytes_view,
    decoded_too_large,
    lockstep,
    shift_range,
)
from .data_type import DataType
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
    named_config,
    names,
    parse_named_config,
)
from .hooks import hookimpl
from .memory_layout import MemoryLayout
from .metadata_field import FieldSite, MetadataField
from .runtime import (
    Settings,
    after_fork_in_child,
    at_fork,
    fork_waits_for,
    lock,
    reusable,
    rlock,
    run_batched,
    settings,
    thread_buffer,
)
from .storage_transformer import StorageTransformer
from .store import (
    AwaitableReads,
    ByteRange,
    Diagnosis,
    Range,
    Store,
    StoreCapabilities,
    StoreLike,
    SuffixRange,
    Update,
    check_key,
    check_mode,
    check_prefix,
    is_valid_key,
    limiting_listings,
    listing_limit,
    scheme_of,
    value_limit,
    write_back,
)

__all__ = [
    "FORMATS",
    "V2",
    "V3",
    "V3_DRAFT_2020",
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
    "ChunkSpec",
    "Codec",
    "CodecKind",
    "DataType",
    "Diagnosis",
    "Extension",
    "ExtensionNames",
    "FieldSite",
    "MemoryLayout",
    "MetadataField",
    "Range",
    "RangeReads",
    "Region",
    "Settings",
    "SkippedExtension",
    "StorageTransformer",
    "Store",
    "StoreCapabilities",
    "StoreLike",
    "SuffixRange",
    "Update",
    "V3Equivalent",
    "after_fork_in_child",
    "as_bytes_view",
    "at_fork",
    "check_key",
    "check_known_fields",
    "check_mode",
    "check_prefix",
    "config_value",
    "decoded_too_large",
    "fork_waits_for",
    "hookimpl",
    "is_valid_key",
    "limiting_listings",
    "listing_limit",
    "lock",
    "lockstep",
    "named_config",
    "names",
    "parse_named_config",
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


#: names of earlier releases -> (the module that has the name now, its name there); besides
#: these, every name of `zarrkit.helpers`, which were in `zarrkit.abc` before it held them
_RENAMED = {
    "Absence": ("zarrkit.abc", "Diagnosis"),
    "BoundChain": ("zarrkit.helpers", "ChunkPlan"),
    "Gate": ("zarrkit.helpers", "InFlightLimit"),
    "Lasting": ("zarrkit.abc", "CacheableRange"),
    "Names": ("zarrkit.abc", "ExtensionNames"),
    "Skipped": ("zarrkit.abc", "SkippedExtension"),
    "scratch": ("zarrkit.abc", "thread_buffer"),
}


if not TYPE_CHECKING:  # (hidden from type checkers, which would take any name of the module)

    def __getattr__(name: str) -> Any:
        """A name of an earlier release, with a DeprecationWarning naming where it is now."""
        if name.startswith("__"):
            raise AttributeError(f"module 'zarrkit.abc' has no attribute {name!r}")
        from .. import helpers  # (only for a name not defined here: the kernel never needs it)

        module, new = _RENAMED.get(name, ("zarrkit.helpers", name))
        if module == "zarrkit.helpers" and new not in helpers.__all__:
            raise AttributeError(f"module 'zarrkit.abc' has no attribute {name!r}")
        warnings.warn(
            f"zarrkit.abc.{name} is deprecated (removed in 0.3): use {module}.{new}",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(helpers, new) if module == "zarrkit.helpers" else globals()[new]
