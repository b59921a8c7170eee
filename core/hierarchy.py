"""Groups, node paths and the node-name rules; creating and opening nodes in a store.

A group is given the source of its members: the store's listing (`StoreMembers`), or the
consolidated metadata of the group it was opened through (`formats.consolidated`). What a
group does with its members (names, `in`, `group[name]`, deleting, the tree) is the same for
either; only where the members come from differs.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

from .array import Array
from .errors import (
    ContainsNodeError,
    InvalidKeyError,
    MetadataError,
    NodeNameError,
    NodeNotFoundError,
)
from .formats import RESERVED_NAMES, available, check_node_fits, get_format, read_node
from .formats.consolidated import ConsolidatedMembers, consolidated_document, has_consolidated
from .formats.format import Format
from .metadata import ArrayMetadata, GroupMetadata, NodeMetadata
from .node import Node
from .storage import open_store
from .store import check_fits


def check_name(name: str) -> str:
    """A node name per the v3 spec (not empty, no '/', not only periods, not '__'-prefixed),
    valid Unicode, and not the name of a metadata document (which no store can hold as a node:
    `InvalidKeyError`)."""
    if not isinstance(name, str):
        raise NodeNameError(f"node names are strings, got {name!r}")
    if not name:
        raise NodeNameError("a node name must not be empty")
    if "/" in name:
        raise NodeNameError(f"node name {name!r} must not contain '/'")
    if set(name) == {"."}:
        raise NodeNameError(f"node name {name!r} must not consist of periods only")
    if name.startswith("__"):
        raise NodeNameError(f"node name {name!r} must not start with '__' (reserved)")
    if not name.isascii():
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:
            raise NodeNameError(
                f"node name {name!r} is not valid Unicode (a lone surrogate)"
            ) from None
    if name in RESERVED_NAMES:
        raise InvalidKeyError(
            f"node name {name!r} is the name of a metadata document; a "
            f"store cannot hold a node there"
        )
    return name


def normalize_path(path: str | None) -> str:
    """'/a/b/' -> 'a/b'; '' is the root. Each segment must be a valid node name."""
    if path is None:
        return ""
    if not isinstance(path, str):
        raise NodeNameError(f"node paths are strings, got {path!r}")
    stripped = path.strip("/")
    if not stripped:
        return ""
    for segment in stripped.split("/"):
        check_name(segment)
    return stripped


def join(parent: str, name: str) -> str:
    return f"{parent}/{name}" if parent else name


def read_metadata(store: Any, path: str, expected: Format | None = None) -> NodeMetadata | None:
    """The metadata of the node at `path` in whichever format it has, or None (see
    `formats.read_node`; `expected`: the format it most likely has)."""
    check_fits(store, path)
    return read_node(store, path, expected)


def node_from_metadata(
    store: Any,
    path: str,
    metadata: NodeMetadata,
    read_only: bool,
    members: MemberSource | None = None,
) -> Array | Group:
    """The node object for metadata just read. A group gets `members` as the source of its
    members; without one, its consolidated metadata when its document holds some (checked
    here, so a malformed one is refused on opening), else the store's listing."""
    if isinstance(metadata, ArrayMetadata):
        return Array(store, path, metadata, read_only=read_only)
    if members is None and has_consolidated(metadata):
        consolidated = ConsolidatedMembers()
        group = Group(store, path, metadata, read_only=read_only, members=consolidated)
        consolidated.check(group)
        return group
    return Group(store, path, metadata, read_only=read_only, members=members)


def open_node(
    store: Any, path: str, *, read_only: bool, expected: Format | None = None
) -> Array | Group:
    metadata = read_metadata(store, path, expected)
    if metadata is None:
        raise NodeNotFoundError(path or "/", store)
    return node_from_metadata(store, path, metadata, read_only)


def prepare_path(store: Any, path: str, fmt: str, *, overwrite: bool) -> None:
    """Make room for a new node at `path` and create its missing ancestor groups."""
    store.require("write", f"create a node at {path or '/'!r}")
    format_module = get_format(fmt)
    check_node_fits(store, path, format_module)  # (its ancestors' keys hold shorter names)
    # ancestors first: under an array, `path` may be where its chunks are, not a node to erase
    parts = path.split("/") if path else []
    ancestors = ["/".join(parts[:i]) for i in range(len(parts))]
    candidates = _candidates(store, [*ancestors, path])
    missing = []
    for ancestor in ancestors:
        found = read_node(store, ancestor) if ancestor in candidates else None
        if found is None:
            missing.append(ancestor)
        elif isinstance(found, ArrayMetadata):
            raise ContainsNodeError(f"cannot create {path!r}: {ancestor or '/'!r} is an array")
    existing = read_node(store, path) if path in candidates else None
    if existing is not None:
        if not overwrite:
            raise ContainsNodeError(
                f"a {existing.node_type} already exists at {path or '/'!r} "
                f"in {store}; pass overwrite=True to replace it"
            )
        get_format(existing.format).erase_node(store, path)
    elif overwrite and path:
        format_module.erase_node(store, path)
    if format_module.implicit_groups:
        return  # the format implies ancestors from their descendants (the 2020 draft)
    for ancestor in missing:
        format_module.write_metadata(store, ancestor, format_module.group_document(None))


def _candidates(store: Any, paths: list[str]) -> set[str]:
    """The paths among `paths` where a node may be, from one batched read of the keys that
    mark a node in each format rather than a probe of each format per path: on a file system
    every probe walks the whole path, so a node 400 levels down cost 1,600 walks of up to 400
    folders. Every path when the store holds a hierarchy with implicit groups (the 2020
    draft), which only that format's own probe can find."""
    keys: dict[str, str] = {}
    for name in available():
        fmt = get_format(name)
        if fmt.implicit_groups:
            if fmt.probe(store, ""):
                return set(paths)
            continue
        keys.update((key, p) for p in paths for key in fmt.node_keys(p))
    return {keys[key] for key in store.get_many(list(keys))}


class MemberSource(Protocol):
    """Where a group's members come from. Each method is given the group it serves and takes
    member paths relative to it (a name, or 'a/b' for a deeper one), already checked."""

    #: added to the group's repr
    describe: str

    def names(self, group: Group) -> list[str]:
        """The names of the members directly under the group, sorted."""
        ...

    def find(self, group: Group, relative: str) -> NodeMetadata | None:
        """The metadata of the member at `relative`, or None when there is none."""
        ...

    def listing(self, group: Group) -> dict[str, NodeMetadata]:
        """The members directly under the group with their metadata, by name, sorted."""
        ...

    def below(self, group: Group, relative: str) -> MemberSource | None:
        """The source of the member group at `relative` (None: the one its metadata implies)."""
        ...

    def forget(self, group: Group, relative: str) -> None:
        """Called after the member at `relative` was erased from the store."""
        ...

    def missing(self) -> str:
        """What a `NodeNotFoundError` says was looked for."""
        ...


class StoreMembers:
    """A group's members as the store lists them, read in the group's format first."""

    describe = ""

    def names(self, group: Group) -> list[str]:
        return sorted(group._format.children(group.store, group.path))

    def find(self, group: Group, relative: str) -> NodeMetadata | None:
        return read_metadata(group.store, join(group.path, relative), group._format)

    def listing(self, group: Group) -> dict[str, NodeMetadata]:
        return dict(sorted(group._format.child_metadata(group.store, group.path).items()))

    def below(self, group: Group, relative: str) -> MemberSource | None:
        return None

    def forget(self, group: Group, relative: str) -> None:
        pass

    def missing(self) -> str:
        return "node"


#: the source of every group given no other: it holds no state
STORE_MEMBERS = StoreMembers()


def apply_use_consolidated(group: Group, use_consolidated: bool | None) -> Group:
    """A group just opened, as `use_consolidated` asks: None keeps what the store has, True
    requires consolidated metadata, False ignores it (members come from the store's listing)."""
    consolidated = isinstance(group._members, ConsolidatedMembers)
    if use_consolidated is None or bool(use_consolidated) == consolidated:
        return group
    if use_consolidated is False:
        return Group(group.store, group.path, group.metadata, read_only=group.read_only)
    raise MetadataError(
        f"group {group.name!r} has no consolidated metadata; create it with "
        f"zarrkit.consolidate_metadata()",
        key="consolidated_metadata",
        where=group._where(),
    )


def consolidate_metadata(
    store: Any, path: str = "", *, storage_options: dict | None = None
) -> Group:
    """Gather the metadata of every node below the group at `path` into that group's document
    (v3 inline `consolidated_metadata`, v2 `.zmetadata`) and return the group, consolidated.

    Needs a store that can list (to find the nodes) and be written."""
    opened = open_store(store, mode="a", storage_options=storage_options)
    path = normalize_path(path)
    metadata = read_metadata(opened, path)
    if not isinstance(metadata, GroupMetadata):
        what = "nothing" if metadata is None else "an array"
        raise NodeNotFoundError(path or "/", opened, what=f"group (found {what})")
    opened.require("write", f"consolidate the metadata of group {path or '/'!r}")
    fmt = get_format(metadata.format)
    doc = consolidated_document(metadata, opened, path)
    consolidated = fmt.parse_group(doc, f"{fmt.metadata_key(path)} in {opened}")
    fmt.write_metadata(opened, path, doc)
    group = node_from_metadata(opened, path, consolidated, read_only=False)
    assert isinstance(group, Group)
    return group


class Group(Node[GroupMetadata]):
    def __init__(
        self,
        store: Any,
        path: str,
        metadata: GroupMetadata,
        *,
        read_only: bool = False,
        members: MemberSource | None = None,
    ) -> None:
        self._members: MemberSource = STORE_MEMBERS if members is None else members
        super().__init__(store, path, metadata, read_only=read_only)

    def _pickled_options(self) -> dict[str, Any]:
        return {} if self._members is STORE_MEMBERS else {"members": self._members}

    # -- members -----------------------------------------------------------------------------
    def _child_path(self, name: str) -> str:
        """The path of a member: a name, or a relative path 'a/b' to a deeper one (never '')."""
        relative = normalize_path(name)
        if not relative:  # '' or '/' would name this group itself (the root: the whole store)
            raise NodeNameError(f"{name!r} does not name a member of group {self.name!r}")
        return join(self._path, relative)

    def _relative(self, path: str) -> str:
        return path[len(self._path) + 1 if self._path else 0 :]

    def _member(self, relative: str, metadata: NodeMetadata) -> Array | Group:
        return node_from_metadata(
            self._store,
            join(self._path, relative),
            metadata,
            self._read_only,
            self._members.below(self, relative),
        )

    def keys(self) -> list[str]:
        return self._members.names(self)

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self.keys())

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        try:
            relative = self._relative(self._child_path(name))
            return self._members.find(self, relative) is not None
        except (NodeNameError, InvalidKeyError):  # no member can have such a name
            return False

    def __getitem__(self, name: str) -> Array | Group:
        path = self._child_path(name)
        relative = self._relative(path)
        metadata = self._members.find(self, relative)
        if metadata is None:
            raise NodeNotFoundError(path, self._store, what=self._members.missing())
        return self._member(relative, metadata)

    def get(self, name: str, default: Any = None) -> Any:
        try:
            return self[name]
        except NodeNotFoundError:
            return default

    def members(self) -> Iterator[tuple[str, Array | Group]]:
        """(name, node) for each child, sorted by name; the source reads the children's
        metadata together (a format may read them in its listing: one concurrent batch)."""
        for name, metadata in self._members.listing(self).items():
            yield name, self._member(name, metadata)

    def arrays(self) -> Iterator[tuple[str, Array]]:
        return ((n, m) for n, m in self.members() if isinstance(m, Array))

    def groups(self) -> Iterator[tuple[str, Group]]:
        return ((n, m) for n, m in self.members() if isinstance(m, Group))

    def array_keys(self) -> list[str]:
        return [n for n, _ in self.arrays()]

    def group_keys(self) -> list[str]:
        return [n for n, _ in self.groups()]

    def create_array(self, name: str, **kwargs: Any) -> Array:
        from .api import _create_array_in

        self._check_writeable()
        kwargs.setdefault("zarr_format", self._meta.format)
        return _create_array_in(self._store, self._child_path(name), **kwargs)

    def create_group(
        self, name: str, *, attributes: dict | None = None, overwrite: bool = False
    ) -> Group:
        from .api import _create_group_in

        self._check_writeable()
        return _create_group_in(
            self._store,
            self._child_path(name),
            attributes=attributes,
            overwrite=overwrite,
            zarr_format=self._meta.format,
        )

    def require_group(self, name: str) -> Group:
        node = self.get(name)
        if isinstance(node, Group):
            return node
        if node is not None:
            raise ContainsNodeError(f"{self._child_path(name)!r} is an array, not a group")
        return self.create_group(name)

    def __delitem__(self, name: str) -> None:
        self._check_writeable()
        path = self._child_path(name)
        relative = self._relative(path)
        metadata = self._members.find(self, relative)
        if metadata is None:
            raise NodeNotFoundError(path, self._store, what=self._members.missing())
        get_format(metadata.format).erase_node(self._store, path)
        self._members.forget(self, relative)

    def tree(self) -> str:
        lines = [self.name]
        self._tree_lines(lines, "")
        return "\n".join(lines)

    def _tree_lines(self, lines: list[str], indent: str) -> None:
        members = list(self.members())
        for i, (name, node) in enumerate(members):
            last = i == len(members) - 1
            branch = "└── " if last else "├── "
            if isinstance(node, Group):
                lines.append(f"{indent}{branch}{name}")
                node._tree_lines(lines, indent + ("    " if last else "│   "))
            else:
                lines.append(f"{indent}{branch}{name} {node.shape} {node.dtype}")

    def __repr__(self) -> str:
        return f"<zarrkit.Group {self.name!r} store={self._store}{self._members.describe}>"
