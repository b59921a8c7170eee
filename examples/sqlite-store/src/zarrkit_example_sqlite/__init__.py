"""A zarrkit store holding a whole hierarchy in one SQLite file, as a third-party package would
write it: `zarrkit.open_group("sqlite:///data/survey.db", mode="a")`.

One table of (key, value) rows. Byte ranges are read with SQL's `substr`, so reading an inner
chunk of a shard does not load the shard. `update_many` runs in one write transaction, which
SQLite locks against every other connection to the file, in any process: so the store declares
`safe_updates`, and partial chunk writes from several processes lose nothing.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from zarrkit.abc import (
    Diagnosis,
    Range,
    Store,
    StoreCapabilities,
    Update,
    check_key,
    check_mode,
    check_prefix,
    names,
)
from zarrkit.errors import ArgumentError, StoreError

_SCHEME = "sqlite://"
_SCHEMA = "CREATE TABLE IF NOT EXISTS zarr (key TEXT PRIMARY KEY, value BLOB NOT NULL)"


class SqliteStore(Store):
    """The keys and values in the SQLite file at `path`; read-only with mode "r"."""

    names = names("sqlite")
    capabilities = StoreCapabilities(safe_updates=True)

    def __init__(self, path: str | os.PathLike[str], *, mode: str = "r") -> None:
        self.path = os.fspath(path)
        self.capabilities = self.capabilities.opened(check_mode(mode))
        self._lock = threading.RLock()  # one connection, shared by the engine's threads
        self._db: sqlite3.Connection | None = None
        if self.read_only and not os.path.exists(self.path):
            return  # nothing to read: every key is absent, and `diagnose` says why
        try:
            if self.read_only:
                uri = f"file:{self.path}?mode=ro"
                self._db = sqlite3.connect(uri, uri=True, check_same_thread=False)
            else:
                self._db = sqlite3.connect(self.path, check_same_thread=False)
                # a write-ahead log: readers in other processes go on reading while a write
                # commits, and a commit costs no sync to disk (one at each checkpoint)
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
                self._db.execute(_SCHEMA)
            self._db.isolation_level = None  # autocommit; transactions are explicit
        except sqlite3.Error as exc:
            raise StoreError(str(exc), store=self, operation="open") from exc

    @classmethod
    def from_url(cls, url: str, *, mode: str = "r", **options: Any) -> SqliteStore:
        """`sqlite:///absolute/path.db` or `sqlite://relative/path.db`."""
        if options:
            raise ArgumentError(f"the sqlite store takes no storage options, got {sorted(options)}")
        path = url[len(_SCHEME) :] if url.startswith(_SCHEME) else url
        if not path:
            raise ValueError(f"{url!r}: a sqlite URL names a file, e.g. sqlite:///data/x.db")
        return cls(path, mode=mode)

    @property
    def url(self) -> str:
        return _SCHEME + self.path

    # -- the connection ----------------------------------------------------------------------
    @contextmanager
    def _query(self, operation: str, key: str | None = None) -> Iterator[sqlite3.Connection]:
        """The connection, held for one statement or transaction; a database failure is a
        StoreError naming the key, never a missing key."""
        with self._lock:
            if self._db is None:
                raise StoreError(f"{self.path} does not exist", key=key, store=self)
            try:
                yield self._db
            except sqlite3.Error as exc:
                raise StoreError(str(exc), key=key, store=self, operation=operation) from exc

    @contextmanager
    def _transaction(self, operation: str) -> Iterator[sqlite3.Connection]:
        """One write transaction: all of it or none of it, and locked against other writers."""
        self.require("write", operation)
        with self._query(operation) as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    # -- readable ----------------------------------------------------------------------------
    def get(self, key: str, byte_range: Range | None = None) -> bytes | None:
        check_key(key)
        if self._db is None:
            return None
        with self._query("read", key) as db:
            if byte_range is None:
                row = db.execute("SELECT value FROM zarr WHERE key = ?", (key,)).fetchone()
                return None if row is None else bytes(row[0])
            row = db.execute("SELECT length(value) FROM zarr WHERE key = ?", (key,)).fetchone()
            if row is None:
                return None
            part = byte_range.slice(row[0])
            if part.stop <= part.start:
                return b""
            sql = "SELECT substr(value, ?, ?) FROM zarr WHERE key = ?"  # 1-based
            row = db.execute(sql, (part.start + 1, part.stop - part.start, key)).fetchone()
        return None if row is None else bytes(row[0])

    def exists(self, key: str) -> bool:
        check_key(key)
        if self._db is None:
            return False
        with self._query("read", key) as db:
            return db.execute("SELECT 1 FROM zarr WHERE key = ?", (key,)).fetchone() is not None

    # -- writeable ---------------------------------------------------------------------------
    def set(self, key: str, value: Any) -> None:
        self.set_many({key: value})

    def set_many(self, items: Mapping[str, Any]) -> None:
        rows = [(check_key(k), memoryview(v).tobytes()) for k, v in items.items()]
        with self._transaction("write") as db:
            db.executemany("INSERT OR REPLACE INTO zarr (key, value) VALUES (?, ?)", rows)

    def erase(self, key: str) -> None:
        self.erase_many([key])

    def erase_many(self, keys: Iterable[str]) -> None:
        rows = [(check_key(k),) for k in keys]
        with self._transaction("erase") as db:
            db.executemany("DELETE FROM zarr WHERE key = ?", rows)

    def erase_prefix(self, prefix: str) -> None:
        check_prefix(prefix)
        with self._transaction(f"erase prefix {prefix!r}") as db:
            sql = "DELETE FROM zarr WHERE substr(key, 1, ?) = ?"
            db.execute(sql, (len(prefix), prefix))

    def update_many(self, keys: Sequence[str], compute: Update) -> None:
        for key in keys:
            check_key(key)
        with self._transaction("update") as db:
            old = {}
            for key in keys:
                row = db.execute("SELECT value FROM zarr WHERE key = ?", (key,)).fetchone()
                if row is not None:
                    old[key] = bytes(row[0])
            for key, value in compute(keys, old).items():
                check_key(key)
                if value is None:
                    db.execute("DELETE FROM zarr WHERE key = ?", (key,))
                else:
                    sql = "INSERT OR REPLACE INTO zarr (key, value) VALUES (?, ?)"
                    db.execute(sql, (key, memoryview(value).tobytes()))

    # -- listable ----------------------------------------------------------------------------
    def list(self) -> Iterator[str]:
        return self.list_prefix("")

    def list_prefix(self, prefix: str) -> Iterator[str]:
        if self._db is None:
            return iter([])
        with self._query("list") as db:
            sql = "SELECT key FROM zarr WHERE substr(key, 1, ?) = ? ORDER BY key"
            keys = [row[0] for row in db.execute(sql, (len(prefix), prefix))]
        return iter(keys)

    def diagnose(self, prefix: str = "") -> Diagnosis | None:
        if not os.path.exists(self.path):
            return Diagnosis("missing", f"{self.path} does not exist")
        return None

    def close(self) -> None:
        if not hasattr(self, "_lock"):
            return  # (__init__ failed before it had a connection)
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def __del__(self) -> None:
        self.close()

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled (for dask's workers, other processes) as the file and mode: each process
        opens its own connection."""
        return (_reopen, (self.path, "r" if self.read_only else "a"))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SqliteStore):
            return NotImplemented
        return os.path.abspath(self.path) == os.path.abspath(other.path)

    def __hash__(self) -> int:
        return hash(os.path.abspath(self.path))

    def __repr__(self) -> str:
        return f"SqliteStore({self.path!r})"


def _reopen(path: str, mode: str) -> SqliteStore:
    return SqliteStore(path, mode=mode)
