"""Groups, node paths and the node-name rules; creating and opening nodes in a store.

A group is given the source of its members: the store's listing (`StoreMembers`), or the
consolidated metadata of the group it was opened through (`formats.consolidated`). What a
group does with its members (names, `in`, `group[name]`, deleting, the tree) is the same for
either; only where the members come from differs. What zarr-python offers on a group beyond
that (`create_array` with its arguments, the shortcuts, `info`, `tree`) is the API layer's
subclass `zarrkit.Group` (`zarrkit.api.groups`), which the kernel builds in this class's place.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Protocol

from .abc.format import ArrayMetadata, Format, GroupMetadata, NodeMetadata
from .abc.store import Store, check_fits
from .array import Array
from .creation import write_group
from .errors import (
    InvalidArgumentError,
    InvalidKeyError,
    NodeNameError,
    NodeNotFoundError,
)
from .formats import get_format, read_node
from .formats.consolidated import ConsolidatedMembers, has_consolidated
from .missing import node_not_found
from .node import Node, node_class, node_location
from .paths import check_name as check_name  # re-exported: where callers found it
from .paths import join, normalize_path


def read_metadata(store: Store, path: str, expected: Format | None = None) -> NodeMetadata | None:
    """The metadata of the node at `path` in whichever format it has, or None (see
    `formats.read_node`; `expected`: the format it most likely has)."""
    check_fits(store, path)
    return read_node(store, path, expected)


def node_from_metadata(
    store: Store,
    path: str,
    metadata: NodeMetadata,
    read_only: bool,
    members: MemberSource | None = None,
) -> Array | Group:
    """The node object for metadata just read. A group gets `members` as the source of its
    members; without one, its consolidated metadata when its document holds some (checked
    here, so a malformed one is refused on opening), else the store's listing."""
    if isinstance(metadata, ArrayMetadata):
        return node_class(Array)(store, path, metadata, read_only=read_only)
    if members is None and has_consolidated(metadata):
        consolidated = ConsolidatedMembers()
        group = node_class(Group)(store, path, metadata, read_only=read_only, members=consolidated)
        consolidated.check(group)
        return group
    return node_class(Group)(store, path, metadata, read_only=read_only, members=members)


def open_node(
    store: Store, path: str, *, read_only: bool, expected: Format | None = None
) -> Array | Group:
    metadata = read_metadata(store, path, expected)
    if metadata is None:
        raise node_not_found(store, path, diagnose=expected is None)
    return node_from_metadata(store, path, metadata, read_only)


class MemberSource(Protocol):
    """Where a group's members come from. Each method is given the group it serves and takes
    member paths relative to it (a name, or 'a/b' for a deeper one), already checked."""

    def names(self, group: Group) -> list[str]:
        """The names of the members directly under the group, sorted."""
        ...

    def find(self, group: Group, relative: str) -> NodeMetadata | None:
        """The metadata of the member at `relative`, or None when there is none."""
        ...

    def listing(self, group: Group) -> Iterator[tuple[str, NodeMetadata]]:
        """The members directly under the group with their metadata, sorted by name; lazily,
        so a source reading them from a store yields the first while later ones are on their
        way."""
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

    def names(self, group: Group) -> list[str]:
        return sorted(group._format.children(group.store, group.path))

    def find(self, group: Group, relative: str) -> NodeMetadata | None:
        return read_metadata(group.store, join(group.path, relative), group._format)

    def listing(self, group: Group) -> Iterator[tuple[str, NodeMetadata]]:
        return group._format.child_metadata(group.store, group.path)

    def below(self, group: Group, relative: str) -> MemberSource | None:
        return None

    def forget(self, group: Group, relative: str) -> None:
        pass

    def missing(self) -> str:
        return "node"


#: the source of every group given no other: it holds no state
STORE_MEMBERS = StoreMembers()


class Group(Node[GroupMetadata]):
    """A group in a store: a mapping from member names (or relative paths, "a/b") to its arrays
    and groups, made by `zarrkit.open_group`, `create_group` or a parent group. Members are
    read when asked for; `members()` reads many at once."""

    def __init__(
        self,
        store: Store,
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
        """The children's names, sorted (one listing, or the consolidated metadata)."""
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
        """The array or group at `name`.

        Args:
            name: A member's name, or a path relative to this group ("a/b/t").

        Raises:
            NodeNotFoundError: no member there (also a `KeyError`, as for a mapping).
            NodeNameError: `name` cannot name a member ("", "..").
            MetadataError: the member's metadata is invalid.
            StoreError: the store failed.
        """
        path = self._child_path(name)
        relative = self._relative(path)
        metadata = self._members.find(self, relative)
        if metadata is None:
            raise NodeNotFoundError(path, self._store, what=self._members.missing())
        return self._member(relative, metadata)

    def get(self, name: str, default: Any = None) -> Any:
        """`self[name]`, or `default` when no member is there."""
        try:
            return self[name]
        except NodeNotFoundError:
            return default

    def _direct_members(self) -> Iterator[tuple[str, Array | Group]]:
        """(name, node) for each child, sorted by name; the source reads the children's
        metadata together (a format may read them in its listing: one concurrent batch)."""
        for name, metadata in self._members.listing(self):
            yield name, self._member(name, metadata)

    def create_group(
        self,
        name: str,
        *,
        attributes: Mapping[str, Any] | None = None,
        overwrite: bool = False,
        zarr_format: Any = None,
    ) -> Group:
        """A new group in this group (and the groups between, for a path "a/b").

        Args:
            name: The member's name, or a path relative to this group.
            attributes: The new group's attributes.
            overwrite: Replace a node already there (else it is an error).
            zarr_format: The format (None: this group's).

        Returns:
            The new group.

        Raises:
            ReadOnlyError: the group's handle or store is read-only.
            ContainsArrayError: a node is already there and `overwrite` is false
                (`ContainsGroupError` for a group).
            NodeNameError: `name` cannot name a member.
        """
        self._check_writeable()
        path = self._child_path(name)
        metadata = write_group(
            self._store,
            path,
            attributes=attributes,
            overwrite=overwrite,
            zarr_format=self._meta.format if zarr_format is None else zarr_format,
        )
        return node_class(Group)(self._store, path, metadata)

    def members(self, max_depth: int | None = 0) -> Iterator[tuple[str, Array | Group]]:
        """(name, node) for each member, sorted by name; with `max_depth` (zarr-python's
        argument) also the members of member groups that many levels down (None: all), named
        by their path relative to this group.

        Args:
            max_depth: How many levels below the children to include (0: the children
                only; None: every level).

        Raises:
            InvalidArgumentError: `max_depth` is negative.
            MetadataError: a member's metadata is invalid.
            StoreError: the store failed.
        """
        if max_depth is not None and max_depth < 0:
            raise InvalidArgumentError(f"max_depth must be None or >= 0, got {max_depth}")
        # depth first with a stack of member iterators, not recursion: a hierarchy may be
        # deeper than Python's recursion limit
        stack: list[tuple[str, int | None, Iterator[tuple[str, Array | Group]]]] = [
            ("", max_depth, iter(self._direct_members()))
        ]
        while stack:
            prefix, depth, members = stack[-1]
            entry = next(members, None)
            if entry is None:
                stack.pop()
                continue
            name, node = entry
            yield prefix + name, node
            if isinstance(node, Group) and (depth is None or depth > 0):
                deeper = None if depth is None else depth - 1
                stack.append((f"{prefix}{name}/", deeper, iter(node._direct_members())))

    def __delitem__(self, name: str) -> None:
        self._check_writeable()
        path = self._child_path(name)
        relative = self._relative(path)
        metadata = self._members.find(self, relative)
        if metadata is None:
            raise NodeNotFoundError(path, self._store, what=self._members.missing())
        get_format(metadata.format).erase_node(self._store, path)
        self._members.forget(self, relative)

    def __repr__(self) -> str:
        # zarr-python's text, `<Group file:///data/x.zarr/a>` (see `Array.__repr__`)
        return f"<Group {node_location(self._store, self.path)}>"
