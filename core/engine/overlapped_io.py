"""Keeping a remote store busy while the engine's threads decode or encode.

A store whose calls are round trips (`StoreCapabilities.preferred_fetch_bytes`, `preferred_store_bytes`)
idles while the CPU works on what it answered, and the CPU idles while the next answer is on
its way, unless the two overlap: a whole read fetches its next batch while the current one
decodes (`fetch`, used by the engine's read), a write stores what it has encoded while it
encodes what comes next (`Uploads`). A read holds at most two batches of stored values beyond
the array itself, a write at most `_AHEAD` groups; both leave nothing running when they return.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future, wait
from typing import Any

from .. import executor
from ..abc.store import Store, limiting_values
from .locks import locked

#: groups a write may have being stored at once (an encoder handing on another waits):
#: with a network store's groups of `preferred_store_bytes` (4 MiB), as many bytes as two
#: groups of 16 MiB held, yet uploads start after 4 MiB are encoded, not 16, and requests
#: in flight do not fall to half each time a group's last answers are awaited
_AHEAD = 8


def fetch(store: Store, keys: Sequence[str], value_limit: int) -> Future[dict[str, Any]]:
    """`store.read_many(keys)` started now on the transfer pool, under the read's limit on
    one value's size (which is per thread, so it is set again there)."""
    return executor.transfer_pool().submit(_read, store, keys, value_limit)


def _read(store: Store, keys: Sequence[str], value_limit: int) -> dict[str, Any]:
    with limiting_values(value_limit), store.reading() as source:
        values: dict[str, Any] = source.read_many(keys)
        return values


def settle(futures: Iterable[Future[Any]]) -> None:
    """Let started transfers end (those not yet running are dropped): a read or write that
    fails returns only once nothing of it is still running."""
    started = [future for future in futures if not future.cancel()]
    wait(started)


class Uploads:
    """The store calls of one write, made on the transfer pool while the engine's threads
    encode what comes next: the target of `_Write.encode` (its `set_many` and `erase_many`).

    At most `_AHEAD` groups are being stored at once; an encoder handing on another waits for
    one to end, so memory stays bounded. Each group is stored under its keys' locks, held for
    the store call only: a whole chunk's new value does not depend on its old one, so a
    read-modify-write of the same chunk by another thread of this process still sees it stored
    wholly before or wholly after its own. The first failure is kept: later groups are refused
    with it, and `finish` raises it once every group has ended."""

    def __init__(self, store: Store, stored: Callable[[], None]) -> None:
        self._store = store
        #: called after each group (the handle's kept shard indexes are stale)
        self._stored = stored
        self._slots = threading.BoundedSemaphore(_AHEAD)
        self._lock = threading.Lock()
        self._futures: list[Future[None]] = []
        self._error: BaseException | None = None
        self._handed = 0  # groups handed on so far

    def group_size(self, full: int) -> int:
        """Chunks the next group handed on may hold, where a group would be `full`: the
        write's first groups are 1, 4, 16, ... chunks, so its first uploads start once a
        chunk is encoded rather than once a full group is, and the groups grow fast enough
        that the first `_AHEAD` still keep many requests in flight."""
        return min(full, 1 << min(2 * self._handed, 30))

    def set_many(self, items: Mapping[str, Any]) -> None:
        self._hand_on(self._store.set_many, items, list(items))

    def erase_many(self, keys: Iterable[str]) -> None:
        keys = list(keys)
        self._hand_on(self._store.erase_many, keys, keys)

    def _hand_on(self, call: Callable[[Any], None], argument: Any, keys: list[str]) -> None:
        self._slots.acquire()
        try:
            with self._lock:
                if self._error is not None:
                    raise self._error
                self._futures.append(
                    executor.transfer_pool().submit(self._run, call, argument, keys)
                )
                self._handed += 1
        except BaseException:
            self._slots.release()
            raise

    def _run(self, call: Callable[[Any], None], argument: Any, keys: list[str]) -> None:
        try:
            with locked(keys):
                call(argument)
        except BaseException as exc:
            with self._lock:
                if self._error is None:
                    self._error = exc
            raise
        finally:
            self._stored()
            self._slots.release()

    def wait(self) -> None:
        """Until every group handed on has been stored or has failed."""
        with self._lock:
            futures = list(self._futures)
        wait(futures)

    def finish(self) -> None:
        """`wait`, then raise the first failure (a `StoreError` as the store raised it)."""
        self.wait()
        if self._error is not None:
            raise self._error
