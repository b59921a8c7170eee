"""A read-only store over plain HTTP(S), with nothing but the standard library:
`http://host/data.zarr` and `https://...` (for fsspec's HTTP filesystem: `fsspec+https://`).

A key is the URL `<root>/<key>` (percent-encoded); `get` is a GET, with a `Range` header for a
byte range (a server that ignores it and sends everything is cut locally), and `exists` a HEAD.
404 and 410 mean "no such key"; 5xx and 429 answers, connection failures, timeouts (no bytes
for `timeout` seconds: the `io_timeout` setting unless given) and bodies shorter than their
Content-Length are retried (`retries` times: the `io_retries` setting unless given, backing
off exponentially from `backoff` seconds with full jitter) and then raise `StoreError` naming
the key and the operation, never read as "missing" and never returned short.

Redirects are followed at most `max_redirects` times (10 by default; more is a `StoreError`,
which also ends a redirect loop). The caller's `headers` belong to the origin (scheme, host,
port) of the store's URL: once a redirect leads to another origin, none of them is sent again
for that request, so `Authorization`, `Proxy-Authorization`, `Cookie` or an API-key header of
any name never reach a host the caller did not name. A redirect from https to http is refused
(`RedirectRefusedError`, naming both URLs) rather than sending the request in the clear; see
`http_rules`, which holds the rule for every store that follows redirects.

A value's body is read in blocks and never beyond what the caller can use: the value limit of
the read (`zarrkit.abc.value_limit()`, which the chunk engine sets from the chunk's size) for
a whole value, the asked length for a range. A body that says or turns out to be longer is a
`StoreError` before it is held, so an endless body costs one block of memory, not all of it.

HTTP has no way to list a folder, so the store is not listable: opening an array or group by
its path works, and listing a group's members raises `CapabilityError` unless the hierarchy
carries consolidated metadata. Batches (`get_many`, `get_ranges`) run in a small thread pool,
nearby ranges of one key merged into one request; each thread keeps its connections alive.
"""

from __future__ import annotations

import http.client
import random
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar
from urllib.parse import quote, urljoin, urlsplit

from zarrkit.abc import (
    ByteRange,
    Range,
    Store,
    StoreCapabilities,
    SuffixRange,
    after_fork_in_child,
    check_key,
    check_mode,
    lock,
    names,
    settings,
    value_limit,
)
from zarrkit.errors import RedirectRefusedError, StoreError, ValueTooLargeError
from zarrkit.helpers import NETWORK_MAX_BLOCK, NETWORK_MAX_GAP, is_empty_read, plan_reads
from zarrkit.plugins.stores.remote.http_rules import Origin, origin, refusal

T = TypeVar("T")

_MISSING_STATUS = (404, 410)
_REDIRECTS = (301, 302, 303, 307, 308)
#: redirects followed per request by default; browsers allow about 20, curl 50, requests 30
MAX_REDIRECTS = 10
#: bytes read of an answer whose body is not used (a redirect, an error); more is not read
_DISCARD = 64 * 1024
_BLOCK = 1 << 20


class _Retry(Exception):
    """A failure worth another attempt (connection trouble, a 5xx or 429 answer)."""


class _TooLong(Exception):
    """A body longer than the `limit` the read may hold (`size` when the answer said so)."""

    def __init__(self, size: int | None, limit: int) -> None:
        self.size, self.limit = size, limit


class HttpStore(Store):
    names = names("http", aliases=["https"])
    capabilities = StoreCapabilities(writeable=False, listable=False, read_only=True)

    def __init__(
        self,
        url: str,
        *,
        headers: dict[str, str] | None = None,
        timeout: float | None = None,
        retries: int | None = None,
        backoff: float = 0.2,
        max_workers: int = 8,
        max_redirects: int = MAX_REDIRECTS,
        mode: str = "r",
    ) -> None:
        check_mode(mode)
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"an HTTP store URL looks like https://host/path, got {url!r}")
        if parts.query or parts.fragment:
            raise ValueError(f"an HTTP store URL has no query or fragment: {url!r}")
        if max_redirects < 0:
            raise ValueError(f"max_redirects must be >= 0, got {max_redirects}")
        self.root = url.rstrip("/")
        self.origin = origin(self.root)  # (a ValueError for a bad port)
        self.headers = dict(headers or {})
        self.max_redirects = max_redirects
        current = settings()
        self.timeout = current.io_timeout if timeout is None else timeout
        self.retries = current.io_retries if retries is None else retries
        if self.retries < 0:
            raise ValueError(f"retries must be >= 0, got {self.retries}")
        self.backoff = backoff
        self.max_workers = max_workers
        self._start_threads()

    def _start_threads(self) -> None:
        """No connections and no pool yet: each is made on first use, in this process (a
        forked child starts here too, as its parent's threads and sockets are the parent's)."""
        self._local = threading.local()
        #: every thread's kept-alive connections, closed by `close()` or when the store is
        #: collected (not left to the garbage collector socket by socket, which warns)
        self._kept: list[dict[Origin, http.client.HTTPConnection]] = []
        inherited = self.__dict__.get("_closer")
        if inherited is not None:  # a forked child's: those sockets are its parent's to close
            inherited.detach()
        self._closer = weakref.finalize(self, _close_kept, self._kept)
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = lock()
        after_fork_in_child(self, HttpStore._start_threads)

    def __getstate__(self) -> dict[str, Any]:
        """Pickled as its settings: no connection, pool or lock."""
        return {
            k: v
            for k, v in self.__dict__.items()
            if k not in ("_local", "_kept", "_closer", "_pool", "_pool_lock")
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._start_threads()

    @classmethod
    def from_url(cls, url: str, *, mode: str = "r", **options: Any) -> HttpStore:
        return cls(url, mode=mode, **options)

    @property
    def url(self) -> str:
        return self.root

    def close(self) -> None:
        with self._pool_lock:
            if self._pool is not None:
                self._pool.shutdown(wait=True)
                self._pool = None
        _close_kept(self._kept)

    # -- requests ------------------------------------------------------------------------------
    def _key_url(self, key: str) -> str:
        return f"{self.root}/{quote(check_key(key), safe='/')}"

    def _connection(self, where: Origin) -> http.client.HTTPConnection:
        """This thread's kept-alive connection to an origin. Connections are made to the host
        and port the origin rule judged, never to a URL's raw netloc (where user info such as
        `other@host` could name one host to the rule and another to the socket)."""
        connections: dict[Origin, http.client.HTTPConnection] | None
        connections = self._local.__dict__.get("connections")
        if connections is None:
            connections = self._local.connections = {}
            self._kept.append(connections)
        conn = connections.get(where)
        if conn is None:
            scheme, host, port = where
            cls = http.client.HTTPSConnection if scheme == "https" else http.client.HTTPConnection
            conn = connections[where] = cls(host, port, timeout=self.timeout)
        return conn

    def _drop_connection(
        self, where: Origin, response: http.client.HTTPResponse | None = None
    ) -> None:
        """Close this thread's connection to an origin, and the answer being read on it: an
        answer that ends with its connection (no length, or `Connection: close`) holds the
        socket itself, which would otherwise stay open for as long as anything (a kept
        error's traceback) refers to the answer."""
        if response is not None:
            response.close()
        conn = self._local.__dict__.get("connections", {}).pop(where, None)
        if conn is not None:
            conn.close()

    def _request(
        self, method: str, url: str, headers: dict[str, str], key: str, body: _Body
    ) -> tuple[int, bytes, dict[str, str]]:
        """(status, body, headers), following redirects and retrying transient failures."""
        for attempt in range(self.retries + 1):
            try:
                return self._follow(method, url, headers, key, body)
            except _Retry as exc:
                if attempt == self.retries:
                    raise StoreError(
                        f"{exc} (after {self.retries + 1} attempts)",
                        key=key,
                        store=self,
                        operation="read",
                    ) from exc.__cause__
                # full jitter: clients throttled together do not come back together
                time.sleep(random.uniform(0.0, self.backoff * 2**attempt))
        raise AssertionError("unreachable")

    def _follow(
        self, method: str, url: str, headers: dict[str, str], key: str, body: _Body
    ) -> tuple[int, bytes, dict[str, str]]:
        """One request and its redirects. The caller's headers go only to the store's own
        origin: after a hop elsewhere they are left off for the rest of the chain, even if
        it comes back (the other origin chose where it leads)."""
        trusted = True
        for _ in range(self.max_redirects + 1):
            trusted = trusted and origin(url) == self.origin
            sent = {**self.headers, **headers} if trusted else dict(headers)
            try:
                status, data, answer = self._once(method, url, sent, body)
            except _TooLong as exc:
                raise self._too_long(exc, url, key) from None
            if status in _REDIRECTS and "location" in answer:
                url = self._redirect(url, answer["location"], key)
                continue
            if status >= 500 or status == 429:
                raise _Retry(f"HTTP {status} from {url}")
            return status, data, answer
        raise StoreError(
            f"more than {self.max_redirects} redirects from {self._key_url(key)} (last to {url})",
            key=key,
            store=self,
            operation="read",
        )

    def _redirect(self, url: str, location: str, key: str) -> str:
        try:
            target = urljoin(url, location)
        except ValueError:  # e.g. an unclosed IPv6 bracket
            target = location
        reason = refusal(url, target)
        if reason is not None:
            raise RedirectRefusedError(reason, key=key, store=self, operation="read")
        return target

    def _too_long(self, exc: _TooLong, url: str, key: str) -> StoreError:
        said = f" ({exc.size} bytes)" if exc.size is not None else ""
        return ValueTooLargeError(
            f"the body from {url}{said} is longer than the {exc.limit} bytes the read can hold",
            key=key,
            store=self,
            operation="read",
        )

    def _once(
        self, method: str, url: str, headers: dict[str, str], body: _Body
    ) -> tuple[int, bytes, dict[str, str]]:
        parts = urlsplit(url)
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        where = origin(url)
        conn = self._connection(where)
        response: http.client.HTTPResponse | None = None
        try:
            conn.request(method, target or "/", headers=headers)
            response = conn.getresponse()
            data, whole = _read_body(response, *body.bound(response.status))
        except _TooLong:
            self._drop_connection(where, response)
            raise
        except (OSError, http.client.HTTPException) as exc:
            self._drop_connection(where, response)
            raise _Retry(f"{type(exc).__name__}: {exc}") from exc
        answer = {k.lower(): v for k, v in response.getheaders()}
        if response.will_close or not whole:
            self._drop_connection(where, response)
        return response.status, data, answer

    # -- readable --------------------------------------------------------------------------------
    def get(self, key: str, byte_range: Range | None = None) -> bytes | None:
        return self._get(key, byte_range, value_limit())

    def _get(self, key: str, byte_range: Range | None, limit: int) -> bytes | None:
        url = self._key_url(key)
        if is_empty_read(byte_range):
            return b"" if self._head(key, url) else None
        status, body, answer = self._request(
            "GET", url, _range_header(byte_range), key, _Body.of(byte_range, limit)
        )
        if status in _MISSING_STATUS:
            return None
        if status == 200:  # the whole value: a server may ignore Range
            return body if byte_range is None else body[byte_range.slice(len(body))]
        if status == 206 and byte_range is not None:
            return _partial(body, answer, byte_range, key, self)
        if status == 416 and isinstance(byte_range, ByteRange):  # starts past the end
            return b""
        raise StoreError(
            f"unexpected HTTP {status} from {url}", key=key, store=self, operation="read"
        )

    def _head(self, key: str, url: str) -> bool:
        status, _, _ = self._request("HEAD", url, {}, key, _Body(0, 0, 0))
        if status in _MISSING_STATUS:
            return False
        if 200 <= status < 300:
            return True
        raise StoreError(
            f"unexpected HTTP {status} from {url}", key=key, store=self, operation="read"
        )

    def exists(self, key: str) -> bool:
        return self._head(key, self._key_url(key))

    def _size(self, key: str) -> int | None:
        """The value's size from a HEAD's Content-Length (None: absent); a server that sends
        none is asked for the value itself, bounded as any read is."""
        url = self._key_url(key)
        status, _, answer = self._request("HEAD", url, {}, key, _Body(0, 0, 0))
        if status in _MISSING_STATUS:
            return None
        declared = {k.lower(): v for k, v in answer.items()}.get("content-length", "")
        if 200 <= status < 300 and declared.isdigit():
            return int(declared)
        value = self.get(key)
        return None if value is None else len(value)

    def sizes(self, keys: Iterable[str]) -> dict[str, int]:
        """One HEAD per key, on the store's threads: values are sized, not downloaded."""
        keys = [check_key(k) for k in keys]
        found = self._map(self._size, keys)
        return {k: n for k, n in zip(keys, found) if n is not None}

    def _map(self, work: Callable[[T], Any], items: Sequence[T]) -> list[Any]:
        if len(items) <= 1:
            return [work(item) for item in items]
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.max_workers, thread_name_prefix="zarrkit-http")
            pool = self._pool
        return list(pool.map(work, items))

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes]:
        keys = [check_key(k) for k in keys]
        limit = value_limit()  # the pool's threads do not share this one's context
        values = self._map(lambda k: self._get(k, None, limit), keys)
        return {k: v for k, v in zip(keys, values) if v is not None}

    def get_ranges(self, requests: Sequence[tuple[str, Range | None]]) -> list[bytes | None]:
        for key, _ in requests:
            check_key(key)
        plan = plan_reads(requests, max_gap=NETWORK_MAX_GAP, max_block=NETWORK_MAX_BLOCK)
        limit = value_limit()
        return plan.answers(self._map(lambda r: self._get(*r, limit), plan.reads))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, HttpStore):
            return NotImplemented
        return self.root == other.root

    def __hash__(self) -> int:
        return hash(self.root)

    def __repr__(self) -> str:
        return f"HttpStore({self.root!r})"


class _Body:
    """How much of an answer's body a read can use. A 200 answer is the whole value: up to
    `whole` bytes (more is an error), or, when a bounded range was asked and the server
    ignored it, the first `cut` bytes (read that far and no further). A 206 answer is the
    range: up to `part` bytes."""

    __slots__ = ("cut", "part", "whole")

    def __init__(self, whole: int, cut: int | None, part: int) -> None:
        self.whole, self.cut, self.part = whole, cut, part

    @classmethod
    def of(cls, rng: Range | None, limit: int) -> _Body:
        if rng is None or rng.length is None:
            return cls(limit, None, limit)
        cut = rng.offset + rng.length if isinstance(rng, ByteRange) else None
        return cls(limit, cut, min(limit, rng.length))

    def bound(self, status: int) -> tuple[int, bool]:
        """(bytes to read at most, whether to stop there quietly rather than refuse more)
        for an answer of `status`: a body that is not the value is only drained a little."""
        if status == 200:
            return (self.cut, True) if self.cut is not None else (self.whole, False)
        if status == 206:
            return self.part, False
        return _DISCARD, True


def _read_body(response: http.client.HTTPResponse, limit: int, cut: bool) -> tuple[bytes, bool]:
    """At most `limit` bytes of the body, and whether that was all of it. Over the limit:
    `_TooLong`, unless `cut` (then the first `limit` bytes; the connection must be dropped)."""
    length = response.length  # Content-Length, None when chunked or ended by a close
    if length is not None and length > limit and not cut:
        raise _TooLong(length, limit)
    if length is not None and length <= limit:
        return response.read(), True
    blocks: list[bytes] = []
    held = 0
    while held <= limit:
        block = response.read(min(_BLOCK, limit + 1 - held))
        if not block:
            if length is not None and held < length:  # (http.client returns it short here)
                raise http.client.IncompleteRead(b"".join(blocks), length - held)
            return b"".join(blocks), True
        blocks.append(block)
        held += len(block)
    if not cut:
        raise _TooLong(None, limit)
    return b"".join(blocks)[:limit], False


def _range_header(rng: Range | None) -> dict[str, str]:
    if rng is None:
        return {}
    if isinstance(rng, SuffixRange):
        return {"Range": f"bytes=-{rng.length}"}
    end = "" if rng.length is None else str(rng.offset + rng.length - 1)
    return {"Range": f"bytes={rng.offset}-{end}"}


def _partial(body: bytes, answer: dict[str, str], rng: Range, key: str, store: Store) -> bytes:
    """A 206 answer's body, checked against what was asked (a server may send less or more)."""
    content_range = answer.get("content-range", "")
    try:
        unit, _, spec = content_range.partition(" ")
        span, _, _total = spec.partition("/")
        first, _, last = span.partition("-")
        start, stop = int(first), int(last) + 1
        if unit != "bytes" or stop - start != len(body):
            raise ValueError
    except ValueError:
        raise StoreError(
            f"bad Content-Range {content_range!r} in a 206 answer",
            key=key,
            store=store,
            operation="read",
        ) from None
    if isinstance(rng, SuffixRange):
        return body
    if start != rng.offset:
        raise StoreError(
            f"asked for bytes from {rng.offset}, got {content_range!r}",
            key=key,
            store=store,
            operation="read",
        )
    return body if rng.length is None else body[: rng.length]


def _close_kept(kept: list[dict[Origin, http.client.HTTPConnection]]) -> None:
    """Close every thread's kept connections; each thread's table stays, empty, for reuse."""
    for connections in kept:
        for conn in list(connections.values()):
            conn.close()
        connections.clear()
