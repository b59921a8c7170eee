"""The canonical metadata model, shared by every Zarr format.

An `ArrayMetadata` is parsed from a document and keeps that document: writing it back gives the
same JSON (field order, aliases, unknown-but-allowed fields). Changes (attributes, shape) are
edits of the document followed by a re-parse, so what is written is always what would be read.
"""

from __future__ import annotations

from collections.abc import Mapping
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
    """What both kinds of metadata give of the document they keep."""

    document: Mapping[str, Any]

    def to_json(self) -> dict[str, Any]:
        return thaw_document(self.document)


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
