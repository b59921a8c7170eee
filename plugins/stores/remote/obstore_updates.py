"""Conditional writes for the obstore store: its `update_many` (see `optimistic_update`).

A value is read with its ETag (and version, where the backend keeps versions); the new value
is put with `mode=UpdateVersion` (S3: `If-Match`), or with `mode="create"` (`If-None-Match: *`)
where the key was absent. A backend refuses such a put if another writer got there first
(`PreconditionError`, `AlreadyExistsError`; S3's 409 when two conditional writes of one key
race); the key is then read and computed again.

obstore has no conditional delete. A value that became fill (None) is erased only after a HEAD
finds the ETag read still there; a writer that replaces the key in the short time between that
HEAD and the DELETE loses its update. A key that was absent and stays so is checked to be still
absent.

Backends with conditional puts: S3 (and S3-compatible servers that honour the precondition
headers), GCS, Azure, and obstore's in-memory store. Not obstore's `LocalStore` (no update
mode) nor HTTP (not writeable).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from zarrkit.abc import value_limit
from zarrkit.errors import StoreError
from zarrkit.plugins.stores.remote.obstore_bodies import collect

if TYPE_CHECKING:
    from zarrkit.plugins.stores.remote.objectstore import ObstoreStore

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


class ConditionalWrites:
    """`read` and `swap` of `optimistic_update` for one obstore store."""

    def __init__(self, store: ObstoreStore) -> None:
        self.store = store
        self.backend = store.backend

    async def _get(self, key: str, limit: int) -> tuple[bytes | None, Token]:
        """The value (at most `limit` bytes held: `objectstore.collect`) and its token."""
        import obstore

        try:
            result = await obstore.get_async(self.backend, self.store.location(key))
            token = (result.meta.get("e_tag"), result.meta.get("version"))
            data = await collect(result, limit, key, self.store, "read")
        except FileNotFoundError:
            return None, None
        except StoreError:
            raise
        except Exception as exc:
            raise self.store._error(exc, key, "read") from exc
        return data, token

    async def _token(self, key: str) -> Token:
        import obstore

        try:
            meta = await obstore.head_async(self.backend, self.store.location(key))
        except FileNotFoundError:
            return None
        except Exception as exc:
            raise self.store._error(exc, key, "read") from exc
        return meta.get("e_tag"), meta.get("version")

    def read(self, keys: Sequence[str]) -> tuple[dict[str, bytes], dict[str, Token]]:
        limit = value_limit()  # (the requests run on another thread, outside this context)
        answers = self.store._gather([partial(self._get, k, limit) for k in keys])
        values = {k: v for k, (v, _) in zip(keys, answers) if v is not None}
        return values, {k: token for k, (_, token) in zip(keys, answers)}

    async def _put(self, key: str, value: Any, token: Token) -> bool:
        """Whether the write happened (False: a conflict)."""
        import obstore

        try:
            if value is not None:
                mode: Any = "create"
                if token is not None:
                    etag, version = token
                    mode = {"e_tag": etag} if etag is not None else {}
                    if version is not None:
                        mode["version"] = version
                await obstore.put_async(
                    self.backend, self.store.location(key), memoryview(value).tobytes(), mode=mode
                )
            elif token is not None:  # no conditional delete: check, then delete
                if await self._token(key) != token:
                    return False
                await obstore.delete_async(self.backend, self.store.location(key))
            else:  # absent, and to stay absent: only if no one wrote it meanwhile
                return await self._token(key) is None
        except Exception as exc:
            if _conflict(exc, token):
                return False
            raise self.store._error(exc, key, "write") from exc
        return True

    def swap(self, tokens: Mapping[str, Token], new: Mapping[str, Any]) -> list[str]:
        keys = list(new)
        done = self.store._gather([partial(self._put, k, new[k], tokens.get(k)) for k in keys])
        return [k for k, ok in zip(keys, done) if not ok]
