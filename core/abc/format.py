"""The format contract: what a Zarr format plugin (the `zarrkit.formats` entry-point group) may
use of zarrkit to implement one storage protocol.

A format is one instance of a `Format` subclass, exposed by its entry point (the entry-point
name is the format's name: `v2`, `v3-draft-2020`). It says where a node's metadata lives, how
its documents read and write, and where its chunks are; everything its documents name (codecs,
data types, grids, key encodings, layouts) it resolves through the registries (`lookup`,
`build`, `extension_from_arg`), never by importing another plugin.

- `Format`, `read_in_units`: the base class and its batched-read helper.
- `ArrayMetadata`, `GroupMetadata`, `NodeMetadata`, `freeze`, `thaw_document`: what a format
  reads documents into.
- Document checks, shared so that every format refuses the same bad input with the same error:
  `load_document`, `dump_document`, `check_shape`, `check_dimensions`, `check_chunk_size`,
  `check_attributes`, `fill_value_or_default`, `short_repr`.
- Extension resolution: `lookup`, `build`, `extension_from_arg`, `extension_list`,
  `require_known` (every unknown extension of a document in one error),
  `unknown_fields`, `array_defaults` (the `zarrkit_array_defaults` hook).
- Consolidated members kept inline in a group document: `CONSOLIDATED_FIELD`, `inline`,
  `member_documents`, `member_order`.
- `check_fits`: a key against the store's name limit.
"""

from __future__ import annotations

from ..formats.consolidated import FIELD as CONSOLIDATED_FIELD
from ..formats.consolidated import inline, member_documents, member_order
from ..formats.documents import (
    check_attributes,
    check_chunk_size,
    check_dimensions,
    check_shape,
    dump_document,
    fill_value_or_default,
    load_document,
    short_repr,
)
from ..formats.format import Format, read_in_units
from ..hooks import array_defaults
from ..metadata import ArrayMetadata, GroupMetadata, NodeMetadata, freeze, thaw_document
from ..negotiation import (
    build,
    extension_from_arg,
    extension_list,
    require_known,
    unknown_fields,
)
from ..registry import get_registry, lookup
from ..store import check_fits

__all__ = [
    "CONSOLIDATED_FIELD",
    "ArrayMetadata",
    "Format",
    "GroupMetadata",
    "NodeMetadata",
    "array_defaults",
    "build",
    "check_attributes",
    "check_chunk_size",
    "check_dimensions",
    "check_fits",
    "check_shape",
    "dump_document",
    "extension_from_arg",
    "extension_list",
    "fill_value_or_default",
    "freeze",
    "get_registry",
    "inline",
    "load_document",
    "lookup",
    "member_documents",
    "member_order",
    "read_in_units",
    "require_known",
    "short_repr",
    "thaw_document",
    "unknown_fields",
]
