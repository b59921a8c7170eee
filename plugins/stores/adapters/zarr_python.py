"""A zarrkit store over any zarr-python 3 store (`zarr.abc.store.Store`): zarr-python's own
(`MemoryStore`, `LocalStore`, `FsspecStore`, `ObjectStore` over obstore) and the stores that
exist only for zarr-python (icechunk's `session.store`). `zarrkit.open_group(zarr_store)`
lands here through `open_store`, which offers the object to every store class's `adapt`.

zarr-python's stores are coroutines; they run on zarr-python's own event loop thread
(`zarr.core.sync`, where zarr-python's synchronous API runs them too), and a batch
(`get_many`, `get_ranges`, `set_many`, erasing) runs as one gather there, at most `concurrency`
requests at a time (default: the `io_concurrency` setting).

zarr-python leaves some reads to each store (a range that starts past the end, or is empty,
"will return an error"): the bridge answers them as the zarrkit contract says, from the
value's size. Failures other than a missing key raise `StoreError` naming the key and the
operation. The zarr-python store is the caller's: closing this one leaves it open.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Any, TypeVar

from zarrkit.abc import (
    ByteRange,
    Range,
    Store,
    StoreCapabilities,
    SuffixRange,
    check_key,
    check_mode,
    check_prefix,
    is_valid_key,
    names,
    settings,
    value_limit,
)
from zarrkit.errors import PluginLoadError, StoreError, ValueTooLargeError
from zarrkit.helpers import InFlightLimit, gather_limited
from zarrkit.plugins.stores.remote.async_reads import GatheredAwaitableReads
from zarrkit.plugins.zarr_python_loop import Escaped, Stalled, run_on_zarr_loop

T = TypeVar("T")

#: what a zarr-python store raises, beside answering None, for a key that is not there
_MISSING = (FileNotFoundError, KeyError, IsADirectoryError, NotADirectoryError)


def _zarr() -> Any:
    try:
        import zarr.abc.store
        import zarr.core.buffer
        import zarr.core.sync
    except ImportError as exc:
        raise PluginLoadError(
            "the zarr-python store bridge needs zarr-python 3: pip install 'zarrkit[zarr-python]'"
        ) from exc
    return zarr


def zarr_store_class() -> type | None:
    """zarr-python's store base class, or None while zarr-python is not imported (then no
    object can be one of its stores)."""
    module = sys.modules.get("zarr.abc.store")
    store = getattr(module, "Store", None)
    return store if isinstance(store, type) else None


class ZarrPythonStore(GatheredAwaitableReads, Store):
    """Forwards to `inner`, a zarr-python store; read-only when opened with mode "r" or when
    `inner` is read-only."""

    names = names("zarr-python")
    #: a batch's requests run concurrently: the more of it per call, the more overlap (groups
    #: of chunks to write handed on to upload while more encode)
    capabilities = StoreCapabilities(preferred_fetch_bytes=16 << 20, preferred_store_bytes=4 << 20)

    def __init__(self, inner: Any, *, mode: str = "a", concurrency: int | None = None) -> None:
        if not _is_zarr_store(inner, _zarr().abc.store.Store):
            raise TypeError(f"expected a zarr-python store, got {type(inner).__name__}")
        self.inner = inner
        self.capabilities = replace(
            self.capabilities,
            read_only=check_mode(mode) == "r" or bool(self.inner.read_only),
            writeable=bool(self.inner.supports_writes),
            listable=bool(self.inner.supports_listing),
        )
        self.concurrency = concurrency or settings().io_concurrency
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {self.concurrency}")
        self._gate = InFlightLimit()  # (`concurrency` bounds the requests of all its calls at once)
        self._prototype = _zarr().core.buffer.default_buffer_prototype()

    @classmethod
    def adapt(cls, obj: object, *, mode: str = "r") -> Store | None:
        """A zarr-python store; one that presents a zarrkit store (`zarrkit.zarr_python`'s
        adapter, its `zarrkit_store`) is that store, as a zarrkit store given directly is."""
        base = zarr_store_class()
        if base is None or not _is_zarr_store(obj, base):
            return None
        own = getattr(obj, "zarrkit_store", None)
        return own if isinstance(own, Store) else cls(obj, mode=mode)

    @classmethod
    def from_url(cls, url: str, *, mode: str = "r", **options: Any) -> ZarrPythonStore:
        raise ValueError(
            f"{url!r}: the zarr-python bridge has no URL; pass the zarr-python store itself"
        )

    def _error(self, exc: BaseException, key: str | None, operation: str) -> StoreError:
        detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        return StoreError(detail, key=key, store=self, operation=operation)

    def _deadline(self) -> float:
        """How long one call of the foreign store may take: as long as a network store's
        request with every retry it gets, since the store may be one (icechunk on S3)."""
        config = settings()
        return config.io_timeout * (config.io_retries + 1)

    def _run(self, make: Callable[[], Awaitable[T]], key: str | None, operation: str) -> T:
        async def run() -> T:
            await self._ensure_open()
            return await make()

        try:
            return run_on_zarr_loop(run(), self._deadline())
        except (Stalled, Escaped) as exc:
            raise self._error(exc, key, operation) from None

    async def _ensure_open(self) -> None:
        opening = getattr(self.inner, "_ensure_open", None)  # zarr-python opens stores lazily
        if opening is not None:
            try:
                await opening()
            except Exception as exc:
                raise self._error(exc, None, "open") from exc

    def _gather(self, calls: Sequence[Callable[[], Awaitable[T]]], operation: str) -> list[T]:
        """Every call concurrently on zarr-python's loop, at most `concurrency` at a time,
        answers in order; the first failure cancels the rest."""
        if not calls:
            return []

        async def run() -> list[T]:
            await self._ensure_open()
            return await gather_limited(calls, self.concurrency, gate=self._gate)

        try:
            return run_on_zarr_loop(
                run(), self._deadline() * max(1, -(-len(calls) // self.concurrency))
            )
        except (Stalled, Escaped) as exc:
            raise self._error(exc, None, operation) from None

    # -- awaited reads (`async_reads`): on zarr-python's loop, as its own API awaits them ------
    def reads_loop(self) -> asyncio.AbstractEventLoop:
        loop: asyncio.AbstractEventLoop = _zarr().core.sync._get_loop()
        return loop

    async def read_many_async(self, keys: Sequence[str], limit: int) -> dict[str, Any]:
        await self._ensure_open()
        return await super().read_many_async(keys, limit)

    async def read_ranges_async(
        self, requests: Sequence[tuple[str, Range | None]], limit: int
    ) -> list[Any]:
        await self._ensure_open()
        return await super().read_ranges_async(requests, limit)

    # -- readable --------------------------------------------------------------------------------
    async def _size(self, key: str) -> int | None:
        try:
            return int(await self.inner.getsize(key))
        except _MISSING:
            return None
        except Exception as exc:
            raise self._error(exc, key, "read") from exc

    async def _read(self, key: str, rng: Range | None, limit: int) -> bytes | None:
        """`key`'s value (or part), held to `limit` bytes (`value_limit()`, read in the calling
        thread): a whole value is asked for as its first `limit + 1` bytes, so a store that
        honours ranges never hands over more than the read may hold."""
        if rng is not None and (
            (isinstance(rng, ByteRange) and rng.length == 0)
            or (isinstance(rng, SuffixRange) and rng.length == 0)
        ):
            return b"" if await self._exists(key) else None
        asked = rng if rng is not None or limit >= sys.maxsize else ByteRange(0, limit + 1)
        try:
            value = await self.inner.get(key, self._prototype, _request(asked))
        except _MISSING:
            return None
        except Exception as exc:
            if asked is None:
                raise self._error(exc, key, "read") from exc
            value = await self._read_within(key, asked, exc)
        if value is None:
            return None
        if _length(value) > limit:  # (before a copy of it is made)
            raise ValueTooLargeError(
                f"the store answered {len(value)} bytes, more than the {limit} the read can hold",
                key=key,
                store=self,
                operation="read",
            )
        return value if isinstance(value, bytes) else self._bytes(value, key)

    async def _read_within(self, key: str, rng: Range, failure: Exception) -> Any:
        """A range the store refused (past the end, longer than the value): read what of it
        the value holds, as the zarrkit contract answers."""
        size = await self._size(key)
        if size is None:
            return None
        part = rng.slice(size)
        if part.start >= part.stop:
            return b""
        request = _zarr().abc.store.RangeByteRequest(part.start, part.stop)
        try:
            value = await self.inner.get(key, self._prototype, request)
        except _MISSING:
            return None
        except Exception as exc:
            raise self._error(failure, key, "read") from exc
        return value

    def _bytes(self, value: Any, key: str) -> bytes:
        """A zarr-python `Buffer` (or any bytes-like answer) as bytes."""
        try:
            if isinstance(value, _zarr().core.buffer.Buffer):
                return bytes(value.to_bytes())
            return memoryview(value).tobytes()
        except (TypeError, ValueError) as exc:
            raise StoreError(
                f"the store answered a {type(value).__name__}, not a buffer",
                key=key,
                store=self,
                operation="read",
            ) from exc

    async def _exists(self, key: str) -> bool:
        try:
            return bool(await self.inner.exists(key))
        except _MISSING:  # (icechunk: a KeyError for a key of a format it does not hold)
            return False
        except Exception as exc:
            raise self._error(exc, key, "read") from exc

    def get(self, key: str, byte_range: Range | None = None) -> bytes | None:
        check_key(key)
        limit = value_limit()
        return self._run(lambda: self._read(key, byte_range, limit), key, "read")

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes]:
        keys = [check_key(k) for k in keys]
        limit = value_limit()
        values = self._gather([partial(self._read, k, None, limit) for k in keys], "read")
        return {k: v for k, v in zip(keys, values) if v is not None}

    def get_ranges(self, requests: Sequence[tuple[str, Range | None]]) -> list[bytes | None]:
        for key, _ in requests:
            check_key(key)
        limit = value_limit()
        calls = [partial(self._read, key, rng, limit) for key, rng in requests]
        return self._gather(calls, "read")

    def exists(self, key: str) -> bool:
        check_key(key)
        return self._run(lambda: self._exists(key), key, "read")

    # -- writeable -------------------------------------------------------------------------------
    async def _write(self, key: str, value: bytes) -> None:
        try:
            await self.inner.set(key, self._prototype.buffer.from_bytes(value))
        except Exception as exc:
            raise self._error(exc, key, "write") from exc

    async def _erase(self, key: str) -> None:
        try:
            await self.inner.delete(key)
        except _MISSING:
            pass
        except Exception as exc:
            raise self._error(exc, key, "erase") from exc

    def set(self, key: str, value: Any) -> None:
        self.require("write", f"set {key!r}")
        self.set_many({key: value})

    def set_many(self, items: Mapping[str, Any]) -> None:
        """All keys checked before any is written; the values copied, so a caller may reuse
        its buffers."""
        self.require("write", "set keys")
        values = [(check_key(k), memoryview(v).tobytes()) for k, v in items.items()]
        self._gather([partial(self._write, *kv) for kv in values], "write")

    def erase(self, key: str) -> None:
        self.require("write", f"erase {key!r}")
        self.erase_many([key])

    def erase_many(self, keys: Iterable[str]) -> None:
        self.require("write", "erase keys")
        keys = [check_key(k) for k in keys]
        self._gather([partial(self._erase, k) for k in keys], "erase")

    def erase_prefix(self, prefix: str) -> None:
        self.require("write", f"erase prefix {prefix!r}")
        self.erase_many(list(self.list_prefix(check_prefix(prefix))))

    # -- listable --------------------------------------------------------------------------------
    def list(self) -> Iterator[str]:
        return self.list_prefix("")

    def list_prefix(self, prefix: str) -> Iterator[str]:
        """Keys starting with `prefix`, any string: the store lists the folder `prefix` ends
        in ('a/' for 'a/b'), and the bridge keeps the keys that start with the rest."""
        self.require("list", f"list keys under {prefix!r}")
        folder = prefix[: prefix.rfind("/") + 1]

        async def find() -> list[str]:
            try:
                listing = self.inner.list_prefix(folder) if folder else self.inner.list()
                return [key async for key in listing]
            except Exception as exc:
                raise self._error(exc, prefix or None, "list") from exc

        found = self._run(find, prefix or None, "list")
        return iter(sorted(k for k in found if k.startswith(prefix) and is_valid_key(k)))

    # -- identity --------------------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ZarrPythonStore):
            return NotImplemented
        return bool(self.inner == other.inner)

    def __hash__(self) -> int:
        return id(self.inner)

    def __repr__(self) -> str:
        return f"ZarrPythonStore({self.inner!r})"


def _is_zarr_store(obj: object, base: type) -> bool:
    return isinstance(obj, base)


def _length(value: Any) -> int:
    """The byte length of a store's answer (a zarr-python `Buffer`, or any bytes-like
    object); 0 for anything else, which `_bytes` then refuses naming its type."""
    try:
        return len(value) if hasattr(value, "to_bytes") else memoryview(value).nbytes
    except TypeError:
        return 0


def _request(rng: Range | None) -> Any:
    """zarr-python's spelling of a byte range."""
    if rng is None:
        return None
    requests = _zarr().abc.store
    if isinstance(rng, SuffixRange):
        return requests.SuffixByteRequest(rng.length)
    if rng.length is None:
        return requests.OffsetByteRequest(rng.offset)
    return requests.RangeByteRequest(rng.offset, rng.offset + rng.length)
