"""An LRU cache of values, bounded in bytes, in front of any store.

Worth it where a read is a round trip (S3, HTTP): metadata documents, shard indexes and hot
chunks are then read once. Writes go through to the store and drop what the cache held for
their keys, so this process never reads its own stale value back. Other writers of the same
store are not seen until an entry is evicted: use the cache for data that is read far more than
it changes (or call `clear()`).

Whole values and byte ranges are cached alike, keyed by (key, range); a range of a key whose
whole value is cached is cut from it. Missing keys are not cached.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from zarrkit.abc import (
    Range,
    Store,
    Update,
    check_key,
    check_prefix,
    lock,
    names,
)
from zarrkit.plugins.stores.pickling import reopening
from zarrkit.plugins.stores.wrappers.wrapper import StoreWrapper

DEFAULT_MAX_BYTES = 256 * 1024 * 1024

_Entry = tuple[str, Range | None]


@dataclass(frozen=True)
class CacheInfo:
    hits: int
    misses: int
    entries: int
    bytes: int
    max_bytes: int


class CachingStore(StoreWrapper):
    """`CachingStore(store, max_bytes=...)`, or the URL `cache://<url>` with the storage
    option `cache_bytes`."""

    names = names("cache")
    own_options = ("cache_bytes",)

    def __init__(
        self, inner: Store, max_bytes: int = DEFAULT_MAX_BYTES, *, cache_bytes: int | None = None
    ) -> None:
        super().__init__(inner)
        max_bytes = int(cache_bytes if cache_bytes is not None else max_bytes)
        if max_bytes < 0:
            raise ValueError(f"max_bytes must be >= 0, got {max_bytes}")
        self.max_bytes = max_bytes
        self._lock = lock()
        self._entries: OrderedDict[_Entry, bytes] = OrderedDict()
        self._ranges_of: dict[str, set[Range | None]] = {}
        self._bytes = 0
        self._hits = 0
        self._misses = 0
        self._epoch = 0  # bumped by every write: a read begun before it must not be cached

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as the store it wraps and its bound; another process starts with an empty
        cache of its own."""
        return reopening(self, self.inner, self.max_bytes)

    # -- the cache -----------------------------------------------------------------------------
    def cache_info(self) -> CacheInfo:
        with self._lock:
            return CacheInfo(
                self._hits, self._misses, len(self._entries), self._bytes, self.max_bytes
            )

    def clear(self) -> None:
        with self._lock:
            self._epoch += 1
            self._entries.clear()
            self._ranges_of.clear()
            self._bytes = 0

    def _lookup(self, key: str, rng: Range | None) -> bytes | None:
        """A cached answer (the lock is held), counting the hit or miss."""
        whole = self._entries.get((key, None))
        if whole is not None:
            self._entries.move_to_end((key, None))
            self._hits += 1
            return whole if rng is None else whole[rng.slice(len(whole))]
        part = self._entries.get((key, rng))
        if part is not None:
            self._entries.move_to_end((key, rng))
            self._hits += 1
            return part
        self._misses += 1
        return None

    def _store(self, epoch: int, answers: Iterable[tuple[str, Range | None, bytes | None]]) -> None:
        with self._lock:
            if epoch != self._epoch:  # a write happened meanwhile: these may be stale
                return
            for key, rng, value in answers:
                if value is None or len(value) > self.max_bytes or (key, rng) in self._entries:
                    continue
                value = bytes(value)
                self._entries[(key, rng)] = value
                self._ranges_of.setdefault(key, set()).add(rng)
                self._bytes += len(value)
            while self._bytes > self.max_bytes:
                (key, rng), value = self._entries.popitem(last=False)
                self._forget_range(key, rng)
                self._bytes -= len(value)

    def _forget_range(self, key: str, rng: Range | None) -> None:
        ranges = self._ranges_of.get(key)
        if ranges is not None:
            ranges.discard(rng)
            if not ranges:
                del self._ranges_of[key]

    def _invalidate(self, keys: Iterable[str]) -> None:
        with self._lock:
            self._epoch += 1
            for key in keys:
                for rng in self._ranges_of.pop(key, ()):
                    self._bytes -= len(self._entries.pop((key, rng)))

    def _invalidate_prefix(self, prefix: str) -> None:
        with self._lock:
            doomed = [k for k in self._ranges_of if k.startswith(prefix)]
        self._invalidate(doomed)

    # -- readable --------------------------------------------------------------------------------
    def get(self, key: str, byte_range: Range | None = None) -> bytes | None:
        return self.get_ranges([(check_key(key), byte_range)])[0]

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes]:
        keys = [check_key(k) for k in keys]
        values = self.get_ranges([(k, None) for k in keys])
        return {k: v for k, v in zip(keys, values) if v is not None}

    def get_ranges(self, requests: Sequence[tuple[str, Range | None]]) -> list[bytes | None]:
        out: list[bytes | None] = [None] * len(requests)
        missing: list[int] = []
        with self._lock:
            epoch = self._epoch
            for i, (key, rng) in enumerate(requests):
                check_key(key)
                out[i] = self._lookup(key, rng)
                if out[i] is None:
                    missing.append(i)
        if missing:
            fetched = self.inner.get_ranges([requests[i] for i in missing])
            for i, value in zip(missing, fetched):
                out[i] = value
            self._store(epoch, ((*requests[i], value) for i, value in zip(missing, fetched)))
        return out

    def exists(self, key: str) -> bool:
        with self._lock:
            if (check_key(key), None) in self._entries:
                return True
        return self.inner.exists(key)

    # -- writeable: write through, then forget ----------------------------------------------------
    def set(self, key: str, value: Any) -> None:
        try:
            self.inner.set(key, value)
        finally:
            self._invalidate([key])

    def set_many(self, items: Mapping[str, bytes]) -> None:
        try:
            self.inner.set_many(items)
        finally:
            self._invalidate(list(items))

    def update_many(self, keys: Sequence[str], compute: Update) -> None:
        """Straight to the store, which reads the keys' current values itself (a cached one
        may be another writer's past)."""
        try:
            self.inner.update_many(keys, compute)
        finally:
            self._invalidate(keys)

    def erase(self, key: str) -> None:
        try:
            self.inner.erase(key)
        finally:
            self._invalidate([key])

    def erase_many(self, keys: Iterable[str]) -> None:
        keys = list(keys)
        try:
            self.inner.erase_many(keys)
        finally:
            self._invalidate(keys)

    def erase_prefix(self, prefix: str) -> None:
        try:
            self.inner.erase_prefix(check_prefix(prefix))
        finally:
            self._invalidate_prefix(prefix)
