"""Running a foreign coroutine (a zarr-python store's or codec's) on zarr-python's event loop
thread, as zarr-python's own synchronous API runs it, with the two ways such a coroutine could
otherwise hang the caller taken away: a deadline, and a BaseException (SystemExit,
KeyboardInterrupt) that would escape a task, stop that loop and leave the caller waiting for
an answer that never comes. Both come back as Exceptions the bridges turn into zarrkit errors.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class Stalled(Exception):
    """A foreign call that did not finish within its deadline."""

    def __init__(self, deadline: float) -> None:
        super().__init__(f"did not finish within {deadline:g} s")


class Escaped(Exception):
    """A BaseException a foreign call raised, carried out of zarr-python's loop as an error."""

    def __init__(self, exc: BaseException) -> None:
        super().__init__(f"raised {type(exc).__name__}: {exc}")


#: seconds past the deadline this thread waits for the loop itself: a BaseException raised in
#: a task the foreign code made (not in `coro`) stops zarr-python's loop, and only this wait
#: ends then
_GRACE = 5.0


def run_on_zarr_loop(coro: Coroutine[Any, Any, T], deadline: float | None) -> T:
    """`coro` run on zarr-python's loop thread, within `deadline` seconds (None: no limit)."""
    import zarr.core.sync

    async def guarded() -> T:
        try:
            return await asyncio.wait_for(coro, deadline)
        except TimeoutError:
            raise Stalled(deadline or 0.0) from None
        except (Exception, asyncio.CancelledError):
            raise
        except BaseException as exc:  # (SystemExit, KeyboardInterrupt, GeneratorExit)
            raise Escaped(exc) from None

    try:
        result: T = zarr.core.sync.sync(
            guarded(), timeout=None if deadline is None else deadline + _GRACE
        )
    except TimeoutError:
        raise Stalled(deadline or 0.0) from None
    return result
