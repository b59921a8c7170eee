"""Conditional writes through obstore: the primitives of the obstore store's `update_many`
(see `object_store.ConditionalWrites`, `optimistic_update`).

A value is read with its ETag (and version, where the backend keeps versions); the new value
is put with `mode=UpdateVersion` (S3: `If-Match`), or with `mode="create"` (`If-None-Match: *`)
where the key was absent. A backend refuses such a put if another writer got there first
(`PreconditionError`, `AlreadyExistsError`; S3's 409 when two conditional writes of one key
race); the key is then read and computed again.

obstore has no conditional delete. A value that became fill (None) is erased only after a HEAD
finds the ETag read still there; a writer that replaces the key in the short time between that
HEAD and the DELETE loses its update.

Backends with conditional puts: S3 (and S3-compatible servers that honour the precondition
headers), GCS, Azure, and obstore's in-memory store. Not obstore's `LocalStore` (no update
mode) nor HTTP (not writeable).
"""

from __future__ import annotations

from typing import Any

from zarrkit.plugins.stores.remote.obstore_bodies import collect

#: obstore's store classes whose puts take both `mode="create"` and `mode=UpdateVersion`
GUARDED_BACKENDS = frozenset({"S3Store", "GCSStore", "AzureStore", "MemoryStore"})

#: a token: the (ETag, version) a value was read at; None for a key that was absent
Token = tuple[str | None, str | None] | None


def supported(backend: object) -> bool:
    """Whether `backend` (an obstore store) writes only if a value is unchanged."""
    return type(backend).__name__ in GUARDED_BACKENDS


def _conflict(exc: BaseException, token: Token) -> bool:
    """Whether `exc` says another writer changed the key since it was read."""
    from obstore.exceptions import AlreadyExistsError, PreconditionError

    if isinstance(exc, (AlreadyExistsError, PreconditionError)):
        return True
    if isinstance(exc, FileNotFoundError):  # erased meanwhile (absent before: no such bucket)
        return token is not None
    text = str(exc)  # S3: two conditional writes of one key at once (409, not mapped by obstore)
    return "ConditionalRequestConflict" in text or "status: 409" in text


async def get_tagged(backend: Any, path: str, limit: int) -> tuple[bytes | None, Token]:
    """The value at `path` (at most `limit` bytes held: `collect`; None: absent) and its
    token."""
    import obstore

    try:
        result = await obstore.get_async(backend, path)
    except FileNotFoundError:
        return None, None
    token = (result.meta.get("e_tag"), result.meta.get("version"))
    return await collect(result, limit), token


async def token_of(backend: Any, path: str) -> Token:
    """The token of what `path` holds now (a HEAD); None: absent."""
    import obstore

    try:
        meta = await obstore.head_async(backend, path)
    except FileNotFoundError:
        return None
    return meta.get("e_tag"), meta.get("version")


async def put_if(backend: Any, path: str, value: bytes, token: Token) -> bool:
    """Put `value` if `path` still holds what `token` was read at (None: if it is still
    absent); False: a conflict."""
    import obstore

    mode: Any = "create"
    if token is not None:
        etag, version = token
        mode = {"e_tag": etag} if etag is not None else {}
        if version is not None:
            mode["version"] = version
    try:
        await obstore.put_async(backend, path, value, mode=mode)
    except Exception as exc:
        if _conflict(exc, token):
            return False
        raise
    return True


async def erase_if(backend: Any, path: str, token: Token) -> bool:
    """Delete `path` if a HEAD finds it still holds what `token` was read at (obstore has no
    conditional delete); False: a conflict."""
    import obstore

    try:
        if await token_of(backend, path) != token:
            return False
        await obstore.delete_async(backend, path)
    except Exception as exc:
        if _conflict(exc, token):
            return False
        raise
    return True
