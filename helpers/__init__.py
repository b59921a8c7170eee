"""What a plugin may call besides the contracts of `zarrkit.abc`: the kernel's services (its
registries, its codec chains, its store opening), which `zarrkit.abc` cannot offer since the
kernel is built on it, and helpers for plugins that the kernel itself never runs (defined
here, outside the kernel: `data_types`, `gathering`, `reads`, `updates`). Plugins import from
`zarrkit.abc`, `zarrkit.helpers` and `zarrkit.errors` only (an import-linter contract holds
them to it); the kernel never imports this package.

- Codecs that run codecs of their own (sharding's inner chunks): `CodecChain` (a list of
  codecs for one data type and fill value; `bind(shape)` gives a `ChunkPlan` that encodes,
  decodes and decodes partially with the same checks as an array's own chain; `DecodeInto`
  is how a plan decodes into a given array) and `evolve_codecs` (fill in defaults at creation).
- Extensions named inside another's configuration: `extension_from_json` (resolved through
  the registry as the kernel resolves top-level ones), `data_type_from_native` (the
  registered data type of a numpy dtype).
- Stores: `open_store` (a store that wraps another opens it by URL), the planner that merges
  a batch of byte-range reads, `plan_reads` (`ReadPlan`, `is_empty_read`; `NETWORK_MAX_GAP`,
  `NETWORK_MAX_BLOCK`: the merging of network stores), `optimistic_update` (`update_many` by
  compare-and-swap), and many awaitables at most so many at a time (`gather_limited`, for
  stores over async clients; an `InFlightLimit` shares one limit between batches).
- Format plugins: `lookup` and `get_registry` (the registries), `build`, `extension_from_arg`,
  `extension_list`, `require_known` (every unknown extension of a document in one error),
  `unknown_fields`; consolidated members kept inline in a group document
  (`CONSOLIDATED_FIELD`, `inline`, `member_documents`, `member_order`).
- Documents and nodes by format, for a plugin or a tool that reads and writes documents itself
  (`zarrkit.transfer` copies and converts hierarchies so): `get_format` (the `Format` object
  of a name, `zarrkit.abc.format`), `read_metadata` (the metadata of the node at a path, in
  whichever format it has, or None) and `normalize_path` (a node path as the kernel checks and
  spells it).
"""

from __future__ import annotations

from typing import Any

from zarrkit.abc import Extension
from zarrkit.codec_chain import ChunkPlan, CodecChain, DecodeInto
from zarrkit.codec_chain import evolve as evolve_codecs
from zarrkit.formats import get_format
from zarrkit.formats.consolidated import FIELD as CONSOLIDATED_FIELD
from zarrkit.formats.consolidated import inline, member_documents, member_order
from zarrkit.helpers.data_types import data_type_from_native
from zarrkit.helpers.gathering import InFlightLimit, gather_limited
from zarrkit.helpers.reads import NETWORK_MAX_BLOCK, NETWORK_MAX_GAP, is_empty_read
from zarrkit.helpers.updates import optimistic_update
from zarrkit.hierarchy import read_metadata
from zarrkit.negotiation import (
    build,
    extension_from_arg,
    extension_list,
    require_known,
    unknown_fields,
)
from zarrkit.negotiation import extension_from_json as _from_json
from zarrkit.paths import normalize_path
from zarrkit.read_plan import ReadPlan, plan_reads
from zarrkit.registry import get_registry, lookup
from zarrkit.store_opening import open_store

__all__ = [
    "CONSOLIDATED_FIELD",
    "NETWORK_MAX_BLOCK",
    "NETWORK_MAX_GAP",
    "ChunkPlan",
    "CodecChain",
    "DecodeInto",
    "InFlightLimit",
    "ReadPlan",
    "build",
    "data_type_from_native",
    "evolve_codecs",
    "extension_from_arg",
    "extension_from_json",
    "extension_list",
    "gather_limited",
    "get_format",
    "get_registry",
    "inline",
    "is_empty_read",
    "lookup",
    "member_documents",
    "member_order",
    "normalize_path",
    "open_store",
    "optimistic_update",
    "plan_reads",
    "read_metadata",
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
