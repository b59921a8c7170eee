"""`zarrkit.AsyncGroup`: zarr-python 3's `AsyncGroup`, the face of a group an event loop
awaits. It is the same group as `zarrkit.Group`: each coroutine runs the group's own method on
the I/O pool (its members and documents are a few small reads), and the arrays it hands out
are `AsyncArray`s whose chunk reads are awaited natively where the store is async.
`AsyncGroup(group)` wraps a synchronous group, `as_sync()` gives it back.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any, Self

from zarrkit.api.arrays import Array
from zarrkit.api.async_array import AsyncArray
from zarrkit.api.groups import Group, GroupInfo
from zarrkit.api.pooled import in_pool
from zarrkit.errors import ArgumentError, NodeNotFoundError


def as_async(node: Array | Group) -> AsyncArray | AsyncGroup:
    """The awaitable face of a synchronous array or group (the same handle)."""
    if isinstance(node, Array):
        return AsyncArray(node)
    if isinstance(node, Group):
        return AsyncGroup(node)
    raise ArgumentError(f"as_async takes a zarrkit Array or Group, got {type(node).__name__}")


def as_sync_argument(value: Any) -> Any:
    """An `AsyncArray` or `AsyncGroup` given where the synchronous API takes a node (the data
    of `array()`, the model of `zeros_like()`), as its synchronous face."""
    if isinstance(value, (AsyncArray, AsyncGroup)):
        return value.as_sync()
    return value


class AsyncGroup:
    """A group whose member lookups, creation and listings are coroutines (zarr-python's
    `AsyncGroup`). `group` is the synchronous `zarrkit.Group` it is a face of."""

    __slots__ = ("_group",)

    def __init__(self, group: Group) -> None:
        if not isinstance(group, Group):
            raise ArgumentError(f"AsyncGroup wraps a zarrkit.Group, got {type(group).__name__}")
        self._group = group

    def as_sync(self) -> Group:
        """The synchronous face of this group."""
        return self._group

    @classmethod
    async def open(
        cls,
        store: Any,
        zarr_format: Any = 3,
        use_consolidated: bool | None = None,
        *,
        path: str | None = "",
    ) -> AsyncGroup:
        """The group at `path` in `store`, read-only, of `zarr_format` (None: any);
        `use_consolidated` as in `open_group`. Raises `NodeNotFoundError` when there is none."""
        from zarrkit.api.synchronous import open_group

        group = await in_pool(
            open_group,
            store,
            path=path,
            mode="r",
            zarr_format=zarr_format,
            use_consolidated=use_consolidated,
        )
        return cls(group)

    def __repr__(self) -> str:
        return "<AsyncGroup" + repr(self._group).removeprefix("<Group")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AsyncGroup):
            return NotImplemented
        return self._group == other._group

    def __hash__(self) -> int:
        return hash(self._group)

    # -- what it is, without I/O --------------------------------------------------------------
    @property
    def attrs(self) -> Any:
        return self._group.attrs

    @property
    def metadata(self) -> Any:
        return self._group.metadata

    @property
    def path(self) -> str:
        return self._group.path

    @property
    def name(self) -> str:
        return self._group.name

    @property
    def basename(self) -> str:
        return self._group.basename

    @property
    def store(self) -> Any:
        return self._group.store

    @property
    def read_only(self) -> bool:
        return self._group.read_only

    @property
    def info(self) -> GroupInfo:
        return self._group.info

    # -- members ------------------------------------------------------------------------------
    async def getitem(self, key: str) -> AsyncArray | AsyncGroup:
        """The member at `key` (a name or a path below the group); `KeyError`-compatible
        `NodeNotFoundError` when there is none."""
        return as_async(await in_pool(self._group.__getitem__, key))

    async def get(self, key: str, default: Any = None) -> Any:
        """The member at `key`, or `default` when there is none."""
        try:
            return await self.getitem(key)
        except NodeNotFoundError:
            return default

    async def get_array(self, path: str) -> AsyncArray:
        return AsyncArray(await in_pool(self._group.get_array, path))

    async def get_group(self, path: str) -> AsyncGroup:
        return AsyncGroup(await in_pool(self._group.get_group, path))

    async def contains(self, member: str) -> bool:
        """Whether the group has a member at `member`."""
        return await in_pool(self._group.__contains__, member)

    async def delitem(self, key: str) -> None:
        """Erase the member at `key` and everything below it."""
        await in_pool(self._group.__delitem__, key)

    async def setitem(self, key: str, value: Any) -> None:
        """A new array `key` holding `value` (replacing what is there), as zarr-python."""
        from zarrkit.api.shortcuts import array

        data = as_sync_argument(value)
        await in_pool(array, data, store=self._group.store, path=self._child(key), overwrite=True)

    def _child(self, key: str) -> str:
        return f"{self._group.path}/{key}".strip("/")

    async def nmembers(self, max_depth: int | None = 0) -> int:
        """How many members the group has (to `max_depth` levels below it; None: all)."""
        return len(await in_pool(lambda: list(self._group.members(max_depth=max_depth))))

    async def members(
        self, max_depth: int | None = 0, *, use_consolidated_for_children: bool = True
    ) -> AsyncIterator[tuple[str, AsyncArray | AsyncGroup]]:
        """(name, member) of each member, to `max_depth` levels below (None: all), listed on
        the I/O pool once and then yielded."""
        found = await in_pool(lambda: list(self._group.members(max_depth=max_depth)))
        for name, node in found:
            yield name, as_async(node)

    async def keys(self) -> AsyncIterator[str]:
        for name in await in_pool(self._group.keys):
            yield name

    async def arrays(self) -> AsyncIterator[tuple[str, AsyncArray]]:
        for name, array in await in_pool(lambda: list(self._group.arrays())):
            yield name, AsyncArray(array)

    async def groups(self) -> AsyncIterator[tuple[str, AsyncGroup]]:
        for name, group in await in_pool(lambda: list(self._group.groups())):
            yield name, AsyncGroup(group)

    async def array_keys(self) -> AsyncIterator[str]:
        for name in await in_pool(self._group.array_keys):
            yield name

    async def group_keys(self) -> AsyncIterator[str]:
        for name in await in_pool(self._group.group_keys):
            yield name

    async def array_values(self) -> AsyncIterator[AsyncArray]:
        async for _, array in self.arrays():
            yield array

    async def group_values(self) -> AsyncIterator[AsyncGroup]:
        async for _, group in self.groups():
            yield group

    # -- creating members ---------------------------------------------------------------------
    async def create_array(self, name: str, **kwargs: Any) -> AsyncArray:
        """A new array `name` in this group: `Group.create_array`'s arguments (`shape`,
        `dtype`, `chunks`, `shards`, `data`, ...)."""
        if "data" in kwargs:
            kwargs["data"] = as_sync_argument(kwargs["data"])
        return AsyncArray(await in_pool(self._group.create_array, name, **kwargs))

    async def create_group(self, name: str, **kwargs: Any) -> AsyncGroup:
        """A new group `name` in this group (`Group.create_group`'s arguments)."""
        return AsyncGroup(await in_pool(self._group.create_group, name, **kwargs))

    async def require_group(self, name: str, overwrite: bool = False) -> AsyncGroup:
        """The group `name`, created when missing (replaced with `overwrite`)."""
        if overwrite:
            return await self.create_group(name, overwrite=True)
        return AsyncGroup(await in_pool(self._group.require_group, name))

    async def require_groups(self, *names: str) -> tuple[AsyncGroup, ...]:
        return tuple([await self.require_group(name) for name in names])

    async def require_array(self, name: str, *, shape: Any, **kwargs: Any) -> AsyncArray:
        """The array `name`, created when missing; an existing one must have `shape` (and
        `dtype`, when given)."""
        return AsyncArray(await in_pool(self._group.require_array, name, shape=shape, **kwargs))

    async def empty(self, *, name: str, shape: Any, **kwargs: Any) -> AsyncArray:
        return AsyncArray(await in_pool(self._group.empty, name=name, shape=shape, **kwargs))

    async def zeros(self, *, name: str, shape: Any, **kwargs: Any) -> AsyncArray:
        return AsyncArray(await in_pool(self._group.zeros, name=name, shape=shape, **kwargs))

    async def ones(self, *, name: str, shape: Any, **kwargs: Any) -> AsyncArray:
        return AsyncArray(await in_pool(self._group.ones, name=name, shape=shape, **kwargs))

    async def full(self, *, name: str, shape: Any, fill_value: Any, **kwargs: Any) -> AsyncArray:
        made = await in_pool(
            self._group.full, name=name, shape=shape, fill_value=fill_value, **kwargs
        )
        return AsyncArray(made)

    async def empty_like(self, *, name: str, data: Any, **kwargs: Any) -> AsyncArray:
        made = await in_pool(
            self._group.empty_like, name=name, data=as_sync_argument(data), **kwargs
        )
        return AsyncArray(made)

    async def zeros_like(self, *, name: str, data: Any, **kwargs: Any) -> AsyncArray:
        made = await in_pool(
            self._group.zeros_like, name=name, data=as_sync_argument(data), **kwargs
        )
        return AsyncArray(made)

    async def ones_like(self, *, name: str, data: Any, **kwargs: Any) -> AsyncArray:
        made = await in_pool(
            self._group.ones_like, name=name, data=as_sync_argument(data), **kwargs
        )
        return AsyncArray(made)

    async def full_like(self, *, name: str, data: Any, **kwargs: Any) -> AsyncArray:
        made = await in_pool(
            self._group.full_like, name=name, data=as_sync_argument(data), **kwargs
        )
        return AsyncArray(made)

    # -- the group itself ---------------------------------------------------------------------
    async def update_attributes(self, new_attributes: Mapping[str, Any]) -> Self:
        """The attributes updated with `new_attributes` and stored; this group."""
        await in_pool(self._group.update_attributes, new_attributes)
        return self

    async def info_complete(self) -> GroupInfo:
        return await in_pool(self._group.info_complete)

    async def tree(self, expand: bool | None = None, level: int | None = None) -> str:
        return await in_pool(self._group.tree, expand, level)

    async def move(self, source: str, dest: str) -> None:
        await in_pool(self._group.move, source, dest)
