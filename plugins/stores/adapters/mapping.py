"""A store over any mapping of keys to bytes: a `dict`, a `MutableMapping` of another library
(a zarr-python 2 store, a `shelve`), or a read-only `Mapping`.

`zarrkit.open_group(some_dict)` lands here: `open_store` offers every object that is not a path,
a URL or a zarrkit Store to the store classes, and this one, asked last (`adapt_order`),
takes anything that is a `Mapping`. An fsspec mapper is a mapping too, but the fsspec store,
asked before, takes it and reads byte ranges through its filesystem.

A mapping cannot read part of a value: a byte range reads the whole value and slices it. Values
may be any bytes-like object, or zarr-python's `Buffer`s (a dict zarr-python filled); what this
store writes is `bytes` (`StoredBytes`, which also has `Buffer`'s `to_bytes()`), which
zarr-python's own `MemoryStore` over the same dict cannot read (it expects its `Buffer`s): hand zarr-python `zarrkit.zarr_python.as_zarr_store(the_dict)`. A
missing key is one that raises `KeyError`; any other failure of the mapping raises `StoreError`
naming the key and the operation, so it is never taken for a missing chunk.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, MutableMapping
from dataclasses import replace
from typing import Any

from zarrkit.abc import (
    Range,
    Store,
    StoreCapabilities,
    check_key,
    check_prefix,
    is_valid_key,
    names,
)
from zarrkit.errors import StoreError

#: attempts at listing a mapping that other threads keep changing (a dict refuses iteration
#: while its size changes)
_LIST_ATTEMPTS = 16


def _as_bytes(value: Any) -> bytes:
    """A mapping's value as bytes: any bytes-like object, or a zarr-python `Buffer` (what a
    dict that zarr-python filled holds), known by its `as_buffer_like` without importing
    zarr-python."""
    if hasattr(value, "as_buffer_like") and callable(getattr(value, "to_bytes", None)):
        data = value.to_bytes()
        if isinstance(data, bytes):
            return data
    return memoryview(value).tobytes()


class StoredBytes(bytes):
    """What this store writes into a mapping: bytes, that also answer zarr-python `Buffer`'s
    `to_bytes()`, so code written for a dict zarr-python filled (`store["zarr.json"].to_bytes()`,
    as zarr-python's guide reads metadata) reads one zarrkit filled."""

    __slots__ = ()

    def to_bytes(self) -> bytes:
        return bytes(self)


class MappingStore(Store):
    """Keys and values of `mapping`; read-only when opened with mode "r" or when the mapping
    is not mutable. The mapping is the caller's: closing the store leaves it alone."""

    names = names("mapping")
    #: the class zarr-python keeps a dict given as a store in (what `info` names)
    zarr_python_name = "MemoryStore"
    #: any mapping: asked after the classes that recognise narrower kinds of object
    adapt_order = 100
    #: (a range is cut from the whole value the mapping holds)
    capabilities = StoreCapabilities(range_reads=False)

    def __init__(self, mapping: Mapping[str, Any], *, mode: str = "a") -> None:
        if not isinstance(mapping, Mapping):
            raise TypeError(f"a mapping store holds a Mapping, got {type(mapping).__name__}")
        self.mapping = mapping
        self.capabilities = replace(
            self.capabilities.opened(mode), writeable=isinstance(mapping, MutableMapping)
        )

    @classmethod
    def adapt(cls, obj: object, *, mode: str = "r") -> MappingStore | None:
        return cls(obj, mode=mode) if isinstance(obj, Mapping) else None

    @classmethod
    def from_url(cls, url: str, *, mode: str = "r", **options: Any) -> MappingStore:
        raise ValueError(
            f"{url!r}: a mapping store has no URL; pass the mapping itself as the store"
        )

    def _error(self, exc: BaseException, key: str | None, operation: str) -> StoreError:
        detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        return StoreError(detail, key=key, store=self, operation=operation)

    # -- readable ----------------------------------------------------------------------------
    def get(self, key: str, byte_range: Range | None = None) -> bytes | None:
        data = self._held(key)
        if data is None:
            return None
        if byte_range is not None:
            return data[byte_range.slice(len(data))]  # (a slice of bytes is plain bytes)
        return bytes(data) if type(data) is StoredBytes else data  # (`get` gives exact bytes)

    def read_many(self, keys: Iterable[str]) -> dict[str, Any]:
        """The values as held (what this store wrote is `StoredBytes`: no copy)."""
        found = {key: self._held(key) for key in keys}
        return {key: value for key, value in found.items() if value is not None}

    def _held(self, key: str) -> bytes | None:
        """The value at `key` as bytes (`StoredBytes` as they are), None when absent."""
        check_key(key)
        try:
            value = self.mapping[key]
        except KeyError:
            return None
        except Exception as exc:
            raise self._error(exc, key, "read") from exc
        try:
            return value if type(value) in (bytes, StoredBytes) else _as_bytes(value)
        except TypeError:
            raise StoreError(
                f"the mapping holds a {type(value).__name__}, not bytes",
                key=key,
                store=self,
                operation="read",
            ) from None

    def exists(self, key: str) -> bool:
        check_key(key)
        try:
            return key in self.mapping
        except Exception as exc:
            raise self._error(exc, key, "read") from exc

    # -- writeable ---------------------------------------------------------------------------
    def _mutable(self) -> MutableMapping[str, Any]:
        assert isinstance(self.mapping, MutableMapping)  # (`require` refused the others)
        return self.mapping

    def set(self, key: str, value: Any) -> None:
        self.require("write", f"set {key!r}")
        check_key(key)
        data = StoredBytes(value)  # (a copy of ours)
        try:
            self._mutable()[key] = data
        except Exception as exc:
            raise self._error(exc, key, "write") from exc

    def erase(self, key: str) -> None:
        self.require("write", f"erase {key!r}")
        check_key(key)
        try:
            del self._mutable()[key]
        except KeyError:
            pass
        except Exception as exc:
            raise self._error(exc, key, "erase") from exc

    def erase_prefix(self, prefix: str) -> None:
        self.require("write", f"erase prefix {prefix!r}")
        self.erase_many(list(self.list_prefix(check_prefix(prefix))))

    # -- listable ----------------------------------------------------------------------------
    def list(self) -> Iterator[str]:
        """A snapshot, so writers may carry on while the caller iterates; keys a zarrkit store
        could not hold (not strings, or escaping the root) are left out."""
        for _ in range(_LIST_ATTEMPTS):
            try:
                keys = list(self.mapping)
            except RuntimeError:  # changed size during iteration: look again
                continue
            except Exception as exc:
                raise self._error(exc, None, "list") from exc
            return iter([k for k in keys if is_valid_key(k)])
        raise StoreError(
            f"the mapping kept changing while it was listed ({_LIST_ATTEMPTS} attempts)",
            store=self,
            operation="list",
        )

    # -- identity ----------------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MappingStore):
            return NotImplemented
        return self.mapping is other.mapping

    def __hash__(self) -> int:
        return id(self.mapping)

    def __str__(self) -> str:
        # zarr-python keeps a dict given as a store in a MemoryStore, which it prints as
        # `memory://<id of the dict>`: the same text for the same dict
        return f"memory://{id(self.mapping)}"

    def __repr__(self) -> str:
        return f"MappingStore('{self}')"
