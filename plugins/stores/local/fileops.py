"""File operations the file-backed stores (local, zip) share for their temp-file-then-rename
writes."""

from __future__ import annotations

import os


def remove_quietly(path: str | os.PathLike, *, dir_fd: int | None = None) -> None:
    """Remove a file if it is there (`dir_fd`: `path` is a name in that open folder)."""
    try:
        os.remove(path, dir_fd=dir_fd)
    except FileNotFoundError:
        pass


def fsync_dir(directory: str | os.PathLike) -> None:
    """Make a rename itself durable; only POSIX can open a directory to sync it."""
    if os.name != "posix":
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
