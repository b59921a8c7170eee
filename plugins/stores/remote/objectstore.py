"""A store over obstore (Rust's `object_store`): `obstore+s3://`, `obstore+gs://`,
`obstore+az://`, `obstore+http(s)://`, and plain `s3://` when obstore is installed and the
storage options mean the same to it as to s3fs (`s3_routing`, `s3_options`: s3fs's `key`,
`secret`, `client_kwargs={"endpoint_url": ...}`, ... are translated), plain `gs://` and `az://`
when gcsfs or adlfs is not installed (`cloud_routing`). The `store_schemes` setting routes other
schemes here (`ZARRKIT_STORE_SCHEMES="gs=obstore+gs"`). Needs `pip install 'zarrkit[obstore]'`.

`storage_options` go to `obstore.store.from_url`: the backend's configuration as keywords
(S3: `endpoint`, `access_key_id`, `secret_access_key`, `region`, ...), `client_options`
(`allow_http`, `timeout`, ...) and `retry_config`; stores opened in the same bucket (S3, GCS),
the same container (Azure) or at the same URL, with the same options and credential variables
of the environment, share one HTTP client and its open connections (`_Clients`,
`_client_target`). Requests run on one event loop thread per process (uvloop's where
installed), at most `concurrency` at a time for all of a store's calls together (default: the
`io_concurrency` setting); nearby ranges of one key are merged first (`ranges.plan`), as in
every network store. Azure answers no suffix range: the end of a value (a shard's index) is
read by its size, two requests.

Timeouts and retries follow the `io_timeout` and `io_retries` settings (read when the store
is opened): `client_options` `connect_timeout` and `read_timeout`, and a `retry_config` (5xx
answers, throttling, connection faults, timeouts, bodies cut short; jittered exponential
backoff), each unless the options set it. obstore over HTTP does not retry a body cut or
stalled after its headers; the store does (`retrying`).

`update_many` is guarded by conditional puts where the backend has them (S3, GCS, Azure,
memory: `obstore_updates`), so writers in other processes lose nothing; obstore's
`LocalStore` updates unguarded. obstore's runtime does not survive `fork`: in a process
forked after this one made requests, the store raises `StoreError` instead of hanging.

Bodies are held only up to the read's value limit (`zarrkit.store.value_limit()`, which the
chunk engine sets from the chunk's size): obstore would allocate the length an answer declares
in one piece (a `Content-Length` of 2**62 aborts the process) and believes a length that
disagrees with the range it answers, so every GET is sized from its answer's headers first and
refused there when it declares more, and its body is then read in bounded pieces and refused
one piece past what it declared (`collect`, `ValueTooLargeError`).

Credentials stay on their origin where obstore can be made to keep them there, and obstore is
refused where it cannot: its HTTP client follows a redirect to any origin and drops only
`Authorization`, `Cookie` and `Proxy-Authorization` there, and obstore has no setting to stop
either. A store whose requests would carry another credential in a header is refused when it
is opened (`carried_off_origin`: a caller's `default_headers` such as `X-Api-Key`, an S3
session token (`x-amz-security-token`) or customer encryption key, given as an option or in
the environment), naming the stores that keep them on their origin (`http(s)://`,
`fsspec+http(s)://`, `fsspec+s3://`; plain `s3://` goes to fsspec then, `s3_routing`).
Credentials obstore finds by itself (instance metadata, a `credential_provider`) are beyond
what the store can see.

Failures other than "no such key" raise `StoreError` naming the key, the operation and the
store, after those retries; never a missing key.
"""

from __future__ import annotations

import asyncio
import atexit
import builtins
import os
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from functools import partial, wraps
from typing import Any, TypeVar

from zarrkit.abc import (
    Absence,
    ByteRange,
    InFlightLimit,
    Range,
    Store,
    SuffixRange,
    Update,
    at_fork,
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
from zarrkit.errors import PluginLoadError, StoreError
from zarrkit.plugins.stores.remote import obstore_updates, ranges
from zarrkit.plugins.stores.remote.async_reads import GatheredAwaitableReads
from zarrkit.plugins.stores.remote.obstore_bodies import collect
from zarrkit.plugins.stores.remote.retrying import RetryPolicy

T = TypeVar("T")

_PREFIX = "obstore+"
_SCHEMES = ("s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "http", "https")
#: obstore's store classes, which `adapt` takes as they are
_BACKENDS = ("S3Store", "GCSStore", "AzureStore", "HTTPStore", "LocalStore", "MemoryStore")
#: schemes obstore knows by another name
_SCHEME_ALIASES = {"s3a://": "s3://", "gcs://": "gs://"}
#: obstore's store classes whose backends answer no suffix range (`bytes=-n`): Azure's API has
#: none, and obstore refuses to ask
_NO_SUFFIX_RANGES = frozenset({"AzureStore"})
#: how often a suffix read by size starts again when the value changed between its two requests
_SUFFIX_ATTEMPTS = 4
#: schemes whose URLs are `scheme://bucket/path` (Azure: a container): one client serves it all
_BUCKET_SCHEMES = ("s3", "gs", "az")
#: characters a path may hold to be joined to keys as it is (others: a client of its own,
#: which obstore's URL parsing decodes as it does)
_PLAIN_PATH = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./")
#: headers obstore's HTTP client (reqwest) drops itself on a redirect to another origin
_DROPPED_ON_REDIRECT = frozenset({"authorization", "cookie", "proxy-authorization"})
#: obstore's S3 options whose values go in a header of every request (the session token, the
#: key of server-side encryption with a customer key), and the variables it reads them from
_S3_HEADER_OPTIONS = frozenset(
    {
        "session_token",
        "token",
        "aws_session_token",
        "aws_token",
        "sse_customer_key_base64",
        "aws_sse_customer_key_base64",
    }
)
_S3_HEADER_ENVIRONMENT = ("AWS_SESSION_TOKEN", "AWS_TOKEN", "AWS_SSE_CUSTOMER_KEY_BASE64")


def carried_off_origin(
    target: str, options: Mapping[str, Any], environ: Mapping[str, str]
) -> list[str]:
    """The credentials obstore would send to another origin a redirect leads to, for a store
    of `target` (`scheme://...`) opened with `options` in `environ`: the caller's headers but
    those its client drops there, and on S3 a session token or customer key, which travel in
    `x-amz-` headers. Empty: none."""
    client = options.get("client_options") or {}
    headers = client.get("default_headers") if isinstance(client, Mapping) else None
    carried = [
        f"the header {name!r}"
        for name in headers or ()
        if str(name).lower() not in _DROPPED_ON_REDIRECT
    ]
    scheme = target.split("://", 1)[0].removeprefix(_PREFIX)
    if _SCHEME_ALIASES.get(f"{scheme}://", f"{scheme}://") == "s3://":
        for name, value in options.items():
            if str(name).lower() in _S3_HEADER_OPTIONS and value:
                carried.append(f"the option {name!r}")
        carried += [f"${name}" for name in _S3_HEADER_ENVIRONMENT if environ.get(name)]
    return carried


def _obstore() -> Any:
    try:
        import obstore
    except ImportError as exc:
        raise PluginLoadError(
            "the obstore store needs the 'obstore' package: pip install 'zarrkit[obstore]'"
        ) from exc
    return obstore


def _call(make: Callable[[], Store]) -> Store:
    """(unpickling a store that `reopen` makes)"""
    return make()


# -- one event loop per process ---------------------------------------------------------------------
_loop_lock = threading.Lock()
_loop: tuple[int, asyncio.AbstractEventLoop] | None = None


def _event_loop() -> asyncio.AbstractEventLoop:
    """The loop every obstore store's requests run on, started on first use.

    Not in a process forked after this one made requests: obstore's runtime (tokio) does not
    survive a fork, and its requests there would wait forever; a clear error instead."""
    global _loop
    with _loop_lock:
        if _loop is not None and _loop[0] != os.getpid():
            raise StoreError(
                "obstore cannot make requests in a process forked after its parent made "
                "some (its runtime does not survive a fork): start processes with 'spawn' "
                "or 'forkserver', or open the store with the fsspec backend (fsspec+s3://)",
                store="obstore",
                operation="request",
            )
        if _loop is None:
            loop = _new_loop()
            thread = threading.Thread(target=loop.run_forever, name="zarrkit-obstore", daemon=True)
            thread.start()
            atexit.register(_stop, loop, thread)
            _loop = (os.getpid(), loop)
        return _loop[1]


def _new_loop() -> asyncio.AbstractEventLoop:
    """uvloop's loop where it is installed (the `obstore` extra brings it, but on Windows):
    each request's answer reaches Python as a callback from obstore's runtime thread, and
    uvloop spends less of the client's CPU on that than asyncio's own loop."""
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    loop: asyncio.AbstractEventLoop = uvloop.new_event_loop()
    return loop


#: forks this process came through (counted in each child): a store opened before the last one
#: may hold a client that cannot make requests here
_forks = 0


def _forked() -> None:
    global _forks
    _forks += 1


at_fork(_forked)


def usable_here() -> bool:
    """Whether this process can make obstore requests: not if it was forked after its parent
    made some (see `_event_loop`). Plain `s3://` goes to fsspec where this is False."""
    with _loop_lock:
        return _loop is None or _loop[0] == os.getpid()


def _stop(loop: asyncio.AbstractEventLoop, thread: threading.Thread) -> None:
    """At exit: stop the loop, and let obstore's runtime threads finish what they still do
    after a request's answer was delivered (they take the GIL to release its buffers); one
    that takes it while the interpreter finalizes aborts the process (SIGABRT after all
    work is done, about one exit in twenty with obstore 0.12)."""
    if thread.is_alive():
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
    _wait_for_idle_runtime()


def _wait_for_idle_runtime(limit: float = 2.0) -> None:
    """Until no tokio thread of this process is running (Linux: its state in /proc) for a
    few looks in a row, at most `limit` seconds; elsewhere a short pause."""
    tasks = f"/proc/{os.getpid()}/task"
    if not os.path.isdir(tasks):
        time.sleep(0.1)
        return
    deadline = time.monotonic() + limit
    quiet = 0
    while quiet < 3 and time.monotonic() < deadline:
        quiet = quiet + 1 if not _runtime_busy(tasks) else 0
        time.sleep(0.005)


def _runtime_busy(tasks: str) -> bool:
    for tid in os.listdir(tasks):
        try:
            with open(f"{tasks}/{tid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        name, _, rest = stat.partition("(")[2].rpartition(")")
        if name.startswith("tokio") and rest.split()[0] == "R":
            return True
    return False


def _run(make: Callable[[], Awaitable[T]]) -> T:
    async def run() -> T:
        return await make()

    return asyncio.run_coroutine_threadsafe(run(), _event_loop()).result()


class _Clients:
    """obstore stores already made, by URL and configuration, so that opening the same data
    again (an array at each step of a loop, each member of a group) does not build another
    HTTP client: building one loads the system's root certificates while holding the GIL,
    which costs more than many requests' answers. A store is shared only with an
    identical configuration: the same options and the same credential variables of the
    environment, which obstore reads when it builds one; options it cannot compare (a
    credential provider) build a new one each time. Per process: obstore's runtime does not
    survive `fork`."""

    #: the environment variables obstore's stores read their configuration from
    _ENVIRONMENT = ("AWS_", "GOOGLE_", "AZURE_", "OBJECT_STORE_")
    _LIMIT = 32

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._made: dict[tuple[Any, ...], Any] = {}
        self._pid = os.getpid()

    def get(self, obstore: Any, target: str, options: dict[str, Any]) -> Any:
        key = self._key(target, options)
        if key is None:
            return obstore.store.from_url(target, **options)
        with self._lock:
            if self._pid != os.getpid():
                self._made.clear()
                self._pid = os.getpid()
            made = self._made.pop(key, None)
            if made is None:
                made = obstore.store.from_url(target, **options)
            self._made[key] = made  # (last used last: the first is the one to forget)
            while len(self._made) > self._LIMIT:
                del self._made[next(iter(self._made))]
            return made

    def _key(self, target: str, options: dict[str, Any]) -> tuple[Any, ...] | None:
        plain = _plain(options)
        if plain is None:
            return None
        environment = tuple(
            sorted((k, v) for k, v in os.environ.items() if k.startswith(self._ENVIRONMENT))
        )
        return (target, plain, environment)


def _client_target(target: str) -> tuple[str, str]:
    """The URL a client is made for and the root of the store's keys within it: the bucket
    and the path in it (`s3://bucket/a/b` -> `s3://bucket`, `a/b/`), so that every array
    and group in a bucket shares one client and its connections (a new client holds the GIL
    while it loads root certificates and starts with no connection open: a write to each of
    many new arrays paid both). Other URLs are a client each, rooted where they point."""
    scheme, _, rest = target.partition("://")
    bucket, _, path = rest.partition("/")
    path = path.strip("/")
    parts = path.split("/") if path else []
    plain = set(path) <= _PLAIN_PATH and not any(p in ("", ".", "..") for p in parts)
    if scheme not in _BUCKET_SCHEMES or not bucket or not plain:
        return target, ""
    return f"{scheme}://{bucket}", f"{path}/" if path else ""


def _plain(value: Any) -> Any:
    """`value` as a hashable of plain values, or None when it holds anything else."""
    from datetime import timedelta

    if isinstance(value, Mapping):
        items = [(k, _plain(v)) for k, v in value.items()]
        if any(v is None and value[k] is not None for k, v in items):
            return None
        return ("dict", tuple(sorted(items, key=lambda kv: str(kv[0]))))
    if isinstance(value, list | tuple):
        parts = [_plain(v) for v in value]
        if any(p is None and v is not None for p, v in zip(parts, value)):
            return None
        return ("seq", tuple(parts))
    if value is None or isinstance(value, str | int | float | bool | timedelta):
        return (type(value).__name__, value)
    return None


_clients = _Clients()


def _client_options(options: dict[str, Any], policy: RetryPolicy) -> dict[str, Any]:
    """obstore's options with zarrkit's timeout and retries where `options` leaves them unset:
    `client_options` `connect_timeout` and `read_timeout` (no bytes for that long: a stall,
    before or within an answer), and a `retry_config` of `io_retries` retries with jittered
    exponential backoff. obstore retries 5xx answers, throttling, connection faults, timeouts
    of reads and bodies cut short; its overall `timeout` (default 30 s) stays its own."""
    from datetime import timedelta

    timeout = timedelta(seconds=policy.timeout)
    client = dict(options.get("client_options") or {})
    client.setdefault("connect_timeout", timeout)
    client.setdefault("read_timeout", timeout)
    retry = options.get("retry_config") or {
        "max_retries": policy.retries,
        "backoff": {
            "init_backoff": timedelta(seconds=policy.base),
            "max_backoff": timedelta(seconds=policy.cap),
            "base": 2,
        },
    }
    return {**options, "client_options": client, "retry_config": retry}


#: the store operations an inherited handle hands to the store it is opened again as
_FORWARDED = (
    "get",
    "read_many",
    "get_many",
    "read_ranges",
    "get_ranges",
    "exists",
    "sizes",
    "set",
    "set_many",
    "update_many",
    "erase",
    "erase_many",
    "erase_prefix",
    "list",
    "list_prefix",
    "is_empty",
    "diagnose",
    "list_dir",
)


def _reopened_in_a_forked_child(cls: type[T]) -> type[T]:
    """Each operation of `_FORWARDED` goes, in a child forked after its parent made obstore
    requests, to the store the handle's `reopen` makes there (plain `s3://`: fsspec's), as a
    pickled handle already is: a DataLoader-style worker inherits its handles rather than
    unpickling them. Elsewhere, one integer comparison per call."""

    def forwarding(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        @wraps(method)
        def call(self: ObstoreStore, *args: Any, **kwargs: Any) -> Any:
            if self._born != _forks:
                other = self._in_this_process()
                if other is not None:
                    return getattr(other, name)(*args, **kwargs)
            return method(self, *args, **kwargs)

        return call

    for name in _FORWARDED:
        setattr(cls, name, forwarding(name, getattr(cls, name)))
    return cls


@_reopened_in_a_forked_child
class ObstoreStore(GatheredAwaitableReads, Store):
    names = names("obstore+s3", aliases=[_PREFIX + s for s in _SCHEMES[1:]])
    #: a batch's requests run concurrently: the more of it per call, the more overlap
    preferred_fetch_bytes = 16 << 20
    preferred_store_bytes = 4 << 20  # (groups handed on to upload while more encode)

    def __init__(
        self,
        backend: Any,
        *,
        mode: str = "r",
        url: str = "",
        concurrency: int | None = None,
        root: str = "",
    ) -> None:
        """`backend`: an obstore store; `root`: where the store's keys are in it ("" or a
        path ending in "/"), so that stores rooted at different paths of one bucket share
        its client."""
        self.read_only = check_mode(mode) == "r"
        self.backend = backend
        self.root = root
        self.concurrency = concurrency or settings().io_concurrency
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {self.concurrency}")
        self._gate = InFlightLimit()  # (`concurrency` bounds the requests of all its calls at once)
        self._url = url
        self._policy = RetryPolicy.current()  # (retries of HTTP bodies cut short: `_fetch`)
        #: a plain HTTP server's: bodies cut short are retried here (`_fetch`)
        self._over_http = type(backend).__name__ == "HTTPStore"
        self._suffix_by_size = type(backend).__name__ in _NO_SUFFIX_RANGES
        #: how the process that unpickles this store opens it again, when a choice of backend
        #: made it (plain `s3://`: `s3_routing`), so a forked child can choose again
        self.reopen: Callable[[], Store] | None = None
        self._born = _forks  # (the forks before it was made: see `_in_this_process`)
        self._reopened: Store | None = None
        if url.split("://", 1)[0].removeprefix(_PREFIX) in ("http", "https"):
            self.writeable = False  # plain HTTP servers: no PUT, no listing
            self.listable = False

    def __reduce_ex__(self, protocol: Any) -> str | tuple[Any, ...]:
        """A store that a choice of backend made is unpickled by choosing again (in a child
        forked after its parent used obstore, that is fsspec); any other, as it is."""
        if self.reopen is not None:
            return (_call, (self.reopen,))
        return super().__reduce_ex__(protocol)

    def _in_this_process(self) -> Store | None:
        """The store this handle stands for in a child forked after its parent made obstore
        requests, opened again there through `reopen` (once); None where obstore still works
        here, or where the handle has no other way (an `obstore+` URL asked for obstore)."""
        if self.reopen is None or usable_here():
            self._born = _forks
            return None
        if self._reopened is None:
            self._reopened = self.reopen()
        return self._reopened

    @classmethod
    def matches_name(cls, name: str, format: str) -> bool:
        return name.startswith(_PREFIX) and name[len(_PREFIX) :] in _SCHEMES

    @classmethod
    def adapt(cls, obj: object, *, mode: str = "r") -> ObstoreStore | None:
        """An obstore store object (`obstore.store.S3Store(...)`, `LocalStore`, ...)."""
        module = sys.modules.get("obstore.store")
        kinds = tuple(getattr(module, n, None) for n in _BACKENDS)
        if not isinstance(obj, tuple(k for k in kinds if isinstance(k, type))):
            return None
        store = cls(obj, mode=mode)
        if type(obj).__name__ == "HTTPStore":  # plain HTTP servers: no PUT, no listing
            store.writeable = False
            store.listable = False
        if type(obj).__name__ == "LocalStore":  # folders outlive their last file there
            store._delimited = False
        return store

    @classmethod
    def from_url(
        cls, url: str, *, mode: str = "r", concurrency: int | None = None, **options: Any
    ) -> ObstoreStore:
        obstore = _obstore()
        target = url[len(_PREFIX) :] if url.startswith(_PREFIX) else url
        for alias, scheme in _SCHEME_ALIASES.items():  # (spellings obstore's parser refuses)
            if target.startswith(alias):
                target = scheme + target[len(alias) :]
        carried = carried_off_origin(target, options, os.environ)
        if carried:
            s3 = target.startswith("s3://")
            instead = "s3:// or fsspec+s3://" if s3 else "http(s):// or fsspec+http(s)://"
            raise StoreError(
                f"obstore would send {', '.join(carried)} to any other origin a redirect "
                f"leads to (its client follows redirects, and has no setting to stop that or "
                f"to drop them): open it as {instead}, which keep them on their origin",
                key=None,
                store=url,
                operation="open",
            )
        options = _client_options(options, RetryPolicy.current())
        client, root = _client_target(target.rstrip("/"))
        try:
            backend = _clients.get(obstore, client, options)
        except Exception as exc:  # obstore's configuration errors
            raise StoreError(f"obstore: {exc}", key=None, store=target, operation="open") from exc
        return cls(backend, mode=mode, url=url, concurrency=concurrency, root=root)

    @property
    def url(self) -> str:
        return self._url

    def location(self, key: str) -> str:
        """Where `key` is in the backend (its path under the store's root)."""
        return self.root + key

    def _folder(self, prefix: str) -> str | None:
        """The backend's listing prefix for `prefix` (a folder, or "" for the root)."""
        return (self.root + prefix).rstrip("/") or None

    def _error(self, exc: BaseException, key: str | None, operation: str) -> StoreError:
        detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        return StoreError(detail, key=key, store=self, operation=operation)

    def _gather(self, calls: Sequence[Callable[[], Awaitable[T]]]) -> list[T]:
        """Run every call concurrently, at most `concurrency` at a time, answers in order; the
        first failure cancels the rest."""
        if not calls:
            return []

        async def run() -> list[T]:
            return await gather_limited(calls, self.concurrency, gate=self._gate)

        return asyncio.run_coroutine_threadsafe(run(), _event_loop()).result()

    def reads_loop(self) -> asyncio.AbstractEventLoop:
        """Awaited reads (`async_reads`) run on the loop its synchronous calls run on."""
        return _event_loop()

    # -- readable --------------------------------------------------------------------------------
    async def _read(self, key: str, rng: Range | None, limit: int) -> Any:
        """One value or range, at most `limit` bytes of it held (`collect`)."""
        obstore = _obstore()
        if ranges.is_empty_read(rng):
            return b"" if await self._is_file(key) else None
        if isinstance(rng, SuffixRange) and self._suffix_by_size:
            return await self._suffix_by_size_of(key, rng.length, limit)
        options: dict[str, Any] = {}
        if isinstance(rng, SuffixRange):
            options["range"] = {"suffix": rng.length}
        elif isinstance(rng, ByteRange):
            options["range"] = (
                {"offset": rng.offset}
                if rng.length is None
                else (rng.offset, rng.offset + rng.length)
            )
        try:
            return await self._fetch(key, options or None, limit)
        except FileNotFoundError:
            return None
        except StoreError:
            raise
        except Exception as exc:
            if isinstance(exc, obstore.exceptions.NotFoundError):
                return None
            # a range starting at or past the end is refused rather than answered empty
            if isinstance(rng, ByteRange) and await self._size_at_most(key, rng.offset):
                return b""
            raise self._error(exc, key, "read") from exc

    async def _fetch(self, key: str, options: dict[str, Any] | None, limit: int) -> bytes:
        """One read, at most `limit` bytes held (`collect`; obstore's `get_range_async`
        would hold whatever the answer's `Content-Length` says). obstore checks a body
        against its length and fails when it is short; its S3, GCS and Azure clients then
        ask again, its HTTP client does not: the store does."""
        obstore = _obstore()

        async def once() -> bytes:
            result = await obstore.get_async(self.backend, self.root + key, options=options)
            try:
                return await collect(result, limit, key, self, "read")
            finally:
                del result

        if not self._over_http:
            return await once()
        return await self._policy.run(once, _body_fault)

    async def _suffix_by_size_of(self, key: str, length: int, limit: int) -> Any:
        """The last `length` bytes of `key` from a backend that answers no suffix range: its
        size and ETag first, then the range it ends with, if the ETag still matches (else
        again: a value replaced between the two requests must not be read half old, half
        new). Two round trips where a suffix range is one, as zarr-python's store makes."""
        obstore = _obstore()
        for _ in range(_SUFFIX_ATTEMPTS):
            try:
                meta = await obstore.head_async(self.backend, self.root + key)
            except Exception as exc:
                if isinstance(exc, (FileNotFoundError, obstore.exceptions.NotFoundError)):
                    return None
                raise self._error(exc, key, "read") from exc
            size = int(meta["size"])
            if size == 0:
                return b""
            options: dict[str, Any] = {"range": (max(0, size - length), size)}
            if meta.get("e_tag"):
                options["if_match"] = meta["e_tag"]
            try:
                return await self._fetch(key, options, limit)
            except StoreError:
                raise
            except Exception as exc:
                if isinstance(exc, obstore.exceptions.PreconditionError):
                    continue  # replaced meanwhile: read its new size
                if isinstance(exc, (FileNotFoundError, obstore.exceptions.NotFoundError)):
                    return None
                raise self._error(exc, key, "read") from exc
        raise StoreError(
            f"its end could not be read: it was replaced while being read, {_SUFFIX_ATTEMPTS} "
            f"times",
            key=key,
            store=self,
            operation="read",
        )

    async def _size_at_most(self, key: str, offset: int) -> bool:
        try:
            meta = await _obstore().head_async(self.backend, self.root + key)
        except Exception:
            return False
        return int(meta["size"]) <= offset

    async def _is_file(self, key: str) -> bool:
        obstore = _obstore()
        try:
            await obstore.head_async(self.backend, self.root + key)
        except FileNotFoundError:
            return False
        except Exception as exc:
            if isinstance(exc, obstore.exceptions.NotFoundError):
                return False
            raise self._error(exc, key, "read") from exc
        return True

    async def _size(self, key: str) -> int | None:
        """The object's size from a HEAD (None: absent), never from its body."""
        obstore = _obstore()
        try:
            meta = await obstore.head_async(self.backend, self.root + key)
        except FileNotFoundError:
            return None
        except Exception as exc:
            if isinstance(exc, obstore.exceptions.NotFoundError):
                return None
            raise self._error(exc, key, "read") from exc
        return int(meta["size"])

    def sizes(self, keys: Iterable[str]) -> dict[str, int]:
        """One HEAD per key, concurrently: a value is sized without being downloaded."""
        keys = [check_key(k) for k in keys]
        found = self._gather([partial(self._size, k) for k in keys])
        return {k: n for k, n in zip(keys, found) if n is not None}

    def get(self, key: str, byte_range: Range | None = None) -> bytes | None:
        check_key(key)
        limit = value_limit()  # (read here: the loop's thread does not share this context)
        value = _run(lambda: self._read(key, byte_range, limit))
        return None if value is None else bytes(value)

    def read_many(self, keys: Iterable[str]) -> dict[str, Any]:
        keys = [check_key(k) for k in keys]
        limit = value_limit()
        values = self._gather([partial(self._read, k, None, limit) for k in keys])
        return {k: v for k, v in zip(keys, values) if v is not None}

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes]:
        return {k: bytes(v) for k, v in self.read_many(keys).items()}

    def read_ranges(self, requests: Sequence[tuple[str, Range | None]]) -> list[Any]:
        for key, _ in requests:
            check_key(key)
        plan = ranges.plan(requests)
        limit = value_limit()
        return plan.answers(self._gather([partial(self._read, *r, limit) for r in plan.reads]))

    def get_ranges(self, requests: Sequence[tuple[str, Range | None]]) -> list[bytes | None]:
        return [None if v is None else bytes(v) for v in self.read_ranges(requests)]

    def exists(self, key: str) -> bool:
        check_key(key)
        return _run(lambda: self._is_file(key))

    # -- writeable -------------------------------------------------------------------------------
    async def _write(self, key: str, value: Any) -> None:
        try:
            await _obstore().put_async(self.backend, self.root + key, value)
        except Exception as exc:
            raise self._error(exc, key, "write") from exc

    def set(self, key: str, value: Any) -> None:
        self.set_many({key: value})

    def set_many(self, items: Mapping[str, Any]) -> None:
        """Each value is one PUT (atomic per key on object stores); all keys checked first."""
        self.require("write", "set keys")
        values = [(check_key(k), memoryview(v).tobytes()) for k, v in items.items()]
        self._gather([partial(self._write, *kv) for kv in values])

    # -- updates ---------------------------------------------------------------------------------
    @property
    def safe_updates(self) -> bool:  # type: ignore[override]  # depends on the backend
        """Conditional puts (`obstore_updates`) where the backend has them (S3, GCS, Azure,
        memory); obstore's `LocalStore` cannot update only an unchanged value: unguarded."""
        return obstore_updates.supported(self.backend)

    def update_many(self, keys: Sequence[str], compute: Update) -> None:
        if not self.safe_updates:
            super().update_many(keys, compute)
            return
        keys = [check_key(k) for k in keys]
        writes = obstore_updates.ConditionalWrites(self)
        optimistic_update(self, keys, compute, writes.read, writes.swap)

    def erase(self, key: str) -> None:
        self.erase_many([key])

    def erase_many(self, keys: Iterable[str]) -> None:
        self.require("write", "erase keys")
        keys = [check_key(k) for k in keys]

        async def erase(key: str) -> None:
            obstore = _obstore()
            try:
                await obstore.delete_async(self.backend, self.root + key)
            except FileNotFoundError:
                pass
            except Exception as exc:
                if not isinstance(exc, obstore.exceptions.NotFoundError):
                    raise self._error(exc, key, "erase") from exc

        self._gather([partial(erase, k) for k in keys])

    def erase_prefix(self, prefix: str) -> None:
        self.require("write", f"erase prefix {prefix!r}")
        self.erase_many(list(self.list_prefix(check_prefix(prefix))))

    # -- listable --------------------------------------------------------------------------------
    def list(self) -> Iterator[str]:
        return self.list_prefix("")

    def list_prefix(self, prefix: str) -> Iterator[str]:
        self.require("list", f"list keys under {prefix!r}")
        folder = prefix[: prefix.rfind("/") + 1]
        skip = len(self.root)

        limit = listing_limit()  # (read here: the loop's thread does not share this context)

        async def find() -> builtins.list[str]:
            out: builtins.list[str] = []
            try:
                async for batch in _obstore().list(self.backend, self._folder(folder)):
                    out.extend(meta["path"][skip:] for meta in batch)
                    if len(out) > limit:  # pages that never end: stop gathering them
                        break
            except Exception as exc:
                raise self._error(exc, prefix or None, "list") from exc
            if len(out) > limit:
                raise StoreError(
                    f"the listing gave more than the {limit} keys it may hold",
                    key=prefix or None,
                    store=self,
                    operation="list",
                )
            return out

        return iter(sorted(k for k in _run(find) if k.startswith(prefix) and _valid(k)))

    def is_empty(self, prefix: str) -> bool | None:
        """One listing request: the first page of keys under `prefix`, stopped at its first key."""
        if not self.listable:
            return None
        check_prefix(prefix)

        async def first() -> bool:
            stream = _obstore().list(self.backend, self._folder(prefix), chunk_size=1)
            async for batch in stream:
                if batch:
                    return False
            return True

        try:
            return _run(first)
        except Exception:  # (then the caller reads its keys, which say what is wrong)
            return None

    #: whether `list_dir` may trust a delimited listing: not over a local filesystem, where it
    #: shows the folders an erase left empty
    _delimited = True

    def diagnose(self, prefix: str = "") -> Absence | None:
        """What one listing of the root says: no such bucket, access denied, or nothing
        stored under the root."""
        if not self.listable:
            return None
        try:
            found: tuple[Iterable[str], Iterable[str]] = self.list_dir(check_prefix(prefix))
        except StoreError as exc:
            text = str(exc)
            if "NoSuchBucket" in text or "bucket does not exist" in text.lower():
                return Absence("missing", f"the bucket of {self.url} does not exist")
            if "AccessDenied" in text or "403" in text or "Forbidden" in text:
                return Absence("denied", f"access denied to {self.url}")
            return None
        if not any(True for _ in found[0]) and not any(True for _ in found[1]):
            return Absence("missing", f"nothing is stored under {self.url}")
        return None

    def list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        """One delimited listing (S3: ListObjectsV2 with '/'), not a walk of every key."""
        self.require("list", f"list {prefix!r}")
        check_prefix(prefix)
        if not self._delimited:
            return super().list_dir(prefix)

        async def ls() -> Any:
            try:
                return await _obstore().list_with_delimiter_async(
                    self.backend, self._folder(prefix)
                )
            except Exception as exc:
                raise self._error(exc, prefix or None, "list") from exc

        found = _run(ls)
        under = self.root + prefix
        keys = {m["path"][len(under) :] for m in found["objects"] if m["path"].startswith(under)}
        prefixes = {
            p.rstrip("/")[len(under) :] for p in found["common_prefixes"] if p.startswith(under)
        }
        return (
            sorted(k for k in keys if k and "/" not in k),
            sorted(p for p in prefixes if p and "/" not in p),
        )

    # -- identity --------------------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ObstoreStore):
            return NotImplemented
        same_place = self.backend is other.backend and self.root == other.root
        return same_place or (self._url == other._url and bool(self._url))

    def __hash__(self) -> int:
        return hash(self._url)

    def __repr__(self) -> str:
        return f"ObstoreStore({self._url!r})"


def _body_fault(exc: BaseException) -> bool:
    """Whether obstore failed reading an answer's body (cut short, or stalled)."""
    return "body error" in str(exc)


def _valid(key: str) -> bool:
    try:
        check_key(key)
    except ValueError:
        return False
    return True
