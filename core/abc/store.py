"""The store contract: `Store` (what it can do declared in its `StoreCapabilities`; checked
per operation, so a missing capability gives a clear error), the byte ranges a read may ask
for (`ByteRange`, `SuffixRange`, `Range`), and what every backend needs to behave alike: the
key and mode rules (`check_key`, `check_prefix`, `check_mode`, `is_valid_key`), read limits
(`value_limit`, `listing_limit`), read-modify-write of several keys retried when another writer
got there first (`Update` and `write_back`; `zarrkit.helpers.optimistic_update` retries),
`AwaitableReads` (what a store
whose client is asynchronous adds), `Diagnosis` (what `Store.diagnose` answers), `StoreLike` and
`scheme_of`.

Keys follow the seed's rules (non-empty, '/'-separated, no trailing '/'; a prefix is '' or a
key plus '/'), with v3's wider alphabet: any Unicode but NUL and '\\'. Stores validate them with
`check_key`, which also refuses '.' and '..' segments, '//' and leading '/', so a key can never
escape the store. Batch calls (`get_many`, `get_ranges`, `set_many`) exist so a store that can
do I/O concurrently does it for a whole selection at once.

A read may not hold more of a value than the caller can use: `value_limit()` is the most bytes
of one value the reads of this thread (and context) may return, set with `limiting_values`.
The chunk engine sets it from the size of the array's chunks; anything else reads under
`DEFAULT_VALUE_LIMIT`. A store that cannot know a value's size before holding it (an HTTP body,
a compressed zip member) reads at most that many bytes and raises `ValueTooLargeError` beyond.
"""

from __future__ import annotations

import asyncio
import builtins
import os
import re
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass, fields, replace
from typing import Any, ClassVar, Generic, TypeVar, overload

from ..errors import (
    CapabilityError,
    InvalidArgumentError,
    InvalidKeyError,
    ReadOnlyError,
)
from .extension import ExtensionNames

__all__ = [
    "DEFAULT_VALUE_LIMIT",
    "MODES",
    "AwaitableReads",
    "ByteRange",
    "Diagnosis",
    "Range",
    "Store",
    "StoreCapabilities",
    "StoreLike",
    "SuffixRange",
    "Update",
    "check_fits",
    "check_key",
    "check_mode",
    "check_prefix",
    "is_valid_key",
    "limiting_listings",
    "limiting_values",
    "listing_limit",
    "scheme_of",
    "value_limit",
    "write_back",
]


@dataclass(frozen=True)
class ByteRange:
    """`length` bytes from `offset` (to the end when length is None)."""

    offset: int
    length: int | None = None

    def __post_init__(self) -> None:
        if self.offset < 0 or (self.length is not None and self.length < 0):
            raise InvalidArgumentError(f"byte range offset and length must be >= 0, got {self}")

    def slice(self, size: int) -> slice:
        stop = size if self.length is None else min(size, self.offset + self.length)
        return slice(min(self.offset, size), stop)


@dataclass(frozen=True)
class SuffixRange:
    """The last `length` bytes."""

    length: int

    def __post_init__(self) -> None:
        if self.length < 0:
            raise InvalidArgumentError(f"suffix length must be >= 0, got {self.length}")

    def slice(self, size: int) -> slice:
        return slice(max(0, size - self.length), size)


Range = ByteRange | SuffixRange
"""A part of a stored value: from an offset (`ByteRange`) or the last bytes (`SuffixRange`)."""


#: the most bytes of one value a read holds when no caller said (metadata documents, values read
#: straight from a store): generous for any document, small enough that a hostile server or
#: archive cannot exhaust memory with it
DEFAULT_VALUE_LIMIT = 256 << 20

_value_limit: ContextVar[int] = ContextVar("zarrkit_value_limit", default=DEFAULT_VALUE_LIMIT)


def value_limit() -> int:
    """The most bytes of one value the current read may hold (see `limiting_values`)."""
    return _value_limit.get()


@contextmanager
def limiting_values(max_bytes: int | None) -> Iterator[None]:
    """Reads in this block (this thread and context) hold at most `max_bytes` of one value;
    None: no limit. A store whose batch calls run on threads of its own reads the limit in the
    calling thread and hands it on."""
    if max_bytes is not None and max_bytes < 0:
        raise InvalidArgumentError(f"a value limit is >= 0 bytes, got {max_bytes}")
    token = _value_limit.set(sys.maxsize if max_bytes is None else max_bytes)
    try:
        yield
    finally:
        _value_limit.reset(token)


_listing_limit: ContextVar[int] = ContextVar("zarrkit_listing_limit", default=sys.maxsize)


def listing_limit() -> int:
    """The most keys the current listing may yield (see `limiting_listings`)."""
    return _listing_limit.get()


@contextmanager
def limiting_listings(max_keys: int | None) -> Iterator[None]:
    """Listings started in this block yield at most `max_keys` keys; a store that gathers a
    listing's pages before answering refuses, past that many, with a `StoreError` rather than
    gather without end (a server whose pages always say there is more). None: no limit. A
    store whose calls run on threads of its own reads the limit in the calling thread."""
    if max_keys is not None and max_keys < 0:
        raise InvalidArgumentError(f"a listing limit is >= 0 keys, got {max_keys}")
    token = _listing_limit.set(sys.maxsize if max_keys is None else max_keys)
    try:
        yield
    finally:
        _listing_limit.reset(token)


def check_key(key: str) -> str:
    """Refuse keys that could escape a store's root or that the specs do not allow. (String
    searches, not a regular expression: every store call checks its keys, the keys of a deep
    hierarchy are long, and a pattern's cost grows with them.)"""
    if not isinstance(key, str):
        raise InvalidKeyError(f"store keys are strings, got {key!r}")
    if (
        not key
        or key[0] == "/"
        or key[-1] == "/"
        or "//" in key
        or "\\" in key
        or "\x00" in key
        or ("." in key and _dot_segment(key))
    ):
        raise InvalidKeyError(
            f"invalid store key {key!r}: not empty, no leading or trailing "
            f"'/', no '//', '.' or '..' segments, no '\\' or NUL"
        )
    if not key.isascii():
        try:
            key.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidKeyError(
                f"invalid store key {key!r}: not valid Unicode (a lone "
                f"surrogate), so it has no UTF-8 form to store"
            ) from None
    return key


def is_valid_key(key: object) -> bool:
    """Whether `key` is a store key `check_key` takes (listings skip what is not one)."""
    try:
        check_key(key)  # type: ignore[arg-type]
    except InvalidKeyError:
        return False
    return True


def _dot_segment(key: str) -> bool:
    """Whether a '.' or '..' segment is in `key`."""
    return (
        key in (".", "..")
        or key.startswith(("./", "../"))
        or key.endswith(("/.", "/.."))
        or "/./" in key
        or "/../" in key
    )


def check_prefix(prefix: str) -> str:
    """A listing or erasing prefix: '' (everything) or a valid key followed by '/'."""
    if prefix:
        if not prefix.endswith("/"):
            raise InvalidKeyError(f"invalid prefix {prefix!r}: must be '' or end with '/'")
        check_key(prefix[:-1])
    return prefix


#: `Store.update_many`'s compute: (keys, their current values) -> their new values
Update = Callable[[Sequence[str], Mapping[str, Any]], Mapping[str, Any]]
"""What `Store.update_many` calls: given the keys and their current values, it returns the
new values (called again if another writer got there first)."""


def unguarded_update(store: Store, keys: Sequence[str], compute: Update) -> None:
    """`Store.update_many` without protection from other writers: read, compute, write."""
    store.require("write", "update keys")
    write_back(store, compute(keys, store.read_many(keys) if keys else {}))


def write_back(store: Store, values: Mapping[str, Any]) -> None:
    """Store an update's new values: set those that are values, erase those that are None."""
    sets = {k: v for k, v in values.items() if v is not None}
    if sets:
        store.set_many(sets)
    if len(sets) < len(values):
        store.erase_many([k for k, v in values.items() if v is None])


def check_fits(store: object, key: str) -> str:
    """Refuse a key with a segment longer than the store can hold (`Store.name_limit`)."""
    limit = store.name_limit() if isinstance(store, Store) else None
    if limit is not None:
        for segment in key.split("/"):
            size = len(segment.encode("utf-8", "surrogatepass"))
            if size > limit:
                shown = segment if len(segment) <= 40 else segment[:40] + "..."
                raise InvalidKeyError(
                    f"store key {key[:120]!r}: the segment {shown!r} is {size} "
                    f"bytes; {store} holds names of at most {limit} bytes"
                )
    return key


#: the modes of opening a store or a node; only "r" is read-only for a store
MODES = ("r", "r+", "a", "w", "w-")


def check_mode(mode: str) -> str:
    """`mode` if it is one of the open modes ("r", "r+", "a", "w", "w-"), else an
    `InvalidArgumentError`."""
    if mode not in MODES:
        raise InvalidArgumentError(f"mode must be one of {MODES}, got {mode!r}")
    return mode


@dataclass(frozen=True)
class Diagnosis:
    """What a store found where a node was looked for (`Store.diagnose`). `kind`: "missing"
    (no such folder, prefix or bucket), "not_a_container" (a file where a folder or prefix
    should be) or "denied" (the backend refused access); `detail` says it for a person."""

    kind: str
    detail: str

    KINDS: ClassVar[tuple[str, ...]] = ("missing", "not_a_container", "denied")

    def __post_init__(self) -> None:
        if self.kind not in self.KINDS:
            raise InvalidArgumentError(
                f"Diagnosis.kind must be one of {self.KINDS}, got {self.kind!r}"
            )


#: keys per `get_many` when the default `Store.sizes` reads values to learn their lengths
_SIZE_BATCH = 64


@dataclass(frozen=True)
class StoreCapabilities:
    """What a store can do: a store class declares one (its `capabilities`), and an instance
    replaces it where it depends on the URL or the mode (plain HTTP through fsspec or obstore:
    no writing, no listing). The kernel asks a store what it can do only through this.

    `readable`, `writeable`, `listable`: the specs' three capabilities of a store. `read_only`:
    this handle was opened for reading (mode "r"), whatever the backend could do.
    `range_reads`: a byte range is read without the rest of its value (False: the store reads
    the value and cuts the range out). `suffix_reads`: a value's end is read in one request
    (False: its size first, as on Azure). `safe_updates`: `update_many` is one step against
    writers in other processes and on other machines too (a lock, a transaction, or
    conditional writes), not only this one's. `atomic_writes`: a reader sees a value replaced
    whole or not at all, never part of each.

    `blocking_writes`: a write blocks in the OS or the network far longer than the Python
    around it (a local file's create and rename, a network round trip), so that writing even
    tiny chunks from several threads overlaps their waits; otherwise tiny chunks are written
    on one thread, where threads would only take turns holding the GIL.
    `preferred_fetch_bytes`, `preferred_store_bytes`: the chunk bytes the engine asks for per
    `read_many`, and gathers per thread before a `set_many`, when writing whole chunks; None:
    the engine's defaults (1 MiB and 256 KiB), which suit a local store, where small groups
    let malloc reuse the memory of values just used. A store whose calls are expensive and
    that serves a batch concurrently (remote) sets them higher, to get more of a batch per
    call; a store that sets `preferred_fetch_bytes` is taken for a remote one (shard indexes
    are kept per array handle: the `index_cache` setting)."""

    readable: bool = True
    writeable: bool = True
    listable: bool = True
    read_only: bool = False
    range_reads: bool = True
    suffix_reads: bool = True
    safe_updates: bool = False
    atomic_writes: bool = True
    blocking_writes: bool = False
    preferred_fetch_bytes: int | None = None
    preferred_store_bytes: int | None = None

    def opened(self, mode: str) -> StoreCapabilities:
        """These capabilities for a handle opened with `mode` (only "r" is read-only)."""
        return replace(self, read_only=check_mode(mode) == "r")


_CAPABILITIES = frozenset(f.name for f in fields(StoreCapabilities))

V = TypeVar("V")


class _Capability(Generic[V]):
    """The older spelling of one of a store's capabilities, `store.<name>`, read from and set
    in its `capabilities` (store plugins written before `StoreCapabilities` use them)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, store: None, owner: type[Store]) -> V: ...
    @overload
    def __get__(self, store: Store, owner: type[Store] | None = None) -> V: ...
    def __get__(self, store: Store | None, owner: type[Store] | None = None) -> V:
        capabilities = (owner if store is None else store).capabilities  # type: ignore[union-attr]
        value: V = getattr(capabilities, self.name)
        return value

    def __set__(self, store: Store, value: V) -> None:
        changed: dict[str, Any] = {self.name: value}
        store.capabilities = replace(store.capabilities, **changed)


class Store:
    """Base of every store plugin. Override what the backend supports; declare what it can do
    in `capabilities`."""

    names: ClassVar[ExtensionNames]
    capabilities: StoreCapabilities = StoreCapabilities()

    readable = _Capability[bool]()
    writeable = _Capability[bool]()
    listable = _Capability[bool]()
    read_only = _Capability[bool]()
    safe_updates = _Capability[bool]()
    blocking_writes = _Capability[bool]()
    preferred_fetch_bytes = _Capability[int | None]()
    preferred_store_bytes = _Capability[int | None]()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A subclass that still sets capabilities as class attributes of their own
        (`writeable = False`) declares them in its `capabilities`."""
        super().__init_subclass__(**kwargs)
        older = {
            name: value
            for name, value in vars(cls).items()
            if name in _CAPABILITIES and not isinstance(value, _Capability | property)
        }
        for name in older:
            delattr(cls, name)
        if older:
            cls.capabilities = replace(cls.capabilities, **older)

    @classmethod
    def from_url(cls, url: str, *, mode: str = "r", **options: Any) -> Store:
        raise NotImplementedError

    #: When `open_store` asks this class to `adapt` an object, relative to other store
    #: classes: lower first. A class that takes a broad kind of object (any mapping) sets it
    #: high, so that classes recognising a narrower kind (an fsspec mapper, which is also a
    #: mapping) are asked before it.
    adapt_order: ClassVar[int] = 0

    @classmethod
    def matches_name(cls, name: str, format: str) -> bool:
        """Whether this class opens URLs of the scheme `name`: by default what its `names`
        declare; a class answering for schemes it cannot list overrides it."""
        return cls.names.matches(name, format)

    @classmethod
    def adapt(cls, obj: object, *, mode: str = "r") -> Store | None:
        """A store of this class over `obj`, an object of another library that this class
        recognises (a mapping, another library's store), or None when it does not. `open_store`
        asks every store class (see `zarrkit.store_opening`) about an object that is not a path, a URL
        or a zarrkit Store, so a class recognises objects cheaply and without importing their
        library (an object of a library not in `sys.modules` cannot be one of its objects)."""
        return None

    # -- readable ----------------------------------------------------------------------------
    def get(self, key: str, byte_range: Range | None = None) -> bytes | None:
        """The value at `key` (or part of it), None when the key is absent."""
        raise CapabilityError(f"{self} cannot be read")

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes]:
        """Values of the keys that exist; absent keys are left out."""
        out = {}
        for key in keys:
            value = self.get(key)
            if value is not None:
                out[key] = value
        return out

    def read_many(self, keys: Iterable[str]) -> dict[str, Any]:
        """`get_many` for values about to be decoded: they may come back as any read-only
        bytes-like object, not only `bytes`, so a store can read into memory of its choosing
        (the local store reads large files into numpy buffers, which get huge pages: a fresh
        `bytes` of a 16 MiB shard is faulted in 4 KiB at a time). The chunk engine reads
        through this; `get` and `get_many` keep returning `bytes`."""
        return self.get_many(keys)

    def get_ranges(self, requests: Sequence[tuple[str, Range | None]]) -> list[bytes | None]:
        """Many (key, byte range) reads at once, answers in request order (None: key absent).

        The chunk engine and partial decoders send one call per selection; a store that can do
        I/O concurrently (or coalesce nearby ranges of one key) overrides this."""
        return [self.get(key, byte_range) for key, byte_range in requests]

    def read_ranges(self, requests: Sequence[tuple[str, Range | None]]) -> list[Any]:
        """`get_ranges` for bytes about to be decoded, as `read_many` is for `get_many`: any
        read-only bytes-like objects may come back (the local store reads a call's ranges into
        one buffer). Partial decodes, e.g. inside shards, read through this."""
        return self.get_ranges(requests)

    def exists(self, key: str) -> bool:
        return self.get(key, ByteRange(0, 0)) is not None

    def sizes(self, keys: Iterable[str]) -> dict[str, int]:
        """The stored length in bytes of each key that exists (absent keys left out), for
        `nbytes_stored` and `zarrkit info`. This default reads the values, a batch at a time;
        a store that can tell a size without reading the value (a file's stat, an object's
        listing or HEAD) overrides it, so sizing an array never costs its data."""
        keys = list(keys)
        out: dict[str, int] = {}
        for start in range(0, len(keys), _SIZE_BATCH):
            found = self.get_many(keys[start : start + _SIZE_BATCH])
            out.update((key, len(memoryview(value).cast("B"))) for key, value in found.items())
        return out

    def reading(self) -> AbstractContextManager[Any]:
        """What one thread reads a run of groups of chunks through (its `read_many`) while the
        block lasts, as `writing` is for writes: the local store keeps each key folder it has
        opened until the block ends, where it otherwise opens and checks it again on every
        call. Not for use by several threads at once. Default: the store itself."""
        return nullcontext(self)

    # -- writeable ---------------------------------------------------------------------------
    def set(self, key: str, value: Any) -> None:
        """Store `value` (any bytes-like buffer) at `key`."""
        raise ReadOnlyError(f"{self} cannot be written")

    def set_many(self, items: Mapping[str, bytes]) -> None:
        self.require("write", "set keys")
        for key in items:  # refuse a bad batch before writing any of it
            check_key(key)
        for key, value in items.items():
            self.set(key, value)

    def writing(self) -> AbstractContextManager[Any]:
        """What one thread stores a run of batches through (its `set_many` and `erase_many`)
        while the block lasts. A store may keep what it looked up for one batch for the next:
        the local store keeps the folders it has checked, which it otherwise checks again on
        every call (two `lstat`s per chunk when compressed chunks go one per call). Not for
        use by several threads at once. Default: the store itself."""
        return nullcontext(self)

    def update_many(self, keys: Sequence[str], compute: Update) -> None:
        """Read-modify-write of `keys`: store `compute(keys, old)`, where `old` holds the
        current values of those keys that exist (any read-only bytes-like objects) and a new
        value of None erases its key. A store with `capabilities.safe_updates` makes this one step against
        every other `update_many` of the same keys, in any process: it holds a lock from the
        read to the write, or writes only if the value is still the one it read and otherwise
        calls `compute` again with the keys that changed (so `compute` must depend on `old`
        only). The chunk engine writes every chunk or shard it updates in part through this.

        Default, for stores that cannot do better: read, compute and write with nothing held,
        so a writer in another process that updates the same key in between loses its update."""
        unguarded_update(self, keys, compute)

    def erase(self, key: str) -> None:
        raise ReadOnlyError(f"{self} cannot be written")

    def erase_many(self, keys: Iterable[str]) -> None:
        self.require("write", "erase keys")
        for key in keys:
            self.erase(key)

    def erase_prefix(self, prefix: str) -> None:
        """Erase every key starting with `prefix` (a '/'-terminated folder, or '' for all)."""
        self.require("write", f"erase prefix {prefix!r}")
        check_prefix(prefix)
        self.erase_many(list(self.list_prefix(prefix)))

    # -- listable ----------------------------------------------------------------------------
    def list(self) -> Iterator[str]:
        raise CapabilityError(f"{self} cannot list its keys")

    def list_prefix(self, prefix: str) -> Iterator[str]:
        return (k for k in self.list() if k.startswith(prefix))

    def list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        """Keys and child prefixes directly under `prefix` ('' or ending in '/'), sorted."""
        check_prefix(prefix)
        keys: set[str] = set()
        prefixes: set[str] = set()
        for key in self.list_prefix(prefix):
            rest = key[len(prefix) :]
            head, sep, _ = rest.partition("/")
            (prefixes if sep else keys).add(head)
        return sorted(keys), sorted(prefixes)

    def is_empty(self, prefix: str) -> bool | None:
        """Whether no key starts with `prefix` ('' or ending in '/'), when one cheap request
        tells (an object store's listing of at most one key); None when the store cannot tell
        so cheaply, the default: the caller then reads the keys it cares about. Creating a node
        at a store's root asks this first: an empty place holds no node of any format."""
        return None

    def diagnose(self, prefix: str = "") -> Diagnosis | None:
        """Why nothing can be read under `prefix` ('' the root, else ending in '/'), in the
        backend's own terms (no such folder or bucket, a file where a folder should be, no
        permission), or None when the place is there. Asked only after a node was not found,
        so that the error says what is there; a store that cannot tell answers None."""
        return None

    def name_limit(self) -> int | None:
        """The longest key segment (the part between two '/'), in bytes of UTF-8, this store
        can hold; None: no limit. A store over a file system answers its file-name limit, so
        a node name too long for it is refused (`check_fits`) before anything is written."""
        return None

    # -- checks used by the kernel ------------------------------------------------------------
    def require(self, capability: str, operation: str) -> None:
        can = self.capabilities
        if capability == "write" and (not can.writeable or can.read_only):
            raise ReadOnlyError(f"cannot {operation}: {self} is read-only")
        if capability == "list" and not can.listable:
            raise CapabilityError(f"cannot {operation}: {self} cannot list its keys")
        if capability == "read" and not can.readable:
            raise CapabilityError(f"cannot {operation}: {self} cannot be read")

    def close(self) -> None:
        pass

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AwaitableReads(ABC):
    """What a store whose client is asynchronous (obstore, fsspec's async filesystems,
    zarr-python's stores) adds so that awaited reads (`zarrkit.AsyncArray`) are its own
    coroutines rather than a pool thread blocked on each call. A store that is not one is
    read on the I/O pool when awaited.

    The coroutines run on `reads_loop()`: a client bound to one event loop (fsspec's, the
    loop obstore's store calls run on) is only ever awaited there, and the requests of
    awaited and synchronous reads then share the store's one concurrency limit. `limit` is
    the most bytes one value may hold (`value_limit()` of the awaiting read). Answers are
    those of `read_many` and `read_ranges`; a cancelled call cancels its requests."""

    @abstractmethod
    def reads_loop(self) -> asyncio.AbstractEventLoop | None:
        """The event loop the coroutines below must run on; None: any running loop."""

    @abstractmethod
    async def read_many_async(self, keys: Sequence[str], limit: int) -> dict[str, Any]:
        """`read_many(keys)`: the values of the keys that exist."""

    @abstractmethod
    async def read_ranges_async(
        self, requests: Sequence[tuple[str, Range | None]], limit: int
    ) -> list[Any]:
        """`read_ranges(requests)`: each request's bytes, None where the key is absent."""


#: what a user may pass where zarrkit wants a store: a path, a URL, or a store
StoreLike = str | os.PathLike[str] | Store
"""What `open_store` takes: a path, a URL, or a store (and objects a store plugin adapts)."""

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*)://")


def scheme_of(url: str) -> str:
    """The URL scheme of `url`, lower-cased ("s3", "fsspec+s3"); "file" for a plain path."""
    match = _SCHEME.match(url)
    return match.group(1).lower() if match else "file"
