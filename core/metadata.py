"""The canonical metadata model, shared by every Zarr format.

An `ArrayMetadata` is parsed from a document and keeps that document: writing it back gives the
same JSON (field order, aliases, unknown-but-allowed fields). Changes (attributes, shape) are
edits of the document followed by a re-parse, so what is written is always what would be read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from .chunk_grid import ChunkGrid
from .chunk_key_encoding import ChunkKeyEncoding
from .codec import Codec
from .data_type import DataType
from .negotiation import SkippedExtension


class _Documented:
    """What both kinds of metadata show of the document they keep, zarr-python's `to_dict`
    and `zarr_format` (of `ArrayV3Metadata`, `ArrayV2Metadata`, `GroupMetadata`) included."""

    format: str
    attributes: Mapping[str, Any]
    document: Mapping[str, Any]

    def to_json(self) -> dict[str, Any]:
        return thaw_document(self.document)

    @property
    def zarr_format(self) -> int:
        return _zarr_format(self.format)

    def to_dict(self) -> dict[str, Any]:
        """The stored document as plain JSON (zarr-python's `to_dict`)."""
        return _to_dict(self.format, self.document, self.attributes)


@dataclass(frozen=True)
class ArrayMetadata(_Documented):
    format: str
    shape: tuple[int, ...]
    data_type: DataType
    chunk_grid: ChunkGrid
    chunk_key_encoding: ChunkKeyEncoding
    fill_value: Any
    codecs: tuple[Codec, ...]
    attributes: Mapping[str, Any]
    dimension_names: tuple[str | None, ...] | None
    storage_transformers: tuple[Any, ...] = ()
    skipped: tuple[SkippedExtension, ...] = ()
    extra_fields: Mapping[str, Any] = field(default_factory=dict)
    document: Mapping[str, Any] = field(default_factory=dict, repr=False)
    #: readers of this array do not read a missing chunk as the fill value (v2 with a `null`
    #: fill value: zarr-python 2 leaves such chunks undefined), so chunks equal to the fill
    #: value are stored rather than erased
    keep_fill_chunks: bool = False

    node_type = "array"

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def dtype(self) -> np.dtype:
        return self.data_type.native

    @property
    def writeable(self) -> bool:
        """False when an optional extension was skipped: writing would drop it."""
        return not self.skipped


@dataclass(frozen=True)
class GroupMetadata(_Documented):
    format: str
    attributes: Mapping[str, Any]
    extra_fields: Mapping[str, Any] = field(default_factory=dict)
    document: Mapping[str, Any] = field(default_factory=dict, repr=False)

    node_type = "group"

    @property
    def consolidated_metadata(self) -> ConsolidatedMetadata | None:
        """The consolidated metadata this group's document holds, as zarr-python shows it: the
        metadata of the group's direct members by name, each member group holding its own
        members likewise (the stored form is flat, by path); None when it holds none."""
        value = self.document.get(CONSOLIDATED_FIELD)
        if not isinstance(value, Mapping) or _member_parser is None:
            return None
        return ConsolidatedMetadata(
            _nested_members(self, value.get("metadata") or {}, _member_parser),
            kind=str(value.get("kind", "inline")),
            must_understand=bool(value.get("must_understand", False)),
        )


#: the top-level field holding a group's consolidated metadata
CONSOLIDATED_FIELD = "consolidated_metadata"

#: parses one member document of consolidated metadata, given the group holding it; set by
#: `formats.consolidated` (parsing needs the format plugins, which depend on this module)
_member_parser: Callable[[GroupMetadata, str, Mapping[str, Any]], Any] | None = None


def set_member_parser(parser: Callable[[GroupMetadata, str, Mapping[str, Any]], Any]) -> None:
    global _member_parser
    _member_parser = parser


@dataclass(frozen=True)
class ConsolidatedMetadata:
    """zarr-python's `ConsolidatedMetadata`: member metadata by name (direct members only;
    a member group's own are in its `consolidated_metadata`)."""

    metadata: Mapping[str, Any]
    kind: str = "inline"
    must_understand: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "must_understand": self.must_understand,
            "metadata": {name: m.to_dict() for name, m in self.metadata.items()},
        }


def _nested_members(
    group: GroupMetadata,
    flat: Mapping[str, Any],
    parse: Callable[[GroupMetadata, str, Mapping[str, Any]], Any],
) -> dict[str, Any]:
    """The flat `{path: document}` of stored consolidated metadata as zarr-python's nested
    objects: direct members, a member group given the documents below it as its own."""
    members: dict[str, Any] = {}
    for path in sorted(p for p in flat if "/" not in p):
        doc = dict(flat[path])
        below = {p[len(path) + 1 :]: d for p, d in flat.items() if p.startswith(path + "/")}
        if doc.get("node_type", "group") == "group" and (below or CONSOLIDATED_FIELD in doc):
            doc[CONSOLIDATED_FIELD] = {
                "kind": "inline",
                "must_understand": False,
                "metadata": below,
            }
        members[path] = parse(group, path, doc)
    return members


def _zarr_format(format: str) -> int:
    """The `zarr_format` number of a format's name (the 2020 draft is a version 3)."""
    return 2 if format == "v2" else 3


def _to_dict(format: str, document: Mapping[str, Any], attributes: Mapping[str, Any]) -> dict:
    doc = thaw_document(document)
    if format == "v2" and "attributes" not in doc:  # (v2 keeps them beside, in .zattrs)
        doc["attributes"] = thaw(attributes)
    return doc


#: the JSON values that hold no others
_SCALARS = (str, int, float, type(None))


def freeze(doc: Any) -> Any:
    """A read-only view of a JSON document, so metadata objects stay immutable."""
    if isinstance(doc, _SCALARS):  # (most values: answered before the slower Mapping check)
        return doc
    if isinstance(doc, (dict, Mapping)):
        return MappingProxyType({k: freeze(v) for k, v in doc.items()})
    if isinstance(doc, list):
        return tuple(freeze(v) for v in doc)
    return doc


def thaw(doc: Any) -> Any:
    """Plain, mutable JSON again from a frozen view (or a copy of plain JSON): what a caller
    may change without changing the metadata it came from."""
    if isinstance(doc, Mapping):
        return {k: thaw(v) for k, v in doc.items()}
    if isinstance(doc, (list, tuple)):
        return [thaw(v) for v in doc]
    return doc


def thaw_document(doc: Mapping[str, Any]) -> dict[str, Any]:
    """`thaw` of a whole document: a plain dict."""
    return {k: thaw(v) for k, v in doc.items()}


#: the metadata of any node
NodeMetadata = ArrayMetadata | GroupMetadata
