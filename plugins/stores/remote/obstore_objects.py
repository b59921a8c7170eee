"""The primitives of an obstore store (`object_backend.ObjectBackend`) for `ObstoreStore`: each
one obstore request on the process's obstore loop (`obstore_loop`), every body held only up to
the read's value limit (`obstore_bodies.collect`), conditional puts where the backend has them
(`obstore_updates`).
"""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from zarrkit.abc import ByteRange, Diagnosis, Range, SuffixRange
from zarrkit.errors import PluginLoadError
from zarrkit.plugins.stores.remote import obstore_loop, obstore_updates
from zarrkit.plugins.stores.remote.object_backend import Listing, ObjectHead
from zarrkit.plugins.stores.remote.obstore_bodies import collect

T = TypeVar("T")

#: obstore's store classes whose backends answer no suffix range (`bytes=-n`): Azure's API has
#: none, and obstore refuses to ask
_NO_SUFFIX_RANGES = frozenset({"AzureStore"})


def obstore_module() -> Any:
    try:
        import obstore
    except ImportError as exc:
        raise PluginLoadError(
            "the obstore store needs the 'obstore' package: pip install 'zarrkit[obstore]'"
        ) from exc
    return obstore


class ObstoreObjects:
    """`ObjectBackend` over `backend` (an obstore store), its keys under `root` ("" or a path
    ending in "/")."""

    def __init__(self, backend: Any, root: str) -> None:
        self.backend = backend
        self.root = root
        kind = type(backend).__name__
        self.suffix_reads = kind not in _NO_SUFFIX_RANGES
        #: a delimited listing of a local filesystem shows the folders an erase left empty
        self.delimited = kind != "LocalStore"
        self.conditional_writes = obstore_updates.supported(backend)
        #: a plain HTTP server's: bodies cut short are retried by the store (obstore's S3,
        #: GCS and Azure clients ask again themselves)
        self._over_http = kind == "HTTPStore"

    def loop(self) -> asyncio.AbstractEventLoop:
        """The process's obstore loop, the one its synchronous calls run on too."""
        return obstore_loop.event_loop()

    def run(self, make: Callable[[], Awaitable[T]]) -> T:
        return obstore_loop.run(make)

    def is_missing(self, exc: BaseException) -> bool:
        return isinstance(exc, FileNotFoundError | obstore_module().exceptions.NotFoundError)

    def is_body_fault(self, exc: BaseException) -> bool:
        """Whether obstore failed reading an HTTP answer's body (cut short, or stalled)."""
        return self._over_http and "body error" in str(exc)

    def _folder(self, folder: str) -> str | None:
        """The backend's listing prefix for `folder` (a folder, or "" for the root)."""
        return (self.root + folder).rstrip("/") or None

    # -- reads ---------------------------------------------------------------------------------
    async def _get(self, key: str, options: dict[str, Any] | None, limit: int) -> bytes:
        """One read, at most `limit` bytes held (`collect`; obstore's `get_range_async`
        would hold whatever the answer's `Content-Length` says)."""
        result = await obstore_module().get_async(self.backend, self.root + key, options=options)
        try:
            return await collect(result, limit)
        finally:
            del result  # (a traceback keeps this frame: not the connection with it)

    async def get(self, key: str, rng: Range | None, limit: int) -> bytes:
        options: dict[str, Any] = {}
        if isinstance(rng, SuffixRange):
            options["range"] = {"suffix": rng.length}
        elif isinstance(rng, ByteRange):
            options["range"] = (
                {"offset": rng.offset}
                if rng.length is None
                else (rng.offset, rng.offset + rng.length)
            )
        return await self._get(key, options or None, limit)

    async def get_unchanged(
        self, key: str, start: int, head: ObjectHead, limit: int
    ) -> bytes | None:
        """The range read only if the ETag still matches (`if_match`)."""
        options: dict[str, Any] = {"range": (start, head.size)}
        if head.etag:
            options["if_match"] = head.etag
        try:
            return await self._get(key, options, limit)
        except obstore_module().exceptions.PreconditionError:
            return None  # replaced meanwhile: read its new size

    async def head(self, key: str, *, fresh: bool = False) -> ObjectHead | None:
        """A HEAD (obstore keeps no cache: every one is fresh)."""
        try:
            meta = await obstore_module().head_async(self.backend, self.root + key)
        except Exception as exc:
            if self.is_missing(exc):
                return None
            raise
        return ObjectHead(int(meta["size"]), meta.get("e_tag"))

    # -- writes --------------------------------------------------------------------------------
    async def put(self, key: str, value: bytes) -> None:
        await obstore_module().put_async(self.backend, self.root + key, value)

    async def delete(self, key: str) -> None:
        await obstore_module().delete_async(self.backend, self.root + key)

    async def get_tagged(self, key: str, limit: int) -> tuple[bytes | None, Any]:
        return await obstore_updates.get_tagged(self.backend, self.root + key, limit)

    async def put_if(self, key: str, value: bytes, token: Any) -> bool:
        return await obstore_updates.put_if(self.backend, self.root + key, value, token)

    async def erase_if(self, key: str, token: Any) -> bool:
        return await obstore_updates.erase_if(self.backend, self.root + key, token)

    # -- listings ------------------------------------------------------------------------------
    async def find(self, folder: str, limit: int) -> builtins.list[str]:
        skip = len(self.root)
        out: builtins.list[str] = []
        async for batch in obstore_module().list(self.backend, self._folder(folder)):
            out.extend(meta["path"][skip:] for meta in batch)
            if len(out) > limit:  # pages that never end: stop gathering them
                break
        return out

    async def list_dir(self, folder: str) -> Listing:
        found = await obstore_module().list_with_delimiter_async(self.backend, self._folder(folder))
        skip = len(self.root)
        return Listing(
            [m["path"][skip:] for m in found["objects"] if m["path"].startswith(self.root)],
            [p.rstrip("/")[skip:] for p in found["common_prefixes"] if p.startswith(self.root)],
        )

    async def is_empty(self, folder: str) -> bool | None:
        """One listing request: the first page of keys under `folder`, stopped at its first
        key."""
        stream = obstore_module().list(self.backend, self._folder(folder), chunk_size=1)
        async for batch in stream:
            if batch:
                return False
        return True

    async def absence(self, folder: str, url: str) -> Diagnosis | None:
        """What one listing of `folder` says: no such bucket, access denied, or nothing
        stored under it."""
        try:
            if self.delimited:
                listing = await self.list_dir(folder)
                empty = not any(k.startswith(folder) for k in [*listing.keys, *listing.folders])
            else:
                empty = not any(k.startswith(folder) for k in await self.find(folder, 1))
        except Exception as exc:
            text = f"{type(exc).__name__}: {exc}"
            if "NoSuchBucket" in text or "bucket does not exist" in text.lower():
                return Diagnosis("missing", f"the bucket of {url} does not exist")
            if "AccessDenied" in text or "403" in text or "Forbidden" in text:
                return Diagnosis("denied", f"access denied to {url}")
            return None
        return Diagnosis("missing", f"nothing is stored under {url}") if empty else None
