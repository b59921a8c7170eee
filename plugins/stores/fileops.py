"""File operations the file-backed stores (local, zip) share for their temp-file-then-rename
writes."""

from __future__ import annotations

import os


def remove_quietly(path: str | os.PathLike) -> None:
    try:
        os.remove(path)
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
