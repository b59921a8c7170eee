"""Locks on single keys of a file store, held across processes (and machines sharing the file
system), for read-modify-write: the local store's `update_many`.

A key `a/c/0/1` is locked through a lock file beside it, `a/c/0/.<hash of "1">.lock`, with
`flock` (a lock of the open file, so two threads of one process exclude each other too, and
closing another handle on the file does not drop it, as it would a POSIX record lock). Beside
the key rather than at the store's root, so processes that opened the store at different
folders (an array's, its group's) still meet on the same file. The file lives only while it
is held: its holder removes it before letting go, and a waiter that then gets the lock of the
removed file sees that the name no longer leads to it and starts over on the new one. Lock
files never show in the store's listings (`LOCK_NAME`); one left by a killed holder is a few
bytes of directory entry that the next lock of its key takes over and removes.

The lock file is opened relative to its folder's handle (which the store opened beneath its
root, never through a symlink), itself never followed if a symlink, and created empty with no
permission to run; nothing is ever written into it.
"""

from __future__ import annotations

import errno
import hashlib
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from zarrkit.abc import at_fork, fork_waits_for, rlock
from zarrkit.errors import ReadOnlyError, StoreError

try:
    import fcntl
except ImportError:  # (Windows: no flock; the local store's updates are then unguarded)
    _FLOCK = False
else:
    _FLOCK = True

#: whether this platform has the locks
AVAILABLE = _FLOCK and hasattr(os, "O_DIRECTORY") and os.open in os.supports_dir_fd

_OPEN_LOCK = os.O_RDONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)

#: Lock files this process has open. flock belongs to the open file, which a forked child
#: shares through the descriptors it inherits: a child that kept them would keep its parent's
#: locks held after the parent let go (and wait forever on one itself). A child closes them.
_open: set[int] = set()
#: held while a lock file is opened and entered in `_open` (or left out and closed), so a fork
#: never lands between the two: a child inheriting a descriptor missing from `_open` would keep
#: it, and with it the lock its parent takes on that file next
_opening = fork_waits_for(rlock())


def _close_inherited() -> None:
    for fd in list(_open):
        try:
            os.close(fd)
        except OSError:
            pass
    _open.clear()


at_fork(_close_inherited)


def _close(fd: int) -> None:
    with _opening:
        _open.discard(fd)  # (before closing: a number closed here may be reused at once)
        os.close(fd)


def _open_lock_file(dir_fd: int, name: str) -> int:
    with _opening:
        fd = os.open(name, _OPEN_LOCK, 0o644, dir_fd=dir_fd)
        _open.add(fd)
        return fd


#: the lock file of a key named `name`: the hash keeps it short whatever the name's length
LOCK_PATTERN = r"\.[0-9a-f]{16}\.lock"


def lock_name(name: str) -> str:
    return (
        "."
        + hashlib.blake2b(name.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()
        + ".lock"
    )


@contextmanager
def holding(locks: Sequence[tuple[str, int, str]]) -> Iterator[None]:
    """Hold the locks of the keys `locks` names as (folder, folder's handle, key's last
    segment), the handles the caller's and open throughout; taken in one global order (folder,
    then name) so that writers locking overlapping sets never deadlock."""
    held: list[tuple[int, str, int]] = []
    try:
        for folder, dir_fd, name in sorted(set(locks), key=lambda t: (t[0], t[2])):
            held.append((dir_fd, lock_name(name), _acquire(folder, dir_fd, lock_name(name))))
        yield
    finally:
        for dir_fd, name, fd in reversed(held):
            _release(dir_fd, name, fd)


def _acquire(folder: str, dir_fd: int, name: str) -> int:
    try:
        return _lock(dir_fd, name)
    except OSError as exc:
        if exc.errno == errno.EROFS:  # the update would write to a read-only file system
            raise ReadOnlyError(
                f"cannot update keys in {folder or '.'!r}: it is on a read-only file system"
            ) from exc
        raise StoreError(
            f"cannot take the lock file {name!r} in {folder or '.'!r} ({exc}); on "
            f"a file system without flock, ZARRKIT_SAFE_UPDATES=0 writes unguarded",
            operation="lock",
        ) from exc


def _lock(dir_fd: int, name: str) -> int:
    while True:
        fd = _open_lock_file(dir_fd, name)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if _still_named(fd, dir_fd, name):
                return fd
        except BaseException:
            _close(fd)
            raise
        _close(fd)  # its holder removed it as it let go: lock the one there now


def _still_named(fd: int, dir_fd: int, name: str) -> bool:
    mine = os.fstat(fd)
    try:
        there = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return (mine.st_ino, mine.st_dev) == (there.st_ino, there.st_dev)


def _release(dir_fd: int, name: str, fd: int) -> None:
    try:
        os.unlink(name, dir_fd=dir_fd)  # while still held: see the module's docstring
    except FileNotFoundError:
        pass
    finally:
        _close(fd)
