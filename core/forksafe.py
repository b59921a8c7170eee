"""What a forked child must get fresh rather than inherit.

`fork()` copies memory but only the thread that called it: a lock another thread held at that
moment stays held forever in the child, and a thread pool's threads are gone while the pool
object still counts them, so the child's first task waits forever. Every lock zarrkit and its
plugins keep comes from `lock()` / `rlock()` here, which a forked child finds released; state
that must be rebuilt (a pool, an open LMDB environment, kept connections) registers a reset with
`after_fork_in_child`. Both are for plugins too: this is the contract, not an internal.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Callable
from typing import Any

_locks: weakref.WeakSet[Any] = weakref.WeakSet()
#: id(owner) -> (weak reference to owner, its reset); dropped when the owner is collected
_resets: dict[int, tuple[Any, Callable[[Any], None]]] = {}
_hooks: list[Callable[[], None]] = []
_waited: weakref.WeakSet[Any] = weakref.WeakSet()
#: the locks the forking thread took in `_before`, released again in the parent
_taken: list[Any] = []


def lock() -> threading.Lock:
    """A `threading.Lock` that a forked child finds released."""
    new = threading.Lock()
    _locks.add(new)
    return new


def rlock() -> threading.RLock:
    """A `threading.RLock` that a forked child finds released."""
    new = threading.RLock()
    _locks.add(new)
    return new


def after_fork_in_child(owner: Any, reset: Callable[[Any], None]) -> None:
    """Call `reset(owner)` in every child forked while `owner` lives (a module-level reset:
    pass a module or a function's owner that lives for the process, or use `at_fork`)."""
    key = id(owner)

    def forget(_: Any, key: int = key) -> None:
        _resets.pop(key, None)

    _resets[key] = (weakref.ref(owner, forget), reset)


def at_fork(reset: Callable[[], None]) -> None:
    """Call `reset()` in every forked child (for module state)."""
    _hooks.append(reset)


def fork_waits_for(held: threading.RLock) -> threading.RLock:
    """`held`, registered so that `os.fork()` first waits until no other thread holds it, and
    the child starts with it released: for a lock around work that must never be caught
    half-done by a fork. An `rlock()`, so a thread that forks while holding it does not wait
    for itself. Returns `held`."""
    _locks.add(held)
    _waited.add(held)
    return held


def _before() -> None:
    for held in list(_waited):
        held.acquire()
        _taken.append(held)


def _in_parent() -> None:
    while _taken:
        _taken.pop().release()


def _in_child() -> None:
    _taken.clear()
    for held in list(_locks):
        held._at_fork_reinit()  # (what the standard library's own modules do after a fork)
    for reset in _hooks:
        reset()
    for ref, reset_owner in list(_resets.values()):
        owner = ref()
        if owner is not None:
            reset_owner(owner)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before, after_in_parent=_in_parent, after_in_child=_in_child)
