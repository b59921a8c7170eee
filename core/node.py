"""What arrays and groups share: where they live, how their metadata is rewritten, and how they
pickle.

A node pickles as its store (each store decides how it pickles: see the store plugins), its
path, its mode and its metadata document, which the unpickling process parses again. Carrying
the document rather than re-reading it means unpickling does no I/O (a dask worker gets one
task per chunk, a scheduler may unpickle graphs it never runs) and the node is the one that was
pickled, the shape a dask graph was built for included, even if the stored document has changed
since. The document is small: the parsed objects (codecs, grids) are never pickled.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Generic, Self, TypeVar, cast

from .abc.format import ArrayMetadata, GroupMetadata, NodeMetadata
from .abc.store import Store
from .attributes import Attributes
from .documents import check_nesting
from .errors import MetadataError, ReadOnlyError
from .formats import get_format

#: the metadata of the kind of node (an array's, a group's)
M = TypeVar("M", ArrayMetadata, GroupMetadata)
#: a kind of node (the kernel's `Array`, `Group`)
N = TypeVar("N", bound="Node")

#: kernel class -> the subclass the kernel builds in its place (`register_node_class`)
_PUBLIC_CLASSES: dict[type, type] = {}


def register_node_class(kernel_class: type[N], public_class: type[N]) -> None:
    """Have the kernel build `public_class` wherever it builds a `kernel_class` node (opening,
    a group's members, creation). The API layer registers its `zarrkit.Array` and
    `zarrkit.Group`, which add zarr-python's faces (`info`, `tree`, ...) to the kernel's
    classes, when it is imported; without it the kernel builds its own classes."""
    _PUBLIC_CLASSES[kernel_class] = public_class


def node_class(kernel_class: type[N]) -> type[N]:
    """The class the kernel builds for a node of `kernel_class` (see `register_node_class`)."""
    return _PUBLIC_CLASSES.get(kernel_class, kernel_class)


def node_location(store: Store, path: str) -> str:
    """Where a node is, as zarr-python prints it: the store's `str` (its URL, for the stores
    that have one) and the node's path under it (`file:///data/x.zarr/a/b`)."""
    where = str(store)
    return f"{where.rstrip('/')}/{path}" if path else where


class Node(Generic[M]):
    _meta: M

    def __init__(self, store: Store, path: str, metadata: M, *, read_only: bool = False) -> None:
        self._store = store
        self._path = path
        self._read_only = read_only
        self._set_metadata(metadata)

    def __reduce__(self) -> tuple[Any, ...]:
        return _unpickle, (
            type(self),
            self._store,
            self._path,
            self._meta.format,
            self._meta.to_json(),
            self._read_only,
            self._pickled_options(),
        )

    def __eq__(self, other: object) -> bool:
        """The same node of equal stores, with the same metadata and options (a pickled node is
        `==` its original, as in zarr-python)."""
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, Node)
        return (
            self._path == other._path
            and self._read_only == other._read_only
            and self._meta.document == other._meta.document
            and self._pickled_options() == other._pickled_options()
            and self._store == other._store
        )

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._path))

    def _pickled_options(self) -> dict[str, Any]:
        """Constructor keywords beyond (store, path, metadata, read_only) that a subclass needs
        to be itself again when unpickled."""
        return {}

    def _set_metadata(self, metadata: M) -> None:
        self._meta = metadata
        self._format = get_format(metadata.format)

    @property
    def metadata(self) -> M:
        return self._meta

    @property
    def store(self) -> Any:
        return self._store

    @property
    def path(self) -> str:
        return self._path

    @property
    def name(self) -> str:
        return "/" + self._path

    @property
    def basename(self) -> str:
        return self._path.rsplit("/", 1)[-1]

    @property
    def read_only(self) -> bool:
        return self._read_only

    @property
    def attrs(self) -> Attributes:
        return Attributes(
            lambda: self._meta.attributes, lambda attrs: self._rewrite_metadata(attributes=attrs)
        )

    def update_attributes(self, new_attributes: Mapping[str, Any]) -> Self:
        """Merge `new_attributes` into the stored attributes (one rewrite), as zarr-python's
        `update_attributes`; returns the node."""
        self._rewrite_metadata(attributes={**self._meta.attributes, **new_attributes})
        return self

    def _where(self) -> str:
        return f"{self._format.metadata_key(self._path)} in {self._store}"

    def _check_writeable(self) -> None:
        if self._read_only:
            raise ReadOnlyError(f"{self._meta.node_type} {self.name!r} is open read-only")
        self._store.require("write", f"write to {self._meta.node_type} {self.name!r}")

    def _rewrite_metadata(self, **changes: Any) -> None:
        """Change the stored document (attributes, shape) and re-read it, so what is kept is
        what is read; the format says how a change maps onto its documents."""
        self._check_writeable()
        self._replace_document(self._format.edit_document(self._meta, **changes))

    def _replace_document(self, doc: dict[str, Any]) -> None:
        """Store `doc` as this node's document (in its format) and keep what it parses to.
        Kernel use: the caller has checked that the node may be written."""
        check_nesting(doc, self._where())  # (parsing recurses once per level)
        doc = self._format.written_document(doc, self._where())
        metadata = self._same_kind(self._format.parse_node(doc, self._where()))
        self._format.write_metadata(self._store, self._path, doc)
        self._set_metadata(metadata)

    def _same_kind(self, metadata: NodeMetadata) -> M:
        """`metadata` when it is of this node's kind (an edited document stays one)."""
        if metadata.node_type != self._meta.node_type:
            raise MetadataError(
                f"a {metadata.node_type} document cannot replace the metadata of "
                f"{self._meta.node_type} {self.name!r}",
                where=self._where(),
            )
        return cast(M, metadata)


def _unpickle(
    cls: type,
    store: Store,
    path: str,
    format: str,
    document: dict[str, Any],
    read_only: bool,
    options: dict[str, Any],
) -> Node:
    fmt = get_format(format)
    metadata = fmt.parse_node(document, f"{fmt.metadata_key(path)} in {store} (unpickled)")
    node: Node = cls(store, path, metadata, read_only=read_only, **options)
    return node
