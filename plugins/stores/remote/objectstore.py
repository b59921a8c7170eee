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
`io_concurrency` setting); nearby ranges of one key are merged first (`plan_reads`), as in
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

Bodies are held only up to the read's value limit (`zarrkit.abc.value_limit()`, which the
chunk engine sets from the chunk's size): obstore would allocate the length an answer declares
in one piece (a `Content-Length` of 2**62 aborts the process) and believes a length that
disagrees with the range it answers, so every GET is sized from its answer's headers first and
refused there when it declares more, and its body is then read in bounded pieces and refused
one piece past what it declared (`obstore_bodies.collect`, `ValueTooLargeError`).

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

import os
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import replace
from functools import wraps
from typing import Any, TypeVar

from zarrkit.abc import Store, names
from zarrkit.errors import StoreError
from zarrkit.plugins.stores.remote import obstore_loop
from zarrkit.plugins.stores.remote.object_store import ObjectStoreBase
from zarrkit.plugins.stores.remote.obstore_loop import usable_here
from zarrkit.plugins.stores.remote.obstore_objects import ObstoreObjects
from zarrkit.plugins.stores.remote.obstore_objects import obstore_module as _obstore
from zarrkit.plugins.stores.remote.retrying import RetryPolicy

__all__ = ["ObstoreStore", "carried_off_origin", "usable_here"]

T = TypeVar("T")

_PREFIX = "obstore+"
_SCHEMES = ("s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "http", "https")
#: obstore's store classes, which `adapt` takes as they are
_BACKENDS = ("S3Store", "GCSStore", "AzureStore", "HTTPStore", "LocalStore", "MemoryStore")
#: schemes obstore knows by another name
_SCHEME_ALIASES = {"s3a://": "s3://", "gcs://": "gs://"}
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


def _call(make: Callable[[], Store]) -> Store:
    """(unpickling a store that `reopen` makes)"""
    return make()


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
            if self._born != obstore_loop.forks():
                other = self._in_this_process()
                if other is not None:
                    return getattr(other, name)(*args, **kwargs)
            return method(self, *args, **kwargs)

        return call

    for name in _FORWARDED:
        setattr(cls, name, forwarding(name, getattr(cls, name)))
    return cls


@_reopened_in_a_forked_child
class ObstoreStore(ObjectStoreBase):
    """A store over an obstore store (see the module's docstring); what it reads and writes,
    and how, is `ObjectStoreBase`'s, over obstore's primitives (`ObstoreObjects`)."""

    names = names("obstore+s3", aliases=[_PREFIX + s for s in _SCHEMES[1:]])

    def __init__(
        self,
        backend: Any,
        *,
        mode: str = "r",
        concurrency: int | None = None,
        url: str = "",
        root: str = "",
    ) -> None:
        """`backend`: an obstore store; `root`: where the store's keys are in it ("" or a
        path ending in "/"), so that stores rooted at different paths of one bucket share
        its client."""
        self.backend = backend
        self.root = root
        self._objects: ObstoreObjects = ObstoreObjects(backend, root)
        self._open(self._objects, mode, concurrency or None)
        self._url = url
        #: how the process that unpickles this store opens it again, when a choice of backend
        #: made it (plain `s3://`: `s3_routing`), so a forked child can choose again
        self.reopen: Callable[[], Store] | None = None
        self._born = obstore_loop.forks()  # (the forks before it: see `_in_this_process`)
        self._reopened: Store | None = None
        over_http = url.split("://", 1)[0].removeprefix(_PREFIX) in ("http", "https")
        if over_http or type(backend).__name__ == "HTTPStore":
            # plain HTTP servers: no PUT, no listing
            self.capabilities = replace(self.capabilities, writeable=False, listable=False)

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
            self._born = obstore_loop.forks()
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
        return cls(obj, mode=mode)

    @classmethod
    def from_url(
        cls, url: str, *, mode: str = "r", concurrency: int | None = None, **options: Any
    ) -> ObstoreStore:
        target = url.removeprefix(_PREFIX)
        obstore = _obstore()
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
