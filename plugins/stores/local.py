"""A store over a directory: each key is a file under the root, '/' its path separator.

Writes go to a temporary file beside the target and are renamed over it, so a reader (in this
process or another) sees the old value or the new one, never a torn file. Keys whose real path
(symlinks resolved) leaves the root are refused, so a store cannot be tricked into touching
files outside it.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import stat
from pathlib import Path
from contextlib import nullcontext
from typing import Any, Callable, ContextManager, Iterable, Iterator, Mapping, Sequence

import numpy as np

from zarrkit.buffers import reusable, scratch
from zarrkit.errors import InvalidKeyError
from zarrkit.names import names
from zarrkit.store import (ByteRange, Range, Store, Update, check_key, check_mode, check_prefix,
                           write_back)

from . import keylocks
from .fileops import fsync_dir as _fsync_dir
from .fileops import remove_quietly as _remove_quietly

#: Opening a file without following a final symlink (0 where the platform cannot: then every
#: read takes the fully checked path).
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_OPEN_READ = os.O_RDONLY | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)

#: opening files relative to an open folder (not on Windows), and how such a folder is opened
_DIR_FD = os.open in os.supports_dir_fd and hasattr(os, "O_DIRECTORY")
_OPEN_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
#: `LocalStore._folder_fd`'s answer for a folder that does not exist
_ABSENT = object()

#: last key segments that `check_key` refuses on their own (besides '\\' and NUL)
_ODD_NAMES = frozenset({"", ".", ".."})

#: Temporary files of writes in flight (or left by a crash), and lock files of updates in
#: flight (`keylocks`); listings skip them.
_PARTIAL = re.compile(r"\.[0-9a-f]{16}\.partial|" + keylocks.LOCK_PATTERN)

#: the largest whole-file read size `LocalStore._read_whole` learns (larger files are sized first)
_MAX_HINT = 4 << 20

#: reading into a caller's buffer at an offset (not on Windows)
_PREADV = hasattr(os, "preadv")
#: `LocalStore._open_in`'s answer for a key that is a symlink (checked the slow way)
_SYMLINK = object()

#: Linux's unnamed temporary files (0 elsewhere), named through /proc once written; errors that
#: say a file system does not have them
_O_TMPFILE = getattr(os, "O_TMPFILE", 0) if os.path.isdir("/proc/self/fd") else 0
_PROC_FD = "/proc/self/fd"
_NO_UNNAMED = frozenset({errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL})

#: A concurrent erase may prune the directory a write has just created; retry that many times.
_WRITE_ATTEMPTS = 100


class LocalStore(Store):
    """Files under `root`. Listings do not follow symlinks (so they stay inside the root and
    cannot loop); keys reached through a symlink that stays inside the root are readable."""

    names = names("file")
    blocking_writes = True  # a file create plus a rename per write

    def __init__(
        self, root: str | os.PathLike[str], *, mode: str = "r", fsync: bool = False
    ) -> None:
        # "w", "w-" and "r+" (overwrite, refuse, require a node) are for the caller, which knows
        # the node's path; a store only needs to know whether it may write at all.
        self.read_only = check_mode(mode) == "r"
        self.root = Path(root).resolve()
        self.fsync = fsync
        self._root = str(self.root)
        self._inside = os.path.join(self._root, "")
        #: whether temporary files may live in the root (see `_write`)
        self._same_device = True
        #: whether writes go through unnamed temporary files (see `_write_unnamed`)
        self._unnamed = bool(_O_TMPFILE)
        #: bytes asked for when reading a whole file (see `_read_whole`)
        self._size_hint = 4096

    @classmethod
    def from_url(cls, url: str, *, mode: str = "r", **options: Any) -> "LocalStore":
        """`file:///abs/path`, or a plain filesystem path."""
        return cls(_path_of_url(url), mode=mode, **options)

    @property
    def url(self) -> str:
        return self.root.as_uri()

    # -- paths -------------------------------------------------------------------------------
    def _path(self, key: str) -> str:
        """The real path of `key`, refusing one that symlinks lead out of the root."""
        real = os.path.realpath(os.path.join(self._root, check_key(key)))
        if not real.startswith(self._inside):
            raise InvalidKeyError(f"store key {key!r} resolves to {real!r}, outside {self}")
        return real

    def _dir(self, prefix: str) -> str:
        if not check_prefix(prefix):
            return self._root
        return self._path(prefix[:-1])

    # -- readable ----------------------------------------------------------------------------
    def get(self, key: str, byte_range: Range | None = None) -> bytes | None:
        path = self._path(key)
        try:
            with open(path, "rb") as f:
                if byte_range is None:
                    return f.read()
                part = byte_range.slice(os.fstat(f.fileno()).st_size)
                f.seek(part.start)
                return f.read(max(0, part.stop - part.start))
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return None

    def exists(self, key: str) -> bool:
        return os.path.isfile(self._path(key))

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes]:
        """Like `get` per key, but each folder's real path is resolved once per call: the
        per-key realpath (a stat per path segment) was most of the cost of small chunks."""
        return self._read_files(keys, buffers=False)

    def read_many(self, keys: Iterable[str]) -> dict[str, Any]:
        """`get_many`, with files of `_MAX_HINT` or more read into numpy buffers (see
        `Store.read_many`): measured here, whole reads of a sharded array fault in 13,000
        pages instead of 96,000."""
        return self._read_files(keys, buffers=True)

    def reading(self) -> ContextManager[Any]:
        """A run of reads that opens each key folder once for the whole run (see `_Reads`)."""
        return _Reads(self)

    def _read_files(self, keys: Iterable[str], *, buffers: bool,
                    kept: dict[str, Any] | None = None) -> dict[str, Any]:
        """The files of `keys`, each opened relative to its folder, opened once per call or,
        with `kept`, once per run of calls (whose owner closes them)."""
        if not _NOFOLLOW or not _DIR_FD:  # (every POSIX system Python runs on has both)
            return super().get_many(keys)
        folders: dict[str, Any] = {} if kept is None else kept
        out = {}
        read_sized = self._read_sized
        try:
            for key in keys:  # (this loop is most of a tiny chunk's read)
                where, name = self._locate(key, folders, self._folder_fd)
                if where is _ABSENT:
                    continue
                try:
                    fd = os.open(name, _OPEN_READ, dir_fd=where)
                except (FileNotFoundError, NotADirectoryError):
                    continue
                except OSError as exc:
                    if exc.errno != errno.ELOOP:
                        raise
                    value = self.get(key)  # a symlink: check where it leads
                else:
                    try:  # (`_read_whole` inlined)
                        hint = self._size_hint
                        if hint >= _MAX_HINT or len(value := os.read(fd, hint)) >= hint:
                            value = read_sized(fd, buffers)
                    except IsADirectoryError:
                        value = None
                    finally:
                        os.close(fd)
                if value is not None:
                    out[key] = value
        finally:
            if kept is None:
                _close_folders(folders)
        return out

    def _folder_fd(self, folder: str, folders: dict[str, Any]) -> Any:
        """The key folder's directory, open (or `_ABSENT`), remembered in `folders`: files
        opened relative to it skip the walk of every path segment (800-byte chunks: 5.2 µs
        per open, read and close, 6.9 through the full path)."""
        try:
            where = os.open(self._folder(folder), _OPEN_DIR)
        except (FileNotFoundError, NotADirectoryError):
            where = _ABSENT
        folders[folder] = where
        return where

    def get_ranges(self, requests: Sequence[tuple[str, Range | None]]) -> list[bytes | None]:
        folders: dict[str, str] = {}
        return [self._get_in(key, byte_range, folders) for key, byte_range in requests]

    def _folder(self, folder: str) -> str:
        """The real path of a key's folder: the root is already real, so only the segments
        below it are looked at; a symlink among them is resolved and checked by `_path`."""
        path = self._root
        for segment in folder.split("/") if folder else ():
            path = f"{path}{os.sep}{segment}"  # (checked keys: plain segments, no separator)
            try:
                if stat.S_ISLNK(os.lstat(path).st_mode):
                    return self._path(folder)
            except (FileNotFoundError, NotADirectoryError):
                # nothing from here down exists, so no symlink either: a read finds no key, a
                # write creates the folders
                return os.path.join(self._root, folder)
        return path

    def _get_in(self, key: str, byte_range: Range | None, folders: dict[str, str]) -> bytes | None:
        """`get` with the key's folder resolved through `folders`; the file itself is opened
        without following a symlink, and a symlink goes the slow, fully checked way."""
        if not _NOFOLLOW:
            return self.get(key, byte_range)
        fd = self._open_in(key, folders)
        if fd is None:
            return None
        if fd is _SYMLINK:  # check where it leads
            return self.get(key, byte_range)
        try:
            if byte_range is None:
                return self._read_whole(fd)
            if type(byte_range) is ByteRange and byte_range.length is not None:
                return os.pread(fd, byte_range.length, byte_range.offset)
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                return None
            part = byte_range.slice(info.st_size)
            return os.pread(fd, max(0, part.stop - part.start), part.start)
        except IsADirectoryError:
            return None
        finally:
            os.close(fd)

    def _open_in(self, key: str, folders: dict[str, str]) -> Any:
        """The key's file open for reading (its folder resolved through `folders`, the file
        itself not followed if a symlink); None: absent; `_SYMLINK`: the key is a symlink."""
        try:
            return os.open(self._where(key, folders), _OPEN_READ)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return _SYMLINK
            raise

    def read_ranges(self, requests: Sequence[tuple[str, Range | None]]) -> list[Any]:
        """`get_ranges`, with the ranges of known length read into one buffer per call (each
        key's file opened once), which this thread reuses once nothing holds a view of it.
        Fresh `bytes` of a few hundred KiB per range were faulted in 4 KiB at a time on every
        call, as malloc hands such memory back to the OS between calls: four inner chunks of
        190 KB read from one shard took 386-450 µs per call, 139 µs into the reused buffer."""
        sized = [i for i, (_, r) in enumerate(requests)
                 if type(r) is ByteRange and r.length is not None]
        total = sum(requests[i][1].length for i in sized)
        if total < _BUFFERED_FROM or not _NOFOLLOW or not _PREADV:
            return self.get_ranges(requests)
        out: list[Any] = [None] * len(requests)
        buffer = memoryview(reusable("ranges", total))[:total]
        folders: dict[str, str] = {}
        files: dict[str, Any] = {}
        at = 0
        try:
            for i in sized:
                key, byte_range = requests[i]
                if key not in files:
                    files[key] = self._open_in(key, folders)
                fd = files[key]
                if fd is _SYMLINK:
                    out[i] = self.get(key, byte_range)
                elif fd is not None:
                    part = buffer[at:at + byte_range.length]
                    at += byte_range.length
                    try:
                        out[i] = part[:os.preadv(fd, [part], byte_range.offset)].toreadonly()
                    except IsADirectoryError:
                        pass
        finally:
            for fd in files.values():
                if type(fd) is int:
                    os.close(fd)
        if len(sized) < len(requests):
            done = set(sized)
            rest = [i for i in range(len(requests)) if i not in done]
            for i, value in zip(rest, self.get_ranges([requests[i] for i in rest])):
                out[i] = value
        return out

    def _read_whole(self, fd: int, buffer: bool = False) -> Any:
        """A whole file, in one read when it is no larger than the files read before (chunks of
        an array are mostly alike): a read that comes back short has reached the end, so the
        usual fstat is only paid for a file larger than any so far. Once files of `_MAX_HINT`
        have been seen (shards), every file is sized first: one syscall more is nothing there.
        `buffer`: a file of `_MAX_HINT` or more comes back as a read-only view of a numpy
        buffer rather than as `bytes`."""
        hint = self._size_hint
        if hint < _MAX_HINT:
            data = os.read(fd, hint)
            if len(data) < hint:
                return data
        return self._read_sized(fd, buffer)

    def _read_sized(self, fd: int, buffer: bool) -> Any:
        """`_read_whole` after the size hint fell short (or is not used): size the file first."""
        size = os.fstat(fd).st_size
        self._size_hint = min(_MAX_HINT, max(self._size_hint, size + size // 16 + 1))
        if buffer and size >= _MAX_HINT and _PREADV:
            return _read_into_buffer(fd, size)
        data = os.pread(fd, size, 0)
        return data if len(data) < size else data + _read_rest(fd, size)

    # -- writeable ---------------------------------------------------------------------------
    def set(self, key: str, value: bytes) -> None:
        self.set_many({key: value})

    def set_many(self, items: Mapping[str, bytes]) -> None:
        """Check every key and value before writing any, so a bad one in a batch writes nothing."""
        self._set_many(items, {})

    def writing(self) -> ContextManager[Any]:
        """A run of writes that checks each key folder once for the whole run (see `_Writes`)."""
        return nullcontext(_Writes(self))

    def _set_many(self, items: Mapping[str, bytes], folders: dict[str, str]) -> None:
        """`set_many`, with the real paths of the key folders already checked in `folders`."""
        self.require("write", "set keys")
        writes = [(self._write_path(k, folders), _buffer(v)) for k, v in items.items()]
        for path, data in writes:
            self._write(path, data)

    def _write_path(self, key: str, folders: dict[str, str]) -> str:
        """Where a write of `key` lands, each folder resolved once per batch (see `_folder`).
        A symlink at the key itself is replaced by the written file, not followed: the rename
        that makes a write atomic replaces whatever name is there, and so a write can never
        land outside the root (checking the key itself would cost a stat per chunk)."""
        return self._where(key, folders)

    def _where(self, key: str, folders: dict[str, str]) -> str:
        """The file of `key`, its folder's real path looked up in (or added to) `folders`."""
        real, name = self._locate(key, folders, self._folder_path)
        return f"{real}{os.sep}{name}"

    def _folder_path(self, folder: str, folders: dict[str, Any]) -> str:
        real = folders[folder] = self._folder(folder)
        return real

    @staticmethod
    def _locate(key: str, folders: dict[str, Any],
                resolve: Callable[[str, dict[str, Any]], Any]) -> tuple[Any, str]:
        """The key's folder as `resolve` gives it (looked up in, or added to, `folders`) and
        the key's last segment, the key checked. A key whose folder is known needs only its
        last segment checked."""
        folder, sep, name = key.rpartition("/") if type(key) is str else check_key(key)
        where = folders.get(folder)
        if where is None or (sep and not folder):  # (a leading '/': the root's folder is "")
            check_key(key)
            where = resolve(folder, folders)
        elif name in _ODD_NAMES or "\\" in name or "\x00" in name:
            check_key(key)
        return where, name

    def _write(self, path: str, data: Any) -> None:
        """Write `data` to `path` so that readers see the old value or the new one, never a
        part. Where the OS has unnamed temporary files (Linux's O_TMPFILE), the file is written
        unnamed in the key's folder and then given its name (`_write_unnamed`). Otherwise
        a temporary file in the root is renamed into place: the root stays small, so creating
        it is cheap where the key's own folder may hold thousands of chunks (45 against 60 µs
        per 800-byte chunk on ext4 here). A folder on another file system (a mount inside the
        root) gets its temporary file beside the target."""
        if self._unnamed and self._write_unnamed(path, data):
            return
        parent = os.path.dirname(path)
        tmp, fd = _create_in(self._root if self._same_device else parent)
        try:
            _write_all(fd, data)
            if self.fsync:
                os.fsync(fd)
            os.close(fd)
            fd = -1
            _rename_into(tmp, path)
        except OSError as exc:
            if fd >= 0:
                os.close(fd)
            _remove_quietly(tmp)
            if exc.errno != errno.EXDEV:
                raise
            self._same_device = False  # a mount below the root: stay beside the target
            self._write(path, data)
            return
        except BaseException:
            if fd >= 0:
                os.close(fd)
            _remove_quietly(tmp)
            raise
        if self.fsync:
            _fsync_dir(parent)

    def _write_unnamed(self, path: str, data: Any) -> bool:
        """Write an unnamed file in the key's folder and link it in under the key; when the
        key exists, link it beside the key and rename it over. No temporary name is created
        and removed, and a crash leaves nothing behind: on a fresh ext4 file system here 29
        against 43 µs per 800-byte chunk (a plain unprotected write: 27). False when this
        platform or file system cannot (the caller then takes the renaming way)."""
        parent = path.rpartition(os.sep)[0]  # (an absolute path below the root: never "")
        try:
            fd = _open_unnamed(parent)
        except OSError as exc:
            if exc.errno in _NO_UNNAMED:
                self._unnamed = False
                return False
            raise
        try:
            _write_all(fd, data)
            if self.fsync:
                os.fsync(fd)
            try:
                _link_fd(fd, path)
            except FileExistsError:
                tmp = f"{parent}{os.sep}.{os.urandom(8).hex()}.partial"  # (listings skip it)
                _link_fd(fd, tmp)
                try:
                    os.replace(tmp, path)
                except BaseException:
                    _remove_quietly(tmp)
                    raise
            except FileNotFoundError:
                # the folder was pruned by a concurrent erase since (the renaming way
                # recreates it), or there is no /proc to name the file through
                if not os.path.isdir(_PROC_FD):
                    self._unnamed = False
                return False
        finally:
            os.close(fd)
        if self.fsync:
            _fsync_dir(parent)
        return True

    # -- updates: per-key lock files (`keylocks`) ---------------------------------------------
    safe_updates = keylocks.AVAILABLE

    def update_many(self, keys: Sequence[str], compute: Update) -> None:
        """Read, compute and write holding each key's lock file, which every process updating
        the key takes (lock files are made and removed beside the keys; a folder made for one
        of them that ends up empty is removed again)."""
        if not keylocks.AVAILABLE:
            super().update_many(keys, compute)
            return
        self.require("write", "update keys")
        folders: dict[str, str] = {}
        paths = [self._where(k, folders) for k in keys]
        with keylocks.holding(paths):
            new = compute(keys, self.read_many(keys))
            write_back(self, new)
        for folder in {os.path.dirname(p) for k, p in zip(keys, paths) if new.get(k) is None}:
            self._prune(folder)

    def erase(self, key: str) -> None:
        self.require("write", f"erase {key!r}")
        path = self._path(key)
        try:
            os.remove(path)
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):  # no such key
            return
        self._prune(os.path.dirname(path))

    def erase_prefix(self, prefix: str) -> None:
        """Remove whole directory trees rather than key by key."""
        self.require("write", f"erase prefix {prefix!r}")
        directory = self._dir(prefix)
        if directory == self._root:
            self._clear_root()
            return
        try:
            shutil.rmtree(directory)
        except (FileNotFoundError, NotADirectoryError):  # nothing under the prefix
            return
        self._prune(os.path.dirname(directory))

    def _clear_root(self) -> None:
        for entry in _scan(self._root, keep_partial=True):
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            else:
                os.remove(entry.path)

    def _prune(self, directory: str) -> None:
        """Remove emptied directories up to the root, so listings show no prefix without keys."""
        while directory.startswith(self._inside):
            try:
                os.rmdir(directory)
            except OSError:  # not empty (or pruned by someone else): stop here
                return
            directory = os.path.dirname(directory)

    # -- listable ----------------------------------------------------------------------------
    def list(self) -> Iterator[str]:
        return self._walk(self._root, "")

    def list_prefix(self, prefix: str) -> Iterator[str]:
        """Descend only into the directories the prefix can match ('a/b' reads 'a/' once)."""
        folder, slash, start = prefix.rpartition("/")
        folder += slash
        return self._walk(self._dir(folder), folder, start)

    def list_dir(self, prefix: str) -> tuple[list[str], list[str]]:
        keys: list[str] = []
        prefixes: list[str] = []
        for entry in _scan(self._dir(prefix)):
            if entry.is_dir(follow_symlinks=False):
                prefixes.append(entry.name)
            elif entry.is_file(follow_symlinks=False):
                keys.append(entry.name)
        return sorted(keys), sorted(prefixes)

    def _walk(self, directory: str, prefix: str, start: str = "") -> Iterator[str]:
        """Keys under `directory` (whose key prefix is `prefix`) with names starting `start`."""
        pending = [(directory, prefix, start)]
        while pending:
            directory, prefix, start = pending.pop()
            for entry in _scan(directory):
                if not entry.name.startswith(start):
                    continue
                if entry.is_dir(follow_symlinks=False):
                    pending.append((entry.path, f"{prefix}{entry.name}/", ""))
                elif entry.is_file(follow_symlinks=False):
                    yield prefix + entry.name

    # -- identity ----------------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LocalStore):
            return NotImplemented
        return self.root == other.root

    def __hash__(self) -> int:
        return hash(self.root)

    def __repr__(self) -> str:
        return f"LocalStore({self._root!r})"


#: the most key folders a run of reads keeps open between calls (`_Reads`)
_KEPT_FOLDERS = 32


class _Reads:
    """One thread's run of reads from a `LocalStore` (`LocalStore.reading`): a key folder is
    opened (and checked) once for the run and kept open until it ends, where each `read_many`
    would open it again: the engine reads chunks of 256 KiB four to a call, so this saves
    four syscalls per call (two `lstat`s, the folder's open and close), each a release of the
    GIL that the other reading thread waits on
    (whole reads of 512 MiB in 256 KiB chunks, each in a fresh process, memory file system:
    uncompressed 0.136 -> 0.116 s, median of 8; blosc 0.177 -> 0.167 s, median of 12; zstd,
    decode-bound, unchanged). Files are opened relative to the open folder, so a folder
    swapped for a symlink meanwhile is not followed."""

    __slots__ = ("_store", "_folders")

    def __init__(self, store: LocalStore) -> None:
        self._store = store
        self._folders: dict[str, Any] = {}

    def __enter__(self) -> "_Reads":
        return self

    def __exit__(self, *exc: object) -> None:
        folders, self._folders = self._folders, {}
        _close_folders(folders)

    def read_many(self, keys: Iterable[str]) -> dict[str, Any]:
        try:
            return self._store._read_files(keys, buffers=True, kept=self._folders)
        finally:
            if len(self._folders) > _KEPT_FOLDERS:  # a share over many folders: stay small
                self.__exit__()


def _close_folders(folders: dict[str, Any]) -> None:
    for where in folders.values():
        if type(where) is int:
            os.close(where)


class _Writes:
    """One thread's run of writes to a `LocalStore` (`LocalStore.writing`): a key folder is
    checked once for the run rather than on every `set_many`, as one `set_many` checks it once
    for its batch. The engine stores compressed chunks one per call (see `engine.stream_size`),
    so this saves two `lstat`s per chunk, each a release of the GIL that the other writing
    thread waits on. A folder a symlink has replaced since it was checked is followed, as it
    would be within one batch; the run is one thread's share of a write's batch, milliseconds
    long."""

    __slots__ = ("_store", "_folders")

    def __init__(self, store: LocalStore) -> None:
        self._store = store
        self._folders: dict[str, str] = {}

    def set_many(self, items: Mapping[str, bytes]) -> None:
        self._store._set_many(items, self._folders)

    def erase_many(self, keys: Iterable[str]) -> None:
        self._folders.clear()  # (an erase may remove emptied folders)
        self._store.erase_many(keys)


def _path_of_url(url: str) -> str:
    if not url.startswith("file:"):
        return url
    from urllib.parse import urlsplit
    from urllib.request import url2pathname

    parts = urlsplit(url)
    if parts.netloc not in ("", "localhost"):
        raise ValueError(f"{url!r} names host {parts.netloc!r}; a file URL must be local")
    return url2pathname(parts.path)



def _buffer(value: Any) -> Any:
    """A value to write, checked to be a buffer: a numpy array as it is (a strided one is
    copied in C order only when written, see `_c_order`), anything else as a memoryview."""
    if type(value) is np.ndarray and not value.dtype.hasobject:
        return value
    return memoryview(value)


def _c_order(data: Any) -> Any:
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
    flat = scratch("c_order", source.nbytes)
    np.copyto(flat.view(source.dtype).reshape(source.shape), source)
    return flat


_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
_UNNAMED = _O_TMPFILE | os.O_WRONLY | getattr(os, "O_CLOEXEC", 0)


def _open_unnamed(directory: str) -> int:
    """An unnamed file in `directory` (created if need be), open for writing."""
    for _ in range(_WRITE_ATTEMPTS):
        try:
            return os.open(directory, _UNNAMED, 0o666)
        except FileNotFoundError:  # no directory yet, or a concurrent erase pruned it
            os.makedirs(directory, exist_ok=True)
    raise OSError(f"could not create a file in {directory!r}: it keeps being removed")


_root_fd: int | None = None


def _link_fd(fd: int, path: str) -> None:
    """Give the open, unnamed file `fd` the name `path` (linkat through /proc, following the
    /proc link; a directory fd is passed so that Python calls linkat, which follows it, rather
    than link, which does not)."""
    global _root_fd
    if _root_fd is None:
        _root_fd = os.open("/", os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    os.link(f"{_PROC_FD}/{fd}", path, src_dir_fd=_root_fd, follow_symlinks=True)


def _create_in(directory: str) -> tuple[str, int]:
    """A new temporary file in `directory` (created if need be), open for writing."""
    for _ in range(_WRITE_ATTEMPTS):
        tmp = f"{directory}{os.sep}.{os.urandom(8).hex()}.partial"
        try:
            return tmp, os.open(tmp, _CREATE, 0o666)
        except FileNotFoundError:  # no directory yet, or a concurrent erase pruned it
            os.makedirs(directory, exist_ok=True)
    raise OSError(f"could not create a file in {directory!r}: it keeps being removed")


#: range reads of at least this many bytes go into a reused buffer (`LocalStore.read_ranges`)
_BUFFERED_FROM = 64 << 10


def _read_into_buffer(fd: int, size: int) -> Any:
    """A file of about `size` bytes in a numpy buffer this thread reuses, for
    `LocalStore.read_many` (a whole read of 32 shards of 12 MB: 11,000 page faults in fresh
    buffers)."""
    buffer = reusable("files", size)[:size]
    got = 0
    while got < size:
        n = os.preadv(fd, [buffer[got:]], got)
        if n == 0:  # the file shrank since it was sized
            return memoryview(buffer[:got]).toreadonly()
        got += n
    rest = _read_rest(fd, size)  # or grew
    if rest:
        return memoryview(b"".join((buffer, rest))).toreadonly()
    return memoryview(buffer).toreadonly()


def _read_rest(fd: int, offset: int) -> bytes:
    """What follows `offset` (a file that grew after it was sized)."""
    parts = []
    while chunk := os.pread(fd, 1 << 20, offset):
        parts.append(chunk)
        offset += len(chunk)
    return b"".join(parts)


def _write_all(fd: int, data: Any) -> None:
    data = _c_order(data)
    size = data.nbytes
    done = os.write(fd, data)  # (one call writes it all but for a signal or a full disk)
    if done < size:
        view = memoryview(data).cast("B")[done:]
        while view.nbytes:
            view = view[os.write(fd, view):]


def _rename_into(tmp: str, path: str) -> None:
    """`os.replace`, creating the target's folder when it is missing (or was just pruned by a
    concurrent erase)."""
    for _ in range(_WRITE_ATTEMPTS):
        try:
            os.replace(tmp, path)
            return
        except FileNotFoundError:
            if not os.path.exists(tmp):
                raise
            os.makedirs(os.path.dirname(path), exist_ok=True)
    raise OSError(f"could not rename into {path!r}: its folder keeps being removed")


def _scan(directory: str, *, keep_partial: bool = False) -> list[os.DirEntry[str]]:
    """Entries of `directory` (none when it is absent), read at once so no handle stays open."""
    try:
        with os.scandir(directory) as entries:
            return [e for e in entries if keep_partial or not _PARTIAL.fullmatch(e.name)]
    except (FileNotFoundError, NotADirectoryError):
        return []
