"""The local store where the OS opens files relative to an open folder (every POSIX system):
every path is opened one segment at a time relative to a handle of the folder before it,
without following a symlink (`beneath`), and each file is then opened, linked, renamed or
removed relative to its folder's handle (see `local` for what that guarantees). Writes are
unnamed files linked in (Linux's `O_TMPFILE`), else temporary files renamed into place;
updates hold each key's lock file (`keylocks`).
"""

from __future__ import annotations

import builtins
import errno
import os
import stat
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any

from zarrkit.abc import (
    ByteRange,
    Range,
    StoreCapabilities,
    Update,
    check_key,
    check_prefix,
    reusable,
    value_limit,
    write_back,
)
from zarrkit.plugins.stores.local import beneath, keylocks
from zarrkit.plugins.stores.local.fileops import remove_quietly as _remove_quietly
from zarrkit.plugins.stores.local.local import (
    ABSENT,
    KEPT_FOLDERS,
    PARTIAL,
    Folders,
    LocalStore,
    buffer_of,
    c_order,
    sorted_entries,
    write_errors,
)

#: Opening files relative to an open folder, without following symlinks (not on Windows).
AVAILABLE = (
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

#: last key segments that `check_key` refuses on their own (besides '\\' and NUL)
_ODD_NAMES = frozenset({"", ".", ".."})

#: the largest whole-file read size `_read_whole` learns (larger files are sized first)
_MAX_HINT = 4 << 20

#: reading into a caller's buffer at an offset
_PREADV = hasattr(os, "preadv")

#: Linux's unnamed temporary files (0 elsewhere), named through /proc once written; errors that
#: say a file system does not have them
_O_TMPFILE = getattr(os, "O_TMPFILE", 0) if os.path.isdir("/proc/self/fd") else 0
_PROC_FD = "/proc/self/fd"
_NO_UNNAMED = frozenset({errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL})

#: A concurrent erase may prune the directory a write has just created; retry that many times.
_WRITE_ATTEMPTS = 100


class PosixLocalStore(LocalStore, implementation="posix"):
    """`LocalStore` through folder handles (see the module's docstring)."""

    usable = AVAILABLE
    capabilities = StoreCapabilities(blocking_writes=True, safe_updates=keylocks.AVAILABLE)

    def __init__(
        self, root: str | os.PathLike[str], *, mode: str = "r", fsync: bool = False
    ) -> None:
        super().__init__(root, mode=mode, fsync=fsync)
        #: whether temporary files may live in the root (see `_write_renaming`)
        self._same_device = True
        #: whether writes go through unnamed temporary files (see `_write_unnamed`)
        self._unnamed = bool(_O_TMPFILE)
        #: bytes asked for when reading a whole file (see `_read_whole`)
        self._size_hint = 4096

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

    def _folder_fd(self, folder: str, folders: Folders, create: bool = False) -> Any:
        """The key folder's handle (or `ABSENT`), opened beneath the root and remembered in
        `folders`: files opened relative to it skip the walk of every path segment."""
        root = folders.root
        if root is None:
            root = self._open_root(create)
            if root is None:
                folders[folder] = ABSENT
                return ABSENT
            folders.root = root
        where = beneath.open_folder(root, folder, self._inside, create=create) if folder else root
        folders[folder] = ABSENT if where is None else where
        return folders[folder]

    def _chain(self, root: int, folder: str, create: bool = False) -> beneath.Chain | None:
        return beneath.resolve(
            root, folder.split("/") if folder else [], self._inside, create=create
        )

    def get(self, key: str, byte_range: Range | None = None) -> bytes | None:
        folders = Folders()
        try:
            return self._get_in(key, byte_range, folders)
        finally:
            folders.close()

    def exists(self, key: str) -> bool:
        folders = Folders()
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
        folders = Folders()
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
        `Store.read_many`): a buffer this thread reuses is already faulted in, where a fresh
        `bytes` of a large file is faulted in a page at a time."""
        return self._read_files(keys, buffers=True)

    def reading(self) -> AbstractContextManager[Any]:
        """A run of reads that opens each key folder once for the whole run (see `_Reads`)."""
        return _Reads(self)

    def _read_files(
        self, keys: Iterable[str], *, buffers: bool, kept: Folders | None = None
    ) -> dict[str, Any]:
        """The files of `keys`, each opened relative to its folder, opened once per call or,
        with `kept`, once per run of calls (whose owner closes them)."""
        folders = Folders() if kept is None else kept
        out = {}
        read_sized = self._read_sized
        limit = value_limit()
        try:
            for key in keys:  # (this loop is most of a tiny chunk's read)
                folders.room_for(key)
                where, name = self._locate(key, folders, self._folder_fd)
                if where is ABSENT:
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

    def _open_link(self, key: str, folders: Folders) -> int | None:
        """The file a symlinked key leads to, open (None: absent); refused when it leads out
        of the root. The slow way: the whole key is walked again from the root."""
        return beneath.open_file(folders.opened_root(), key.split("/"), self._inside)

    def get_ranges(self, requests: Sequence[tuple[str, Range | None]]) -> list[bytes | None]:
        folders = Folders()
        out = []
        try:
            for key, byte_range in requests:
                folders.room_for(key)
                out.append(self._get_in(key, byte_range, folders))
        finally:
            folders.close()
        return out

    def _get_in(self, key: str, byte_range: Range | None, folders: Folders) -> bytes | None:
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

    def _open_in(self, key: str, folders: Folders) -> int | None:
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
                return None  # (unreadable: absent, as the portable store has it; see `diagnose`)
            except OSError as exc:
                if exc.errno not in (errno.ELOOP, errno.EXDEV):
                    raise
                return beneath.open_file(root, key.split("/"), self._inside)
        where, name = self._locate(key, folders, self._folder_fd)
        if where is ABSENT:
            return None
        try:
            return os.open(name, _OPEN_READ, dir_fd=where)
        except (FileNotFoundError, NotADirectoryError, PermissionError):
            return None  # (unreadable: absent, as the portable store has it; see `diagnose`)
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
        sized = self._sized_ranges(requests)
        total = sum(length for _, _, _, length in sized)
        if total < _BUFFERED_FROM or not _PREADV:
            return self.get_ranges(requests)
        out: list[Any] = [None] * len(requests)
        buffer = memoryview(reusable("ranges", total))[:total]
        folders = Folders()
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

    def _set_many(self, items: Mapping[str, bytes], folders: Folders) -> None:
        """`set_many`, with the key folders opened once through `folders`. A symlink at the
        key itself is replaced by the written file, not followed: the link (or rename) that
        makes a write atomic replaces whatever name is there."""
        self.require("write", "set keys")
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
            batch.append((folder, name, buffer_of(value)))
        for folder, name, data in batch:
            where = folders.get(folder)
            if where is None or where is ABSENT:
                where = self._folder_fd(folder, folders, create=True)
            self._write(folders, folder, where, name, data)

    def _write(self, folders: Folders, folder: str, where: int, name: str, data: Any) -> None:
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

    def update_many(self, keys: Sequence[str], compute: Update) -> None:
        """Read, compute and write holding each key's lock file, which every process updating
        the key takes. Lock files are made beside the keys in folders opened beneath the root
        (never through a symlink), and removed as they are let go; folders left empty by an
        erase are pruned once the locks are gone."""
        if not self.capabilities.safe_updates:
            super().update_many(keys, compute)
            return
        self.require("write", "update keys")
        with write_errors(self, "update", keys):
            self._update_many(keys, compute)

    def _update_many(self, keys: Sequence[str], compute: Update) -> None:
        folders = Folders()
        try:
            locks = []
            for key in keys:  # (all checked before any lock is taken)
                folder, _, name = check_key(key).rpartition("/")
                where = folders.get(folder)
                if where is None or where is ABSENT:
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

    def _erase(self, keys: Iterable[str]) -> None:
        by_folder: dict[str, list[str]] = {}
        for key in keys:  # (all checked before any is erased)
            folder, _, name = check_key(key).rpartition("/")
            by_folder.setdefault(folder, []).append(name)
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

    def _erase_prefix(self, prefix: str) -> None:
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

    def list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        folders = Folders()
        try:  # (the entries' types are read while their folder is open: `is_dir` may stat)
            where = self._folder_fd(check_prefix(prefix)[:-1], folders)
            if where is ABSENT:
                return [], []
            return sorted_entries(e for e in beneath.scan(where) if not PARTIAL.fullmatch(e.name))
        finally:
            folders.close()

    def _keys(self, folder: str, start: str) -> Iterator[str]:
        """Keys below the key folder `folder` whose names there start with `start`; the
        folder is opened (or refused) now, its files listed as the keys are taken."""
        prefix = f"{folder}/" if folder else ""
        folders = Folders()
        try:
            where = self._folder_fd(folder, folders)
        except BaseException:
            folders.close()
            raise
        if where is ABSENT:
            folders.close()
            return iter(())
        return _closing(beneath.walk_files(where, prefix, start, PARTIAL.fullmatch), folders)

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


def _not_a_key(key: object) -> tuple[str, str, str]:
    """What `check_key` says of a key that is not a string (the fast paths split keys first)."""
    raise TypeError(f"store keys are strings, got {key!r}")


class _Reads:
    """One thread's run of reads from a `PosixLocalStore` (its `reading`): a key folder is
    opened (beneath the root) once for the run and kept open until it ends, where each
    `read_many` would open it again: the engine reads chunks of 256 KiB four to a call, so
    this saves the folder's walk, open and close per call, each a release of the GIL that
    the other reading thread waits on."""

    __slots__ = ("_folders", "_store")

    def __init__(self, store: PosixLocalStore) -> None:
        self._store = store
        self._folders = Folders()

    def __enter__(self) -> _Reads:
        return self

    def __exit__(self, *exc: object) -> None:
        self._folders.close()

    def read_many(self, keys: Iterable[str]) -> dict[str, Any]:
        try:
            return self._store._read_files(keys, buffers=True, kept=self._folders)
        finally:
            if len(self._folders) > KEPT_FOLDERS:  # a share over many folders: stay small
                self._folders.close()


def _closing(keys: Iterator[str], folders: Folders) -> Iterator[str]:
    """`keys`, then the folders closed (also when the listing is left unfinished)."""
    try:
        yield from keys
    finally:
        folders.close()


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
    `LocalStore.read_many` (reused memory is already faulted in; fresh buffers for every
    large file would be faulted in again, a page at a time)."""
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
    data = c_order(data)
    size = data.nbytes
    done = os.write(fd, data)  # (one call writes it all but for a signal or a full disk)
    if done < size:
        view = memoryview(data).cast("B")[done:]
        while view.nbytes:
            view = view[os.write(fd, view) :]
