"""The network stores' failure policy: how long a request may stall (`io_timeout`), how many
more attempts a transient failure gets (`io_retries`), how long to wait between them
(exponential backoff with full jitter, so many clients throttled at once do not come back in
step), and which failures are transient.

Each store hands the timeout and the attempts to its client where the client can do it (botocore,
obstore, the http store's own loop) and retries here only what its client cannot: chiefly an
answer whose body was cut or stalled after its headers, which clients report rather than
retry. A value is never returned short: the clients (or the http store) check a body against
its Content-Length, and anything still failing after the attempts is a `StoreError` naming
the key and the operation.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from zarrkit.abc import settings

T = TypeVar("T")

#: class names (of the standard library, aiohttp, botocore, aiobotocore) of failures while an
#: answer's body is read, after its headers: clients retry the request phase themselves (a
#: status, a refused or dropped connection, no answer in time) but report these
_BODY_FAULTS = frozenset(
    {
        "IncompleteRead",  # http.client, urllib3: fewer bytes than Content-Length
        "IncompleteReadError",  # botocore: likewise
        "ResponseStreamingError",  # botocore: the body's connection failed
        "ClientPayloadError",  # aiohttp: the body ended early
        "ContentLengthError",  # aiohttp: likewise
        "AioReadTimeoutError",  # aiobotocore: the body stalled past the read timeout
    }
)


def is_body_fault(exc: BaseException) -> bool:
    """Whether `exc`, or what caused it, is an answer's body cut short or stalled: the same
    request made again may well succeed."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if type(current).__name__ in _BODY_FAULTS:
            return True
        current = current.__cause__ or current.__context__
    return False


@dataclass(frozen=True)
class RetryPolicy:
    """`retries` attempts after the first, waiting a random time up to `base * 2**attempt`
    seconds (at most `cap`) before each; `timeout` seconds for a request to make progress."""

    retries: int
    timeout: float
    base: float = 0.1
    cap: float = 5.0

    @classmethod
    def current(cls) -> RetryPolicy:
        """From the `io_retries` and `io_timeout` settings."""
        current = settings()
        return cls(retries=current.io_retries, timeout=current.io_timeout)

    def delay(self, attempt: int) -> float:
        """Seconds to wait before attempt `attempt + 1` (the first retry is attempt 1)."""
        return random.uniform(0.0, min(self.cap, self.base * 2 ** max(0, attempt - 1)))

    async def run(
        self, call: Callable[[], Awaitable[T]], retry: Callable[[BaseException], bool]
    ) -> T:
        """`call()`, made again while it fails with what `retry` accepts, up to `retries`
        more times; the last failure is raised as it is."""
        attempt = 0
        while True:
            try:
                return await call()
            except Exception as exc:
                if attempt >= self.retries or not retry(exc):
                    raise
            attempt += 1
            await asyncio.sleep(self.delay(attempt))
