"""A read-only store over plain HTTP(S), with nothing but the standard library:
`http://host/data.zarr` and `https://...` (for fsspec's HTTP filesystem: `fsspec+https://`).

A key is the URL `<root>/<key>` (percent-encoded); `get` is a GET, with a `Range` header for a
byte range (a server that ignores it and sends everything is cut locally), and `exists` a HEAD.
404 and 410 mean "no such key"; 5xx answers and connection failures are retried (`retries`
times, backing off) and then raise `StoreError` naming the key, never read as "missing".

HTTP has no way to list a folder, so the store is not listable: opening an array or group by
its path works, and listing a group's members raises `CapabilityError` unless the hierarchy
carries consolidated metadata. Batches (`get_many`, `get_ranges`) run in a small thread pool,
nearby ranges of one key merged into one request; each thread keeps its connections alive.
"""

from __future__ import annotations

import http.client
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Iterable, Sequence, TypeVar
from urllib.parse import quote, urljoin, urlsplit

from zarrkit import forksafe
from zarrkit.errors import StoreError
from zarrkit.names import names
from zarrkit.store import ByteRange, Range, Store, SuffixRange, check_key, check_mode

from . import ranges

T = TypeVar("T")

_MISSING_STATUS = (404, 410)
_REDIRECTS = (301, 302, 303, 307, 308)
_MAX_REDIRECTS = 5


class _Retry(Exception):
    """A failure worth another attempt (connection trouble, a 5xx or 429 answer)."""


class HttpStore(Store):
    names = names("http", aliases=["https"])
    writeable = False
    listable = False

    def __init__(self, url: str, *, headers: dict[str, str] | None = None, timeout: float = 30.0,
                 retries: int = 3, backoff: float = 0.2, max_workers: int = 8,
                 mode: str = "r") -> None:
        check_mode(mode)
        self.read_only = True
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"an HTTP store URL looks like https://host/path, got {url!r}")
        if parts.query or parts.fragment:
            raise ValueError(f"an HTTP store URL has no query or fragment: {url!r}")
        self.root = url.rstrip("/")
        self.headers = dict(headers or {})
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.max_workers = max_workers
        self._start_threads()

    def _start_threads(self) -> None:
        """No connections and no pool yet: each is made on first use, in this process (a
        forked child starts here too, as its parent's threads and sockets are the parent's)."""
        self._local = threading.local()
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = forksafe.lock()
        forksafe.after_fork_in_child(self, HttpStore._start_threads)

    def __getstate__(self) -> dict[str, Any]:
        """Pickled as its settings: no connection, pool or lock."""
        return {k: v for k, v in self.__dict__.items()
                if k not in ("_local", "_pool", "_pool_lock")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._start_threads()

    @classmethod
    def from_url(cls, url: str, *, mode: str = "r", **options: Any) -> "HttpStore":
        return cls(url, mode=mode, **options)

    @property
    def url(self) -> str:
        return self.root

    def close(self) -> None:
        with self._pool_lock:
            if self._pool is not None:
                self._pool.shutdown(wait=True)
                self._pool = None

    # -- requests ------------------------------------------------------------------------------
    def _key_url(self, key: str) -> str:
        return f"{self.root}/{quote(check_key(key), safe='/')}"

    def _connection(self, scheme: str, netloc: str) -> http.client.HTTPConnection:
        """This thread's kept-alive connection to `netloc`."""
        connections = self._local.__dict__.setdefault("connections", {})
        conn = connections.get((scheme, netloc))
        if conn is None:
            cls = http.client.HTTPSConnection if scheme == "https" else http.client.HTTPConnection
            conn = connections[(scheme, netloc)] = cls(netloc, timeout=self.timeout)
        return conn

    def _drop_connection(self, scheme: str, netloc: str) -> None:
        conn = self._local.__dict__.get("connections", {}).pop((scheme, netloc), None)
        if conn is not None:
            conn.close()

    def _request(self, method: str, url: str, headers: dict[str, str],
                 key: str) -> tuple[int, bytes, dict[str, str]]:
        """(status, body, headers), following redirects and retrying transient failures."""
        for attempt in range(self.retries + 1):
            try:
                return self._follow(method, url, headers, key)
            except _Retry as exc:
                if attempt == self.retries:
                    raise StoreError(f"{exc} (after {self.retries + 1} attempts)", key=key,
                                     store=self, operation="read") from exc.__cause__
                time.sleep(self.backoff * (2 ** attempt))
        raise AssertionError("unreachable")

    def _follow(self, method: str, url: str, headers: dict[str, str],
                key: str) -> tuple[int, bytes, dict[str, str]]:
        for _ in range(_MAX_REDIRECTS + 1):
            status, body, answer = self._once(method, url, headers)
            if status in _REDIRECTS and "location" in answer:
                url = urljoin(url, answer["location"])
                continue
            if status >= 500 or status == 429:
                raise _Retry(f"HTTP {status} from {url}")
            return status, body, answer
        raise StoreError(f"more than {_MAX_REDIRECTS} redirects", key=key, store=self,
                         operation="read")

    def _once(self, method: str, url: str, headers: dict[str, str]) -> tuple[int, bytes, dict[str, str]]:
        parts = urlsplit(url)
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        conn = self._connection(parts.scheme, parts.netloc)
        try:
            conn.request(method, target or "/", headers={**self.headers, **headers})
            response = conn.getresponse()
            body = response.read()
        except (OSError, http.client.HTTPException) as exc:
            self._drop_connection(parts.scheme, parts.netloc)
            raise _Retry(f"{type(exc).__name__}: {exc}") from exc
        answer = {k.lower(): v for k, v in response.getheaders()}
        if response.will_close:
            self._drop_connection(parts.scheme, parts.netloc)
        return response.status, body, answer

    # -- readable --------------------------------------------------------------------------------
    def get(self, key: str, byte_range: Range | None = None) -> bytes | None:
        url = self._key_url(key)
        if ranges.is_empty_read(byte_range):
            return b"" if self._head(key, url) else None
        status, body, answer = self._request("GET", url, _range_header(byte_range), key)
        if status in _MISSING_STATUS:
            return None
        if status == 200:  # the whole value: a server may ignore Range
            return body if byte_range is None else body[byte_range.slice(len(body))]
        if status == 206 and byte_range is not None:
            return _partial(body, answer, byte_range, key, self)
        if status == 416 and isinstance(byte_range, ByteRange):  # starts past the end
            return b""
        raise StoreError(f"unexpected HTTP {status} from {url}", key=key, store=self,
                         operation="read")

    def _head(self, key: str, url: str) -> bool:
        status, _, _ = self._request("HEAD", url, {}, key)
        if status in _MISSING_STATUS:
            return False
        if 200 <= status < 300:
            return True
        raise StoreError(f"unexpected HTTP {status} from {url}", key=key, store=self,
                         operation="read")

    def exists(self, key: str) -> bool:
        return self._head(key, self._key_url(key))

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
        values = self._map(lambda k: self.get(k), keys)
        return {k: v for k, v in zip(keys, values) if v is not None}

    def get_ranges(self, requests: Sequence[tuple[str, Range | None]]) -> list[bytes | None]:
        for key, _ in requests:
            check_key(key)
        plan = ranges.plan(requests)
        return plan.answers(self._map(lambda r: self.get(*r), plan.reads))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, HttpStore):
            return NotImplemented
        return self.root == other.root

    def __hash__(self) -> int:
        return hash(self.root)

    def __repr__(self) -> str:
        return f"HttpStore({self.root!r})"


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
        span, _, total = spec.partition("/")
        first, _, last = span.partition("-")
        start, stop = int(first), int(last) + 1
        if unit != "bytes" or stop - start != len(body):
            raise ValueError
    except ValueError:
        raise StoreError(f"bad Content-Range {content_range!r} in a 206 answer", key=key,
                         store=store, operation="read") from None
    if isinstance(rng, SuffixRange):
        return body
    if start != rng.offset:
        raise StoreError(f"asked for bytes from {rng.offset}, got {content_range!r}", key=key,
                         store=store, operation="read")
    return body if rng.length is None else body[:rng.length]
