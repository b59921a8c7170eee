"""Many awaitables at once, at most a given number in flight: what every store over an async
client (fsspec, obstore, zarr-python's stores) needs for batched reads and writes."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")


async def gather_limited(calls: Sequence[Callable[[], Awaitable[T]]], limit: int) -> list[T]:
    """Await every call, at most `limit` at a time, answers in the calls' order. The first
    failure cancels the rest (no orphan requests go on retrying) and is raised as itself, not
    wrapped in an exception group, so callers keep catching the client's own errors."""
    gate = asyncio.Semaphore(limit)
    results: list[Any] = [None] * len(calls)

    async def one(i: int, call: Callable[[], Awaitable[T]]) -> None:
        async with gate:
            results[i] = await call()

    try:
        async with asyncio.TaskGroup() as group:
            for i, call in enumerate(calls):
                group.create_task(one(i, call))
    except BaseExceptionGroup as failures:
        raise _first_leaf(failures) from None
    return results


def _first_leaf(group: BaseExceptionGroup) -> BaseException:
    first = group.exceptions[0]
    return _first_leaf(first) if isinstance(first, BaseExceptionGroup) else first
