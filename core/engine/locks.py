"""Per-key locks for read-modify-write within one process."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from .. import forksafe

_STRIPES = 1024
_locks = [forksafe.lock() for _ in range(_STRIPES)]


@contextmanager
def locked(keys: Sequence[str]) -> Iterator[None]:
    """Hold the locks of `keys` (striped by hash) for a read-modify-write, so two threads of
    this process writing different parts of one stored value cannot lose each other's update.
    Locks are taken in one global order, so writers never deadlock. Per process only: writers
    in other processes (or machines) are kept apart by the store's `update_many`."""
    stripes = sorted({hash(k) % _STRIPES for k in keys})
    taken = []
    try:
        for s in stripes:
            _locks[s].acquire()
            taken.append(s)
        yield
    finally:
        for s in reversed(taken):
            _locks[s].release()
