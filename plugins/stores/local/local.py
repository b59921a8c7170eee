"""A store over a directory: each key is a file under the root, '/' its path separator.

What is guaranteed, where the OS opens files relative to an open folder (every POSIX system):
no operation reads, creates, changes or removes anything outside the root, even while another
process renames folders or swaps them for symlinks during the operation. Every path is opened
one segment at a time relative to a handle of the folder before it, without following a
symlink (see `beneath`), and each file is then opened, linked, renamed or removed relative to
its folder's handle; the handles runs of reads or writes keep open are handles of real folders,
so a folder swapped away after it was opened is never followed either. Symlinks the store
meets inside the root are followed, by hand, only while they lead to folders and files inside
it, as zarr-python's LocalStore follows links (a key that is a symlink reads as its target);
a symlink that leads out is refused with `InvalidKeyError`. Writes and erases act on the names
in the root: a write replaces a symlink at the key with the written file, an erase removes the
symlink, neither touches what it points to. Listings neither follow nor show symlinks. The root
itself is trusted: it is the folder its path names when an operation starts (resolved once,
when the store is made).

Where the OS cannot open files relative to a folder (Windows), each path is checked before it
is used (symlinks resolved, and refused when they lead out of the root), so a static symlink
cannot lead out; a folder swapped for a symlink between that check and the use is followed.

This module is what the two share, and `LocalStore`, which makes the one this OS can run:
`posix.PosixLocalStore` (folder handles) or `portable.PortableLocalStore` (checked paths).

Writes go to a temporary file beside the target and are renamed over it, so a reader (in this
process or another) sees the old value or the new one, never a torn file.

A read holds at most the read's value limit (`zarrkit.abc.value_limit()`, which the chunk
engine sets from the chunk's size): a file is sized (`fstat`) before it is read whole, a range
is checked before its buffer is made, and a file larger than the limit, or a range longer, is
a `ValueTooLargeError` naming the key, not a read of gigabytes.
"""

from __future__ import annotations

import errno
import itertools
import os
import re
import stat
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from zarrkit.abc import (
    ByteRange,
    Diagnosis,
    Range,
    Store,
    StoreCapabilities,
    check_prefix,
    names,
    thread_buffer,
    value_limit,
)
from zarrkit.errors import ReadOnlyError, StoreError, ValueTooLargeError, ZarrkitError
from zarrkit.plugins.stores.local import keylocks
from zarrkit.plugins.stores.pickling import reopen

#: `PosixLocalStore._folder_fd`'s answer for a folder that does not exist
ABSENT = object()


class LocalStore(Store):
    """Files under `root`. Nothing outside the root is ever read or written (see the module's
    docstring for what that covers); symlinks inside the root that stay inside are followed.

    `LocalStore(root, ...)` is one of two implementations, chosen when it is made: where the
    OS opens files relative to an open folder (every POSIX system), `posix.PosixLocalStore`;
    elsewhere (Windows), `portable.PortableLocalStore`, which checks each path before it uses
    it. Either can be made directly (the tests make the portable one on POSIX too)."""

    names = names("file")
    #: a file create plus a rename per write
    capabilities = StoreCapabilities(blocking_writes=True)
    #: the implementations `LocalStore(...)` chooses between, by name ("posix", "portable"),
    #: each registered as it is defined (`zarrkit.plugins.stores.local` imports both)
    implementations: ClassVar[dict[str, type[LocalStore]]] = {}
    #: whether this implementation works on this OS
    usable: ClassVar[bool] = True

    def __init_subclass__(cls, *, implementation: str | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if implementation is not None:
            LocalStore.implementations[implementation] = cls

    def __new__(cls, *args: Any, **kwargs: Any) -> LocalStore:
        if cls is LocalStore:
            posix = LocalStore.implementations["posix"]
            cls = posix if posix.usable else LocalStore.implementations["portable"]
        return super().__new__(cls)

    def __init__(
        self, root: str | os.PathLike[str], *, mode: str = "r", fsync: bool = False
    ) -> None:
        # "w", "w-" and "r+" (overwrite, refuse, require a node) are for the caller, which knows
        # the node's path; a store only needs to know whether it may write at all.
        self.capabilities = self.capabilities.opened(mode)
        self.root = Path(root).resolve()
        #: the root as the caller wrote it, which is what prints (zarr-python's `file://data/x`)
        self._shown = Path(root)
        self.fsync = fsync
        self._root = str(self.root)
        self._inside = os.path.join(self._root, "")
        self._name_limit: int | None = None

    # -- what each implementation does its own way --------------------------------------------
    def _set_many(self, items: Mapping[str, bytes], folders: Folders) -> None:
        """`set_many`, with the key folders (where the implementation opens them) kept in
        `folders` for a run of calls."""
        raise NotImplementedError

    def _erase(self, keys: Iterable[str]) -> None:
        raise NotImplementedError

    def _erase_prefix(self, prefix: str) -> None:
        raise NotImplementedError

    def _keys(self, folder: str, start: str) -> Iterator[str]:
        """Keys below the key folder `folder` whose names there start with `start`."""
        raise NotImplementedError

    def _sized_ranges(
        self, requests: Sequence[tuple[str, Range | None]]
    ) -> list[tuple[int, str, int, int]]:
        """(index, key, offset, length) of the requests for ranges of known length, each
        refused when longer than the read may hold (before a buffer of that size is made)."""
        sized = [
            (i, key, r.offset, r.length)
            for i, (key, r) in enumerate(requests)
            if type(r) is ByteRange and r.length is not None
        ]
        limit = value_limit()
        for _, key, _, length in sized:
            if length > limit:
                raise self._too_large(key, f"{length} bytes asked of it", limit)
        return sized

    # -- shared ------------------------------------------------------------------------------
    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its root and options (see `pickling`); nothing it learned or holds. The
        process that unpickles it chooses its implementation again."""
        mode = "r" if self.read_only else "a"
        return reopen, (LocalStore, (self._root,), {"mode": mode, "fsync": self.fsync})

    @classmethod
    def from_url(cls, url: str, *, mode: str = "r", **options: Any) -> LocalStore:
        """`file:///abs/path`, or a plain filesystem path."""
        return cls(_path_of_url(url), mode=mode, **options)

    @property
    def url(self) -> str:
        return self.root.as_uri()

    def diagnose(self, prefix: str = "") -> Diagnosis | None:
        """What is at the root (and `prefix` under it) when no node was found there: nothing,
        a file, or a folder this process may not read."""
        target = os.path.join(self._root, check_prefix(prefix).rstrip("/")) if prefix else None
        for path in (self._root, target):
            if path is None:
                continue
            try:
                info = os.stat(path)
            except FileNotFoundError:
                return Diagnosis("missing", f"{path} does not exist")
            except NotADirectoryError:
                return Diagnosis(
                    "not_a_container", f"{_file_above(path)} is a file, not a directory"
                )
            except PermissionError:
                return Diagnosis("denied", f"permission denied: {path}")
            if not stat.S_ISDIR(info.st_mode):
                return Diagnosis("not_a_container", f"{path} is a file, not a directory")
            try:
                with os.scandir(path) as entries:
                    next(entries, None)
            except PermissionError:
                return Diagnosis("denied", f"permission denied: cannot list {path}")
        return None

    def name_limit(self) -> int | None:
        """The file system's file-name limit (NAME_MAX) where the root is (or will be)."""
        if self._name_limit is None:
            self._name_limit = _name_max(self.root)
        return self._name_limit

    def _too_large(self, key: str, what: str, limit: int) -> ValueTooLargeError:
        return ValueTooLargeError(
            f"{what}, more than the {limit} bytes the read can hold",
            key=key,
            store=self,
            operation="read",
        )

    def set(self, key: str, value: bytes) -> None:
        self.set_many({key: value})

    def set_many(self, items: Mapping[str, bytes]) -> None:
        """Check every key and value before writing any, so a bad one in a batch writes nothing."""
        folders = Folders()
        try:
            with write_errors(self, "write", items):
                self._set_many(items, folders)
        finally:
            folders.close()

    def writing(self) -> AbstractContextManager[Any]:
        """A run of writes that opens each key folder once for the whole run (see `_Writes`)."""
        return _Writes(self)

    def erase(self, key: str) -> None:
        """Remove the key's file (a symlink at the key: the link, not what it points to) and
        the folders that leaves empty."""
        self.require("write", f"erase {key!r}")
        with write_errors(self, "erase", [key]):
            self._erase([key])

    def erase_many(self, keys: Iterable[str]) -> None:
        """`erase` per key, each folder opened and pruned once (the engine erases the chunks
        that hold only the fill value this way)."""
        self.require("write", "erase keys")
        keys = list(keys)
        with write_errors(self, "erase", keys):
            self._erase(keys)

    def erase_prefix(self, prefix: str) -> None:
        """Remove whole directory trees rather than key by key."""
        self.require("write", f"erase prefix {prefix!r}")
        with write_errors(self, "erase", [prefix]):
            self._erase_prefix(prefix)

    def list(self) -> Iterator[str]:
        return self._keys("", "")

    def list_prefix(self, prefix: str) -> Iterator[str]:
        """Descend only into the directories the prefix can match ('a/b' reads 'a/' once)."""
        folder, slash, start = prefix.rpartition("/")
        if slash:
            check_prefix(folder + slash)
        return self._keys(folder, start)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LocalStore):
            return NotImplemented
        return self.root == other.root

    def __hash__(self) -> int:
        return hash(self.root)

    def __str__(self) -> str:
        # zarr-python's text: the path as given after file://, not percent-encoded as `url` is
        return f"file://{self._shown.as_posix()}"

    def __repr__(self) -> str:
        return f"LocalStore('{self}')"


#: Temporary files of writes in flight (or left by a crash); listings skip them.
PARTIAL = re.compile(r"\.[0-9a-f]{16}\.partial|" + keylocks.LOCK_PATTERN)


class Folders(dict):
    """Key folders opened beneath the root for one call or one run: folder -> handle (or
    `ABSENT`), the root's handle (the folder "") in `root`. Handles of real folders, so one
    kept while its path is swapped for a symlink still names the folder it was opened as."""

    __slots__ = ("root",)

    def __init__(self) -> None:
        super().__init__()
        self.root: int | None = None

    def opened_root(self) -> int:
        """The root's handle, once a folder has been opened through these."""
        assert self.root is not None, "no folder was opened through these yet"
        return self.root

    def close(self) -> None:
        fds = {fd for fd in self.values() if type(fd) is int}
        if self.root is not None:
            fds.add(self.root)
        self.clear()
        self.root = None
        for fd in fds:
            os.close(fd)

    def room_for(self, key: str) -> None:
        """Before a read of `key` in a loop over many keys: when its folder is not open yet and
        `OPEN_FOLDERS` are, close those (the root stays open). A group of a thousand members
        reads each member's document from a folder of its own, and a process may hold only
        about a thousand files (`ulimit -n`). Only read loops call this, between reads: no
        handle of a folder is in use across it."""
        if len(self) < OPEN_FOLDERS or type(key) is not str or key.rpartition("/")[0] in self:
            return
        fds = {fd for fd in self.values() if type(fd) is int and fd != self.root}
        self.clear()
        for fd in fds:
            os.close(fd)


#: the most key folders a run of reads or writes keeps open between calls
KEPT_FOLDERS = 32


#: the most key folders one read of many keys holds open at once (`Folders.room_for`)
OPEN_FOLDERS = 128


class _Writes:
    """One thread's run of writes to a `LocalStore` (`LocalStore.writing`): a key folder is
    opened (beneath the root) once for the run rather than on every `set_many`, as one
    `set_many` opens it once for its batch. The engine stores compressed chunks one per call
    (see `engine.stream_size`), so this saves the folder's walk per chunk. A folder swapped
    for a symlink after it was opened is not followed: the run writes into the folder it
    opened."""

    __slots__ = ("_folders", "_store")

    def __init__(self, store: LocalStore) -> None:
        self._store = store
        self._folders = Folders()

    def __enter__(self) -> _Writes:
        return self

    def __exit__(self, *exc: object) -> None:
        self._folders.close()

    def set_many(self, items: Mapping[str, bytes]) -> None:
        try:
            with write_errors(self._store, "write", items):
                self._store._set_many(items, self._folders)
        finally:
            if len(self._folders) > KEPT_FOLDERS:
                self._folders.close()

    def erase_many(self, keys: Iterable[str]) -> None:
        self._folders.close()  # (an erase may remove emptied folders)
        self._store.erase_many(keys)


@contextmanager
def write_errors(store: LocalStore, operation: str, keys: Iterable[str]) -> Iterator[None]:
    """The file system's refusal of a write, as a zarrkit error naming the operation and the
    keys: a read-only file system is a `ReadOnlyError` (the store cannot be written, as if
    opened with mode "r"); anything else (no space, no permission, an I/O error) a
    `StoreError`. What was written before the refusal stays whole: every write is a rename
    or a link of a complete file."""
    try:
        yield
    except OSError as exc:
        if isinstance(exc, ZarrkitError):
            raise
        named = ", ".join(repr(k) for k in itertools.islice(keys, 3)) or "''"
        if exc.errno == errno.EROFS:
            raise ReadOnlyError(
                f"{store} is on a read-only file system: cannot {operation} ({named})"
            ) from exc
        first = next(iter(keys), None)
        raise StoreError(
            f"cannot {operation} ({named}): {exc.strerror or exc}",
            key=first,
            store=store,
            operation=operation,
        ) from exc


def sorted_entries(entries: Iterable[os.DirEntry[str]]) -> tuple[list[str], list[str]]:
    """The names of the files and of the folders among `entries`, each sorted; symlinks
    are neither."""
    keys: list[str] = []
    prefixes: list[str] = []
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            prefixes.append(entry.name)
        elif entry.is_file(follow_symlinks=False):
            keys.append(entry.name)
    return sorted(keys), sorted(prefixes)


def _file_above(path: str) -> str:
    """The first path from the top of `path` that is not a folder (a file in the way)."""
    parts = Path(path).parts
    for i in range(1, len(parts) + 1):
        candidate = os.path.join(*parts[:i])
        if os.path.exists(candidate) and not os.path.isdir(candidate):
            return candidate
    return path


def _path_of_url(url: str) -> str:
    if not url.startswith("file:"):
        return url
    from urllib.parse import urlsplit
    from urllib.request import url2pathname

    parts = urlsplit(url)
    if parts.netloc not in ("", "localhost"):
        raise ValueError(f"{url!r} names host {parts.netloc!r}; a file URL must be local")
    return url2pathname(parts.path)


def buffer_of(value: Any) -> Any:
    """A value to write, checked to be a buffer: a numpy array as it is (a strided one is
    copied in C order only when written, see `c_order`), anything else as a memoryview."""
    if type(value) is np.ndarray and not value.dtype.hasobject:
        return value
    return memoryview(value)


def c_order(data: Any) -> Any:
    """A buffer's bytes in C order: itself when it is C-contiguous, else a copy in this
    thread's scratch buffer (valid until its next write): a chunk written straight from a
    strided view of the user's array (the `bytes` codec does not copy) would otherwise cost
    a fresh allocation per chunk, faulted in page by page from pool threads."""
    if type(data) is np.ndarray:
        source = data
    else:
        if data.c_contiguous:
            return data
        try:
            source = np.asarray(data)
        except (TypeError, ValueError):  # a buffer format numpy does not read
            return memoryview(data.tobytes())
    if source.flags.c_contiguous:
        return source
    flat = thread_buffer("c_order", source.nbytes)
    np.copyto(flat.view(source.dtype).reshape(source.shape), source)
    return flat


def scan(directory: str, *, keep_partial: bool = False) -> list[os.DirEntry[str]]:
    """Entries of `directory` (none when it is absent), read at once so no handle stays open."""
    try:
        with os.scandir(directory) as entries:
            return [e for e in entries if keep_partial or not PARTIAL.fullmatch(e.name)]
    except (FileNotFoundError, NotADirectoryError):
        return []


def _name_max(path: Path) -> int:
    """NAME_MAX of the file system holding `path` or, before it exists, its nearest parent."""
    for folder in (path, *path.parents):
        try:
            return os.pathconf(folder, "PC_NAME_MAX")
        except FileNotFoundError:
            continue
        except (OSError, ValueError):  # (no pathconf: Windows; its limit is 255 too)
            break
    return 255
