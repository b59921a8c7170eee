"""What a Zarr format is to the kernel: the storage protocol of one format (where a node's
metadata lives, how its document reads and writes, where its chunks are), as one object per
format (`get_format`). Everything a format names (codecs, data types, grids, ...) comes from the
registries; the format only says how its documents spell them.

A subclass implements the abstract methods; what every format does alike (loading and
serialising JSON, editing a document, reading a group's children with their metadata) is here
once, with hooks (`attributes_edit`, `resize_edit`) where a format's document differs.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import wait
from typing import Any, ClassVar

from .. import config, executor
from ..chunk_grid import ChunkGrid
from ..chunk_key_encoding import ChunkKeyEncoding
from ..codec import Codec
from ..data_type import DataType
from ..errors import ArgumentError
from ..metadata import ArrayMetadata, GroupMetadata, NodeMetadata
from ..store import Store
from .documents import dump_document, load_document


class Format(ABC):
    """The storage protocol of one Zarr format. Instances hold no state: one per format."""

    #: the format's name (`zarrkit.names`): the key of every per-format table
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
