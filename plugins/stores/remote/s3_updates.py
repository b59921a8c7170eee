"""The S3 calls the fsspec store makes through s3fs itself, where s3fs's filesystem calls do
too little: reads holding a bounded body, and conditional writes (its `update_many`).

A value is read with its ETag; the new value is written with `If-Match: <that ETag>`, or with
`If-None-Match: *` where the key was absent, and a value that became fill is deleted with
`If-Match`. S3 (and moto's server) refuses such a write with 412 Precondition Failed (409 when
two conditional writes of one key race) if another writer got there first; the key is then
read and computed again (`optimistic_update`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from zarrkit.abc import ByteRange, Range, SuffixRange
from zarrkit.plugins.stores.remote.http_rules import TooLong

#: answers that mean "another writer changed the key since it was read"
_CONFLICTS = frozenset(
    {"PreconditionFailed", "ConditionalRequestConflict", "NoSuchKey", "412", "409", "404"}
)
_ABSENT = frozenset({"NoSuchKey", "404"})
#: the most bytes of an answer's body read at a time (`read_body`)
_BLOCK = 1 << 20


def supported(fs: Any) -> bool:
    """Whether `fs` is s3fs's filesystem, which sends S3 calls with their conditions."""
    return callable(getattr(fs, "_call_s3", None)) and callable(getattr(fs, "split_path", None))


async def read_body(answer: Mapping[str, Any], limit: int) -> bytes:
    """The body of a `get_object` answer, at most `limit` bytes of it held: refused
    (`http_rules.TooLong`) when the answer declares more, before any of it is read, or one
    block past the limit when it runs on; closed either way."""
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


async def get(fs: Any, path: str, rng: Range | None, limit: int) -> bytes:
    """s3fs's `_cat_file` holding at most `limit` bytes: one GET (its `get_object`, with
    the filesystem's request options), refused when its answer declares more, its body
    read a block at a time and refused one block past the limit. (s3fs reads whatever
    body comes, however long, before anything can look at its size.)"""
    bucket, key, version = fs.split_path(path)
    asked: dict[str, Any] = {"VersionId": version} if version else {}
    if isinstance(rng, SuffixRange):
        asked["Range"] = f"bytes=-{rng.length}"
    elif isinstance(rng, ByteRange):
        last = "" if rng.length is None else str(rng.offset + rng.length - 1)
        asked["Range"] = f"bytes={rng.offset}-{last}"
    answer = await fs._call_s3("get_object", Bucket=bucket, Key=key, **asked)
    return await read_body(answer, limit)


def _code(exc: BaseException) -> str | None:
    """The S3 error code behind `exc` (s3fs raises an OSError whose cause is botocore's)."""
    for err in (exc, exc.__cause__):
        response = getattr(err, "response", None)
        if isinstance(response, dict):
            return str(response.get("Error", {}).get("Code", ""))
    return None


async def get_tagged(fs: Any, path: str, limit: int) -> tuple[bytes | None, str | None]:
    """The value at `path` (None: absent) and its ETag."""
    bucket, key, _ = fs.split_path(path)
    try:
        answer = await fs._call_s3("get_object", Bucket=bucket, Key=key)
    except FileNotFoundError:
        return None, None
    except Exception as exc:
        if _code(exc) in _ABSENT:
            return None, None
        raise
    return await read_body(answer, limit), answer["ETag"]


async def put_if(fs: Any, path: str, value: bytes, etag: str | None) -> bool:
    """Write `value` if `path` still has `etag` (None: is still absent); False: a conflict."""
    bucket, key, _ = fs.split_path(path)
    condition = {"IfMatch": etag} if etag else {"IfNoneMatch": "*"}
    return await _conditional(
        fs._call_s3("put_object", Bucket=bucket, Key=key, Body=value, **condition), etag
    )


async def erase_if(fs: Any, path: str, etag: str) -> bool:
    """Delete `path` if it still has `etag`; False: a conflict."""
    bucket, key, _ = fs.split_path(path)
    return await _conditional(
        fs._call_s3("delete_object", Bucket=bucket, Key=key, IfMatch=etag), etag
    )


async def _conditional(call: Any, etag: str | None) -> bool:
    """Whether the conditional `call` (a coroutine) wrote (False: another writer changed the
    key since it was read)."""
    try:
        await call
    except FileExistsError:  # (s3fs's name for If-None-Match's 412)
        return False
    except FileNotFoundError:
        if etag:  # If-Match on a key erased meanwhile
            return False
        raise  # (no such bucket)
    except Exception as exc:
        if _code(exc) in _CONFLICTS:
            return False
        raise
    return True
