"""The store over an object store's client, written once for every client: fsspec's
filesystems (`FsspecStore`) and obstore's stores (`ObstoreStore`) each supply only their
primitive operations (`ObjectBackend`: get a range, head, put, put if unchanged, delete,
list), and this base builds the store from them:

- batches go through the client's async interface in one gather on its event loop, at most
  `concurrency` requests at a time for all of a store's calls together (`InFlightLimit`); nearby
  ranges of one key are first merged into one request (`plan_reads`, as every network store
  merges them);
- a read of zero bytes is a HEAD; a range starting at or past a value's end, which a server
  refuses (HTTP 416), is answered empty; where the backend answers no suffix range (Azure),
  the end of a value (a shard's index) is read by its size and read again when the value was
  replaced in between, so it is never read half old, half new; a read whose body was cut
  or stalled after its headers, which clients report rather than retry, is made again
  (`retrying`); sizes come from HEADs, never from bodies;
- `update_many` is guarded by conditional writes where the backend has them
  (`ConditionalWrites`, `optimistic_update`), so writers in other processes lose nothing;
- failures other than "no such key" raise `StoreError` naming the key, the operation and the
  store; they are never read as a missing key, so an array read never turns them into fill
  values.
"""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Any, TypeVar

from zarrkit.abc import (
    ByteRange,
    Diagnosis,
    Range,
    Store,
    StoreCapabilities,
    SuffixRange,
    Update,
    check_key,
    check_prefix,
    is_valid_key,
    listing_limit,
    settings,
    value_limit,
)
from zarrkit.errors import RedirectRefusedError, StoreError, ValueTooLargeError
from zarrkit.helpers import (
    NETWORK_MAX_BLOCK,
    NETWORK_MAX_GAP,
    InFlightLimit,
    gather_limited,
    is_empty_read,
    optimistic_update,
    plan_reads,
)
from zarrkit.plugins.stores.remote.async_reads import GatheredAwaitableReads
from zarrkit.plugins.stores.remote.http_rules import Refused, TooLong
from zarrkit.plugins.stores.remote.object_backend import Listing, ObjectBackend, Token
from zarrkit.plugins.stores.remote.retrying import RetryPolicy

T = TypeVar("T")

#: how often a suffix read by size starts again when the value changed while it was read
_SUFFIX_ATTEMPTS = 4


class ObjectStoreBase(GatheredAwaitableReads, Store):
    """A store over `_objects`, an object store client's primitives, rooted at `url`."""

    abstract = True  # (the stores over each client have entry points)

    #: a batch's requests run concurrently: the more of it per call, the more overlap (groups
    #: of chunks to write handed on to upload while more encode)
    capabilities = StoreCapabilities(preferred_fetch_bytes=16 << 20, preferred_store_bytes=4 << 20)

    _objects: ObjectBackend
    concurrency: int

    def _open(self, objects: ObjectBackend, mode: str, concurrency: int | None) -> None:
        """Set up what every object store holds: the client's primitives, the mode, and at
        most `concurrency` requests in flight (default: the `io_concurrency` setting)."""
        self.capabilities = replace(
            self.capabilities.opened(mode),
            suffix_reads=objects.suffix_reads,
            safe_updates=objects.conditional_writes,
        )
        if concurrency is None:
            concurrency = settings().io_concurrency
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {concurrency}")
        self.concurrency = concurrency
        self._objects = objects
        self._gate = InFlightLimit()  # (`concurrency` bounds the requests of all its calls at once)
        #: retries of reads whose body was cut or stalled (the clients retry the rest)
        self._policy = RetryPolicy.current()

    @property
    def url(self) -> str:
        raise NotImplementedError

    # -- running coroutines on the client's loop ------------------------------------------------
    def reads_loop(self) -> asyncio.AbstractEventLoop:
        """Awaited reads (`async_reads`) run on the loop the client's coroutines run on."""
        return self._objects.loop()

    def _gather(self, calls: Sequence[Callable[[], Awaitable[T]]]) -> list[T]:
        """Run every call concurrently, at most `concurrency` at a time, answers in order; the
        first failure cancels the rest."""
        if not calls:
            return []

        async def run() -> list[T]:
            return await gather_limited(calls, self.concurrency, gate=self._gate)

        return self._objects.run(run)

    def _error(self, exc: BaseException, key: str | None, operation: str) -> StoreError:
        """`exc`, a client's failure, as the zarrkit error it is: a redirect refused (which
        botocore wraps), a body longer than the read may hold, or else a `StoreError`."""
        refused = _refusal_in(exc)
        if refused is not None:
            return RedirectRefusedError(str(refused), key=key, store=self, operation=operation)
        if isinstance(exc, TooLong):
            return ValueTooLargeError(str(exc), key=key, store=self, operation=operation)
        detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        return StoreError(detail, key=key, store=self, operation=operation)

    # -- readable --------------------------------------------------------------------------------
    async def _read(self, key: str, rng: Range | None, limit: int) -> bytes | None:
        """One value or range, at most `limit` bytes of it held; None: absent."""
        if is_empty_read(rng):
            return b"" if await self._is_file(key) else None
        fetch = partial(self._fetch, key, rng, limit)
        try:
            return await self._policy.run(fetch, self._objects.is_body_fault)
        except StoreError:
            raise
        except Exception as exc:
            if self._objects.is_missing(exc):
                return None
            error = self._error(exc, key, "read")
            # a range starting at or past the end is refused (HTTP 416) rather than answered
            # empty
            if (
                type(error) is StoreError
                and isinstance(rng, ByteRange)
                and await self._size_at_most(key, rng.offset)
            ):
                return b""
            raise error from exc

    async def _fetch(self, key: str, rng: Range | None, limit: int) -> bytes | None:
        if isinstance(rng, SuffixRange) and not self.capabilities.suffix_reads:
            return await self._suffix_read_by_size(key, rng.length, limit)
        return await self._objects.get(key, rng, limit)

    async def _suffix_read_by_size(self, key: str, length: int, limit: int) -> bytes | None:
        """The last `length` bytes of `key` from a backend that answers no suffix range: its
        size, then the range it ends with, if the value is still the one that size was of
        (else again: a shard's index must not be read half from each of two values)."""
        for _ in range(_SUFFIX_ATTEMPTS):
            head = await self._objects.head(key, fresh=True)
            if head is None:
                return None
            if head.size is None:
                raise StoreError(
                    "its size is unknown, so its end cannot be read",
                    key=key,
                    store=self,
                    operation="read",
                )
            start = max(0, head.size - length)
            if start >= head.size:
                return b""
            value = await self._objects.get_unchanged(key, start, head, limit)
            if value is not None:
                return value
        raise StoreError(
            f"its end could not be read: it was replaced while being read, {_SUFFIX_ATTEMPTS} "
            f"times",
            key=key,
            store=self,
            operation="read",
        )

    async def _size_at_most(self, key: str, offset: int) -> bool:
        try:
            head = await self._objects.head(key)
        except Exception:
            return False
        return head is not None and head.size is not None and head.size <= offset

    async def _is_file(self, key: str) -> bool:
        return await self._head(key) is not None

    async def _size(self, key: str) -> int | None:
        """The value's size from a HEAD (None: absent), never from its body."""
        head = await self._head(key)
        return None if head is None else head.size

    async def _head(self, key: str) -> Any:
        try:
            return await self._objects.head(key)
        except Exception as exc:
            if self._objects.is_missing(exc):
                return None
            raise self._error(exc, key, "read") from exc

    def sizes(self, keys: Iterable[str]) -> dict[str, int]:
        """One HEAD per key, concurrently: a value is sized without being downloaded."""
        keys = [check_key(k) for k in keys]
        found = self._gather([partial(self._size, k) for k in keys])
        return {k: n for k, n in zip(keys, found) if n is not None}

    def get(self, key: str, byte_range: Range | None = None) -> bytes | None:
        check_key(key)
        limit = value_limit()  # (read here: the client's loop runs on a thread of its own)
        value = self._objects.run(lambda: self._read(key, byte_range, limit))
        return None if value is None else bytes(value)

    def read_many(self, keys: Iterable[str]) -> dict[str, Any]:
        keys = [check_key(k) for k in keys]
        limit = value_limit()
        values = self._gather([partial(self._read, k, None, limit) for k in keys])
        return {k: v for k, v in zip(keys, values) if v is not None}

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes]:
        return {k: bytes(v) for k, v in self.read_many(keys).items()}

    def get_ranges(self, requests: Sequence[tuple[str, Range | None]]) -> list[bytes | None]:
        for key, _ in requests:
            check_key(key)
        plan = plan_reads(requests, max_gap=NETWORK_MAX_GAP, max_block=NETWORK_MAX_BLOCK)
        limit = value_limit()
        return plan.answers(self._gather([partial(self._read, *r, limit) for r in plan.reads]))

    def exists(self, key: str) -> bool:
        check_key(key)
        return self._objects.run(lambda: self._is_file(key))

    # -- writeable -------------------------------------------------------------------------------
    async def _write(self, key: str, value: bytes) -> None:
        try:
            await self._objects.put(key, value)
        except Exception as exc:
            raise self._error(exc, key, "write") from exc

    def set(self, key: str, value: Any) -> None:
        self.set_many({key: value})

    def set_many(self, items: Mapping[str, Any]) -> None:
        """Each value is one PUT (atomic per key on object stores); all keys checked first."""
        self.require("write", "set keys")
        values = [(check_key(k), _as_bytes(v)) for k, v in items.items()]
        self._gather([partial(self._write, *kv) for kv in values])

    def update_many(self, keys: Sequence[str], compute: Update) -> None:
        """Guarded by conditional writes where the backend has them (`ConditionalWrites`);
        elsewhere unguarded (`Store.update_many`)."""
        if not self.capabilities.safe_updates:
            super().update_many(keys, compute)
            return
        keys = [check_key(k) for k in keys]
        writes = ConditionalWrites(self, self._objects)
        optimistic_update(self, keys, compute, writes.read, writes.swap)

    async def _erase(self, key: str) -> None:
        try:
            await self._objects.delete(key)
        except Exception as exc:
            if not self._objects.is_missing(exc):
                raise self._error(exc, key, "erase") from exc

    def erase(self, key: str) -> None:
        self.erase_many([key])

    def erase_many(self, keys: Iterable[str]) -> None:
        self.require("write", "erase keys")
        keys = [check_key(k) for k in keys]
        self._gather([partial(self._erase, k) for k in keys])

    # -- listable --------------------------------------------------------------------------------
    def list(self) -> Iterator[str]:
        return self.list_prefix("")

    def list_prefix(self, prefix: str) -> Iterator[str]:
        self.require("list", f"list keys under {prefix!r}")
        folder = prefix[: prefix.rfind("/") + 1]
        limit = listing_limit()  # (read here: the client's loop runs on a thread of its own)

        async def find() -> builtins.list[str]:
            try:
                found = await self._objects.find(folder, limit)
            except StoreError:
                raise
            except Exception as exc:
                raise self._error(exc, prefix or None, "list") from exc
            if len(found) > limit:  # (pages that never end: stopped past the limit)
                raise StoreError(
                    f"the listing gave more than the {limit} keys it may hold",
                    key=prefix or None,
                    store=self,
                    operation="list",
                )
            return found

        found = self._objects.run(find)
        return iter(sorted(k for k in found if k.startswith(prefix) and is_valid_key(k)))

    def list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        """One delimited listing (S3: ListObjectsV2 with '/'), not a walk of every key."""
        self.require("list", f"list {prefix!r}")
        check_prefix(prefix)
        if not self._objects.delimited:
            return super().list_dir(prefix)

        async def ls() -> Listing:
            try:
                return await self._objects.list_dir(prefix)
            except Exception as exc:
                raise self._error(exc, prefix or None, "list") from exc

        found = self._objects.run(ls)
        return _children(found.keys, prefix), _children(found.folders, prefix)

    def is_empty(self, prefix: str) -> bool | None:
        """Whether nothing is under `prefix`, from one listing request for one key where the
        backend has one (None elsewhere, and when the request fails: the caller then reads
        its keys, which say what is wrong)."""
        if not self.capabilities.listable:
            return None
        check_prefix(prefix)
        try:
            return self._objects.run(lambda: self._objects.is_empty(prefix))
        except Exception:
            return None

    def diagnose(self, prefix: str = "") -> Diagnosis | None:
        """What the backend says of an empty place: no such bucket, a file where the root's
        folder should be, nothing stored under the root, or access denied."""
        if not self.capabilities.listable:
            return None
        check_prefix(prefix)
        try:
            return self._objects.run(lambda: self._objects.absence(prefix, self.url))
        except Exception:
            return None


class ConditionalWrites:
    """`read` and `swap` of `optimistic_update` for one store over a backend with
    conditional writes: a value is read with its token (ETag, version); the new value is
    written only if the token still holds (S3: `If-Match`), or only if the key is still
    absent (`If-None-Match: *`) where it was; a value that became fill is erased likewise.
    A key that was absent and stays so is checked to be still absent."""

    def __init__(self, store: ObjectStoreBase, objects: ObjectBackend) -> None:
        self.store = store
        self.objects = objects

    async def _get(self, key: str, limit: int) -> tuple[bytes | None, Token]:
        try:
            return await self.objects.get_tagged(key, limit)
        except StoreError:
            raise
        except Exception as exc:
            if self.objects.is_missing(exc):
                return None, None
            raise self.store._error(exc, key, "read") from exc

    def read(self, keys: Sequence[str]) -> tuple[dict[str, bytes], dict[str, Token]]:
        limit = value_limit()  # (the requests run on the client's thread, outside this context)
        answers = self.store._gather([partial(self._get, k, limit) for k in keys])
        values = {k: v for k, (v, _) in zip(keys, answers) if v is not None}
        return values, {k: token for k, (_, token) in zip(keys, answers)}

    async def _put(self, key: str, value: Any, token: Token) -> bool:
        """Whether the write happened (False: a conflict)."""
        try:
            if value is not None:
                return await self.objects.put_if(key, memoryview(value).tobytes(), token)
            if token is not None:
                return await self.objects.erase_if(key, token)
            # absent, and to stay absent: only if no one wrote it meanwhile
            return await self.objects.head(key, fresh=True) is None
        except Exception as exc:
            raise self.store._error(exc, key, "write") from exc

    def swap(self, tokens: Mapping[str, Token], new: Mapping[str, Any]) -> list[str]:
        keys = list(new)
        done = self.store._gather([partial(self._put, k, new[k], tokens.get(k)) for k in keys])
        return [k for k, ok in zip(keys, done) if not ok]


def _as_bytes(value: Any) -> bytes:
    """`value` as the `bytes` the clients send, copied only when it is some other buffer (an
    encoded chunk mostly is `bytes` already)."""
    return value if type(value) is bytes else memoryview(value).tobytes()


def _refusal_in(exc: BaseException) -> Refused | None:
    """The redirect refusal behind `exc`, if one is (botocore wraps what its HTTP session
    raises in an `HTTPClientError`, which keeps it as `kwargs["error"]`)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, Refused):
            return current
        inner = getattr(current, "kwargs", None)
        wrapped = inner.get("error") if isinstance(inner, dict) else None
        current = (
            wrapped
            if isinstance(wrapped, BaseException)
            else current.__cause__ or current.__context__
        )
    return None


def _children(keys: Iterable[str], prefix: str) -> builtins.list[str]:
    """The names directly under `prefix` of listed `keys`, sorted."""
    names = {k[len(prefix) :] for k in keys if k.startswith(prefix)}
    return sorted(n for n in names if n and "/" not in n and is_valid_key(prefix + n))
