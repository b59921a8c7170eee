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
nearby ranges of one key are first merged into one request (`plan_reads`). A synchronous
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

import sys
from collections.abc import Iterable
from dataclasses import replace
from functools import partial
from typing import Any

from zarrkit.abc import check_key, names, settings
from zarrkit.errors import PluginLoadError, UnknownExtensionError
from zarrkit.plugins.stores.pickling import reopening
from zarrkit.plugins.stores.remote.fsspec_objects import FsspecObjects, protocols_of
from zarrkit.plugins.stores.remote.http_rules import guarded_http_options
from zarrkit.plugins.stores.remote.object_store import ObjectStoreBase
from zarrkit.plugins.stores.remote.retrying import RetryPolicy

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


class FsspecStore(ObjectStoreBase):
    """A store over an fsspec filesystem (see the module's docstring); what it reads and
    writes, and how, is `ObjectStoreBase`'s, over the filesystem's primitives
    (`FsspecObjects`)."""

    #: (plain s3:// is `s3_routing`'s, which picks this store or obstore's; `matches_name`
    #: answers for it when asked)
    names = names("fsspec+s3", aliases=list(SCHEMES[2:]))

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
        if not fs.async_impl:
            from fsspec.implementations.asyn_wrapper import AsyncFileSystemWrapper

            fs = AsyncFileSystemWrapper(fs)
        self.root = path.rstrip("/")
        self._objects: FsspecObjects = FsspecObjects(fs, self.root, client_retries)
        self._open(self._objects, mode, concurrency)
        self._url = url
        if {"http", "https"} & protocols_of(fs):  # fsspec's HTTP can neither write nor list keys
            self.capabilities = replace(self.capabilities, writeable=False, listable=False)

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
        """The filesystem (in a forked child, one of its own from the same options)."""
        return self._objects.fs

    def __reduce__(self) -> tuple[Any, ...]:
        fs = self._objects._fs
        fs = getattr(fs, "sync_fs", fs)  # (the constructor wraps a sync one again)
        return reopening(
            self,
            fs,
            self.root,
            mode="r" if self.read_only else "a",
            concurrency=self.concurrency,
            url=self._url,
            client_retries=self._objects._client_retries,
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

    def erase_many(self, keys: Iterable[str]) -> None:
        """One call for them all (S3: one DeleteObjects per 1000 keys); where some were
        absent, the rest one by one."""
        self.require("write", "erase keys")
        keys = [check_key(k) for k in keys]
        if not keys:
            return
        try:
            rest = self._objects.run(lambda: self._objects.delete_many(keys))
        except Exception as exc:
            raise self._error(exc, keys[0] if len(keys) == 1 else None, "erase") from exc
        self._gather([partial(self._erase, k) for k in rest])

    # -- identity --------------------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FsspecStore):
            return NotImplemented
        return self.fs == other.fs and self.root == other.root

    def __hash__(self) -> int:
        return hash(self.root)

    def __repr__(self) -> str:
        return f"FsspecStore({self.url!r})"
