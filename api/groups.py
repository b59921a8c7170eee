"""`zarrkit.Group`: the kernel's group with zarr-python 3's faces over it.

The kernel's `Group` (`zarrkit.hierarchy`) is a mapping of members that creates groups, moves
and deletes nodes; what zarr-python 3 also offers on a group is here, in the API layer:
`create_array` with zarr-python's arguments (through `zarrkit.creation`) and the shortcuts
over it (`zeros`, `ones`, `full`, `empty`, the `*_like` forms, `require_array`), `info` and
`info_complete()`, `tree()`, and the member views by kind (`arrays`, `groups`, `get_array`,
...). Importing this module registers the class with the kernel
(`zarrkit.node.register_node_class`), so every group the kernel opens or creates is a
`zarrkit.Group`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from zarrkit.abc.format import GroupMetadata as KernelGroupMetadata
from zarrkit.api.arrays import Array, format_number, public, store_type
from zarrkit.api.creation import create_array
from zarrkit.api.metadata import GroupMetadata, shown
from zarrkit.array import Array as KernelArray
from zarrkit.creation import write_group
from zarrkit.errors import (
    ArgumentError,
    ContainsArrayError,
    ContainsGroupError,
    ContainsNodeError,
    InvalidArgumentError,
    NodeNotFoundError,
    contains_error,
)
from zarrkit.formats import get_format
from zarrkit.hierarchy import Group as KernelGroup
from zarrkit.hierarchy import read_metadata
from zarrkit.node import register_node_class

__all__ = ["Group", "GroupInfo", "public_node"]


class Group(KernelGroup):
    """A group in a store: a mapping from member names (or relative paths, "a/b") to its arrays
    and groups, made by `zarrkit.open_group`, `create_group` or a parent group. Members are
    read when asked for; `members()` reads many at once."""

    _meta: GroupMetadata

    def _set_metadata(self, metadata: KernelGroupMetadata) -> None:
        super()._set_metadata(shown(metadata))

    @property
    def metadata(self) -> GroupMetadata:
        """The group's metadata, with what zarr-python's shows (`to_dict()`, `zarr_format`,
        `consolidated_metadata`)."""
        return self._meta

    if TYPE_CHECKING:  # the kernel builds every node as this layer's classes: say so to checkers

        def __getitem__(self, name: str) -> Array | Group: ...

        def members(self, max_depth: int | None = 0) -> Iterator[tuple[str, Array | Group]]: ...

        def create_group(
            self,
            name: str,
            *,
            attributes: Mapping[str, Any] | None = None,
            overwrite: bool = False,
            zarr_format: Any = None,
        ) -> Group: ...

    def get_array(self, name: str) -> Array:
        """The array `name` (a path relative to this group); `NodeNotFoundError` when there
        is none, `ContainsGroupError` when it is a group (zarr-python's `get_array`)."""
        node = self[name]
        if not isinstance(node, Array):  # (zarr-python's words)
            raise ContainsGroupError(
                f"A group exists in store {node.store!r} at path {node.path!r}."
            )
        return node

    def get_group(self, name: str) -> Group:
        """The group `name` (a path relative to this group); `NodeNotFoundError` when there
        is none, `ContainsArrayError` when it is an array (zarr-python's `get_group`)."""
        node = self[name]
        if not isinstance(node, Group):
            raise ContainsArrayError(
                f"An array exists in store {node.store!r} at path {node.path!r}."
            )
        return node

    def arrays(self) -> Iterator[tuple[str, Array]]:
        return ((n, m) for n, m in self.members() if isinstance(m, Array))

    def groups(self) -> Iterator[tuple[str, Group]]:
        return ((n, m) for n, m in self.members() if isinstance(m, Group))

    def array_keys(self) -> list[str]:
        return [n for n, _ in self.arrays()]

    def group_keys(self) -> list[str]:
        return [n for n, _ in self.groups()]

    def create_array(self, name: str, **kwargs: Any) -> Array:
        """A new array in this group.

        Args:
            name: The member's name, or a path relative to this group.
            **kwargs: `zarrkit.create_array`'s arguments but `store` and `path`; the format
                is the group's unless `zarr_format` says otherwise.

        Returns:
            The new array.

        Raises:
            ArgumentError: `path=` given (the member is named by `name`), or an argument
                `create_array` does not take.
            ReadOnlyError: the group's handle or store is read-only.
            ContainsArrayError: a node is already there and `overwrite` is false
                (`ContainsGroupError` for a group).
            MetadataError: as `zarrkit.create_array` raises for invalid arguments.
        """
        self._check_writeable()
        if "path" in kwargs:
            raise ArgumentError("Group.create_array takes the member's name, not path=")
        kwargs.setdefault("zarr_format", self._meta.format)
        return public(create_array(self._store, path=self._child_path(name), **kwargs))

    # zarr-python's shortcuts on a group: an array named `name` in it
    def empty(self, *, name: str, shape: Any, **kwargs: Any) -> Array:
        """`create_array(name, shape=shape, ...)`, zarr-python's `Group.empty`; `zeros`,
        `ones`, `full` and the `*_like` forms set the fill value or copy `data`'s shape too."""
        return self.create_array(name, shape=shape, **_with_dtype(kwargs))

    def zeros(self, *, name: str, shape: Any, **kwargs: Any) -> Array:
        return self.create_array(name, shape=shape, fill_value=0, **_with_dtype(kwargs))

    def ones(self, *, name: str, shape: Any, **kwargs: Any) -> Array:
        return self.create_array(name, shape=shape, fill_value=1, **_with_dtype(kwargs))

    def full(self, *, name: str, shape: Any, fill_value: Any, **kwargs: Any) -> Array:
        return self.create_array(name, shape=shape, fill_value=fill_value, **_with_dtype(kwargs))

    def empty_like(self, *, name: str, data: Any, **kwargs: Any) -> Array:
        return self.create_array(name, **_like(data, kwargs))

    def zeros_like(self, *, name: str, data: Any, **kwargs: Any) -> Array:
        return self.create_array(name, **_like(data, {"fill_value": 0, **kwargs}))

    def ones_like(self, *, name: str, data: Any, **kwargs: Any) -> Array:
        return self.create_array(name, **_like(data, {"fill_value": 1, **kwargs}))

    def full_like(self, *, name: str, data: Any, **kwargs: Any) -> Array:
        return self.create_array(name, **_like(data, kwargs))

    def require_group(self, name: str, **kwargs: Any) -> Group:
        """The group `name`, created (with `kwargs`, as `create_group`) when missing."""
        node = self.get(name)
        if isinstance(node, Group):
            return node
        if node is not None:
            raise ContainsArrayError(f"{self._child_path(name)!r} is an array, not a group")
        return self.create_group(name, **kwargs)

    def require_array(self, name: str, *, shape: Any, dtype: Any = None, **kwargs: Any) -> Array:
        """The array `name` when it has this shape (and dtype, when given), else a new one made
        with `create_array`'s arguments; an array of another shape or dtype is refused, as
        in zarr-python (`exact=True` also compares the dtype's byte order)."""
        exact = bool(kwargs.pop("exact", False))
        node = self.get(name)
        if node is None:
            return self.create_array(name, shape=shape, dtype=dtype, **kwargs)
        if not isinstance(node, Array):
            raise ContainsGroupError(f"{self._child_path(name)!r} is a group, not an array")
        wanted = (int(shape),) if isinstance(shape, int) else tuple(int(n) for n in shape)
        if node.shape != wanted:
            raise ContainsNodeError(
                f"array {node.name!r} has shape {node.shape}, not the {wanted} required"
            )
        if dtype is not None:
            want = np.dtype(dtype)
            same = node.dtype == want if exact else np.can_cast(node.dtype, want)
            if not same:
                raise ContainsNodeError(
                    f"array {node.name!r} has dtype {node.dtype}, not the {want} required"
                )
        return node

    @property
    def info(self) -> GroupInfo:
        """What zarr-python's `Group.info` shows (no I/O)."""
        return GroupInfo(
            self.name, self._meta.format, self.read_only, str(self._store), **self._info_kinds()
        )

    def _info_kinds(self) -> dict[str, Any]:
        return {"store_type": store_type(self._store)}

    def info_complete(self) -> GroupInfo:
        """`info` with the counts of members, arrays and groups at every depth."""
        members = [node for _, node in self.members(max_depth=None)]
        arrays = sum(isinstance(m, Array) for m in members)
        return GroupInfo(
            self.name,
            self._meta.format,
            self.read_only,
            str(self._store),
            len(members),
            arrays,
            len(members) - arrays,
            **self._info_kinds(),
        )

    def tree(self, expand: bool | None = None, level: int | None = None) -> str:
        """The hierarchy below this group as text, as zarr-python's `Group.tree()` prints it;
        `level` is how many levels below the members are shown, as zarr-python counts
        (`expand` is accepted for zarr-python's sake: a text tree has nothing to fold)."""
        if level is not None and level < 0:
            raise InvalidArgumentError(f"level must be None or >= 0, got {level}")
        lines = [self.name]
        self._tree_lines(lines, "", None if level is None else level + 1)
        return "\n".join(lines) + "\n"

    def _tree_lines(self, lines: list[str], indent: str, level: int | None) -> None:
        # a stack of (members left, indent, levels left) rather than recursion: see `members`
        stack = [(deque(self.members()), indent, level)]
        while stack:
            members, indent, level = stack[-1]
            if level == 0 or not members:
                stack.pop()
                continue
            name, node = members.popleft()
            last = not members
            branch = "└── " if last else "├── "
            if isinstance(node, KernelGroup):
                lines.append(f"{indent}{branch}{name}")
                deeper = None if level is None else level - 1
                stack.append((deque(node.members()), indent + ("    " if last else "│   "), deeper))
            else:
                lines.append(f"{indent}{branch}{name} {node.shape} {node.dtype}")

    def with_listed_members(self) -> Group:
        """This group with its members found by listing the store instead of in its
        consolidated metadata, which may be older than what the store holds, while its
        metadata stays as read, consolidated documents included (`open_group(...,
        use_consolidated=False)` leaves them out of it, as zarr-python does). For a tool that
        must see every stored node yet keep the group's document whole (`zarrkit copy`).

        Returns:
            A handle of the same group, read-only if this one is.

        Raises:
            CapabilityError: the store cannot list its keys.
        """
        self._store.require("list", f"list the members of group {self.name!r}")
        return type(self)(self._store, self._path, self._meta, read_only=self._read_only)

    def move(self, source: str, dest: str) -> None:
        """Move the member at `source` (and everything below it) to `dest`, both relative to
        this group; missing groups above `dest` are created. zarr-python 3.4 declares this
        and raises NotImplementedError.

        Args:
            source: The member's path, relative to this group.
            dest: Its new path, relative to this group.

        Raises:
            ReadOnlyError: the group's handle or store is read-only.
            CapabilityError: the store cannot list (HTTP).
            NodeNotFoundError: nothing at `source`.
            ContainsArrayError: a node is already at `dest` (`ContainsGroupError` for a group).
        """
        self._check_writeable()
        self._store.require("list", f"move {source!r} in group {self.name!r}")
        src, dst = self._child_path(source), self._child_path(dest)
        metadata = read_metadata(self._store, src)
        if metadata is None:
            raise NodeNotFoundError(src, self._store)
        if (there := read_metadata(self._store, dst)) is not None:
            raise contains_error(there.node_type)(
                f"a node already exists at {dst!r} in {self._store}"
            )
        if dst.startswith(f"{src}/"):
            raise ContainsNodeError(f"cannot move {src!r} into itself ({dst!r})")
        parent = dst.rsplit("/", 1)[0] if "/" in dst else ""
        if parent and read_metadata(self._store, parent) is None:
            write_group(self._store, parent, zarr_format=metadata.format)
        keys = list(self._store.list_prefix(f"{src}/"))
        for start in range(0, len(keys), 64):
            batch = keys[start : start + 64]
            values = self._store.get_many(batch)
            self._store.set_many({dst + k[len(src) :]: v for k, v in values.items()})
        get_format(metadata.format).erase_node(self._store, src)


register_node_class(KernelGroup, Group)


def public_node(node: KernelArray | KernelGroup) -> Array | Group:
    """`node`, which the kernel built, typed as what it is: a `zarrkit.Array` or
    `zarrkit.Group` (the classes registered with the kernel; its own are typed as its returns)."""
    return cast(Array | Group, node)


def _with_dtype(kwargs: dict[str, Any]) -> dict[str, Any]:
    """zarr-python's group shortcuts make float64 arrays unless told otherwise."""
    return {"dtype": "float64", **kwargs}


def _like(data: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
    """`create_array` arguments for an array like `data` (its shape, dtype and chunks)."""
    new: dict[str, Any] = {"shape": tuple(data.shape), "dtype": data.dtype}
    chunks = getattr(data, "chunks", None)
    if isinstance(chunks, tuple):
        new["chunks"] = chunks
    if isinstance(data, Array):
        new["fill_value"] = data.fill_value
    new.update(kwargs)
    return new


@dataclass(frozen=True)
class GroupInfo:
    """A group's description, with zarr-python's `GroupInfo` rows; the counts are None
    unless it came from `info_complete()`."""

    name: str
    zarr_format: str
    read_only: bool
    store: str
    count_members: int | None = None
    count_arrays: int | None = None
    count_groups: int | None = None
    #: the kind of store, as zarr-python names its class (what `str` shows)
    store_type: str = ""

    def __str__(self) -> str:
        """zarr-python's `GroupInfo` text, row for row."""
        rows: list[tuple[str, Any]] = [
            ("Name", self.name.strip("/")),
            ("Type", "Group"),
            ("Zarr format", format_number(self.zarr_format)),
            ("Read-only", self.read_only),
            ("Store type", self.store_type or self.store),
        ]
        if self.count_members is not None:
            rows += [
                ("No. members", self.count_members),
                ("No. arrays", self.count_arrays),
                ("No. groups", self.count_groups),
            ]
        return "\n".join(f"{k:<11} : {v}" for k, v in rows)
