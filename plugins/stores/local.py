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
from typing import Any, BinaryIO, Iterable, Iterator, Mapping, Sequence

from zarrkit.errors import InvalidKeyError
from zarrkit.names import names
from zarrkit.store import Range, Store, check_key, check_mode, check_prefix

from .fileops import fsync_dir as _fsync_dir
from .fileops import remove_quietly as _remove_quietly

#: Opening a file without following a final symlink (0 where the platform cannot: then every
#: read takes the fully checked path).
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)

#: Temporary files of writes in flight (or left by a crash); listings skip them.
_PARTIAL = re.compile(r"\.[0-9a-f]{16}\.partial")

#: A concurrent erase may prune the directory a write has just created; retry that many times.
_WRITE_ATTEMPTS = 100


class LocalStore(Store):
    """Files under `root`. Listings do not follow symlinks (so they stay inside the root and
    cannot loop); keys reached through a symlink that stays inside the root are readable."""

    names = names("file")

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
        folders: dict[str, str] = {}
        out = {}
        for key in keys:
            value = self._get_in(key, None, folders)
            if value is not None:
                out[key] = value
        return out

    def get_ranges(self, requests: Sequence[tuple[str, Range | None]]) -> list[bytes | None]:
        folders: dict[str, str] = {}
        return [self._get_in(key, byte_range, folders) for key, byte_range in requests]

    def _folder(self, folder: str) -> str:
        """The real path of a key's folder: the root is already real, so only the segments
        below it are looked at; a symlink among them is resolved and checked by `_path`."""
        path = self._root
        for segment in folder.split("/") if folder else ():
            path = os.path.join(path, segment)
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
        folder, _, name = check_key(key).rpartition("/")
        real = folders.get(folder)
        if real is None:
            real = folders[folder] = self._folder(folder)
        try:
            fd = os.open(os.path.join(real, name), os.O_RDONLY | _NOFOLLOW)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # a symlink: check where it leads
                return self.get(key, byte_range)
            raise
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                return None
            part = slice(0, info.st_size) if byte_range is None else byte_range.slice(info.st_size)
            return os.pread(fd, max(0, part.stop - part.start), part.start)
        finally:
            os.close(fd)

    # -- writeable ---------------------------------------------------------------------------
    def set(self, key: str, value: bytes) -> None:
        self.require("write", f"set {key!r}")
        self._write(self._path(key), _contiguous(value))

    def set_many(self, items: Mapping[str, bytes]) -> None:
        """Check every key and value before writing any, so a bad one in a batch writes nothing."""
        self.require("write", "set keys")
        folders: dict[str, str] = {}
        writes = [(self._write_path(k, folders), _contiguous(v)) for k, v in items.items()]
        for path, data in writes:
            self._write(path, data)

    def _write_path(self, key: str, folders: dict[str, str]) -> str:
        """`_path` for a batch: each folder resolved once (see `_folder`); a key that is itself
        a symlink takes the fully resolved path, as `set` does."""
        folder, _, name = check_key(key).rpartition("/")
        real = folders.get(folder)
        if real is None:
            real = folders[folder] = self._folder(folder)
        path = os.path.join(real, name)
        return self._path(key) if os.path.islink(path) else path

    def _write(self, path: str, data: memoryview) -> None:
        parent = os.path.dirname(path)
        tmp, f = _create_beside(parent)
        try:
            with f:
                f.write(data)
                if self.fsync:
                    f.flush()
                    os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            _remove_quietly(tmp)
            raise
        if self.fsync:
            _fsync_dir(parent)

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


def _path_of_url(url: str) -> str:
    if not url.startswith("file:"):
        return url
    from urllib.parse import urlsplit
    from urllib.request import url2pathname

    parts = urlsplit(url)
    if parts.netloc not in ("", "localhost"):
        raise ValueError(f"{url!r} names host {parts.netloc!r}; a file URL must be local")
    return url2pathname(parts.path)


def _contiguous(value: Any) -> memoryview:
    """Any buffer as bytes in C order, copying only when the layout demands it."""
    view = memoryview(value)
    return view if view.c_contiguous else memoryview(view.tobytes())


def _create_beside(directory: str) -> tuple[str, BinaryIO]:
    """A new temporary file in `directory`, which is created if need be."""
    for _ in range(_WRITE_ATTEMPTS):
        tmp = os.path.join(directory, f".{os.urandom(8).hex()}.partial")
        try:
            return tmp, open(tmp, "xb")
        except FileNotFoundError:  # no directory yet, or a concurrent erase pruned it
            os.makedirs(directory, exist_ok=True)
    raise OSError(f"could not create a file in {directory!r}: it keeps being removed")


def _scan(directory: str, *, keep_partial: bool = False) -> list[os.DirEntry[str]]:
    """Entries of `directory` (none when it is absent), read at once so no handle stays open."""
    try:
        with os.scandir(directory) as entries:
            return [e for e in entries if keep_partial or not _PARTIAL.fullmatch(e.name)]
    except (FileNotFoundError, NotADirectoryError):
        return []
