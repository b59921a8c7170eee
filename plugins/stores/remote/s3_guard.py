"""Credentials of s3fs's requests stay on the origin they were signed for (`http_rules`).

botocore signs an S3 request for one host; aiobotocore sends it with aiohttp, which follows a
redirect to any other origin and drops only `Authorization` there: the session token
(`x-amz-security-token`) and the keys of server-side encryption with customer keys
(`x-amz-server-side-encryption-customer-key`, ...) went with it. `GuardedSession`, the HTTP
session the fsspec store gives botocore (`config_kwargs["http_session_cls"]`, unless the
options choose one), runs `http_rules.aiohttp_guard` on every request of a redirect chain:
on an origin other than the first request's, every `x-amz-` header, `Authorization`,
`Proxy-Authorization` and `Cookie` are dropped, and from https nothing goes on in plain http.
"""

from __future__ import annotations

from typing import Any

from aiobotocore.httpsession import AIOHTTPSession  # type: ignore[import-untyped]

from zarrkit.plugins.stores.remote.http_rules import aiohttp_guard

#: the headers S3 credentials travel in, besides `http_rules.SENSITIVE`: all of S3's own
S3_PREFIXES = ("x-amz-",)


class GuardedSession(AIOHTTPSession):  # type: ignore[misc]  # (aiobotocore has no stubs)
    """aiobotocore's aiohttp session, each request's redirects guarded (module doc)."""

    async def _get_session(self, proxy_url: Any) -> Any:
        return _Guarded(await super()._get_session(proxy_url))


class _Guarded:
    """An aiohttp session whose `request` adds the guard for the request's own origin."""

    __slots__ = ("_session",)

    def __init__(self, session: Any) -> None:
        self._session = session

    def request(self, method: str, url: Any, **kwargs: Any) -> Any:
        guard = aiohttp_guard(str(url), (), prefixes=S3_PREFIXES)
        return self._session.request(method, url, middlewares=(guard,), **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)
