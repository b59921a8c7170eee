"""A store over any fsspec filesystem: `gs://`, `gcs://`, `az://`, `abfs://` where gcsfs or
adlfs is installed (`cloud_routing`), `s3://` where obstore cannot take it (`s3_routing`), and
any fsspec URL spelled `fsspec+<protocol>://` (`fsspec+s3://` always, `fsspec+https://`,
`fsspec+memory://`, ...). On Azure, which answers no suffix range, the end of a value (a
shard's index) is read by its size, and its ETag is checked again after the range is read.

`zarrkit.open("s3://bucket/data.zarr", storage_options={...})` hands `storage_options` to fsspec
(for s3fs: `key`, `secret`, `client_kwargs={"endpoint_url": ...}`, `config_kwargs`, ...). Plain
`http(s)://` and `memory://` belong to zarrkit's own stores; the `fsspec+` spelling picks
fsspec's instead.

Batches go through fsspec's async interface in one gather on fsspec's I/O loop, at most
`concurrency` requests at a time (default: the `io_concurrency` setting,
`ZARRKIT_IO_CONCURRENCY`, read when the store is opened): `get_many`, `set_many`, `erase_many`, and `get_ranges`, whose
nearby ranges of one key are first merged into one request (`ranges.plan`). A synchronous
filesystem is wrapped in fsspec's `AsyncFileSystemWrapper`, which runs its calls in threads.

Over http(s), the caller's headers and credentials never reach an origin other than the URL's,
an https URL is never redirected to plain http, and a body is held only up to the read's value
limit (see `http_rules`: aiohttp middlewares added to the storage options by `from_url`; a
filesystem built by hand and given to the constructor keeps only aiohttp's own, weaker rules).
On S3 likewise: botocore's HTTP session (`s3_guard`, set by `from_url`) drops the session
token and every other `x-amz-` header on any origin a redirect leads to. On S3 a value is read with s3fs's own `get_object` call, its body held to the same limit:
an answer declaring more is refused before its body is read, and a body running past the
limit is refused one block after it (`ValueTooLargeError`). Other protocols (gcsfs, adlfs)
read whole values as their clients do.

Timeouts and retries follow the `io_timeout` and `io_retries` settings (read when the store
is opened). On S3 they become botocore's `config_kwargs` `connect_timeout`, `read_timeout` and
`retries` (standard mode: 5xx answers, throttling such as 503 SlowDown, connection faults and
timeouts, with jittered backoff), each unless `storage_options` set it; s3fs's own retry loop
is turned off, as it multiplies botocore's attempts. Over HTTP the timeout is aiohttp's
connect and socket-read timeout. The clients check a body against its
Content-Length; a read whose body was cut or stalled after the headers, which they report
rather than retry, the store makes again (`retrying`). Other protocols (gcsfs, adlfs) keep
their clients' timeouts and retries.

Failures other than "no such key" (network faults, 5xx answers after those retries,
permission errors) raise `StoreError` naming the key, the operation and the store; they are
never read as a missing key, so an array read never turns them into fill values.

A store pickles as its filesystem (which fsspec pickles as its class and storage options:
credentials and endpoint travel with it), root and options. fsspec's async filesystems refuse
use in a forked child ("not fork-safe"); a child makes its own from the same options on first
use.
"""

from __future__ import annotations

import asyncio
import builtins
import inspect
import os
import sys
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from functools import partial
from typing import Any, TypeVar

from zarrkit.abc import (
    Absence,
    ByteRange,
    InFlightLimit,
    Range,
    Store,
    SuffixRange,
    Update,
    check_key,
    check_mode,
    check_prefix,
    gather_limited,
    listing_limit,
    names,
    optimistic_update,
    settings,
    value_limit,
)
from zarrkit.errors import (
    PluginLoadError,
    RedirectRefusedError,
    StoreError,
    UnknownExtensionError,
    ValueTooLargeError,
    ZarrkitError,
)
from zarrkit.plugins.stores.pickling import reopening
from zarrkit.plugins.stores.remote import ranges, s3_updates
from zarrkit.plugins.stores.remote.async_reads import GatheredAwaitableReads
from zarrkit.plugins.stores.remote.http_rules import (
    Refused,
    TooLong,
    guarded_http_options,
)
from zarrkit.plugins.stores.remote.retrying import RetryPolicy, is_body_fault

T = TypeVar("T")

#: URL schemes given to fsspec as they are; any other fsspec protocol is `fsspec+<protocol>`
SCHEMES = ("s3", "s3a", "gs", "gcs", "az", "abfs", "abfss")
_PREFIX = "fsspec+"
#: the extra that installs each scheme's fsspec filesystem
_EXTRAS = {
    "s3": "s3",
    "s3a": "s3",
    "gs": "gcs",
    "gcs": "gcs",
    "az": "azure",
    "abfs": "azure",
    "abfss": "azure",
}
_MISSING = (FileNotFoundError, IsADirectoryError, NotADirectoryError)
#: fsspec protocols whose filesystems cannot read a suffix range (adlfs: Azure has none), read
#: by size instead (`_suffix_read_by_size`)
_NO_SUFFIX_RANGES = frozenset({"az", "abfs", "abfss", "adl"})
#: how often a suffix read by size starts again when the value changed while it was read
_SUFFIX_ATTEMPTS = 4
#: fsspec protocols whose paths start with a bucket (or container)
_BUCKETED = frozenset({"s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "oss", "r2"})


def _s3_options(given: dict[str, Any], concurrency: int, policy: RetryPolicy) -> dict[str, Any]:
    """s3fs options with zarrkit's concurrency, timeout and retries where `given` leaves them
    unset. botocore keeps 10 connections unless told (10 requests in flight), and makes the
    retries on 5xx answers, throttling (503 SlowDown) and connection faults, with jittered
    backoff ("standard" mode); `from_url` turns s3fs's own retry loop off, and the store
    retries what botocore cannot (a body cut or stalled after the headers). Its HTTP session
    keeps the request's credentials off other origins a redirect leads to (`s3_guard`)."""
    config = dict(given.get("config_kwargs") or {})
    if "http_session_cls" not in config:  # credentials stay on their origin (`s3_guard`)
        from zarrkit.plugins.stores.remote.s3_guard import GuardedSession

        config["http_session_cls"] = GuardedSession
    config.setdefault("max_pool_connections", concurrency)
    config.setdefault("connect_timeout", policy.timeout)
    config.setdefault("read_timeout", policy.timeout)
    config.setdefault("retries", {"total_max_attempts": policy.retries + 1, "mode": "standard"})
    return {**given, "config_kwargs": config}


def _with_retries(fs: Any, retries: int | None) -> Any:
    """`fs` making `retries` attempts in its own retry loop (s3fs's `retries`), if given; the
    setting is no storage option, so a filesystem made again (unpickled, in a forked child)
    needs it again."""
    if retries is not None and hasattr(fs, "retries"):
        fs.retries = retries
    return fs


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


def _fsspec() -> Any:
    try:
        import fsspec
    except ImportError as exc:
        raise PluginLoadError(
            "the fsspec store needs the 'fsspec' package: "
            "pip install 'zarrkit[s3]' (or fsspec and the filesystem "
            "package of your protocol)"
        ) from exc
    return fsspec


class FsspecStore(GatheredAwaitableReads, Store):
    #: (plain s3:// is `s3_routing`'s, which picks this store or obstore's; `matches_name`
    #: answers for it when asked)
    names = names("fsspec+s3", aliases=list(SCHEMES[2:]))
    #: a batch's requests run concurrently: the more of it per call, the more overlap
    preferred_fetch_bytes = 16 << 20
    preferred_store_bytes = 4 << 20  # (groups handed on to upload while more encode)
    _fs: Any  # an fsspec filesystem (fsspec has no type hints)

    def __init__(
        self,
        fs: Any,
        path: str = "",
        *,
        mode: str = "r",
        concurrency: int | None = None,
        url: str | None = None,
        client_retries: int | None = None,
    ) -> None:
        """`fs` an fsspec filesystem, `path` the store's root in it (bucket/prefix for S3);
        `client_retries`, if given, the filesystem's own `retries` (s3fs: see `from_url`)."""
        self.read_only = check_mode(mode) == "r"
        if concurrency is None:
            concurrency = settings().io_concurrency
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {concurrency}")
        if not fs.async_impl:
            from fsspec.implementations.asyn_wrapper import AsyncFileSystemWrapper

            fs = AsyncFileSystemWrapper(fs)
        self._client_retries = client_retries
        self.fs = _with_retries(fs, client_retries)
        self._fs_pid = os.getpid()
        self.root = path.rstrip("/")
        self.concurrency = concurrency
        self._gate = InFlightLimit()  # (`concurrency` bounds the requests of all its calls at once)
        self._url = url
        #: retries of reads whose body was cut or stalled (the clients retry the rest)
        self._policy = RetryPolicy.current()
        protocols = fs.protocol if isinstance(fs.protocol, tuple) else (fs.protocol,)
        self._suffix_by_size = bool(_NO_SUFFIX_RANGES & set(protocols))
        if {"http", "https"} & set(protocols):  # fsspec's HTTP can neither write nor list keys
            self.writeable = False
            self.listable = False
        # s3fs reads a whole object by asking its size first when concurrency > 1: one
        # round trip per chunk for nothing, so whole-value reads ask for one stream
        params = inspect.signature(fs._cat_file).parameters
        self._whole = {"max_concurrency": 1} if "max_concurrency" in params else {}

    @classmethod
    def adapt(cls, obj: object, *, mode: str = "r") -> FsspecStore | None:
        """An fsspec mapper (`fsspec.get_mapper(url)`, `fs.get_mapper(root)`) of an async
        filesystem (s3fs, gcsfs, http, ...): its filesystem at its root, read concurrently and
        in byte ranges where the mapper reads whole values one at a time. A mapper of a
        synchronous filesystem (local, memory, zip) is left to the mapping store: its own
        writes make the folders such a filesystem needs."""
        mapping = sys.modules.get("fsspec.mapping")
        mapper = getattr(mapping, "FSMap", None)
        if mapper is None or not isinstance(obj, mapper) or not obj.fs.async_impl:
            return None
        return cls(obj.fs, obj.root, mode=mode)

    @property
    def fs(self) -> Any:
        """The filesystem; in a forked child, one of its own from the same options."""
        if self._fs_pid != os.getpid():
            fs = self._fs
            self._fs = _with_retries(
                type(fs)(*fs.storage_args, **fs.storage_options), self._client_retries
            )
            self._fs_pid = os.getpid()
        return self._fs

    @fs.setter
    def fs(self, fs: Any) -> None:
        self._fs = fs

    def __reduce__(self) -> tuple[Any, ...]:
        fs = getattr(self._fs, "sync_fs", self._fs)  # (the constructor wraps a sync one again)
        return reopening(
            self,
            fs,
            self.root,
            mode="r" if self.read_only else "a",
            concurrency=self.concurrency,
            url=self._url,
            client_retries=self._client_retries,
        )

    @classmethod
    def matches_name(cls, name: str, format: str) -> bool:
        return name in SCHEMES or (name.startswith(_PREFIX) and len(name) > len(_PREFIX))

    @classmethod
    def from_url(
        cls, url: str, *, mode: str = "r", concurrency: int | None = None, **storage_options: Any
    ) -> FsspecStore:
        fsspec = _fsspec()
        target = url[len(_PREFIX) :] if url.startswith(_PREFIX) else url
        scheme = target.split("://", 1)[0]
        if scheme not in fsspec.available_protocols():
            raise UnknownExtensionError(
                "store", url.split("://", 1)[0], hint=f"fsspec knows no protocol {scheme!r}"
            )
        if scheme in ("http", "https"):  # credentials stay on their origin (see `http_rules`)
            timeout = RetryPolicy.current().timeout
            storage_options = guarded_http_options(target, storage_options, timeout)
        if concurrency is None:
            concurrency = settings().io_concurrency
        if scheme in ("s3", "s3a"):
            storage_options = _s3_options(storage_options, concurrency, RetryPolicy.current())
        try:
            fs, path = fsspec.core.url_to_fs(target, **storage_options)
        except ImportError as exc:
            extra = _EXTRAS.get(scheme)
            hint = f" (pip install 'zarrkit[{extra}]')" if extra else ""
            raise PluginLoadError(f"fsspec cannot open {scheme}:// URLs here: {exc}{hint}") from exc
        # s3fs's own retry loop (a class attribute, not an option) nests inside itself and
        # around botocore's, multiplying the attempts of every failure: botocore's alone
        retries = 1 if scheme in ("s3", "s3a") else None
        return cls(fs, path, mode=mode, concurrency=concurrency, url=url, client_retries=retries)

    @property
    def url(self) -> str:
        if self._url is not None:
            return self._url
        protocol = self.fs.protocol if isinstance(self.fs.protocol, str) else self.fs.protocol[0]
        return f"{protocol}://{self.root}"

    def _path(self, key: str) -> str:
        return f"{self.root}/{check_key(key)}" if self.root else check_key(key)

    def _dir(self, prefix: str) -> str:
        return f"{self.root}/{prefix}".rstrip("/") if self.root else prefix.rstrip("/")

    # -- running coroutines on fsspec's loop ---------------------------------------------------
    def _run(self, make: Callable[[], Awaitable[T]]) -> T:
        from fsspec.asyn import sync

        async def run() -> T:
            return await make()

        answer: T = sync(self.fs.loop, run)
        return answer

    def _gather(self, calls: Sequence[Callable[[], Awaitable[T]]]) -> list[T]:
        """Run every call concurrently, at most `concurrency` at a time, answers in order."""
        if not calls:
            return []

        async def run() -> list[T]:
            return await gather_limited(calls, self.concurrency, gate=self._gate)

        return self._run(run)

    def _error(self, exc: BaseException, key: str | None, operation: str) -> StoreError:
        refused = _refusal_in(exc)
        if refused is not None:
            return RedirectRefusedError(str(refused), key=key, store=self, operation=operation)
        if isinstance(exc, TooLong):
            return ValueTooLargeError(str(exc), key=key, store=self, operation=operation)
        detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        return StoreError(detail, key=key, store=self, operation=operation)

    def reads_loop(self) -> asyncio.AbstractEventLoop:
        """Awaited reads (`async_reads`) run on fsspec's loop, the filesystem's client's."""
        loop: asyncio.AbstractEventLoop = self.fs.loop
        return loop

    # -- readable --------------------------------------------------------------------------------
    async def _read(self, key: str, rng: Range | None, limit: int) -> bytes | None:
        path = self._path(key)
        if ranges.is_empty_read(rng):
            return b"" if await self._is_file(key, path) else None
        try:
            return await self._policy.run(partial(self._fetch, path, rng, limit), is_body_fault)
        except _MISSING:
            return None
        except Exception as exc:
            # a range starting past the end is refused (HTTP 416) rather than answered empty
            if (
                isinstance(rng, ByteRange)
                and not isinstance(exc, (Refused, TooLong))
                and await self._size_at_most(path, rng.offset)
            ):
                return b""
            raise self._error(exc, key, "read") from exc

    async def _fetch(self, path: str, rng: Range | None, limit: int) -> bytes:
        """One read. The clients check a body against its Content-Length (aiohttp, botocore)
        and raise when it is short; `_read` makes the request again then."""
        value: bytes
        if s3_updates.supported(self.fs) and not (
            isinstance(rng, SuffixRange) and self._suffix_by_size
        ):
            value = await self._s3_read(path, rng, limit)
        elif rng is None:
            value = await self.fs._cat_file(path, **self._whole)
        elif isinstance(rng, SuffixRange) and self._suffix_by_size:
            value = await self._suffix_read_by_size(path, rng.length)
        elif isinstance(rng, SuffixRange):
            value = await self.fs._cat_file(path, start=-rng.length)
        else:
            end = None if rng.length is None else rng.offset + rng.length
            value = await self.fs._cat_file(path, start=rng.offset, end=end)
        return value

    async def _s3_read(self, path: str, rng: Range | None, limit: int) -> bytes:
        """s3fs's `_cat_file` holding at most `limit` bytes: one GET (its `get_object`, with
        the filesystem's request options), refused when its answer declares more, its body
        read a block at a time and refused one block past the limit. (s3fs reads whatever
        body comes, however long, before anything can look at its size.)"""
        fs = self.fs
        bucket, key, version = fs.split_path(path)
        asked: dict[str, Any] = {"VersionId": version} if version else {}
        if isinstance(rng, SuffixRange):
            asked["Range"] = f"bytes=-{rng.length}"
        elif isinstance(rng, ByteRange):
            last = "" if rng.length is None else str(rng.offset + rng.length - 1)
            asked["Range"] = f"bytes={rng.offset}-{last}"
        answer = await fs._call_s3("get_object", Bucket=bucket, Key=key, **asked)
        return await s3_updates.read_body(answer, limit)

    async def _suffix_read_by_size(self, path: str, length: int) -> bytes:
        """The last `length` bytes of `path` where the filesystem reads no suffix range: its
        size, then the range it ends with, then its ETag again. The filesystem cannot make a
        read conditional, so a value replaced meanwhile is caught afterwards (the ETags
        differ) and read again: a shard's index must not be read half from each."""
        for _ in range(_SUFFIX_ATTEMPTS):
            before: dict[str, Any] = await self.fs._info(path, refresh=True)
            size = int(before["size"])
            start = max(0, size - length)
            value: bytes = (
                await self.fs._cat_file(path, start=start, end=size) if start < size else b""
            )
            tag = before.get("etag")
            if tag is None or (await self.fs._info(path, refresh=True)).get("etag") == tag:
                return value
        raise RuntimeError(f"it was replaced while its end was read, {_SUFFIX_ATTEMPTS} times")

    async def _size_at_most(self, path: str, offset: int) -> bool:
        try:
            info: dict[str, Any] = await self.fs._info(path)
        except Exception:
            return False
        return info.get("type") == "file" and int(info.get("size", offset + 1)) <= offset

    async def _is_file(self, key: str, path: str) -> bool:
        try:
            info: dict[str, Any] = await self.fs._info(path)
        except _MISSING:
            return False
        except Exception as exc:
            raise self._error(exc, key, "read") from exc
        return bool(info.get("type") == "file")

    async def _size(self, key: str, path: str) -> int | None:
        """The value's size from the filesystem's `info` (S3: a HEAD), never from its body;
        None: absent, or no file there."""
        try:
            info: dict[str, Any] = await self.fs._info(path)
        except _MISSING:
            return None
        except Exception as exc:
            raise self._error(exc, key, "read") from exc
        if info.get("type") != "file" or info.get("size") is None:
            return None
        return int(info["size"])

    def sizes(self, keys: Iterable[str]) -> dict[str, int]:
        """One `info` per key, concurrently: a value is sized without being downloaded."""
        keys = [check_key(k) for k in keys]
        found = self._gather([partial(self._size, k, self._path(k)) for k in keys])
        return {k: n for k, n in zip(keys, found) if n is not None}

    def get(self, key: str, byte_range: Range | None = None) -> bytes | None:
        check_key(key)
        limit = value_limit()  # (read here: fsspec's loop runs on a thread of its own)
        return self._run(lambda: self._read(key, byte_range, limit))

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes]:
        keys = [check_key(k) for k in keys]
        limit = value_limit()
        values = self._gather([partial(self._read, k, None, limit) for k in keys])
        return {k: v for k, v in zip(keys, values) if v is not None}

    def get_ranges(self, requests: Sequence[tuple[str, Range | None]]) -> list[bytes | None]:
        for key, _ in requests:
            check_key(key)
        plan = ranges.plan(requests)
        limit = value_limit()
        results = self._gather([partial(self._read, *r, limit) for r in plan.reads])
        return plan.answers(results)

    def exists(self, key: str) -> bool:
        path = self._path(key)
        return self._run(lambda: self._is_file(key, path))

    # -- writeable -------------------------------------------------------------------------------
    async def _write(self, key: str, value: bytes) -> None:
        try:
            await self.fs._pipe_file(self._path(key), value)
        except Exception as exc:
            raise self._error(exc, key, "write") from exc

    def set(self, key: str, value: Any) -> None:
        self.set_many({key: value})

    def set_many(self, items: Mapping[str, Any]) -> None:
        """Each value is one PUT (atomic per key on object stores); all keys checked first."""
        self.require("write", "set keys")
        values = [(check_key(k), _as_bytes(v)) for k, v in items.items()]
        self._gather([partial(self._write, *kv) for kv in values])

    # -- updates ---------------------------------------------------------------------------------
    @property
    def safe_updates(self) -> bool:  # type: ignore[override]  # depends on the filesystem
        """On S3: conditional writes (`s3_updates`). Other filesystems have no way to write
        only if a value is unchanged that fsspec exposes: their updates are unguarded."""
        return s3_updates.supported(self.fs)

    def update_many(self, keys: Sequence[str], compute: Update) -> None:
        if not self.safe_updates:
            super().update_many(keys, compute)
            return
        keys = [check_key(k) for k in keys]
        writes = s3_updates.ConditionalWrites(self)
        optimistic_update(self, keys, compute, writes.read, writes.swap)

    def erase(self, key: str) -> None:
        self.erase_many([key])

    def erase_many(self, keys: Iterable[str]) -> None:
        self.require("write", "erase keys")
        paths = [self._path(k) for k in keys]
        if not paths:
            return

        async def erase() -> None:
            try:
                await self.fs._rm(paths)  # S3: one DeleteObjects per 1000 keys
                return
            except _MISSING:
                pass
            except Exception as exc:
                raise self._error(exc, paths[0] if len(paths) == 1 else None, "erase") from exc
            for path in paths:  # some were absent: erase the rest one by one
                try:
                    await self.fs._rm_file(path)
                except _MISSING:
                    continue
                except Exception as exc:
                    raise self._error(exc, path, "erase") from exc

        self._run(erase)

    def erase_prefix(self, prefix: str) -> None:
        self.require("write", f"erase prefix {prefix!r}")
        self.erase_many(list(self.list_prefix(check_prefix(prefix))))

    # -- listable --------------------------------------------------------------------------------
    def _relative(self, path: str) -> str | None:
        """The key of a listed path (None for what is not a valid key, like a folder marker)."""
        path = self.fs._strip_protocol(path)
        root = self.fs._strip_protocol(self.root) if self.root else ""
        if root:
            if not path.startswith(root + "/"):
                return None
            path = path[len(root) + 1 :]
        try:
            return check_key(path)
        except ValueError:
            return None

    def list(self) -> Iterator[str]:
        return self.list_prefix("")

    def list_prefix(self, prefix: str) -> Iterator[str]:
        self.require("list", f"list keys under {prefix!r}")
        folder = prefix[: prefix.rfind("/") + 1]
        base = self._dir(folder)

        limit = listing_limit()  # (read here: fsspec's loop runs on a thread of its own)

        async def find() -> builtins.list[str]:
            self.fs.invalidate_cache(base)
            try:
                if limit < sys.maxsize and s3_updates.supported(self.fs):
                    return await self._s3_find(base, limit, prefix)
                found: builtins.list[str] = await self.fs._find(base, withdirs=False)
                return found
            except _MISSING:
                return []
            except ZarrkitError:
                raise
            except Exception as exc:
                raise self._error(exc, prefix or None, "list") from exc

        keys = (self._relative(p) for p in self._run(find))
        return iter(sorted(k for k in keys if k is not None and k.startswith(prefix)))

    async def _s3_find(self, base: str, limit: int, prefix: str) -> builtins.list[str]:
        """s3fs's listing of `base` page by page, stopped one key past `limit`: `_find` gathers
        every page before it answers, and a server whose pages always say there is more would
        keep it gathering for ever. Other protocols list as their filesystems do."""
        bucket, _, folder = base.partition("/")
        pages = self.fs._iterdir(
            bucket, max_items=limit + 1, delimiter="", prefix=f"{folder}/" if folder else ""
        )
        found: builtins.list[str] = [info["name"] async for info in pages]
        if len(found) > limit:
            raise StoreError(
                f"the listing gave more than the {limit} keys it may hold",
                key=prefix or None,
                store=self,
                operation="list",
            )
        return found

    def list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        """One delimited listing (S3: ListObjectsV2 with '/'), not a walk of every key."""
        self.require("list", f"list {prefix!r}")
        base = self._dir(check_prefix(prefix))

        async def ls() -> builtins.list[dict[str, Any]]:
            self.fs.invalidate_cache(base)
            try:
                entries: builtins.list[dict[str, Any]] = await self.fs._ls(base, detail=True)
                return entries
            except _MISSING:
                return []
            except Exception as exc:
                raise self._error(exc, prefix or None, "list") from exc

        keys: set[str] = set()
        prefixes: set[str] = set()
        for entry in self._run(ls):
            key = self._relative(entry["name"].rstrip("/"))
            if key is None or not key.startswith(prefix) or "/" in key[len(prefix) :]:
                continue
            (prefixes if entry.get("type") == "directory" else keys).add(key[len(prefix) :])
        return sorted(keys), sorted(prefixes)

    def is_empty(self, prefix: str) -> bool | None:
        """On S3, one ListObjectsV2 asking for one key (fsspec's own listing of an empty folder
        lists its parent too); elsewhere None."""
        if not self.listable or not s3_updates.supported(self.fs):
            return None
        base = self._dir(check_prefix(prefix))
        bucket, path, _ = self.fs.split_path(base)
        if not bucket:
            return None

        async def first() -> bool:
            answer = await self.fs._call_s3(
                "list_objects_v2", Bucket=bucket, Prefix=f"{path}/" if path else "", MaxKeys=1
            )
            return not answer.get("Contents")

        try:
            return self._run(first)
        except Exception:  # (then the caller reads its keys, which say what is wrong)
            return None

    def diagnose(self, prefix: str = "") -> Absence | None:
        """No such bucket (an object store's first path segment), nothing under the root,
        a file where the root's folder should be, or access refused."""
        protocols = self.fs.protocol if isinstance(self.fs.protocol, tuple) else (self.fs.protocol,)
        if {"http", "https"} & set(protocols):
            return None
        base = self._dir(check_prefix(prefix))
        bucket = base.split("/", 1)[0] if set(protocols) & _BUCKETED else ""

        async def look() -> Absence | None:
            try:
                if bucket and not await self.fs._exists(bucket):
                    return Absence("missing", f"the bucket {bucket!r} does not exist")
                if base and await self.fs._isfile(base):
                    return Absence("not_a_container", f"{self.url} is a file, not a folder")
                if base and base != bucket and not await self.fs._exists(base):
                    return Absence("missing", f"nothing is stored under {self.url}")
            except PermissionError as exc:
                return Absence("denied", f"access denied: {exc}")
            return None

        try:
            return self._run(look)
        except Exception:
            return None

    # -- identity --------------------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FsspecStore):
            return NotImplemented
        return self.fs == other.fs and self.root == other.root

    def __hash__(self) -> int:
        return hash(self.root)

    def __repr__(self) -> str:
        return f"FsspecStore({self.url!r})"
