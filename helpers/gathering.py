"""Many awaitables at once, at most a given number in flight: what every store over an async
client (fsspec, obstore, zarr-python's stores) needs for batched reads and writes."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")


class InFlightLimit:
    """One limit on awaits in flight shared by every `gather_limited` given it: a store's,
    so that its `io_concurrency` bounds its requests in flight however many batches its
    callers run at once (a read fetches its next batch while the last one is still being
    answered; each batch alone within the limit, the two could otherwise have twice as many
    requests in flight as the user allowed).

    Its semaphore belongs to one event loop (asyncio's bind to the first loop that uses
    them): a store's calls all run on one, and a gate used on another starts anew there. A
    pickled gate is unpickled as a new one (a semaphore does not leave its process)."""

    def __init__(self) -> None:
        self._held: tuple[asyncio.AbstractEventLoop, int, asyncio.Semaphore] | None = None

    def semaphore(self, limit: int) -> asyncio.Semaphore:
        """This loop's semaphore of `limit` slots (called on the loop's thread only)."""
        loop = asyncio.get_running_loop()
        held = self._held
        if held is None or held[0] is not loop or held[1] != limit:
            held = self._held = (loop, limit, asyncio.Semaphore(limit))
        return held[2]

    def __reduce__(self) -> tuple[type[InFlightLimit], tuple[()]]:
        return (InFlightLimit, ())


async def gather_limited(
    calls: Sequence[Callable[[], Awaitable[T]]], limit: int, *, gate: InFlightLimit | None = None
) -> list[T]:
    """Await every call, at most `limit` at a time (counting those of every other gather
    through the same `gate`), answers in the calls' order. The first failure cancels the
    rest (no orphan requests go on retrying) and is raised as itself, not wrapped in an
    exception group, so callers keep catching the client's own errors."""
    semaphore = asyncio.Semaphore(limit) if gate is None else gate.semaphore(limit)
    results: list[Any] = [None] * len(calls)

    async def one(i: int, call: Callable[[], Awaitable[T]]) -> None:
        async with semaphore:
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
