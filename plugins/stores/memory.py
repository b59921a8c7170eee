"""An in-process store: a dict of key -> bytes, shared by name so `memory://x` opened twice is
one store (handy for tests and for handing data between parts of a program without a disk).

A memory store pickles with its contents, as zarr-python's does: what another process unpickles
is a copy as of the pickling, and what it writes there stays there. Unpickled where a store of
that name is already open (this process, or a child forked after it was opened), it is that
store, contents as they are now. To share writes between processes, use a store on disk.
"""

from __future__ import annotations

import builtins
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from zarrkit.abc import (
    Range,
    Store,
    StoreCapabilities,
    Update,
    check_key,
    check_prefix,
    lock,
    names,
)
from zarrkit.helpers import optimistic_update

_SCHEME = "memory://"


class _Space:
    """The dict behind every store opened on one name, with the lock they all share."""

    __slots__ = ("data", "lock", "origin")

    def __init__(self, origin: str | None = None) -> None:
        self.data: dict[str, bytes] = {}
        self.lock = lock()
        #: the space this one was copied from by pickling, else its own: a pickled private
        #: store is its original again, while their contents are the same
        self.origin = origin or uuid.uuid4().hex


_named: dict[str, _Space] = {}
_named_lock = lock()


def _space(
    name: str, contents: dict[str, bytes] | None = None, origin: str | None = None
) -> _Space:
    """The space of `name` (a new private one for ""); a space made here starts with
    `contents` (an unpickled store's), an existing one keeps its own."""
    if not name:
        space = _Space(origin)
    else:
        with _named_lock:
            known = _named.get(name)
            if known is not None:
                return known
            space = _named[name] = _Space()
    if contents:
        space.data.update(contents)
    return space


def _unpickle(
    name: str, mode: str, contents: dict[str, bytes], origin: str | None = None
) -> MemoryStore:
    store = MemoryStore.__new__(MemoryStore)
    store.name = name
    store.capabilities = MemoryStore.capabilities.opened(mode)
    store._space = _space(name, contents, origin)
    return store


class MemoryStore(Store):
    """Keys and values held in this process. `MemoryStore()` is private to its owner;
    `MemoryStore("x")` (or `memory://x`) shares one dict with every other store named "x",
    for the life of the process."""

    names = names("memory")
    #: (`update_many` is safe: only threads of this process can share a memory store)
    capabilities = StoreCapabilities(safe_updates=True)

    def __init__(self, name: str = "", *, mode: str = "a") -> None:
        self.name = name
        # "w", "w-" and "r+" (overwrite, refuse, require a node) are for the caller, which knows
        # the node's path; a store only needs to know whether it may write at all.
        self.capabilities = self.capabilities.opened(mode)
        self._space = _space(name)

    @classmethod
    def from_url(cls, url: str, *, mode: str = "r", **options: Any) -> MemoryStore:
        if not url.startswith(_SCHEME):
            raise ValueError(f"a memory store URL starts with {_SCHEME!r}, got {url!r}")
        if options:
            raise TypeError(f"MemoryStore takes no options, got {sorted(options)}")
        return cls(url[len(_SCHEME) :], mode=mode)

    @property
    def url(self) -> str:
        """Reopens this store, except a private one: `memory://` opens a new private store."""
        return _SCHEME + self.name

    # -- readable ----------------------------------------------------------------------------
    def get(self, key: str, byte_range: Range | None = None) -> bytes | None:
        check_key(key)
        with self._space.lock:
            value = self._space.data.get(key)
        if value is None or byte_range is None:
            return value
        return value[byte_range.slice(len(value))]

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes]:
        """Read under one lock, so the values come from one moment in time."""
        keys = [check_key(k) for k in keys]
        data = self._space.data
        with self._space.lock:
            return {k: data[k] for k in keys if k in data}

    def exists(self, key: str) -> bool:
        check_key(key)
        with self._space.lock:
            return key in self._space.data

    def sizes(self, keys: Iterable[str]) -> dict[str, int]:
        keys = [check_key(k) for k in keys]
        data = self._space.data
        with self._space.lock:
            return {k: len(data[k]) for k in keys if k in data}

    # -- writeable ---------------------------------------------------------------------------
    def set(self, key: str, value: bytes) -> None:
        self.require("write", f"set {key!r}")
        self._put({check_key(key): _frozen(value)})

    def set_many(self, items: Mapping[str, bytes]) -> None:
        """All or nothing: every key and value is checked before any is stored."""
        self.require("write", "set keys")
        self._put({check_key(k): _frozen(v) for k, v in items.items()})

    def _put(self, copies: dict[str, bytes]) -> None:
        with self._space.lock:
            self._space.data.update(copies)

    # -- updates ---------------------------------------------------------------------------------
    def update_many(self, keys: Sequence[str], compute: Update) -> None:
        """Compare-and-swap, each stored value its own token: nothing is held while `compute`
        runs, so the pool threads it may use are never kept waiting on this store's lock."""
        keys = [check_key(k) for k in keys]
        optimistic_update(self, keys, compute, self._snapshot, self._swap)

    def _snapshot(self, keys: Sequence[str]) -> tuple[dict[str, bytes], dict[str, Any]]:
        with self._space.lock:
            tokens = {k: self._space.data.get(k) for k in keys}
        return {k: v for k, v in tokens.items() if v is not None}, tokens

    def _swap(self, tokens: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
        copies = {check_key(k): None if v is None else _frozen(v) for k, v in new.items()}
        data = self._space.data
        with self._space.lock:
            changed = {k for k in copies if data.get(k) is not tokens.get(k)}
            for key, value in copies.items():
                if key in changed:
                    continue
                if value is None:
                    data.pop(key, None)
                else:
                    data[key] = value
        return list(changed)

    def erase(self, key: str) -> None:
        self.require("write", f"erase {key!r}")
        check_key(key)
        with self._space.lock:
            self._space.data.pop(key, None)

    def erase_prefix(self, prefix: str) -> None:
        self.require("write", f"erase prefix {prefix!r}")
        check_prefix(prefix)
        data = self._space.data
        with self._space.lock:
            for key in [k for k in data if k.startswith(prefix)]:
                del data[key]

    # -- listable ----------------------------------------------------------------------------
    def list(self) -> Iterator[str]:
        """A snapshot, so writers may carry on while the caller iterates."""
        with self._space.lock:
            return iter(list(self._space.data))

    def list_prefix(self, prefix: str) -> Iterator[str]:
        with self._space.lock:
            return iter([k for k in self._space.data if k.startswith(prefix)])

    def list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        return super().list_dir(check_prefix(prefix))

    # -- pickling (see the module docstring) ---------------------------------------------------
    def __reduce__(self) -> tuple[Any, ...]:
        with self._space.lock:
            contents = dict(self._space.data)
        mode = "r" if self.read_only else "a"
        return _unpickle, (self.name, mode, contents, self._space.origin)

    # -- identity ----------------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        """Equal when they share one dict, whatever their modes: they see the same data; and
        a private store and its copy by pickling, while they hold the same data (a pickled
        array is then `==` its original, as in zarr-python)."""
        if not isinstance(other, MemoryStore):
            return NotImplemented
        if self._space is other._space:
            return True
        if self._space.origin != other._space.origin:
            return False
        with self._space.lock:
            mine = dict(self._space.data)
        with other._space.lock:
            return mine == other._space.data

    def __hash__(self) -> int:
        return hash(self._space.origin)

    def __str__(self) -> str:
        # zarr-python's form, `memory://<id of the dict>`; a named store says its name
        return self.url if self.name else f"{_SCHEME}{id(self._space.data)}"

    def __repr__(self) -> str:
        # a named store is what zarr-python calls a ManagedMemoryStore (its `memory://name`)
        return f"{'ManagedMemoryStore' if self.name else 'MemoryStore'}('{self}')"


def _frozen(value: Any) -> bytes:
    """An immutable copy, so a caller reusing its buffer cannot change what was stored."""
    if type(value) is bytes:
        return value
    return bytes(memoryview(value))
