"""The rules every store speaking HTTP keeps: credentials never leave the origin the caller gave
them for, and no answer's body is held beyond what the read can use.

The caller's headers (and `Authorization`, `Proxy-Authorization` and `Cookie`, however they got
onto a request: a session's defaults, its cookie jar, an auth object) belong to the origin
(scheme, host, port) of the store's URL. A request redirected to another origin goes there
without them; a redirect from https to plain http, or to a scheme other than http(s), is
refused (`RedirectRefusedError`) rather than followed. The standard-library HTTP store applies
this to each hop itself; for fsspec's HTTP filesystem it is an aiohttp client middleware, which
aiohttp runs on every request of a redirect chain.

Bodies: a GET's answer is read up to the read's `value_limit()` (the chunk engine sets it from
the chunk's size); one that declares more is refused before it is read, one that runs on is
refused one block past the limit (`ValueTooLargeError`). The standard-library store reads
bodies itself; for aiohttp, a second middleware caps the answer's stream.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

from zarrkit.abc import value_limit
from zarrkit.errors import PluginLoadError

#: headers that carry credentials whoever set them; dropped on every other origin
SENSITIVE = frozenset({"authorization", "proxy-authorization", "cookie"})


class Refused(Exception):
    """Raised inside a client library's request (no key or store known there); the store
    turns it into `RedirectRefusedError` naming both."""


class TooLong(Exception):
    """An answer's body longer than the read's value limit, raised inside a client library's
    request; the store turns it into `ValueTooLargeError` naming the key and itself."""


Origin = tuple[str, str, int]


def origin(url: str) -> Origin:
    """(scheme, host, port) of a URL, the port filled in when left out; ValueError for a port
    that is not one."""
    parts = urlsplit(url)
    default = 443 if parts.scheme.lower() == "https" else 80
    return parts.scheme.lower(), (parts.hostname or "").lower(), parts.port or default


def refusal(source: str, target: str) -> str | None:
    """Why a redirect from `source` to `target` may not be followed, or None."""
    try:
        scheme = urlsplit(target).scheme.lower()
        origin(target)  # (a port that is not one)
        host = urlsplit(target).hostname
    except ValueError:
        scheme, host = "", None
    if scheme not in ("http", "https") or not host:
        return f"{source} redirects to {target!r}, which is not an http(s) URL"
    if urlsplit(source).scheme.lower() == "https" and scheme == "http":
        return f"{source} redirects to {target}: refusing to go from https to plain http"
    return None


def aiohttp_guard(
    root: str, caller_headers: Iterable[str], prefixes: tuple[str, ...] = ()
) -> Callable[[Any, Callable[[Any], Awaitable[Any]]], Awaitable[Any]]:
    """An aiohttp client middleware keeping the rule for a store rooted at `root`: on any
    other origin it strips `caller_headers`, the sensitive ones and those whose lower-cased
    names start with one of `prefixes` (S3's `x-amz-`: `s3_guard`), and from an https root
    it sends nothing in the clear. (aiohttp itself drops only the sensitive ones, and only on
    the hop that changes origin, and follows https -> http.)"""
    home = origin(root)
    strip = SENSITIVE | {name.lower() for name in caller_headers}

    async def guard(request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        url = str(request.url)
        if home[0] == "https" and request.url.scheme != "https":
            raise Refused(
                f"a redirect from {root} leads to {url}: refusing to go from https to plain http"
            )
        if origin(url) != home:
            for name in [
                n for n in request.headers if n.lower() in strip or n.lower().startswith(prefixes)
            ]:
                request.headers.popall(name, None)
        return await handler(request)

    return guard


def aiohttp_body_cap() -> Callable[[Any, Callable[[Any], Awaitable[Any]]], Awaitable[Any]]:
    """An aiohttp client middleware holding each GET's body to the read's value limit (read
    in the request's task, whose context is the caller's). It also answers a range asked of
    a server that ignores `Range` (a 200 with the whole value) with the range, as the
    standard-library store does: fsspec would hand the whole value on as if it were it."""

    async def cap(request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        response = await handler(request)
        if request.method != "GET":
            return response
        limit = value_limit()
        length = response.content_length
        if length is not None and length > limit:
            response.close()
            raise TooLong(
                f"the body from {request.url} ({length} bytes) is longer than the "
                f"{limit} bytes the read can hold"
            )
        asked = request.headers.get("Range") if response.status == 200 else None
        response.content = _CappedStream(response.content, limit, str(request.url), _window(asked))
        return response

    return cap


def _window(header: str | None) -> slice | None:
    """The part of a whole value a `Range: bytes=a-b | a- | -n` header asked for."""
    if not header or not header.startswith("bytes=") or "," in header:
        return None
    first, _, last = header[len("bytes=") :].partition("-")
    try:
        if not first:
            return slice(-int(last), None) if int(last) > 0 else slice(0, 0)
        return slice(int(first), int(last) + 1 if last else None)
    except ValueError:
        return None


class _CappedStream:
    """An aiohttp stream whose whole-body `read()` stops one block past `limit` bytes, and
    gives only `window` of the body when one is set."""

    def __init__(self, stream: Any, limit: int, url: str, window: slice | None) -> None:
        self._stream, self._limit, self._url, self._window = stream, limit, url, window

    async def read(self, n: int = -1) -> bytes:
        if n >= 0:
            some: bytes = await self._stream.read(n)
            return some
        blocks: list[bytes] = []
        held = 0
        while block := await self._stream.readany():
            held += len(block)
            if held > self._limit:
                raise TooLong(
                    f"the body from {self._url} is longer than the {self._limit} "
                    f"bytes the read can hold"
                )
            blocks.append(block)
        body = b"".join(blocks)
        return body if self._window is None else body[self._window]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def guarded_http_options(
    url: str, options: dict[str, Any], timeout: float | None = None
) -> dict[str, Any]:
    """fsspec HTTP `storage_options` with the guards added to the client's middlewares, and
    `timeout` (the `io_timeout` setting) as the client's connect and read timeouts unless the
    options give a timeout of their own: aiohttp's defaults let a stalled body hang for
    minutes."""
    import aiohttp

    if "middlewares" not in inspect.signature(aiohttp.ClientSession).parameters:
        raise PluginLoadError(
            f"fsspec's HTTP filesystem needs aiohttp >= 3.12 here (found "
            f"{aiohttp.__version__}): older versions cannot keep credentials "
            f"from following a redirect to another origin"
        )
    client = dict(options.get("client_kwargs") or {})
    if timeout is not None and "timeout" not in client:
        client["timeout"] = aiohttp.ClientTimeout(
            total=None, sock_connect=timeout, sock_read=timeout
        )
    caller = [*dict(options.get("headers") or {}), *dict(client.get("headers") or {})]
    # last, so it sees the request as it is sent, whatever the caller's middlewares added
    client["middlewares"] = (
        *client.get("middlewares", ()),
        aiohttp_body_cap(),
        aiohttp_guard(url, caller),
    )
    return {**options, "client_kwargs": client}
