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

Writes go to a temporary file beside the target and are renamed over it, so a reader (in this
process or another) sees the old value or the new one, never a torn file.

A read holds at most the read's value limit (`zarrkit.store.value_limit()`, which the chunk
engine sets from the chunk's size): a file is sized (`fstat`) before it is read whole, a range
is checked before its buffer is made, and a file larger than the limit, or a range longer, is
a `ValueTooLargeError` naming the key, not a read of gigabytes.
"""

from __future__ import annotations

import builtins
import errno
import itertools
import os
import re
import shutil
import stat
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from zarrkit.abc import (
    Absence,
    ByteRange,
    Range,
    Store,
    Update,
    check_key,
    check_mode,
    check_prefix,
    names,
    reusable,
    thread_buffer,
    value_limit,
    write_back,
)
from zarrkit.errors import (
    InvalidKeyError,
    ReadOnlyError,
    StoreError,
    ValueTooLargeError,
    ZarrkitError,
)
from zarrkit.plugins.stores.local import beneath, keylocks
from zarrkit.plugins.stores.local.fileops import fsync_dir as _fsync_dir
from zarrkit.plugins.stores.local.fileops import remove_quietly as _remove_quietly
from zarrkit.plugins.stores.pickling import reopening

#: Opening files relative to an open folder, without following symlinks (not on Windows,
#: where every operation takes the checked-path way, `_path`).
_DIR_FD = (
    all(
        f in os.supports_dir_fd
        for f in (os.open, os.mkdir, os.unlink, os.rmdir, os.rename, os.link, os.readlink, os.stat)
    )
    and os.scandir in os.supports_fd
    and hasattr(os, "O_DIRECTORY")
    and hasattr(os, "O_NOFOLLOW")
)
_OPEN_READ = beneath.OPEN_READ
_openat2_read = beneath.openat2_read
#: the root, whose path is trusted (symlinks in it followed)
_OPEN_ROOT = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
#: `LocalStore._folder_fd`'s answer for a folder that does not exist
_ABSENT = object()

#: last key segments that `check_key` refuses on their own (besides '\\' and NUL)
_ODD_NAMES = frozenset({"", ".", ".."})

#: Temporary files of writes in flight (or left by a crash); listings skip them.
_PARTIAL = re.compile(r"\.[0-9a-f]{16}\.partial|" + keylocks.LOCK_PATTERN)

#: the largest whole-file read size `LocalStore._read_whole` learns (larger files are sized first)
_MAX_HINT = 4 << 20

#: reading into a caller's buffer at an offset (not on Windows)
_PREADV = hasattr(os, "preadv")

#: Linux's unnamed temporary files (0 elsewhere), named through /proc once written; errors that
#: say a file system does not have them
_O_TMPFILE = getattr(os, "O_TMPFILE", 0) if os.path.isdir("/proc/self/fd") else 0
_PROC_FD = "/proc/self/fd"
_NO_UNNAMED = frozenset({errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL})

#: A concurrent erase may prune the directory a write has just created; retry that many times.
_WRITE_ATTEMPTS = 100


class LocalStore(Store):
    """Files under `root`. Nothing outside the root is ever read or written (see the module's
    docstring for what that covers); symlinks inside the root that stay inside are followed."""

    names = names("file")
    blocking_writes = True  # a file create plus a rename per write

    def __init__(
        self, root: str | os.PathLike[str], *, mode: str = "r", fsync: bool = False
    ) -> None:
        # "w", "w-" and "r+" (overwrite, refuse, require a node) are for the caller, which knows
        # the node's path; a store only needs to know whether it may write at all.
        self.read_only = check_mode(mode) == "r"
        self.root = Path(root).resolve()
        #: the root as the caller wrote it, which is what prints (zarr-python's `file://data/x`)
        self._shown = Path(root)
        self.fsync = fsync
        self._root = str(self.root)
        self._inside = os.path.join(self._root, "")
        #: whether temporary files may live in the root (see `_write_renaming`)
        self._same_device = True
        #: whether writes go through unnamed temporary files (see `_write_unnamed`)
        self._unnamed = bool(_O_TMPFILE)
        #: bytes asked for when reading a whole file (see `_read_whole`)
        self._size_hint = 4096
        self._name_limit: int | None = None

    @classmethod
    def from_url(cls, url: str, *, mode: str = "r", **options: Any) -> LocalStore:
        """`file:///abs/path`, or a plain filesystem path."""
        return cls(_path_of_url(url), mode=mode, **options)

    @property
    def url(self) -> str:
        return self.root.as_uri()

    def diagnose(self, prefix: str = "") -> Absence | None:
        """What is at the root (and `prefix` under it) when no node was found there: nothing,
        a file, or a folder this process may not read."""
        target = os.path.join(self._root, check_prefix(prefix).rstrip("/")) if prefix else None
        for path in (self._root, target):
            if path is None:
                continue
            try:
                info = os.stat(path)
            except FileNotFoundError:
                return Absence("missing", f"{path} does not exist")
            except NotADirectoryError:
                return Absence("not_a_container", f"{_file_above(path)} is a file, not a directory")
            except PermissionError:
                return Absence("denied", f"permission denied: {path}")
            if not stat.S_ISDIR(info.st_mode):
                return Absence("not_a_container", f"{path} is a file, not a directory")
            try:
                with os.scandir(path) as entries:
                    next(entries, None)
            except PermissionError:
                return Absence("denied", f"permission denied: cannot list {path}")
        return None

    def name_limit(self) -> int | None:
        """The file system's file-name limit (NAME_MAX) where the root is (or will be)."""
        if self._name_limit is None:
            self._name_limit = _name_max(self.root)
        return self._name_limit

    # -- folders -----------------------------------------------------------------------------
    def _open_root(self, create: bool) -> int | None:
        """A handle of the root (made first if `create`), None when there is none."""
        try:
            return os.open(self._root, _OPEN_ROOT)
        except (FileNotFoundError, NotADirectoryError):
            if not create:
                return None
        except PermissionError:  # read as absent, as a file we may not read is (`diagnose`)
            if not create:
                return None
            raise
        os.makedirs(self._root, exist_ok=True)
        return os.open(self._root, _OPEN_ROOT)

    def _folder_fd(self, folder: str, folders: _Folders, create: bool = False) -> Any:
        """The key folder's handle (or `_ABSENT`), opened beneath the root and remembered in
        `folders`: files opened relative to it skip the walk of every path segment."""
        root = folders.root
        if root is None:
            root = self._open_root(create)
            if root is None:
                folders[folder] = _ABSENT
                return _ABSENT
            folders.root = root
        where = beneath.open_folder(root, folder, self._inside, create=create) if folder else root
        folders[folder] = _ABSENT if where is None else where
        return folders[folder]

    def _chain(self, root: int, folder: str, create: bool = False) -> beneath.Chain | None:
        return beneath.resolve(
            root, folder.split("/") if folder else [], self._inside, create=create
        )

    # -- checked paths (where the OS cannot open relative to a folder) ------------------------
    def _path(self, key: str) -> str:
        """The real path of `key`, refusing one that symlinks lead out of the root (checked
        before it is used: see the module's docstring)."""
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
        if not _DIR_FD:
            return self._get_by_path(key, byte_range)
        folders = _Folders()
        try:
            return self._get_in(key, byte_range, folders)
        finally:
            folders.close()

    def _get_by_path(self, key: str, byte_range: Range | None) -> bytes | None:
        path = self._path(key)
        try:
            with open(path, "rb") as f:
                limit = value_limit()
                size = os.fstat(f.fileno()).st_size
                part = slice(0, size) if byte_range is None else byte_range.slice(size)
                if part.stop - part.start > limit:
                    what = "the file holds" if byte_range is None else "asked of it are"
                    raise self._too_large(key, f"{part.stop - part.start} bytes {what}", limit)
                f.seek(part.start)
                wanted = limit + 1 if byte_range is None else max(0, part.stop - part.start)
                data = f.read(wanted)
                if len(data) > limit:  # (grown since it was sized)
                    raise self._too_large(key, "the file grew while it was read", limit)
                return data
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError):
            return None

    def exists(self, key: str) -> bool:
        if not _DIR_FD:
            return os.path.isfile(self._path(key))
        folders = _Folders()
        try:
            fd = self._open_in(key, folders)
            if fd is None:
                return False
            try:
                return stat.S_ISREG(os.fstat(fd).st_mode)
            finally:
                os.close(fd)
        finally:
            folders.close()

    def sizes(self, keys: Iterable[str]) -> dict[str, int]:
        """Each file's size from its `fstat`, opened as a read would open it (beneath the root,
        symlinks only inside it): a sparse or huge file is sized without being read."""
        out: dict[str, int] = {}
        if not _DIR_FD:
            for key in keys:
                try:
                    info = os.stat(self._path(key))
                except (FileNotFoundError, NotADirectoryError, PermissionError):
                    continue
                if stat.S_ISREG(info.st_mode):
                    out[key] = info.st_size
            return out
        folders = _Folders()
        try:
            for key in keys:
                folders.room_for(key)
                fd = self._open_in(key, folders)
                if fd is None:
                    continue
                try:
                    info = os.fstat(fd)
                finally:
                    os.close(fd)
                if stat.S_ISREG(info.st_mode):
                    out[key] = info.st_size
        finally:
            folders.close()
        return out

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes]:
        """Like `get` per key, but each folder is opened once per call."""
        return self._read_files(keys, buffers=False)

    def read_many(self, keys: Iterable[str]) -> dict[str, Any]:
        """`get_many`, with files of `_MAX_HINT` or more read into numpy buffers (see
        `Store.read_many`): measured here, whole reads of a sharded array fault in 13,000
        pages instead of 96,000."""
        return self._read_files(keys, buffers=True)

    def reading(self) -> AbstractContextManager[Any]:
        """A run of reads that opens each key folder once for the whole run (see `_Reads`)."""
        return _Reads(self)

    def _read_files(
        self, keys: Iterable[str], *, buffers: bool, kept: _Folders | None = None
    ) -> dict[str, Any]:
        """The files of `keys`, each opened relative to its folder, opened once per call or,
        with `kept`, once per run of calls (whose owner closes them)."""
        if not _DIR_FD:
            return super().get_many(keys)
        folders = _Folders() if kept is None else kept
        out = {}
        read_sized = self._read_sized
        limit = value_limit()
        try:
            for key in keys:  # (this loop is most of a tiny chunk's read)
                folders.room_for(key)
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
                    linked = self._open_link(key, folders)  # a symlink: followed inside the root
                    if linked is None:
                        continue
                    fd = linked
                try:  # (`_read_whole` inlined)
                    hint = self._size_hint
                    if hint >= _MAX_HINT or len(value := os.read(fd, hint)) >= hint:
                        value = read_sized(fd, buffers, key, limit)
                    elif len(value) > limit:
                        raise self._too_large(key, f"the file holds {len(value)} bytes", limit)
                except IsADirectoryError:
                    continue
                finally:
                    os.close(fd)
                out[key] = value
        finally:
            if kept is None:
                folders.close()
        return out

    def _open_link(self, key: str, folders: _Folders) -> int | None:
        """The file a symlinked key leads to, open (None: absent); refused when it leads out
        of the root. The slow way: the whole key is walked again from the root."""
        return beneath.open_file(folders.opened_root(), key.split("/"), self._inside)

    def get_ranges(self, requests: Sequence[tuple[str, Range | None]]) -> list[bytes | None]:
        if not _DIR_FD:
            return [self._get_by_path(key, byte_range) for key, byte_range in requests]
        folders = _Folders()
        out = []
        try:
            for key, byte_range in requests:
                folders.room_for(key)
                out.append(self._get_in(key, byte_range, folders))
        finally:
            folders.close()
        return out

    def _get_in(self, key: str, byte_range: Range | None, folders: _Folders) -> bytes | None:
        """`get` with the key's folder opened through `folders`."""
        fd = self._open_in(key, folders)
        if fd is None:
            return None
        try:
            limit = value_limit()
            if byte_range is None:
                whole: bytes = self._read_whole(fd, key, limit)
                return whole
            if type(byte_range) is ByteRange and byte_range.length is not None:
                if byte_range.length > limit:
                    raise self._too_large(key, f"{byte_range.length} bytes asked of it", limit)
                return os.pread(fd, byte_range.length, byte_range.offset)
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                return None
            part = byte_range.slice(info.st_size)
            if part.stop - part.start > limit:
                raise self._too_large(key, f"{part.stop - part.start} bytes asked of it", limit)
            return os.pread(fd, max(0, part.stop - part.start), part.start)
        except IsADirectoryError:
            return None
        finally:
            os.close(fd)

    def _open_in(self, key: str, folders: _Folders) -> int | None:
        """The key's file open for reading (in one `openat2` from the root where the kernel
        has it, else relative to its folder opened through `folders`; a symlink followed
        only inside the root); None: absent."""
        if _openat2_read is not None:
            check_key(key)
            root = folders.root
            if root is None:
                root = folders.root = self._open_root(create=False)
                if root is None:
                    return None
            try:
                return _openat2_read(root, key)
            except (FileNotFoundError, NotADirectoryError, PermissionError):
                return None  # (unreadable: absent, as `_get_by_path` has it; see `diagnose`)
            except OSError as exc:
                if exc.errno not in (errno.ELOOP, errno.EXDEV):
                    raise
                return beneath.open_file(root, key.split("/"), self._inside)
        where, name = self._locate(key, folders, self._folder_fd)
        if where is _ABSENT:
            return None
        try:
            return os.open(name, _OPEN_READ, dir_fd=where)
        except (FileNotFoundError, NotADirectoryError, PermissionError):
            return None  # (unreadable: absent, as `_get_by_path` has it; see `diagnose`)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return self._open_link(key, folders)
            raise

    def read_ranges(self, requests: Sequence[tuple[str, Range | None]]) -> list[Any]:
        """`get_ranges`, with the ranges of known length read into one buffer per call (each
        key's file opened once), which this thread reuses once nothing holds a view of it.
        Fresh `bytes` of a few hundred KiB per range would be faulted in 4 KiB at a time on
        every call, as malloc hands such memory back to the OS between calls; a reused buffer
        is already mapped."""
        sized = [
            (i, key, r.offset, r.length)
            for i, (key, r) in enumerate(requests)
            if type(r) is ByteRange and r.length is not None
        ]
        limit = value_limit()
        for _, key, _, length in sized:
            if length > limit:  # (before a buffer of that size is made)
                raise self._too_large(key, f"{length} bytes asked of it", limit)
        total = sum(length for _, _, _, length in sized)
        if total < _BUFFERED_FROM or not _DIR_FD or not _PREADV:
            return self.get_ranges(requests)
        out: list[Any] = [None] * len(requests)
        buffer = memoryview(reusable("ranges", total))[:total]
        folders = _Folders()
        files: dict[str, int | None] = {}
        at = 0
        try:
            for i, key, offset, length in sized:
                if key not in files:
                    files[key] = self._open_in(key, folders)
                fd = files[key]
                if fd is not None:
                    part = buffer[at : at + length]
                    at += length
                    try:
                        out[i] = part[: os.preadv(fd, [part], offset)].toreadonly()
                    except IsADirectoryError:
                        pass
            if len(sized) < len(requests):
                done = {i for i, _, _, _ in sized}
                for i in range(len(requests)):
                    if i not in done:
                        out[i] = self._get_in(*requests[i], folders)
        finally:
            for fd in files.values():
                if fd is not None:
                    os.close(fd)
            folders.close()
        return out

    def _too_large(self, key: str, what: str, limit: int) -> ValueTooLargeError:
        return ValueTooLargeError(
            f"{what}, more than the {limit} bytes the read can hold",
            key=key,
            store=self,
            operation="read",
        )

    def _read_whole(self, fd: int, key: str, limit: int, buffer: bool = False) -> Any:
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
                if len(data) > limit:
                    raise self._too_large(key, f"the file holds {len(data)} bytes", limit)
                return data
        return self._read_sized(fd, buffer, key, limit)

    def _read_sized(self, fd: int, buffer: bool, key: str, limit: int) -> Any:
        """`_read_whole` after the size hint fell short (or is not used): size the file first,
        and refuse it there when it is larger than `limit` (nor read past `limit` a file that
        grows meanwhile)."""
        size = os.fstat(fd).st_size
        if size > limit:
            raise self._too_large(key, f"the file holds {size} bytes", limit)
        self._size_hint = min(_MAX_HINT, max(self._size_hint, size + size // 16 + 1))
        if buffer and size >= _MAX_HINT and _PREADV:
            value = _read_into_buffer(fd, size, limit)
        else:
            data = os.pread(fd, size, 0)
            value = data if len(data) < size else data + _read_rest(fd, size, limit)
        if len(value) > limit:  # (grown since it was sized)
            raise self._too_large(key, "the file grew while it was read", limit)
        return value

    # -- writeable ---------------------------------------------------------------------------
    def set(self, key: str, value: bytes) -> None:
        self.set_many({key: value})

    def set_many(self, items: Mapping[str, bytes]) -> None:
        """Check every key and value before writing any, so a bad one in a batch writes nothing."""
        folders = _Folders()
        try:
            with _write_errors(self, "write", items):
                self._set_many(items, folders)
        finally:
            folders.close()

    def writing(self) -> AbstractContextManager[Any]:
        """A run of writes that opens each key folder once for the whole run (see `_Writes`)."""
        return _Writes(self)

    def _set_many(self, items: Mapping[str, bytes], folders: _Folders) -> None:
        """`set_many`, with the key folders opened once through `folders`. A symlink at the
        key itself is replaced by the written file, not followed: the link (or rename) that
        makes a write atomic replaces whatever name is there."""
        self.require("write", "set keys")
        if not _DIR_FD:
            self._set_by_path(items)
            return
        batch = []
        for key, value in items.items():  # (all checked before anything is written)
            folder, sep, name = key.rpartition("/") if type(key) is str else _not_a_key(key)
            if (
                folder not in folders
                or (sep and not folder)
                or name in _ODD_NAMES
                or "\\" in name
                or "\x00" in name
            ):
                check_key(key)
            batch.append((folder, name, _buffer(value)))
        for folder, name, data in batch:
            where = folders.get(folder)
            if where is None or where is _ABSENT:
                where = self._folder_fd(folder, folders, create=True)
            self._write(folders, folder, where, name, data)

    def _write(self, folders: _Folders, folder: str, where: int, name: str, data: Any) -> None:
        """Write `data` as `name` in the folder `where` so that readers see the old value or
        the new one, never a part. Where the OS has unnamed temporary files (Linux's
        O_TMPFILE), the file is written unnamed in the key's folder and then given its name
        (`_write_unnamed`); otherwise a temporary file is renamed into place. A folder
        removed since it was opened (pruned by a concurrent erase) is made again."""
        for _ in range(_WRITE_ATTEMPTS):
            try:
                if not (self._unnamed and self._write_unnamed(where, name, data)):
                    self._write_renaming(folders.opened_root(), where, name, data)
                return
            except FileNotFoundError:
                folders.close()  # (the root too: it may be the one removed)
                where = self._folder_fd(folder, folders, create=True)
        raise OSError(
            errno.ENOENT,
            "the folder of a write keeps being removed",
            os.path.join(self._root, folder, name),
        )

    def _write_renaming(self, root: int, where: int, name: str, data: Any) -> None:
        """A temporary file in the root renamed into place: the root stays small, so creating
        it is cheap where the key's own folder may hold thousands of chunks (a file system's
        lookups grow with the folder). A folder on another file system (a mount inside the
        root) gets its temporary file beside the target."""
        place = root if self._same_device else where
        tmp = f".{os.urandom(8).hex()}.partial"  # (listings skip it)
        fd = os.open(tmp, _CREATE, 0o666, dir_fd=place)
        try:
            _write_all(fd, data)
            if self.fsync:
                os.fsync(fd)
            os.close(fd)
            fd = -1
            os.replace(tmp, name, src_dir_fd=place, dst_dir_fd=where)
        except OSError as exc:
            if fd >= 0:
                os.close(fd)
            _remove_quietly(tmp, dir_fd=place)
            if exc.errno != errno.EXDEV:
                raise
            self._same_device = False  # a mount below the root: stay beside the target
            self._write_renaming(root, where, name, data)
            return
        except BaseException:
            if fd >= 0:
                os.close(fd)
            _remove_quietly(tmp, dir_fd=place)
            raise
        if self.fsync:
            os.fsync(where)

    def _write_unnamed(self, where: int, name: str, data: Any) -> bool:
        """Write an unnamed file in the folder `where` and link it in as `name`; when the key
        exists, link it beside the key and rename it over. No temporary name is created and
        removed, and a crash leaves nothing behind, at close to the cost of a plain
        unprotected write. False when this
        platform or file system cannot, or the file could not be named (the caller then
        takes the renaming way)."""
        try:
            fd = _open_unnamed(where)
        except OSError as exc:
            if exc.errno in _NO_UNNAMED:
                self._unnamed = False
                return False
            if exc.errno == errno.EPERM and os.fstat(where).st_nlink == 0:
                # (ext4's answer for a folder removed since it was opened)
                raise FileNotFoundError(errno.ENOENT, "the folder was removed") from exc
            raise
        try:
            _write_all(fd, data)
            if self.fsync:
                os.fsync(fd)
            try:
                _link_fd(fd, where, name)
            except FileExistsError:
                tmp = f".{os.urandom(8).hex()}.partial"  # (listings skip it)
                _link_fd(fd, where, tmp)
                try:
                    os.replace(tmp, name, src_dir_fd=where, dst_dir_fd=where)
                except BaseException:
                    _remove_quietly(tmp, dir_fd=where)
                    raise
            except FileNotFoundError:
                # the folder was removed since it was opened (the renaming way tells), or
                # there is no /proc to name the file through
                if not os.path.isdir(_PROC_FD):
                    self._unnamed = False
                return False
        finally:
            os.close(fd)
        if self.fsync:
            os.fsync(where)
        return True

    # -- updates: per-key lock files (`keylocks`) ---------------------------------------------
    safe_updates = keylocks.AVAILABLE and _DIR_FD

    def update_many(self, keys: Sequence[str], compute: Update) -> None:
        """Read, compute and write holding each key's lock file, which every process updating
        the key takes. Lock files are made beside the keys in folders opened beneath the root
        (never through a symlink), and removed as they are let go; folders left empty by an
        erase are pruned once the locks are gone."""
        if not self.safe_updates:
            super().update_many(keys, compute)
            return
        self.require("write", "update keys")
        with _write_errors(self, "update", keys):
            self._update_many(keys, compute)

    def _update_many(self, keys: Sequence[str], compute: Update) -> None:
        folders = _Folders()
        try:
            locks = []
            for key in keys:  # (all checked before any lock is taken)
                folder, _, name = check_key(key).rpartition("/")
                where = folders.get(folder)
                if where is None or where is _ABSENT:
                    where = self._folder_fd(folder, folders, create=True)
                locks.append((folder, where, name))
            with keylocks.holding(locks):
                new = compute(keys, self.read_many(keys))
                write_back(self, new)
            emptied = {k.rpartition("/")[0] for k in keys if new.get(k) is None}
            for folder in emptied - {""}:
                root = folders.opened_root()
                chain = self._chain(root, folder)
                if chain is not None:
                    try:
                        beneath.prune(root, chain)
                    finally:
                        beneath.close_chain(chain)
        finally:
            folders.close()

    def erase(self, key: str) -> None:
        """Remove the key's file (a symlink at the key: the link, not what it points to) and
        the folders that leaves empty."""
        self.require("write", f"erase {key!r}")
        with _write_errors(self, "erase", [key]):
            self._erase([key])

    def erase_many(self, keys: Iterable[str]) -> None:
        """`erase` per key, each folder opened and pruned once (the engine erases the chunks
        that hold only the fill value this way)."""
        self.require("write", "erase keys")
        keys = list(keys)
        with _write_errors(self, "erase", keys):
            self._erase(keys)

    def _erase(self, keys: Iterable[str]) -> None:
        by_folder: dict[str, list[str]] = {}
        for key in keys:  # (all checked before any is erased)
            folder, _, name = check_key(key).rpartition("/")
            by_folder.setdefault(folder, []).append(name)
        if not _DIR_FD:
            for folder, names in by_folder.items():
                for name in names:
                    self._erase_by_path(f"{folder}/{name}" if folder else name)
            return
        root = self._open_root(create=False) if by_folder else None
        if root is None:
            return
        try:
            for folder, names in by_folder.items():
                chain = self._chain(root, folder)
                if chain is None:
                    continue
                try:
                    where = chain[-1][0] if chain else root
                    if sum(beneath.remove_file(where, name) for name in names):
                        beneath.prune(root, chain)
                finally:
                    beneath.close_chain(chain)
        finally:
            os.close(root)

    def erase_prefix(self, prefix: str) -> None:
        """Remove whole directory trees rather than key by key."""
        self.require("write", f"erase prefix {prefix!r}")
        with _write_errors(self, "erase", [prefix]):
            self._erase_prefix(prefix)

    def _erase_prefix(self, prefix: str) -> None:
        if not _DIR_FD:
            self._erase_prefix_by_path(prefix)
            return
        folder = check_prefix(prefix)[:-1]
        root = self._open_root(create=False)
        if root is None:
            return
        try:
            chain = self._chain(root, folder)
            if chain is None:
                return
            try:
                if not chain:  # (the whole store, or a symlink to the root)
                    beneath.clear(root)
                    return
                fd, name = chain.pop()
                os.close(fd)
                beneath.remove_tree(chain[-1][0] if chain else root, name)
                beneath.prune(root, chain)
            finally:
                beneath.close_chain(chain)
        finally:
            os.close(root)

    # -- listable ----------------------------------------------------------------------------
    def list(self) -> Iterator[str]:
        return self._keys("", "")

    def list_prefix(self, prefix: str) -> Iterator[str]:
        """Descend only into the directories the prefix can match ('a/b' reads 'a/' once)."""
        folder, slash, start = prefix.rpartition("/")
        if slash:
            check_prefix(folder + slash)
        return self._keys(folder, start)

    def list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        if not _DIR_FD:
            return _sorted_entries(_scan(self._dir(prefix)))
        folders = _Folders()
        try:  # (the entries' types are read while their folder is open: `is_dir` may stat)
            where = self._folder_fd(check_prefix(prefix)[:-1], folders)
            if where is _ABSENT:
                return [], []
            return _sorted_entries(e for e in beneath.scan(where) if not _PARTIAL.fullmatch(e.name))
        finally:
            folders.close()

    def _keys(self, folder: str, start: str) -> Iterator[str]:
        """Keys below the key folder `folder` whose names there start with `start`; the
        folder is opened (or refused) now, its files listed as the keys are taken."""
        prefix = f"{folder}/" if folder else ""
        if not _DIR_FD:
            return self._walk(self._dir(prefix), prefix, start)
        folders = _Folders()
        try:
            where = self._folder_fd(folder, folders)
        except BaseException:
            folders.close()
            raise
        if where is _ABSENT:
            folders.close()
            return iter(())
        return _closing(beneath.walk_files(where, prefix, start, _PARTIAL.fullmatch), folders)

    # -- the checked-path way (no opening relative to a folder: Windows) ---------------------
    def _in_folder(self, key: str) -> str:
        """The path of `key` in its folder's real path: a symlink at the key itself is not
        resolved (a write replaces it, an erase removes it)."""
        folder, _, name = check_key(key).rpartition("/")
        return os.path.join(self._dir(f"{folder}/" if folder else ""), name)

    def _set_by_path(self, items: Mapping[str, bytes]) -> None:
        writes = [(self._in_folder(k), _buffer(v)) for k, v in items.items()]
        for path, data in writes:
            parent = os.path.dirname(path)
            os.makedirs(parent, exist_ok=True)
            tmp = f"{parent}{os.sep}.{os.urandom(8).hex()}.partial"
            try:
                with open(tmp, "xb") as f:
                    f.write(_c_order(data))
                    if self.fsync:
                        os.fsync(f.fileno())
                os.replace(tmp, path)
            except BaseException:
                _remove_quietly(tmp)
                raise
            if self.fsync:
                _fsync_dir(parent)

    def _erase_by_path(self, key: str) -> None:
        path = self._in_folder(key)
        try:
            os.remove(path)
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError):
            return
        self._prune_by_path(os.path.dirname(path))

    def _erase_prefix_by_path(self, prefix: str) -> None:
        directory = self._dir(prefix)
        if directory == self._root:
            for entry in _scan(self._root, keep_partial=True):
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path)
                else:
                    os.remove(entry.path)
            return
        try:
            shutil.rmtree(directory)
        except (FileNotFoundError, NotADirectoryError):  # nothing under the prefix
            return
        self._prune_by_path(os.path.dirname(directory))

    def _prune_by_path(self, directory: str) -> None:
        while directory.startswith(self._inside):
            try:
                os.rmdir(directory)
            except OSError:  # not empty (or pruned by someone else): stop here
                return
            directory = os.path.dirname(directory)

    def _walk(self, directory: str, prefix: str, start: str = "") -> Iterator[str]:
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

    # -- shared ------------------------------------------------------------------------------
    @staticmethod
    def _locate(
        key: str, folders: dict[str, Any], resolve: Callable[[str, Any], Any]
    ) -> tuple[Any, str]:
        """The key's folder as `resolve` gives it (looked up in, or added to, `folders`) and
        the key's last segment, the key checked. A key whose folder is known needs only its
        last segment checked."""
        folder, sep, name = key.rpartition("/") if type(key) is str else _not_a_key(key)
        where = folders.get(folder)
        if where is None or (sep and not folder):  # (a leading '/': the root's folder is "")
            check_key(key)
            where = resolve(folder, folders)
        elif name in _ODD_NAMES or "\\" in name or "\x00" in name:
            check_key(key)
        return where, name

    # -- identity ----------------------------------------------------------------------------
    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its root and options (see `pickling`); nothing it learned or holds."""
        return reopening(self, self._root, mode="r" if self.read_only else "a", fsync=self.fsync)

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


def _not_a_key(key: object) -> tuple[str, str, str]:
    """What `check_key` says of a key that is not a string (the fast paths split keys first)."""
    raise TypeError(f"store keys are strings, got {key!r}")


class _Folders(dict):
    """Key folders opened beneath the root for one call or one run: folder -> handle (or
    `_ABSENT`), the root's handle (the folder "") in `root`. Handles of real folders, so one
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
        `_OPEN_FOLDERS` are, close those (the root stays open). A group of a thousand members
        reads each member's document from a folder of its own, and a process may hold only
        about a thousand files (`ulimit -n`). Only read loops call this, between reads: no
        handle of a folder is in use across it."""
        if len(self) < _OPEN_FOLDERS or type(key) is not str or key.rpartition("/")[0] in self:
            return
        fds = {fd for fd in self.values() if type(fd) is int and fd != self.root}
        self.clear()
        for fd in fds:
            os.close(fd)


#: the most key folders a run of reads or writes keeps open between calls
_KEPT_FOLDERS = 32
#: the most key folders one read of many keys holds open at once (`_Folders.room_for`)
_OPEN_FOLDERS = 128


class _Reads:
    """One thread's run of reads from a `LocalStore` (`LocalStore.reading`): a key folder is
    opened (beneath the root) once for the run and kept open until it ends, where each
    `read_many` would open it again: the engine reads chunks of 256 KiB four to a call, so
    this saves the folder's walk, open and close per call, each a release of the GIL that
    the other reading thread waits on."""

    __slots__ = ("_folders", "_store")

    def __init__(self, store: LocalStore) -> None:
        self._store = store
        self._folders = _Folders()

    def __enter__(self) -> _Reads:
        return self

    def __exit__(self, *exc: object) -> None:
        self._folders.close()

    def read_many(self, keys: Iterable[str]) -> dict[str, Any]:
        try:
            return self._store._read_files(keys, buffers=True, kept=self._folders)
        finally:
            if len(self._folders) > _KEPT_FOLDERS:  # a share over many folders: stay small
                self._folders.close()


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
        self._folders = _Folders()

    def __enter__(self) -> _Writes:
        return self

    def __exit__(self, *exc: object) -> None:
        self._folders.close()

    def set_many(self, items: Mapping[str, bytes]) -> None:
        try:
            with _write_errors(self._store, "write", items):
                self._store._set_many(items, self._folders)
        finally:
            if len(self._folders) > _KEPT_FOLDERS:
                self._folders.close()

    def erase_many(self, keys: Iterable[str]) -> None:
        self._folders.close()  # (an erase may remove emptied folders)
        self._store.erase_many(keys)


@contextmanager
def _write_errors(store: LocalStore, operation: str, keys: Iterable[str]) -> Iterator[None]:
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


def _sorted_entries(entries: Iterable[os.DirEntry[str]]) -> tuple[list[str], list[str]]:
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


def _closing(keys: Iterator[str], folders: _Folders) -> Iterator[str]:
    """`keys`, then the folders closed (also when the listing is left unfinished)."""
    try:
        yield from keys
    finally:
        folders.close()


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
    flat = thread_buffer("c_order", source.nbytes)
    np.copyto(flat.view(source.dtype).reshape(source.shape), source)
    return flat


_CREATE = (
    os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
)
_UNNAMED = _O_TMPFILE | os.O_WRONLY | getattr(os, "O_CLOEXEC", 0)


def _open_unnamed(where: int) -> int:
    """An unnamed file in the folder `where`, open for writing."""
    return os.open(".", _UNNAMED, 0o666, dir_fd=where)


def _link_fd(fd: int, where: int, name: str) -> None:
    """Give the open, unnamed file `fd` the name `name` in the folder `where` (linkat through
    /proc, following the /proc link)."""
    os.link(f"{_PROC_FD}/{fd}", name, dst_dir_fd=where, follow_symlinks=True)


#: range reads of at least this many bytes go into a reused buffer (`LocalStore.read_ranges`)
_BUFFERED_FROM = 64 << 10


def _read_into_buffer(fd: int, size: int, limit: int = sys.maxsize) -> Any:
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
    rest = _read_rest(fd, size, limit)  # or grew
    if rest:
        return memoryview(b"".join((buffer, rest))).toreadonly()
    return memoryview(buffer).toreadonly()


def _read_rest(fd: int, offset: int, limit: int = sys.maxsize) -> bytes:
    """What follows `offset` (a file that grew after it was sized), up to one byte past
    `limit` bytes of the file (the caller refuses a file that long)."""
    parts = []
    while offset <= limit and (chunk := os.pread(fd, min(1 << 20, limit + 1 - offset), offset)):
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
            view = view[os.write(fd, view) :]


def _scan(directory: str, *, keep_partial: bool = False) -> list[os.DirEntry[str]]:
    """Entries of `directory` (none when it is absent), read at once so no handle stays open."""
    try:
        with os.scandir(directory) as entries:
            return [e for e in entries if keep_partial or not _PARTIAL.fullmatch(e.name)]
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
