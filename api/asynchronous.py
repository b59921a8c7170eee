"""zarr-python 3's `zarr.api.asynchronous`: the opening and creating functions of
`zarrkit.api.synchronous` and `zarrkit.api.shortcuts` as coroutines, with the same arguments
(each one's docstring is its synchronous twin's), returning `AsyncArray` / `AsyncGroup`.

Each runs its synchronous twin on the I/O pool and awaits it, so the event loop stays free
while the store answers; the arrays returned read and write chunks through the awaitable path
of the one chunk engine (`Array.read_awaitable`), natively on async stores. Where a function
takes an array (`array(data)`, `zeros_like(a)`, `save_array(store, arr)`), an `AsyncArray`
may be given.

    import zarrkit.api.asynchronous as za

    a = await za.zeros((100, 100), chunks=(10, 10))
    await a.setitem((slice(0, 10), slice(0, 10)), 1)
    window = await a.getitem((slice(5, 15), slice(5, 15)))
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

from zarrkit.api import hierarchies, shortcuts, synchronous
from zarrkit.api.arrays import Array
from zarrkit.api.async_array import AsyncArray
from zarrkit.api.async_group import AsyncGroup, as_async, as_sync_argument
from zarrkit.api.groups import Group
from zarrkit.api.pooled import in_pool

__all__ = [
    "AsyncArray",
    "AsyncGroup",
    "array",
    "as_async",
    "consolidate_metadata",
    "create",
    "create_array",
    "create_group",
    "create_hierarchy",
    "empty",
    "empty_like",
    "from_array",
    "full",
    "full_like",
    "group",
    "load",
    "ones",
    "ones_like",
    "open",
    "open_array",
    "open_consolidated",
    "open_group",
    "open_like",
    "save",
    "save_array",
    "save_group",
    "tree",
    "zeros",
    "zeros_like",
]


def _faced(value: Any) -> Any:
    """What a synchronous twin returned, with its arrays and groups as their async faces."""
    if isinstance(value, (Array, Group)):
        return as_async(value)
    return value


def _awaitable(twin: Callable[..., Any]) -> Callable[..., Awaitable[Any]]:
    """`twin` as a coroutine function of the same arguments, run on the I/O pool."""

    @functools.wraps(twin)
    async def call(*args: Any, **kwargs: Any) -> Any:
        args = tuple(as_sync_argument(a) for a in args)
        kwargs = {k: as_sync_argument(v) for k, v in kwargs.items()}
        return _faced(await in_pool(twin, *args, **kwargs))

    call.__doc__ = (
        f"`zarrkit.{twin.__name__}` as a coroutine (same arguments, same errors), returning "
        f"`AsyncArray` / `AsyncGroup` for arrays and groups.\n\n{twin.__doc__ or ''}"
    )
    call.__module__ = __name__
    return call


array = _awaitable(shortcuts.array)
consolidate_metadata = _awaitable(synchronous.consolidate_metadata)
create = _awaitable(shortcuts.create)
create_array = _awaitable(synchronous.create_array)
create_group = _awaitable(synchronous.create_group)
empty = _awaitable(shortcuts.empty)
empty_like = _awaitable(shortcuts.empty_like)
from_array = _awaitable(shortcuts.from_array)
full = _awaitable(shortcuts.full)
full_like = _awaitable(shortcuts.full_like)
group = _awaitable(synchronous.group)
load = _awaitable(synchronous.load)
ones = _awaitable(shortcuts.ones)
ones_like = _awaitable(shortcuts.ones_like)
open = _awaitable(synchronous.open)
open_array = _awaitable(synchronous.open_array)
open_consolidated = _awaitable(synchronous.open_consolidated)
open_group = _awaitable(synchronous.open_group)
open_like = _awaitable(synchronous.open_like)
save = _awaitable(synchronous.save)
save_array = _awaitable(synchronous.save_array)
save_group = _awaitable(synchronous.save_group)
zeros = _awaitable(shortcuts.zeros)
zeros_like = _awaitable(shortcuts.zeros_like)


async def tree(grp: AsyncGroup, expand: bool | None = None, level: int | None = None) -> str:
    """The hierarchy below `grp` drawn as text (`Group.tree`)."""
    return await in_pool(grp.as_sync().tree, expand, level)


async def create_hierarchy(
    *, store: Any, nodes: Mapping[str, Any], overwrite: bool = False
) -> AsyncIterator[tuple[str, AsyncArray | AsyncGroup]]:
    """`zarrkit.create_hierarchy` as an async iterator: every node of `nodes` (path ->
    metadata) created on the I/O pool, then `(path, node)` yielded for each, parents first."""
    made = await in_pool(
        lambda: list(hierarchies.create_hierarchy(store=store, nodes=nodes, overwrite=overwrite))
    )
    for path, node in made:
        yield path, as_async(node)
