"""A store in an LMDB environment (a real embedded B+tree database, the `lmdb` package):
`lmdb:///path/data.lmdb` or `LmdbStore("data.lmdb", mode="a")`.

Each `set_many` / `erase_many` / `erase_prefix` is one write transaction, so a batch of chunks
is committed whole or not at all; a writer killed at any moment leaves every key its old or its
new value (LMDB is copy-on-write and commits by switching one meta page). Readers never block
writers or each other, in any number of threads and processes; a batch of reads
(`get_many`, `get_ranges`, a listing) is one read transaction, so it sees one moment.

The memory map is reserved large (1 TiB on 64-bit systems: address space, not disk) and doubled
if a write still fills it. LMDB allows one open of an environment per process, so all handles on
one path in a process share it; its settings (`sync`, `max_readers`) are the first opener's.
Keys are at most 511 bytes of UTF-8 (LMDB's limit); a longer one is refused before writing.

A handle pickles as its path and options; the unpickled one opens the environment on first use,
so each spawned or forkserver worker has its own. A child forked after an environment was
opened goes on using the inherited one (with its locks in this process fresh): py-lmdb refuses
to open the same files twice in one process, and closing the inherited environment in the
child would abort the parent's transactions it copied (releasing the parent's write lock, and
waiting for the parent's writing thread). A fork waits for a write transaction of this process
to end (`fork_waits_for`): py-lmdb records the writing thread, and a child forked mid-write
would wait for that thread forever. The cost: each such child that
reads leaves one reader slot, counted under the parent's process id, until the parent closes
the environment; a parent forking more than `max_readers` (126) reading children over its life
should start workers with spawn or forkserver.
"""

from __future__ import annotations

import builtins
import os
import sys
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, TypedDict, TypeVar

from zarrkit.abc import (
    Range,
    Store,
    StoreCapabilities,
    Update,
    check_key,
    check_prefix,
    fork_waits_for,
    names,
    rlock,
)
from zarrkit.errors import InvalidKeyError, PluginLoadError, StoreError
from zarrkit.helpers import optimistic_update

T = TypeVar("T")

DEFAULT_MAP_SIZE = (1 << 40) if sys.maxsize > 2**32 else (1 << 30)
_AFTER_SLASH = b"0"  # the byte after '/': where a listing resumes past one child prefix


def _lmdb() -> Any:
    try:
        import lmdb
    except ImportError as exc:
        raise PluginLoadError(
            "the lmdb store needs the 'lmdb' package: pip install 'zarrkit[lmdb]'"
        ) from exc
    return lmdb


class _Options(TypedDict):
    """How the environment is opened: kept, so an unpickled handle opens it the same way."""

    map_size: int | None
    sync: bool
    max_readers: int


class LmdbStore(Store):
    names = names("lmdb")
    capabilities = StoreCapabilities(safe_updates=True)

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        mode: str = "r",
        map_size: int | None = None,
        sync: bool = True,
        max_readers: int = 126,
    ) -> None:
        self.capabilities = self.capabilities.opened(mode)
        self.path = Path(path).absolute()
        self._options = _Options(map_size=map_size, sync=sync, max_readers=max_readers)
        self._acquire()

    def _acquire(self) -> _Env:
        options = self._options
        env = self._env = _Env.acquire(
            self.path,
            create=not self.read_only,
            map_size=options["map_size"] or DEFAULT_MAP_SIZE,
            sync=options["sync"],
            max_readers=options["max_readers"],
            store=self,
        )
        self._release = weakref.finalize(self, env.release)
        return env

    def __getattr__(self, name: str) -> Any:
        """An unpickled handle opens its environment on first use (see `__reduce__`)."""
        if name == "_env" and "_options" in self.__dict__:
            return self._acquire()
        raise AttributeError(name)

    def __reduce__(self) -> tuple[Any, ...]:
        return _unpickle, (self.path, "r" if self.read_only else "a", self._options)

    @classmethod
    def from_url(cls, url: str, *, mode: str = "r", **options: Any) -> LmdbStore:
        """`lmdb://relative/dir` or `lmdb:///absolute/dir` (the environment's directory)."""
        if not url.startswith("lmdb://") or url == "lmdb://":
            raise ValueError(f"an LMDB store URL looks like lmdb:///path/to/data.lmdb, got {url!r}")
        return cls(url[len("lmdb://") :], mode=mode, **options)

    @property
    def url(self) -> str:
        return f"lmdb://{self.path}"

    def close(self) -> None:
        release = self.__dict__.get("_release")
        if release is not None:
            release()

    # -- keys --------------------------------------------------------------------------------------
    def _key(self, key: str) -> bytes:
        raw = check_key(key).encode("utf-8")
        if len(raw) > self._env.max_key_size:
            raise InvalidKeyError(
                f"store key {key!r} is {len(raw)} bytes of UTF-8; "
                f"LMDB keys are at most {self._env.max_key_size}"
            )
        return raw

    # -- readable ----------------------------------------------------------------------------------
    def get(self, key: str, byte_range: Range | None = None) -> bytes | None:
        return self.get_ranges([(key, byte_range)])[0]

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes]:
        wanted = [(k, self._key(k)) for k in keys]

        def read(txn: Any) -> dict[str, bytes]:
            out = {}
            for key, raw in wanted:
                value = txn.get(raw)
                if value is not None:
                    out[key] = bytes(value)
            return out

        return self._env.read(read, self)

    def get_ranges(self, requests: Sequence[tuple[str, Range | None]]) -> list[bytes | None]:
        wanted = [(self._key(k), r) for k, r in requests]

        def read(txn: Any) -> list[bytes | None]:
            out: list[bytes | None] = []
            for raw, rng in wanted:
                value = txn.get(raw)
                if value is None:
                    out.append(None)
                else:
                    out.append(bytes(value if rng is None else value[rng.slice(len(value))]))
            return out

        return self._env.read(read, self)

    def exists(self, key: str) -> bool:
        raw = self._key(key)
        return self._env.read(lambda txn: txn.get(raw) is not None, self)

    # -- writeable ---------------------------------------------------------------------------------
    def set(self, key: str, value: Any) -> None:
        self.set_many({key: value})

    def set_many(self, items: Mapping[str, Any]) -> None:
        """One transaction: every key is checked first, then all values commit together."""
        self.require("write", "set keys")
        puts = [(self._key(k), _buffer(v)) for k, v in items.items()]

        def write(txn: Any) -> None:
            for raw, value in puts:
                txn.put(raw, value)

        self._env.write(write, self)

    # -- updates: compare-and-swap in one write transaction -------------------------------------------

    def update_many(self, keys: Sequence[str], compute: Update) -> None:
        """Each stored value is its own version token: a write transaction (one at a time
        across every process, by LMDB's writer lock) stores the new values of the keys still
        holding what was read. `compute` runs outside any transaction, so writers of the other
        keys and processes are not kept waiting on it, nor pool threads on this store."""
        optimistic_update(self, keys, compute, self._snapshot, self._swap)

    def _snapshot(self, keys: Sequence[str]) -> tuple[dict[str, bytes], dict[str, Any]]:
        tokens: dict[str, Any] = dict.fromkeys(keys)
        tokens.update(self.get_many(keys))
        return {k: v for k, v in tokens.items() if v is not None}, tokens

    def _swap(self, tokens: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
        self.require("write", "update keys")
        writes = [(k, self._key(k), None if v is None else _buffer(v)) for k, v in new.items()]
        changed: list[str] = []

        def swap(txn: Any) -> None:
            changed.clear()  # (run again if the map had to grow)
            for key, raw, value in writes:
                if txn.get(raw) != tokens.get(key):
                    changed.append(key)
                elif value is None:
                    txn.delete(raw)
                else:
                    txn.put(raw, value)

        self._env.write(swap, self)
        return changed

    def erase(self, key: str) -> None:
        self.erase_many([key])

    def erase_many(self, keys: Iterable[str]) -> None:
        self.require("write", "erase keys")
        doomed = [self._key(k) for k in keys]

        def write(txn: Any) -> None:
            for raw in doomed:
                txn.delete(raw)

        self._env.write(write, self)

    def erase_prefix(self, prefix: str) -> None:
        self.require("write", f"erase prefix {prefix!r}")
        start = check_prefix(prefix).encode("utf-8")

        def write(txn: Any) -> None:
            cursor = txn.cursor()
            found = cursor.set_range(start)
            while found:
                raw = bytes(cursor.key())
                if not raw or not raw.startswith(start):  # b"": past the last record
                    break
                found = cursor.delete()  # and move to the next record

        self._env.write(write, self)

    # -- listable ----------------------------------------------------------------------------------
    def list(self) -> Iterator[str]:
        return self.list_prefix("")

    def list_prefix(self, prefix: str) -> Iterator[str]:
        """Keys starting with `prefix`, in key order, from one read transaction."""
        start = prefix.encode("utf-8")

        def read(txn: Any) -> list[str]:
            cursor = txn.cursor()
            out = []
            if cursor.set_range(start):
                for raw in cursor.iternext(values=False):
                    raw = bytes(raw)
                    if not raw.startswith(start):
                        break
                    out.append(raw.decode("utf-8"))
            return out

        return iter(self._env.read(read, self))

    def list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        """Walks the keys under `prefix`, jumping over each child prefix's keys in one seek."""
        start = check_prefix(prefix).encode("utf-8")

        def read(txn: Any) -> tuple[list[str], list[str]]:
            cursor = txn.cursor()
            keys: list[str] = []
            prefixes: list[str] = []
            found = cursor.set_range(start)
            while found:
                raw = bytes(cursor.key())
                if not raw.startswith(start):
                    break
                child, slash, _ = raw[len(start) :].partition(b"/")
                if slash:
                    prefixes.append(child.decode("utf-8"))
                    found = cursor.set_range(start + child + _AFTER_SLASH)
                else:
                    keys.append(child.decode("utf-8"))
                    found = cursor.next()
            return keys, prefixes

        return self._env.read(read, self)

    # -- identity ----------------------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LmdbStore):
            return NotImplemented
        return self._env is other._env

    def __hash__(self) -> int:
        return hash(self.path)

    def __repr__(self) -> str:
        return f"LmdbStore({str(self.path)!r})"


def _unpickle(path: Path, mode: str, options: _Options) -> LmdbStore:
    store = LmdbStore.__new__(LmdbStore)
    store.capabilities = LmdbStore.capabilities.opened(mode)
    store.path, store._options = path, options
    return store


def _buffer(value: Any) -> Any:
    view = memoryview(value)
    return view if view.c_contiguous else view.tobytes()


class _Env:
    """One open LMDB environment, shared by every handle on its path in this process."""

    _open: ClassVar[dict[str, _Env]] = {}
    #: reentrant: a handle the garbage collector finalizes releases its environment from
    #: whatever the thread was doing, which may be `acquire` with this lock held (the zip
    #: store's twin of this lock hung a test run there)
    _open_lock = rlock()

    @classmethod
    def acquire(
        cls, path: Path, *, create: bool, map_size: int, sync: bool, max_readers: int, store: Store
    ) -> _Env:
        real = os.path.realpath(path)
        with cls._open_lock:
            env = cls._open.get(real)
            if env is None:
                env = cls._open[real] = cls(
                    real,
                    create=create,
                    map_size=map_size,
                    sync=sync,
                    max_readers=max_readers,
                    store=store,
                )
            env.handles += 1
            return env

    def __init__(
        self, path: str, *, create: bool, map_size: int, sync: bool, max_readers: int, store: Store
    ) -> None:
        lmdb = self.lmdb = _lmdb()
        self.path = path
        self.pid = os.getpid()  # (a forked child must never close it: see the module docstring)
        self.handles = 0
        # a fork waits for the write in progress: py-lmdb records the writing thread, and a
        # child inheriting that record would wait for a thread it does not have
        self.write_lock = fork_waits_for(rlock())
        if not create and not os.path.isdir(path):
            raise StoreError("no LMDB environment there", store=store, operation="open")
        # open read-only only where the directory cannot be written; a handle opened with
        # mode "r" is refused writes by the store, and can share the environment with writers
        readonly = os.path.isdir(path) and not os.access(path, os.W_OK)
        try:
            self.env = lmdb.open(
                path,
                subdir=True,
                create=create,
                readonly=readonly,
                map_size=map_size,
                sync=sync,
                max_readers=max_readers,
                max_dbs=0,
                lock=True,
            )
        except lmdb.Error as exc:
            raise StoreError(str(exc), store=store, operation="open") from exc
        self.max_key_size = self.env.max_key_size()

    def release(self) -> None:
        with _Env._open_lock:
            self.handles -= 1
            if self.handles:
                return
            del _Env._open[self.path]
        if self.pid == os.getpid():
            with self.write_lock:
                self.env.close()

    def read(self, run: Callable[[Any], T], store: Store) -> T:
        lmdb = self.lmdb
        for attempt in range(2):
            try:
                with self.env.begin(buffers=True) as txn:
                    return run(txn)
            except lmdb.MapResizedError:  # another process grew the map: adopt its size
                if attempt:
                    raise
                with self.write_lock:
                    self.env.set_mapsize(0)
            except lmdb.Error as exc:
                raise StoreError(str(exc), store=store, operation="read") from exc
        raise AssertionError("unreachable")

    def write(self, run: Callable[[Any], None], store: Store) -> None:
        """Run `run` in one write transaction, growing the map and retrying if it is full."""
        lmdb = self.lmdb
        with self.write_lock:
            while True:
                try:
                    with self.env.begin(write=True) as txn:
                        run(txn)
                    return
                except lmdb.MapFullError:
                    self.env.set_mapsize(self.env.info()["map_size"] * 2)
                except lmdb.MapResizedError:
                    self.env.set_mapsize(0)
                except lmdb.Error as exc:
                    raise StoreError(str(exc), store=store, operation="write") from exc
