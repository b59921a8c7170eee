"""What the kernel does for a plugin that asks: the helpers of the plugin surface that need the
kernel itself (its registries, its codec chains, its store opening), and so cannot be part of
`zarrkit.abc`, whose contracts the kernel is built on. Plugins import from `zarrkit.abc`,
`zarrkit.helpers` and `zarrkit.errors` only (an import-linter contract holds them to it).

- Codecs that run codecs of their own (sharding's inner chunks): `CodecChain` (a list of
  codecs for one data type and fill value; `bind(shape)` gives a `ChunkPlan` that encodes,
  decodes and decodes partially with the same checks as an array's own chain; `DecodeInto`
  is how a plan decodes into a given array) and `evolve_codecs` (fill in defaults at creation).
- Extensions named inside another's configuration: `extension_from_json` (resolved through
  the registry as the kernel resolves top-level ones), `data_type_from_native` (the
  registered data type of a numpy dtype).
- Stores: `open_store` (a store that wraps another opens it by URL), and the planner that
  merges a batch of byte-range reads, `plan_reads` (`ReadPlan`, `is_empty_read`;
  `NETWORK_MAX_GAP`, `NETWORK_MAX_BLOCK`: the merging of network stores).
- Format plugins: `lookup` and `get_registry` (the registries), `build`, `extension_from_arg`,
  `extension_list`, `require_known` (every unknown extension of a document in one error),
  `unknown_fields`; consolidated members kept inline in a group document
  (`CONSOLIDATED_FIELD`, `inline`, `member_documents`, `member_order`).
"""

from __future__ import annotations

from typing import Any

from .abc.extension import Extension
from .codec_chain import ChunkPlan, CodecChain, DecodeInto
from .codec_chain import evolve as evolve_codecs
from .data_type import data_type_from_native
from .formats.consolidated import FIELD as CONSOLIDATED_FIELD
from .formats.consolidated import inline, member_documents, member_order
from .negotiation import (
    build,
    extension_from_arg,
    extension_list,
    require_known,
    unknown_fields,
)
from .negotiation import extension_from_json as _from_json
from .read_plan import NETWORK_MAX_BLOCK, NETWORK_MAX_GAP, ReadPlan, is_empty_read, plan_reads
from .registry import get_registry, lookup
from .store_opening import open_store

__all__ = [
    "CONSOLIDATED_FIELD",
    "NETWORK_MAX_BLOCK",
    "NETWORK_MAX_GAP",
    "ChunkPlan",
    "CodecChain",
    "DecodeInto",
    "ReadPlan",
    "build",
    "data_type_from_native",
    "evolve_codecs",
    "extension_from_arg",
    "extension_from_json",
    "extension_list",
    "get_registry",
    "inline",
    "is_empty_read",
    "lookup",
    "member_documents",
    "member_order",
    "open_store",
    "plan_reads",
    "require_known",
    "unknown_fields",
]


def extension_from_json(kind: str, doc: Any, format: str, *, key: str) -> Any:
    """The extension of `kind` ("codec", "data_type", ...) that `doc` (a name or a
    `{"name", "configuration"}` object, as in metadata) describes, found through the registry
    as the kernel finds top-level ones; an extension instance is returned as it is. An unknown
    codec or storage transformer marked `"must_understand": false` gives `SkippedExtension`. Errors
    name `key`, the field of the outer configuration it came from."""
    if isinstance(doc, Extension):
        return doc
    return _from_json(kind, doc, format, key=key, where=None)
