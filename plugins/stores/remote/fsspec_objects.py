"""The primitives of an fsspec filesystem (`object_backend.ObjectBackend`) for `FsspecStore`:
each a call of fsspec's async interface on fsspec's I/O loop, with s3fs's own S3 calls where
its filesystem calls do too little (`s3_updates`: bounded bodies, conditional writes, a
listing that stops, a one-key listing).

fsspec's async filesystems refuse use in a forked child ("not fork-safe"); a child makes its
own from the same options on first use.
"""

from __future__ import annotations

import asyncio
import builtins
import inspect
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from zarrkit.abc import Diagnosis, Range, SuffixRange
from zarrkit.plugins.stores.remote import s3_updates
from zarrkit.plugins.stores.remote.object_backend import Listing, ObjectHead
from zarrkit.plugins.stores.remote.retrying import is_body_fault

T = TypeVar("T")

_MISSING = (FileNotFoundError, IsADirectoryError, NotADirectoryError)
#: fsspec protocols whose filesystems cannot read a suffix range (adlfs: Azure has none), read
#: by size instead
_NO_SUFFIX_RANGES = frozenset({"az", "abfs", "abfss", "adl"})
#: fsspec protocols whose paths start with a bucket (or container)
_BUCKETED = frozenset({"s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "oss", "r2"})


def protocols_of(fs: Any) -> frozenset[str]:
    """The protocols an fsspec filesystem answers to."""
    return frozenset(fs.protocol if isinstance(fs.protocol, tuple) else (fs.protocol,))


def with_retries(fs: Any, retries: int | None) -> Any:
    """`fs` making `retries` attempts in its own retry loop (s3fs's `retries`), if given; the
    setting is no storage option, so a filesystem made again (unpickled, in a forked child)
    needs it again."""
    if retries is not None and hasattr(fs, "retries"):
        fs.retries = retries
    return fs


class FsspecObjects:
    """`ObjectBackend` over `fs` (an async fsspec filesystem), its keys under `root`."""

    delimited = True

    def __init__(self, fs: Any, root: str, client_retries: int | None) -> None:
        self._client_retries = client_retries
        self._fs = with_retries(fs, client_retries)
        self._fs_pid = os.getpid()
        self.root = root
        protocols = protocols_of(fs)
        self.suffix_reads = not (_NO_SUFFIX_RANGES & protocols)
        self._bucketed = bool(protocols & _BUCKETED)
        self._s3 = s3_updates.supported(fs)
        #: on S3: conditional writes. Other filesystems have no way to write only if a value
        #: is unchanged that fsspec exposes: their updates are unguarded.
        self.conditional_writes = self._s3
        # s3fs reads a whole object by asking its size first when concurrency > 1: one
        # round trip per chunk for nothing, so whole-value reads ask for one stream
        params = inspect.signature(fs._cat_file).parameters
        self._whole = {"max_concurrency": 1} if "max_concurrency" in params else {}

    @property
    def fs(self) -> Any:
        """The filesystem; in a forked child, one of its own from the same options."""
        if self._fs_pid != os.getpid():
            fs = self._fs
            self._fs = with_retries(
                type(fs)(*fs.storage_args, **fs.storage_options), self._client_retries
            )
            self._fs_pid = os.getpid()
        return self._fs

    def path(self, key: str) -> str:
        return f"{self.root}/{key}" if self.root else key

    def _dir(self, folder: str) -> str:
        return f"{self.root}/{folder}".rstrip("/") if self.root else folder.rstrip("/")

    def _key(self, path: str) -> str | None:
        """The key of a listed path (None for what is not under the root)."""
        path = self.fs._strip_protocol(path)
        root = self.fs._strip_protocol(self.root) if self.root else ""
        if root:
            if not path.startswith(root + "/"):
                return None
            path = path[len(root) + 1 :]
        return path

    def loop(self) -> asyncio.AbstractEventLoop:
        """fsspec's I/O loop, the filesystem's client's."""
        loop: asyncio.AbstractEventLoop = self.fs.loop
        return loop

    def run(self, make: Callable[[], Awaitable[T]]) -> T:
        from fsspec.asyn import sync

        async def run() -> T:
            return await make()

        answer: T = sync(self.fs.loop, run)
        return answer

    def is_missing(self, exc: BaseException) -> bool:
        return isinstance(exc, _MISSING)

    def is_body_fault(self, exc: BaseException) -> bool:
        return is_body_fault(exc)

    # -- reads ---------------------------------------------------------------------------------
    async def get(self, key: str, rng: Range | None, limit: int) -> bytes:
        """One read. The clients check a body against its Content-Length (aiohttp, botocore)
        and raise when it is short; the store makes the request again then."""
        path = self.path(key)
        value: bytes
        if self._s3:
            value = await s3_updates.get(self.fs, path, rng, limit)
        elif rng is None:
            value = await self.fs._cat_file(path, **self._whole)
        elif isinstance(rng, SuffixRange):
            value = await self.fs._cat_file(path, start=-rng.length)
        else:
            end = None if rng.length is None else rng.offset + rng.length
            value = await self.fs._cat_file(path, start=rng.offset, end=end)
        return value

    async def get_unchanged(
        self, key: str, start: int, head: ObjectHead, limit: int
    ) -> bytes | None:
        """The filesystem cannot make a read conditional: the value read is checked
        afterwards (its ETag again)."""
        path = self.path(key)
        value: bytes = await self.fs._cat_file(path, start=start, end=head.size)
        if head.etag is None or (await self.fs._info(path, refresh=True)).get("etag") == head.etag:
            return value
        return None

    async def head(self, key: str, *, fresh: bool = False) -> ObjectHead | None:
        """From the filesystem's `info` (S3: a HEAD)."""
        path = self.path(key)
        try:
            info: dict[str, Any] = await (
                self.fs._info(path, refresh=True) if fresh else self.fs._info(path)
            )
        except _MISSING:
            return None
        if info.get("type") != "file":
            return None
        size = info.get("size")
        return ObjectHead(None if size is None else int(size), info.get("etag"))

    # -- writes --------------------------------------------------------------------------------
    async def put(self, key: str, value: bytes) -> None:
        await self.fs._pipe_file(self.path(key), value)

    async def delete(self, key: str) -> None:
        await self.fs._rm_file(self.path(key))

    async def delete_many(self, keys: builtins.list[str]) -> builtins.list[str]:
        """Erase `keys` in one call (S3: one DeleteObjects per 1000 keys); when some were
        absent, the keys still to erase one at a time."""
        try:
            await self.fs._rm([self.path(k) for k in keys])
        except _MISSING:
            return keys
        return []

    async def get_tagged(self, key: str, limit: int) -> tuple[bytes | None, str | None]:
        return await s3_updates.get_tagged(self.fs, self.path(key), limit)

    async def put_if(self, key: str, value: bytes, token: Any) -> bool:
        return await s3_updates.put_if(self.fs, self.path(key), value, token)

    async def erase_if(self, key: str, token: Any) -> bool:
        return await s3_updates.erase_if(self.fs, self.path(key), token)

    # -- listings ------------------------------------------------------------------------------
    async def find(self, folder: str, limit: int) -> builtins.list[str]:
        base = self._dir(folder)
        self.fs.invalidate_cache(base)
        try:
            if limit < sys.maxsize and self._s3:
                paths = await self._s3_find(base, limit)
            else:
                paths = await self.fs._find(base, withdirs=False)
        except _MISSING:
            return []
        return [k for k in map(self._key, paths) if k is not None]

    async def _s3_find(self, base: str, limit: int) -> builtins.list[str]:
        """s3fs's listing of `base` page by page, stopped one key past `limit`: `_find`
        gathers every page before it answers, and a server whose pages always say there is
        more would keep it gathering for ever."""
        bucket, _, folder = base.partition("/")
        pages = self.fs._iterdir(
            bucket, max_items=limit + 1, delimiter="", prefix=f"{folder}/" if folder else ""
        )
        return [info["name"] async for info in pages]

    async def list_dir(self, folder: str) -> Listing:
        base = self._dir(folder)
        self.fs.invalidate_cache(base)
        try:
            entries: builtins.list[dict[str, Any]] = await self.fs._ls(base, detail=True)
        except _MISSING:
            entries = []
        keys: builtins.list[str] = []
        folders: builtins.list[str] = []
        for entry in entries:
            key = self._key(entry["name"].rstrip("/"))
            if key is not None:
                (folders if entry.get("type") == "directory" else keys).append(key)
        return Listing(keys, folders)

    async def is_empty(self, folder: str) -> bool | None:
        """On S3, one ListObjectsV2 asking for one key (fsspec's own listing of an empty
        folder lists its parent too); elsewhere None."""
        if not self._s3:
            return None
        bucket, path, _ = self.fs.split_path(self._dir(folder))
        if not bucket:
            return None
        answer = await self.fs._call_s3(
            "list_objects_v2", Bucket=bucket, Prefix=f"{path}/" if path else "", MaxKeys=1
        )
        return not answer.get("Contents")

    async def absence(self, folder: str, url: str) -> Diagnosis | None:
        """No such bucket (an object store's first path segment), nothing under the root,
        a file where the root's folder should be, or access refused."""
        base = self._dir(folder)
        bucket = base.split("/", 1)[0] if self._bucketed else ""
        try:
            if bucket and not await self.fs._exists(bucket):
                return Diagnosis("missing", f"the bucket {bucket!r} does not exist")
            if base and await self.fs._isfile(base):
                return Diagnosis("not_a_container", f"{url} is a file, not a folder")
            if base and base != bucket and not await self.fs._exists(base):
                return Diagnosis("missing", f"nothing is stored under {url}")
        except PermissionError as exc:
            return Diagnosis("denied", f"access denied: {exc}")
        return None
