"""The local store where the OS cannot open files relative to a folder (Windows): each path
is checked before it is used (symlinks resolved, and refused when they lead out of the root),
so a static symlink cannot lead out; a folder swapped for a symlink between that check and the
use is followed. Writes are temporary files renamed into place; updates are unguarded.
"""

from __future__ import annotations

import builtins
import os
import shutil
import stat
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from zarrkit.abc import Range, check_key, check_prefix, value_limit
from zarrkit.errors import InvalidKeyError
from zarrkit.plugins.stores.local.fileops import fsync_dir as _fsync_dir
from zarrkit.plugins.stores.local.fileops import remove_quietly as _remove_quietly
from zarrkit.plugins.stores.local.local import (
    Folders,
    LocalStore,
    buffer_of,
    c_order,
    scan,
    sorted_entries,
)


class PortableLocalStore(LocalStore, implementation="portable"):
    """`LocalStore` through checked paths (see the module's docstring)."""

    def _path(self, key: str) -> str:
        """The real path of `key`, refusing one that symlinks lead out of the root (checked
        before it is used)."""
        real = os.path.realpath(os.path.join(self._root, check_key(key)))
        if not real.startswith(self._inside):
            raise InvalidKeyError(f"store key {key!r} resolves to {real!r}, outside {self}")
        return real

    def _dir(self, prefix: str) -> str:
        if not check_prefix(prefix):
            return self._root
        return self._path(prefix[:-1])

    def _in_folder(self, key: str) -> str:
        """The path of `key` in its folder's real path: a symlink at the key itself is not
        resolved (a write replaces it, an erase removes it)."""
        folder, _, name = check_key(key).rpartition("/")
        return os.path.join(self._dir(f"{folder}/" if folder else ""), name)

    # -- readable ----------------------------------------------------------------------------
    def get(self, key: str, byte_range: Range | None = None) -> bytes | None:
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
        return os.path.isfile(self._path(key))

    def sizes(self, keys: Iterable[str]) -> dict[str, int]:
        """Each file's size from its `stat`: a sparse or huge file is sized without being
        read."""
        out: dict[str, int] = {}
        for key in keys:
            try:
                info = os.stat(self._path(key))
            except (FileNotFoundError, NotADirectoryError, PermissionError):
                continue
            if stat.S_ISREG(info.st_mode):
                out[key] = info.st_size
        return out

    def get_ranges(self, requests: Sequence[tuple[str, Range | None]]) -> list[bytes | None]:
        return [self.get(key, byte_range) for key, byte_range in requests]

    def read_ranges(self, requests: Sequence[tuple[str, Range | None]]) -> list[Any]:
        self._sized_ranges(requests)
        return self.get_ranges(requests)

    # -- writeable ---------------------------------------------------------------------------
    def _set_many(self, items: Mapping[str, bytes], folders: Folders) -> None:
        """Each value written to a temporary file beside its key and renamed over it."""
        self.require("write", "set keys")
        writes = [(self._in_folder(k), buffer_of(v)) for k, v in items.items()]
        for path, data in writes:
            parent = os.path.dirname(path)
            os.makedirs(parent, exist_ok=True)
            tmp = f"{parent}{os.sep}.{os.urandom(8).hex()}.partial"
            try:
                with open(tmp, "xb") as f:
                    f.write(c_order(data))
                    if self.fsync:
                        os.fsync(f.fileno())
                os.replace(tmp, path)
            except BaseException:
                _remove_quietly(tmp)
                raise
            if self.fsync:
                _fsync_dir(parent)

    def _erase(self, keys: Iterable[str]) -> None:
        for key in [check_key(k) for k in keys]:  # (all checked before any is erased)
            path = self._in_folder(key)
            try:
                os.remove(path)
            except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError):
                continue
            self._prune(os.path.dirname(path))

    def _erase_prefix(self, prefix: str) -> None:
        directory = self._dir(prefix)
        if directory == self._root:
            for entry in scan(self._root, keep_partial=True):
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path)
                else:
                    os.remove(entry.path)
            return
        try:
            shutil.rmtree(directory)
        except (FileNotFoundError, NotADirectoryError):  # nothing under the prefix
            return
        self._prune(os.path.dirname(directory))

    def _prune(self, directory: str) -> None:
        """Remove `directory` and the folders above it that this leaves empty."""
        while directory.startswith(self._inside):
            try:
                os.rmdir(directory)
            except OSError:  # not empty (or pruned by someone else): stop here
                return
            directory = os.path.dirname(directory)

    # -- listable ----------------------------------------------------------------------------
    def list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        return sorted_entries(scan(self._dir(prefix)))

    def _keys(self, folder: str, start: str) -> Iterator[str]:
        prefix = f"{folder}/" if folder else ""
        return self._walk(self._dir(prefix), prefix, start)

    def _walk(self, directory: str, prefix: str, start: str = "") -> Iterator[str]:
        pending = [(directory, prefix, start)]
        while pending:
            directory, prefix, start = pending.pop()
            for entry in scan(directory):
                if not entry.name.startswith(start):
                    continue
                if entry.is_dir(follow_symlinks=False):
                    pending.append((entry.path, f"{prefix}{entry.name}/", ""))
                elif entry.is_file(follow_symlinks=False):
                    yield prefix + entry.name
