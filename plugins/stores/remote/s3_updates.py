"""Conditional writes for the fsspec store on S3 (s3fs): its `update_many`.

A value is read with its ETag; the new value is written with `If-Match: <that ETag>`, or with
`If-None-Match: *` where the key was absent, and a value that became fill is deleted with
`If-Match`. S3 (and moto's server) refuses such a write with 412 Precondition Failed (409 when
two conditional writes of one key race) if another writer got there first; the key is then read
and computed again (`optimistic_update`). A key that was absent and stays so is checked to be
still absent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from zarrkit.abc import value_limit

if TYPE_CHECKING:
    from zarrkit.plugins.stores.remote.fsspec import FsspecStore

#: answers that mean "another writer changed the key since it was read"
_CONFLICTS = frozenset(
    {"PreconditionFailed", "ConditionalRequestConflict", "NoSuchKey", "412", "409", "404"}
)
_ABSENT = frozenset({"NoSuchKey", "404"})
#: the most bytes of an answer's body read at a time (`read_body`)
_BLOCK = 1 << 20


async def read_body(answer: Mapping[str, Any], limit: int) -> bytes:
    """The body of a `get_object` answer, at most `limit` bytes of it held: refused
    (`http_rules.TooLong`) when the answer declares more, before any of it is read, or one
    block past the limit when it runs on; closed either way."""
    from zarrkit.plugins.stores.remote.http_rules import TooLong

    body = answer["Body"]
    blocks: list[bytes] = []
    try:
        declared = answer.get("ContentLength")
        if declared is not None and declared > limit:
            raise TooLong(
                f"the answer declares {declared} bytes, more than the {limit} bytes the read "
                f"can hold"
            )
        held = 0
        while block := await body.read(min(_BLOCK, limit + 1 - held)):
            held += len(block)
            if held > limit:
                blocks.clear()
                raise TooLong(f"the body is longer than the {limit} bytes the read can hold")
            blocks.append(block)
    finally:
        body.close()
    return blocks[0] if len(blocks) == 1 else b"".join(blocks)


def supported(fs: Any) -> bool:
    """Whether `fs` is s3fs's filesystem, which sends S3 calls with their conditions."""
    return callable(getattr(fs, "_call_s3", None)) and callable(getattr(fs, "split_path", None))


def _code(exc: BaseException) -> str | None:
    """The S3 error code behind `exc` (s3fs raises an OSError whose cause is botocore's)."""
    for err in (exc, exc.__cause__):
        response = getattr(err, "response", None)
        if isinstance(response, dict):
            return str(response.get("Error", {}).get("Code", ""))
    return None


class ConditionalWrites:
    """`read` and `swap` of `optimistic_update` for one fsspec store on S3."""

    def __init__(self, store: FsspecStore) -> None:
        self.store = store
        self.fs = store.fs

    def _where(self, key: str) -> tuple[str, str]:
        bucket, path, _ = self.fs.split_path(self.store._path(key))
        return bucket, path

    async def _get(self, key: str, limit: int) -> tuple[bytes | None, str | None]:
        bucket, path = self._where(key)
        try:
            answer = await self.fs._call_s3("get_object", Bucket=bucket, Key=path)
        except FileNotFoundError:
            return None, None
        except Exception as exc:
            if _code(exc) in _ABSENT:
                return None, None
            raise self.store._error(exc, key, "read") from exc
        try:
            data = await read_body(answer, limit)
        except Exception as exc:
            raise self.store._error(exc, key, "read") from exc
        return data, answer["ETag"]

    def read(self, keys: Sequence[str]) -> tuple[dict[str, bytes], dict[str, str | None]]:
        limit = value_limit()  # (the requests run on fsspec's thread, outside this context)
        answers = self.store._gather([partial(self._get, k, limit) for k in keys])
        values = {k: v for k, (v, _) in zip(keys, answers) if v is not None}
        return values, {k: etag for k, (_, etag) in zip(keys, answers)}

    async def _put(self, key: str, value: Any, etag: str | None) -> bool:
        """Whether the write happened (False: a conflict)."""
        bucket, path = self._where(key)
        try:
            if value is not None:
                condition = {"IfMatch": etag} if etag else {"IfNoneMatch": "*"}
                await self.fs._call_s3(
                    "put_object",
                    Bucket=bucket,
                    Key=path,
                    Body=memoryview(value).tobytes(),
                    **condition,
                )
            elif etag:
                await self.fs._call_s3("delete_object", Bucket=bucket, Key=path, IfMatch=etag)
            else:  # absent, and to stay absent: only if no one wrote it meanwhile
                return (await self._get(key, value_limit()))[1] is None
        except FileExistsError:  # (s3fs's name for If-None-Match's 412)
            return False
        except FileNotFoundError as exc:
            if etag:  # If-Match on a key erased meanwhile
                return False
            raise self.store._error(exc, key, "write") from exc  # (no such bucket)
        except Exception as exc:
            if _code(exc) in _CONFLICTS:
                return False
            raise self.store._error(exc, key, "write") from exc
        return True

    def swap(self, tokens: Mapping[str, str | None], new: Mapping[str, Any]) -> list[str]:
        keys = list(new)
        done = self.store._gather([partial(self._put, k, new[k], tokens.get(k)) for k in keys])
        return [k for k, ok in zip(keys, done) if not ok]
