"""The format contract: what a Zarr format is to the kernel, and what a format plugin (the
`zarrkit.formats` entry-point group) implements and works with.

A format is one instance of a `Format` subclass, exposed by its entry point (the entry-point
name is the format's name: `v2`, `v3-draft-2020`; v3 is the kernel's own). It is the storage
protocol of one format: where a node's metadata lives, how its documents read and write, and
where its chunks are. Everything its documents name (codecs, data types, grids, key
encodings, layouts) it resolves through the registries (`zarrkit.helpers`: `lookup`, `build`,
`extension_from_arg`, ...), never by importing another plugin. A subclass implements the
abstract methods; what every format does alike (loading and serialising JSON, editing a
document, reading a group's children with their metadata) is here once, with hooks
(`attributes_edit`, `resize_edit`) where a format's document differs.

- `Format`, `read_in_units`: the base class and its batched-read helper.
- The metadata model a format reads documents into, shared by every format: `ArrayMetadata`,
  `GroupMetadata` (`NodeMetadata`: either), each parsed from a document and keeping it, so
  writing it back gives the same JSON (field order, aliases, unknown-but-allowed fields);
  changes (attributes, shape) are edits of the document followed by a re-parse, so what is
  written is always what would be read. `freeze`, `thaw`, `thaw_document`: read-only views of
  JSON and plain JSON again.
- Document checks, shared so that every format refuses the same bad input with the same error
  (from `zarrkit.documents`): `load_document`, `dump_document`, `check_shape`,
  `check_dimensions`, `check_chunk_size`, `check_attributes`, `fill_value_or_default`,
  `short_repr`; `check_fits`, a key against the store's name limit; `array_defaults`, what a
  new array gets where its creator names nothing (the `zarrkit_array_defaults` hook).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import wait
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np

from .. import config, executor
from ..documents import (
    check_attributes,
    check_chunk_size,
    check_dimensions,
    check_shape,
    dump_document,
    fill_value_or_default,
    load_document,
    short_repr,
)
from ..errors import ArgumentError
from ..hooks import array_defaults
from .chunk_grid import ChunkGrid
from .chunk_key_encoding import ChunkKeyEncoding
from .codec import Codec
from .data_type import DataType
from .extension import SkippedExtension
from .store import Store, check_fits

__all__ = [
    "ArrayMetadata",
    "Format",
    "GroupMetadata",
    "NodeMetadata",
    "array_defaults",
    "check_attributes",
    "check_chunk_size",
    "check_dimensions",
    "check_fits",
    "check_shape",
    "dump_document",
    "fill_value_or_default",
    "freeze",
    "load_document",
    "read_in_units",
    "short_repr",
    "thaw",
    "thaw_document",
]


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


class Format(ABC):
    """The storage protocol of one Zarr format. Instances hold no state: one per format."""

    #: the format's name (`zarrkit.abc.V3`, ...): the key of every per-format table
    name: ClassVar[str]
    #: how messages name the format ("zarr format 3")
    title: ClassVar[str]
    #: a hierarchy where a path with nodes below it is a group without a document of its own
    #: (the 2020 draft): a new node's ancestors need no documents, and only this format's own
    #: `probe` can tell whether a node is at a path
    implicit_groups: ClassVar[bool] = False
    #: `read_metadata` answers None exactly where `probe` answers False, so reading is the
    #: probe: one request on an object store where probing and then reading are two
    read_probes: ClassVar[bool] = False
    #: the indentation of serialised documents (what the format's reference writer uses, so
    #: a rewritten document diffs cleanly against one it wrote); None: the `json_indent`
    #: setting, as zarr-python's `json_indent` indents its v3 and v2 documents (2 by default)
    indent: ClassVar[int | None] = None

    def __repr__(self) -> str:
        return f"<zarrkit format {self.name}>"

    # -- keys -------------------------------------------------------------------------------
    @abstractmethod
    def metadata_key(self, path: str) -> str:
        """The key that names the node at `path` in error messages."""

    @abstractmethod
    def node_keys(self, path: str) -> tuple[str, ...]:
        """Every key the node's metadata may be stored under: checked against the store's name
        limit before a node is created, and read in one batch to find where nodes are."""

    def marker_keys(self, path: str) -> tuple[str, ...]:
        """The keys whose presence makes a node of this format at `path` (a subset of
        `node_keys`: v2's `.zattrs` alone is no node). Creation reads them for every format in
        one batch to find what is in the way, so it asks for these and no more."""
        return self.node_keys(path)

    #: keys at the store root whose values say whether the store holds a hierarchy of this
    #: format at all (`holds_hierarchy`): read in creation's batch, so that a store without one
    #: costs no probe of its own (a format with implicit groups is otherwise probed per path)
    entry_keys: ClassVar[tuple[str, ...]] = ()

    def holds_hierarchy(self, found: Mapping[str, bytes]) -> bool:
        """Whether the store holds this format's hierarchy, from the values of `entry_keys`
        that exist (`found`). A format without entry keys may be anywhere: True."""
        return True

    def chunk_key(self, path: str, encoded: str) -> str:
        """Where a chunk of the array at `path` lives, from its key encoding's string."""
        return f"{path}/{encoded}" if path else encoded

    # -- finding and reading nodes ----------------------------------------------------------
    @abstractmethod
    def probe(self, store: Store, path: str) -> bool:
        """Whether a node of this format is at `path`."""

    @abstractmethod
    def read_metadata(self, store: Store, path: str) -> NodeMetadata | None:
        """The node at `path`, or None when this format has none there."""

    @abstractmethod
    def children(self, store: Store, path: str) -> list[str]:
        """The names of the nodes directly under the group at `path`."""

    def child_metadata(self, store: Store, path: str) -> Iterator[tuple[str, NodeMetadata]]:
        """(name, metadata) of each node directly under `path`, sorted by name, as they are
        read: a format that reads its children's metadata while listing them yields each
        once its document is in; the others read each child (`children` found each by this
        format's documents)."""
        for name in sorted(self.children(store, path)):
            metadata = self.read_metadata(store, f"{path}/{name}" if path else name)
            if metadata is not None:
                yield name, metadata

    # -- documents --------------------------------------------------------------------------
    # One document per node: a dict. A format that stores a node in several keys (v2's
    # `.zarray` + `.zattrs`) folds them into one when reading and splits them when writing.
    def load_document(self, raw: Any, where: str) -> dict[str, Any]:
        return load_document(raw, where)

    def encode_document(self, doc: Mapping[str, Any]) -> bytes:
        indent = config.get().json_indent if self.indent is None else self.indent
        return dump_document(doc, indent=indent)

    def written_document(self, doc: Mapping[str, Any], where: str) -> dict[str, Any]:
        """The document as it is to be stored, from the one a change produced: a format whose
        documents can carry fields that metadata-field plugins understand lets each plugin's
        `write` act here. Callers parse what this returns, so what is kept is what is stored."""
        return dict(doc)

    @abstractmethod
    def parse_node(self, doc: Mapping[str, Any], where: str) -> NodeMetadata: ...

    @abstractmethod
    def parse_array(self, doc: Mapping[str, Any], where: str) -> ArrayMetadata: ...

    @abstractmethod
    def parse_group(self, doc: Mapping[str, Any], where: str) -> GroupMetadata: ...

    @abstractmethod
    def array_document(
        self,
        *,
        shape: Sequence[int],
        data_type: DataType,
        chunk_grid: ChunkGrid,
        chunk_key_encoding: ChunkKeyEncoding,
        fill_value: Any,
        codecs: Sequence[Codec],
        attributes: Mapping[str, Any] | None,
        dimension_names: Sequence[str | None] | None,
        storage_transformers: Sequence[Any] = (),
    ) -> dict[str, Any]:
        """A new array's document from the canonical pieces; `MetadataError` saying why when
        the pieces cannot be expressed in this format (a codec with no name here, ...)."""

    @abstractmethod
    def group_document(self, attributes: Mapping[str, Any] | None) -> dict[str, Any]:
        """A new group's document."""

    def creation_arguments(self, data_type: DataType, options: Mapping[str, Any]) -> dict[str, Any]:
        """Turn the format-specific arguments of `create_array` (v2: compressor, filters, order,
        dimension_separator) into canonical ones (codecs, chunk_key_encoding, ...); refuse
        unknown ones with TypeError. A format without arguments of its own takes none."""
        if options:
            raise ArgumentError(
                f"{self.title} takes no arguments {sorted(options)}; use codecs=, "
                f"chunk_key_encoding= and chunk_grid= instead"
            )
        return {}

    def edit_document(
        self,
        metadata: NodeMetadata,
        *,
        attributes: Mapping[str, Any] | None = None,
        shape: Sequence[int] | None = None,
    ) -> dict[str, Any]:
        """The node's document after a change of its attributes or (an array's) shape; the
        caller parses it again, so what is kept is what would be read."""
        doc = metadata.to_json()
        if attributes is not None:
            doc["attributes"] = self.attributes_edit(metadata, doc, dict(attributes))
        if shape is not None:
            if not isinstance(metadata, ArrayMetadata):
                raise ArgumentError("only an array has a shape")
            shape = [int(n) for n in shape]
            doc["shape"] = shape
            doc.update(self.resize_edit(metadata, tuple(shape)))
        return doc

    def attributes_edit(
        self, metadata: NodeMetadata, doc: Mapping[str, Any], attributes: dict[str, Any]
    ) -> Any:
        """The stored form of new attributes (a format may keep more in them than the user's)."""
        return attributes

    def resize_edit(self, metadata: ArrayMetadata, shape: tuple[int, ...]) -> dict[str, Any]:
        """The fields besides `shape` that change with it (the chunk grid, where it names the
        array's shape)."""
        return {"chunk_grid": metadata.chunk_grid.resized(shape).to_json(self.name)}

    # -- nodes in a store -------------------------------------------------------------------
    @abstractmethod
    def write_metadata(self, store: Store, path: str, doc: Mapping[str, Any]) -> None:
        """Store a node's document (split into the format's keys)."""

    @abstractmethod
    def erase_node(self, store: Store, path: str) -> None:
        """Remove a node and everything below it."""


#: documents per store call when a remote store's are read as they arrive (`read_in_units`)
_DOCUMENTS_PER_CALL = 8


def read_in_units(
    store: Store, keys: Sequence[str]
) -> Iterator[tuple[Sequence[str], dict[str, bytes]]]:
    """Runs of `keys` in order, each with the values of its keys that exist. From a
    store whose calls are round trips (`preferred_fetch_bytes`) every unit's `get_many`
    starts at once on the transfer pool, and each is yielded once it is in, so the caller
    parses the first documents while the server still answers the last, rather than all of
    them after the last answer; elsewhere in one call. Units not yet consumed when the
    caller stops are cancelled or waited for."""
    if not store.capabilities.preferred_fetch_bytes or len(keys) <= _DOCUMENTS_PER_CALL:
        yield keys, store.get_many(keys)
        return
    pool = executor.transfer_pool()
    size = _DOCUMENTS_PER_CALL
    units = [keys[i : i + size] for i in range(0, len(keys), size)]
    futures = [pool.submit(store.get_many, unit) for unit in units]
    try:
        for unit, future in zip(units, futures):
            yield unit, future.result()
    finally:
        wait([future for future in futures if not future.cancel()])
