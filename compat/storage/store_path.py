"""zarr-python's `StorePath`: a store and a path in it, accepted wherever a store is.

    root = StorePath(zarrkit.storage.MemoryStore(), "data")
    zarrkit.create_array(root / "a", shape=(2,), dtype="i4")   # the array at data/a
    await (root / "a" / "zarr.json").exists()                  # True

Its methods are zarr-python's coroutines (`get`, `set`, `delete`, `exists`, and the `open`
class method), each a call of the zarrkit store's own synchronous method on the key the path
names. Given as a store, it is that store seen from the path (`PathStore`): every key is the
path's key, so a node at the store path's root is the node at `path` in the store.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator, Sequence
from typing import Any

from zarrkit.abc.store import ByteRange, Range, Store, SuffixRange
from zarrkit.errors import ArgumentError, ContainsNodeError, InvalidArgumentError
from zarrkit.store_opening import open_store

__all__ = ["PathStore", "StorePath", "Value"]


def _joined(*parts: str) -> str:
    return "/".join(p.strip("/") for p in parts if p.strip("/"))


class StorePath:
    """zarr-python's `StorePath(store, path="")`: `store` (a zarrkit store, or anything that
    opens as one: a path, a URL, a dict), `path` a '/'-separated place in it."""

    def __init__(self, store: Any, path: str = "") -> None:
        if not isinstance(path, str):
            raise ArgumentError(f"StorePath's path must be a str, got {type(path).__name__}")
        self.store: Store = open_store(store, mode="a") if not isinstance(store, Store) else store
        self.path = _joined(path)

    @classmethod
    async def open(cls, store: Any, path: str = "", mode: str | None = None) -> StorePath:
        """A store path over `store` opened with `mode` ("r", "r+", "a", "w", "w-"). As in
        zarr-python no mode changes the store ("w" erases nothing); "w-" refuses a path with
        anything under it, and a mode that writes refuses a read-only store
        (`zarrkit.errors.InvalidArgumentError`, a ValueError as zarr-python's); "w-" raises
        `zarrkit.errors.ContainsNodeError` (a `FileExistsError`, as zarr-python raises)."""
        opened = open_store(store, mode="r" if mode == "r" else "a")
        where = cls(opened, path)
        if mode not in (None, "r") and opened.read_only:
            raise InvalidArgumentError(
                f"Store is read-only but mode is {mode!r}. Create a writable store or use 'r' mode."
            )
        if mode == "w-" and not await where.is_empty():
            raise ContainsNodeError(  # (a FileExistsError, as zarr-python raises; its words)
                f"Cannot create {where.path!r} with mode 'w-' because it already contains "
                "data. Use mode 'w' to overwrite or 'a' to append."
            )
        return where

    # -- zarr-python's coroutines, at the key this path names -------------------------------
    async def get(self, prototype: Any = None, byte_range: Any = None) -> Value | None:
        """The value stored at this path (or the part `byte_range` asks: zarr-python's
        `RangeByteRequest`, `OffsetByteRequest`, `SuffixByteRequest`, or a zarrkit range);
        None when there is none. The value is `bytes` with zarr-python `Buffer`'s `to_bytes()`
        (`prototype` is not used: zarrkit's values are host memory)."""
        found = self.store.get(self.path, _range(byte_range))
        return None if found is None else Value(found)

    async def set(self, value: Any, byte_range: Any = None) -> None:
        """Store `value` (bytes-like, or a zarr-python `Buffer`) at this path."""
        if byte_range is not None:
            raise ArgumentError("StorePath.set writes whole values (byte_range must be None)")
        to_bytes = getattr(value, "to_bytes", None)
        self.store.set(self.path, to_bytes() if callable(to_bytes) else value)

    async def delete(self) -> None:
        self.store.erase(self.path)

    async def exists(self) -> bool:
        return self.store.exists(self.path)

    async def is_empty(self) -> bool:
        return not any(True for _ in self.store.list_prefix(self.path + "/" if self.path else ""))

    # -- a path in a store ----------------------------------------------------------------------
    def __truediv__(self, other: str) -> StorePath:
        return StorePath(self.store, _joined(self.path, other))

    def as_zarrkit_store(self) -> Store:
        """The store seen from this path: what zarrkit opens a store path as."""
        return PathStore(self.store, self.path) if self.path else self.store

    def __str__(self) -> str:
        return _joined(str(self.store), self.path) if self.path else str(self.store)

    def __repr__(self) -> str:
        # (zarr-python's name of the store's class: a local store is `LocalStore` whichever
        # implementation serves it)
        from zarrkit.api.arrays import store_type

        return f"StorePath({store_type(self.store)}, '{self}')"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, StorePath):
            return NotImplemented
        return self.store == other.store and self.path == other.path

    def __hash__(self) -> int:
        return hash((self.store, self.path))


class Value(bytes):
    """A value read through a store path: bytes, that also answer zarr-python `Buffer`'s
    `to_bytes()`."""

    __slots__ = ()

    def to_bytes(self) -> bytes:
        return bytes(self)


def _range(request: Any) -> Range | None:
    """zarr-python's byte requests (known by their fields) as zarrkit's ranges."""
    if request is None or isinstance(request, (ByteRange, SuffixRange)):
        return request
    if hasattr(request, "start") and hasattr(request, "end"):
        return ByteRange(request.start, max(0, request.end - request.start))
    if hasattr(request, "offset"):
        return ByteRange(request.offset)
    if hasattr(request, "suffix"):
        return SuffixRange(request.suffix)
    raise ArgumentError(f"Unexpected byte_range, got {request!r}.")


class PathStore(Store):
    """`inner` seen from `prefix` (no trailing '/'): key `k` here is `prefix/k` there."""

    def __init__(self, inner: Store, prefix: str) -> None:
        self.inner = inner
        self.prefix = prefix + "/"
        self.read_only = inner.read_only
        self.readable, self.writeable, self.listable = (
            inner.readable,
            inner.writeable,
            inner.listable,
        )

    def _key(self, key: str) -> str:
        return self.prefix + key

    def get(self, key: str, byte_range: Range | None = None) -> bytes | None:
        return self.inner.get(self._key(key), byte_range)

    def get_ranges(self, requests: Sequence[tuple[str, Range | None]]) -> list[bytes | None]:
        return self.inner.get_ranges([(self._key(k), r) for k, r in requests])

    def exists(self, key: str) -> bool:
        return self.inner.exists(self._key(key))

    def set(self, key: str, value: Any) -> None:
        self.inner.set(self._key(key), value)

    def erase(self, key: str) -> None:
        self.inner.erase(self._key(key))

    def erase_prefix(self, prefix: str) -> None:
        self.inner.erase_prefix(self._key(prefix))

    def list(self) -> Iterator[str]:
        return self.list_prefix("")

    def list_prefix(self, prefix: str) -> Iterator[str]:
        cut = len(self.prefix)
        return (k[cut:] for k in self.inner.list_prefix(self._key(prefix)))

    def list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        return self.inner.list_dir(self._key(prefix))

    def is_empty(self, prefix: str) -> bool | None:
        return self.inner.is_empty(self._key(prefix))

    def close(self) -> None:
        """Leaves the inner store open: it is the store path's."""

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PathStore):
            return NotImplemented
        return self.inner == other.inner and self.prefix == other.prefix

    def __hash__(self) -> int:
        return hash((self.inner, self.prefix))

    def __str__(self) -> str:
        return _joined(str(self.inner), self.prefix)

    def __repr__(self) -> str:
        return f"{type(self.inner).__name__}('{self}')"
