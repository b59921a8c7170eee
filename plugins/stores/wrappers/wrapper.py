"""The base of stores that sit in front of another store (the cache, the metrics recorder).

A wrapper has the capabilities of the store it wraps and forwards every operation; a subclass
overrides only what it adds. Anything else a backend offers (`flush`, `root`, `url`) is reached
through the wrapper too, so wrapping never takes a feature away.

A wrapper is also a URL scheme that takes another URL: `cache://s3://bucket/x.zarr` opens the
inner URL with the same mode and storage options (less the wrapper's own) and wraps it.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, ClassVar

from zarrkit.abc import Diagnosis, Range, Store, StoreCapabilities, Update, scheme_of
from zarrkit.helpers import open_store


class StoreWrapper(Store):
    """Forwards to `inner`. `wrap` is idempotent, so wrapping twice does nothing."""

    abstract = True  # not a store of its own: the concrete wrappers have entry points
    #: storage options the wrapper takes for itself from a URL's options (the rest go inward)
    own_options: ClassVar[tuple[str, ...]] = ()

    def __init__(self, inner: Store) -> None:
        if not isinstance(inner, Store):
            raise TypeError(
                f"{type(self).__name__} wraps a zarrkit Store, got {type(inner).__name__}"
            )
        self.inner = inner

    @classmethod
    def wrap(cls, store: Store, **options: Any) -> Store:
        """`store` wrapped by this class, or `store` itself when this class already wraps it."""
        layer: Store = store
        while isinstance(layer, StoreWrapper):
            if type(layer) is cls:
                return store
            layer = layer.inner
        return cls(store, **options)

    @classmethod
    def from_url(cls, url: str, *, mode: str = "r", **options: Any) -> Store:
        scheme = f"{scheme_of(url)}://"
        inner_url = url[len(scheme) :]
        if not inner_url:
            raise ValueError(f"{url!r}: a {scheme} URL wraps another URL, e.g. {scheme}s3://b/x")
        own = {k: options.pop(k) for k in cls.own_options if k in options}
        return cls(open_store(inner_url, mode=mode, storage_options=options), **own)

    @property
    def capabilities(self) -> StoreCapabilities:  # type: ignore[override]  # (none of its own)
        """The inner store's: a wrapper can do what it wraps."""
        return self.inner.capabilities

    def name_limit(self) -> int | None:
        return self.inner.name_limit()

    def require(self, capability: str, operation: str) -> None:
        self.inner.require(capability, operation)

    # -- forwarding ----------------------------------------------------------------------------
    def get(self, key: str, byte_range: Range | None = None) -> bytes | None:
        return self.inner.get(key, byte_range)

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes]:
        return self.inner.get_many(keys)

    def get_ranges(self, requests: Sequence[tuple[str, Range | None]]) -> list[bytes | None]:
        return self.inner.get_ranges(requests)

    def exists(self, key: str) -> bool:
        return self.inner.exists(key)

    def sizes(self, keys: Iterable[str]) -> dict[str, int]:
        return self.inner.sizes(keys)

    def set(self, key: str, value: Any) -> None:
        self.inner.set(key, value)

    def set_many(self, items: Mapping[str, bytes]) -> None:
        self.inner.set_many(items)

    def update_many(self, keys: Sequence[str], compute: Update) -> None:
        self.inner.update_many(keys, compute)

    def erase(self, key: str) -> None:
        self.inner.erase(key)

    def erase_many(self, keys: Iterable[str]) -> None:
        self.inner.erase_many(keys)

    def erase_prefix(self, prefix: str) -> None:
        self.inner.erase_prefix(prefix)

    def list(self) -> Iterator[str]:
        return self.inner.list()

    def list_prefix(self, prefix: str) -> Iterator[str]:
        return self.inner.list_prefix(prefix)

    def list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        return self.inner.list_dir(prefix)

    def is_empty(self, prefix: str) -> bool | None:
        return self.inner.is_empty(prefix)

    def close(self) -> None:
        self.inner.close()

    def diagnose(self, prefix: str = "") -> Diagnosis | None:
        return self.inner.diagnose(prefix)

    def __getattr__(self, name: str) -> Any:
        """What the backend has beyond the protocol (`flush`, `root`, `url`, ...)."""
        if name == "inner" or name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.inner, name)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.inner == other.inner

    def __hash__(self) -> int:
        return hash((type(self), self.inner))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.inner!r})"
