"""What an object store's client must do for `ObjectStoreBase`: its primitive operations,
each one request (or one call of the client) on keys already checked, as a typed protocol.
fsspec's filesystems (`fsspec_objects`) and obstore's stores (`obstore_objects`) each supply
one; everything built from them (reads of ranges, suffixes and whole values, sizes,
listings, erasing, conditional updates, errors) is written once in `object_store`.

A primitive raises its client's own exceptions (and `http_rules.TooLong` for a body longer
than the read may hold); `is_missing` says which of them mean "no such key", and the store
turns the rest into `StoreError`s naming the key and the operation.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from zarrkit.abc import Diagnosis, Range

T = TypeVar("T")

#: what a value was read at, for a write only if it is unchanged (an ETag, with a version
#: where the backend keeps them); None for a key that was absent
Token = Hashable | None


@dataclass(frozen=True)
class ObjectHead:
    """What a HEAD (or a filesystem's `info`) says of a stored value: its size in bytes (None
    where the backend did not say) and its ETag (None where it has none)."""

    size: int | None
    etag: str | None


@dataclass(frozen=True)
class Listing:
    """A delimited listing of one folder: the keys of the values in it and of the folders
    below it (full keys under the store's root, folders without their trailing '/')."""

    keys: Sequence[str]
    folders: Sequence[str]


class ObjectBackend(Protocol):
    """The primitives of one object store client, rooted where the store's keys are."""

    #: whether the backend answers a suffix range (`bytes=-n`); where it does not (Azure),
    #: the store reads a value's end by its size
    suffix_reads: bool
    #: whether a delimited listing may be trusted (not over a local filesystem, where it
    #: shows the folders an erase left empty): where not, `list_dir` walks the keys
    delimited: bool
    #: whether `get_tagged`, `put_if` and `erase_if` write only unchanged values
    conditional_writes: bool

    def loop(self) -> asyncio.AbstractEventLoop:
        """The event loop the client's coroutines run on."""
        ...

    def run(self, make: Callable[[], Awaitable[T]]) -> T:
        """`make()` awaited on the client's event loop, from any other thread."""
        ...

    def is_missing(self, exc: BaseException) -> bool:
        """Whether `exc`, raised by a read, means the key is absent."""
        ...

    def is_body_fault(self, exc: BaseException) -> bool:
        """Whether `exc` is an answer's body cut short or stalled that the client does not
        retry itself (the store then reads again)."""
        ...

    async def get(self, key: str, rng: Range | None, limit: int) -> bytes:
        """The value at `key` (or `rng` of it), holding at most `limit` bytes of it."""
        ...

    async def get_unchanged(
        self, key: str, start: int, head: ObjectHead, limit: int
    ) -> bytes | None:
        """The bytes of `key` from `start` to the end `head` found, or None when the value
        is no longer the one `head` described (read again)."""
        ...

    async def head(self, key: str, *, fresh: bool = False) -> ObjectHead | None:
        """What is stored at `key`; None when no value is (absent, or a folder). `fresh`:
        past any cache the client keeps."""
        ...

    async def put(self, key: str, value: bytes) -> None: ...

    async def delete(self, key: str) -> None:
        """Erase `key`; an absent key is no error."""
        ...

    async def find(self, folder: str, limit: int) -> list[str]:
        """The keys under `folder` ('' or ending in '/'), in any order, possibly with keys
        that are no valid store keys; a client that gathers pages stops one key past `limit`.
        An absent folder has none."""
        ...

    async def list_dir(self, folder: str) -> Listing:
        """One delimited listing of `folder` ('' or ending in '/'); an absent one is empty."""
        ...

    async def is_empty(self, folder: str) -> bool | None:
        """Whether no key is under `folder`, from one request; None where the backend has
        no such request."""
        ...

    async def absence(self, folder: str, url: str) -> Diagnosis | None:
        """Why nothing is under `folder` of the store at `url` (see `Store.diagnose`)."""
        ...

    async def get_tagged(self, key: str, limit: int) -> tuple[bytes | None, Token]:
        """The value at `key` (None: absent) and the token it was read at."""
        ...

    async def put_if(self, key: str, value: bytes, token: Token) -> bool:
        """Write `value` if `key` still holds what `token` was read at (None: if it is still
        absent); False when another writer changed it."""
        ...

    async def erase_if(self, key: str, token: Token) -> bool:
        """Erase `key` if it still holds what `token` was read at; False when it changed."""
        ...
