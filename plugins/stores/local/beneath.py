"""Folders and files opened beneath a root folder's handle, one path segment at a time, each
segment opened relative to the folder before it and without following a symlink (`openat` with
`O_NOFOLLOW`), or where Linux has it in one `openat2` that refuses any symlink on the way
(`RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`). A symlink met on the way is read and followed by
hand, and only while it leads inside the root; `..` climbs the handles opened so far, never
above the root.

What this gives: whatever another process renames or swaps for a symlink while a path is
being opened, every handle obtained is one of a real folder or file that was inside the root
when it was opened. A path-based check (`realpath`, `lstat`) followed by a path-based open
cannot give that: the path may be swapped between the two. POSIX only (`os.supports_dir_fd`);
the local store falls back to checked paths elsewhere.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from collections.abc import Callable, Iterator

from zarrkit.errors import InvalidKeyError

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
#: a folder below a handle, never through a symlink
OPEN_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | _CLOEXEC
#: a file below a handle for reading, never through a symlink
OPEN_READ = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | _CLOEXEC | getattr(os, "O_BINARY", 0)

#: what opening a symlink with O_NOFOLLOW fails with (FreeBSD: EMLINK), or a file as a folder
_NOT_A_FOLDER = frozenset({errno.ELOOP, errno.EMLINK, errno.ENOTDIR})
#: as the kernel: more symlinks than this on one path is a loop
_MAX_LINKS = 40
#: a folder being made while another process keeps removing it: give up after this many tries
_MAKE_ATTEMPTS = 100

#: Each folder below the root on the way to a resolved folder: (its handle, its name in the
#: folder before it); empty for the root itself.
Chain = list[tuple[int, str]]


def open_folder(root: int, folder: str, inside: str, *, create: bool) -> int | None:
    """A new handle of the folder `folder` ('/'-separated, not empty) below the handle `root`,
    made when missing if `create`; None when missing (or a file). One `openat2` that refuses
    any symlink on the way (Linux 5.6+), else one `openat` per segment; a symlink on the way,
    or a folder to make, is left to `resolve`."""
    if _openat2 is not None:
        try:
            return _openat2(root, folder)
        except OSError:
            pass
        return _resolved(root, folder, inside, create)
    fd = root
    try:
        for name in folder.split("/"):
            below = os.open(name, OPEN_DIR, dir_fd=fd)
            if fd != root:
                os.close(fd)
            fd = below
        return fd
    except OSError:
        if fd != root:
            os.close(fd)
    return _resolved(root, folder, inside, create)


def _resolved(root: int, folder: str, inside: str, create: bool) -> int | None:
    """`open_folder` the slow way."""
    chain = resolve(root, folder.split("/"), inside, create=create)
    if chain is None:
        return None
    close_chain(chain[:-1])
    return chain[-1][0] if chain else os.dup(root)


def resolve(root: int, parts: list[str], inside: str, *, create: bool) -> Chain | None:
    """The folders from below `root` down to the one `parts` name, symlinks on the way
    followed while they lead inside the root (`inside`: the root's real path with a trailing
    separator, what an absolute link target must start with). None when a folder is missing
    (and not `create`) or is a file. Refuses a link that leads out with `InvalidKeyError`."""
    chain: Chain = []
    todo = parts[::-1]
    links = attempts = 0
    try:
        while todo:
            name = todo.pop()
            if name in ("", "."):
                continue
            if name == "..":
                if not chain:
                    raise InvalidKeyError(f"a symlink leads above the store's root {inside}")
                os.close(chain.pop()[0])
                continue
            here = chain[-1][0] if chain else root
            try:
                chain.append((os.open(name, OPEN_DIR, dir_fd=here), name))
                continue
            except FileNotFoundError:
                if not create:
                    close_chain(chain)
                    return None
                attempts += 1
                if attempts > _MAKE_ATTEMPTS:
                    raise OSError(
                        errno.ENOENT, "a folder kept being removed while made", name
                    ) from None
                try:
                    os.mkdir(name, dir_fd=here)
                except FileExistsError:
                    pass
                todo.append(name)
                continue
            except OSError as exc:
                if exc.errno not in _NOT_A_FOLDER:
                    raise
            target = _link_target(here, name)
            if target is _CHANGED:  # (renamed or swapped since: look again)
                attempts += 1
                if attempts > _MAKE_ATTEMPTS:
                    raise OSError(errno.ENOENT, "a folder kept changing while opened", name)
                todo.append(name)
                continue
            if target is None:  # a file where a folder should be
                if create:
                    raise NotADirectoryError(
                        errno.ENOTDIR, "a file, not a folder", _shown(inside, chain, name)
                    )
                close_chain(chain)
                return None
            links += 1
            if links > _MAX_LINKS:
                raise InvalidKeyError(f"too many symlinks at {_shown(inside, chain, name)!r}")
            if os.path.isabs(target):
                if target != inside[:-1] and not target.startswith(inside):
                    raise InvalidKeyError(
                        f"the symlink {_shown(inside, chain, name)!r} leads to {target!r}, "
                        f"outside the store's root {inside[:-1]!r}"
                    )
                target = target[len(inside) :]
                close_chain(chain)
                chain = []
            todo.extend(target.split(os.sep)[::-1])
        return chain
    except BaseException:
        close_chain(chain)
        raise


def open_file(root: int, parts: list[str], inside: str) -> int | None:
    """The file `parts` name below `root`, open for reading, symlinks (the file's own too)
    followed while they lead inside the root; None when absent. For keys that are symlinks:
    a plain key's file is opened in its folder directly."""
    for _ in range(_MAX_LINKS):
        chain = resolve(root, parts[:-1], inside, create=False)
        if chain is None:
            return None
        here = chain[-1][0] if chain else root
        try:
            return os.open(parts[-1], OPEN_READ, dir_fd=here)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            if exc.errno not in _NOT_A_FOLDER:
                raise
            target = _link_target(here, parts[-1])
            if target is None or target is _CHANGED:  # (changed since: a read of no file)
                return None
            if os.path.isabs(target):
                real = _shown(inside, chain, parts[-1])
                if not target.startswith(inside):
                    raise InvalidKeyError(
                        f"the symlink {real!r} leads to {target!r}, "
                        f"outside the store's root {inside[:-1]!r}"
                    ) from None
                parts = target[len(inside) :].split(os.sep)
            else:  # relative to the folder the link is in, found again from the root
                parts = [name for _, name in chain] + target.split(os.sep)
        finally:
            close_chain(chain)
    raise InvalidKeyError(f"too many symlinks at {'/'.join(parts)!r} below {inside[:-1]!r}")


def remove_tree(parent: int, name: str) -> None:
    """Remove `name` in `parent` and, when it is a folder, all that is in it. Symlinks are
    removed, never followed, and entries that vanish meanwhile are no error."""
    try:
        fd = os.open(name, OPEN_DIR, dir_fd=parent)
    except FileNotFoundError:
        return
    except OSError as exc:
        if exc.errno not in _NOT_A_FOLDER:
            raise
        remove_file(parent, name)
        return
    try:
        clear(fd)
    finally:
        os.close(fd)
    try:
        os.rmdir(name, dir_fd=parent)
    except OSError as exc:  # gone, or written into meanwhile (that write came after the erase)
        if exc.errno not in (errno.ENOENT, errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR):
            raise


def clear(fd: int) -> None:
    """Remove everything in the folder `fd` (see `remove_tree`)."""
    for entry in scan(fd):
        if entry.is_dir(follow_symlinks=False):
            remove_tree(fd, entry.name)
        else:
            remove_file(fd, entry.name)


def remove_file(parent: int, name: str) -> bool:
    """Remove the file (or symlink) `name` in `parent`; False when there is none (a folder
    there, swapped in since it was listed, is removed as a tree)."""
    try:
        os.unlink(name, dir_fd=parent)
        return True
    except FileNotFoundError:
        return False
    except (IsADirectoryError, PermissionError) as exc:  # (macOS: EPERM for a folder)
        try:
            is_dir = stat.S_ISDIR(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode)
        except FileNotFoundError:
            return False
        if not is_dir:
            raise exc
        return False


def prune(root: int, chain: Chain) -> None:
    """Remove the emptied folders of `chain`, deepest first, stopping at the first that is
    not empty, so listings show no prefix without keys. The root stays."""
    for i in range(len(chain) - 1, -1, -1):
        try:
            os.rmdir(chain[i][1], dir_fd=chain[i - 1][0] if i else root)
        except OSError:  # not empty, or pruned by someone else: stop here
            return


def scan(fd: int) -> list[os.DirEntry[str]]:
    """The entries of the folder `fd`, read at once."""
    with os.scandir(fd) as entries:
        return list(entries)


def walk_files(top: int, prefix: str, start: str, skip: Callable[[str], object]) -> Iterator[str]:
    """Keys of the files below the folder `top` (whose key prefix is `prefix`) with names
    starting `start` at the top, sub-folders opened as they are reached, never through a
    symlink (which a listing neither follows nor shows). `skip(name)`: names to leave out.
    Open handles: one per level being walked; `top` stays the caller's."""
    stack: list[tuple[int, Iterator[os.DirEntry[str]], str]] = [
        (top, iter([e for e in scan(top) if e.name.startswith(start)]), prefix)
    ]
    try:
        while stack:
            fd, entries, prefix = stack[-1]
            for entry in entries:
                if skip(entry.name):
                    continue
                if entry.is_dir(follow_symlinks=False):
                    try:
                        below = os.open(entry.name, OPEN_DIR, dir_fd=fd)
                    except OSError:  # gone, or swapped for a symlink or a file, meanwhile
                        continue
                    try:
                        listed = scan(below)
                    except BaseException:
                        os.close(below)
                        raise
                    stack.append((below, iter(listed), f"{prefix}{entry.name}/"))
                    break
                if entry.is_file(follow_symlinks=False):
                    yield prefix + entry.name
            else:
                stack.pop()
                if fd != top:
                    os.close(fd)
    finally:
        for fd, _, _ in stack:
            if fd != top:
                os.close(fd)


def close_chain(chain: Chain) -> None:
    for fd, _ in chain:
        os.close(fd)


#: `_link_target`'s answer for a name that is no longer what opening it found
_CHANGED = "\x00"


def _link_target(folder: int, name: str) -> str | None:
    """What the symlink `name` in `folder` points to; None when it is a file; `_CHANGED`
    when it is gone or now a folder (another process renamed or swapped it meanwhile)."""
    try:
        return os.readlink(name, dir_fd=folder)
    except FileNotFoundError:
        return _CHANGED
    except OSError as exc:
        if exc.errno != errno.EINVAL:
            raise
    try:
        mode = os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return _CHANGED
    return _CHANGED if stat.S_ISDIR(mode) else None


def _shown(inside: str, chain: Chain, name: str) -> str:
    """A path below the root as an error message shows it."""
    return inside + "/".join([n for _, n in chain] + [name])


def _openat2_of_this_system(flags: int) -> Callable[[int, str], int] | None:
    """`openat2(root, path, flags, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` through ctypes
    (Python has no binding), or None where the kernel, libc or a sandbox lacks it. It opens
    a path any segments deep in one system call where the walk takes one `openat` and one
    `close` per segment, failing (ELOOP, EXDEV) wherever a symlink is on the way, the last
    segment included."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        syscall = libc.syscall
    except (OSError, AttributeError):
        return None

    class OpenHow(ctypes.Structure):
        _fields_ = [
            ("flags", ctypes.c_uint64),
            ("mode", ctypes.c_uint64),
            ("resolve", ctypes.c_uint64),
        ]

    how = OpenHow(flags & ~getattr(os, "O_NOFOLLOW", 0), 0, 0x08 | 0x04)
    address = ctypes.cast(syscall, ctypes.c_void_p).value
    if address is None:
        return None
    call = ctypes.CFUNCTYPE(
        ctypes.c_long,
        ctypes.c_long,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_void_p,
        ctypes.c_size_t,
        use_errno=True,
    )(address)
    get_errno, size, where = ctypes.get_errno, ctypes.sizeof(how), ctypes.addressof(how)
    number = 437  # (SYS_openat2: one number on every architecture Linux has it on)
    fsencode, strerror = os.fsencode, os.strerror

    def openat2(root: int, path: str) -> int:
        fd: int = call(number, root, fsencode(path), where, size)
        if fd < 0:
            code = get_errno()
            raise OSError(code, strerror(code), path)
        return fd

    probe = os.open("/", OPEN_DIR)
    try:
        os.close(openat2(probe, "."))
    except OSError:  # ENOSYS (before 5.6), EPERM (a seccomp filter), ...
        return None
    finally:
        os.close(probe)
    openat2.keep = (how, call)  # type: ignore[attr-defined]
    return openat2


#: a folder, and a file for reading, below a handle in one call where the kernel can (None
#: elsewhere): `open_folder` and `LocalStore` use them, and walk when they are None
_openat2 = _openat2_of_this_system(OPEN_DIR)
openat2_read = _openat2 if _openat2 is None else _openat2_of_this_system(OPEN_READ)
