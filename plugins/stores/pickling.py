"""How the shipped stores pickle: as the arguments that open them again, never as what they
hold open (files, environments, pools, locks, connections) or have cached.

Another process (spawn, forkserver, a dask worker) unpickles a handle on the same data; a store
that holds an OS resource opens it on first use there, not while unpickling, so a process that
only passes the pickle on (a dask scheduler) opens nothing.
"""

from __future__ import annotations

from typing import Any

from zarrkit.abc import Store


def reopen(cls: type[Store], args: tuple[Any, ...], options: dict[str, Any]) -> Store:
    return cls(*args, **options)


def reopening(store: Store, *args: Any, **options: Any) -> tuple[Any, ...]:
    """A `__reduce__` answer: `type(store)(*args, **options)` when unpickled."""
    return reopen, (type(store), args, options)
