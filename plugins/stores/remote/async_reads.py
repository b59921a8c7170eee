"""Awaitable reads (`zarrkit.abc.AwaitableReads`) for the stores over an async client
(obstore's, fsspec's): the coroutines their synchronous reads already gather on the client's
loop, offered to an awaiting read so that no thread blocks on a request.

A store using this mixin has `_read(key, range, limit)` (one value or range, None when
absent), `_gate` (its one concurrency limit) and `concurrency`; it says which loop its
client's coroutines run on (`reads_loop`). Batches go through the same `gather_limited` and
gate as the store's synchronous `read_many` / `read_ranges`, so awaited and synchronous reads
together have at most `concurrency` requests in flight.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import Any

from zarrkit.abc import AwaitableReads, Range, check_key
from zarrkit.helpers import (
    NETWORK_MAX_BLOCK,
    NETWORK_MAX_GAP,
    InFlightLimit,
    gather_limited,
    plan_reads,
)


class GatheredAwaitableReads(AwaitableReads):
    """`read_many_async` and `read_ranges_async` over the store's own `_read` coroutine."""

    concurrency: int
    _gate: InFlightLimit
    _read: Callable[[str, Range | None, int], Awaitable[Any]]

    async def read_many_async(self, keys: Sequence[str], limit: int) -> dict[str, Any]:
        keys = [check_key(k) for k in keys]
        values = await gather_limited(
            [partial(self._read, k, None, limit) for k in keys], self.concurrency, gate=self._gate
        )
        return {k: v for k, v in zip(keys, values) if v is not None}

    async def read_ranges_async(
        self, requests: Sequence[tuple[str, Range | None]], limit: int
    ) -> list[Any]:
        for key, _ in requests:
            check_key(key)
        plan = plan_reads(requests, max_gap=NETWORK_MAX_GAP, max_block=NETWORK_MAX_BLOCK)
        answers = await gather_limited(
            [partial(self._read, *r, limit) for r in plan.reads], self.concurrency, gate=self._gate
        )
        return plan.answers(answers)
