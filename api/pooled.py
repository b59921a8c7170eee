"""Running the synchronous API's metadata work (opening, creating, listing, resizing) for a
coroutine: on the I/O pool, awaited, so the event loop stays free while a store answers."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

from zarrkit import executor
from zarrkit.engine.awaiting import awaited

T = TypeVar("T")


async def in_pool(call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """`call(*args, **kwargs)` on the I/O pool, awaited; cancelled once it has started, it is
    let finish first (see `zarrkit.engine.awaiting.awaited`)."""
    return await awaited(executor.io_pool().submit(partial(call, *args, **kwargs)))
