"""zarr-python 3's `zarr.storage` names, so its code builds stores unchanged:

    store = zarrkit.storage.LocalStore("data/example.zarr", read_only=False)
    store = zarrkit.storage.ZipStore("data.zip", mode="w")
    store = zarrkit.storage.FsspecStore.from_url("s3://bucket/x.zarr", storage_options={...})

Each name is a face, not a store: calling it opens zarrkit's store plugin for that kind of
storage (through the store registry, as a URL or an object a plugin adapts would be opened) and
returns that plugin's store, so every store here is one zarrkit already has, accepted wherever
a store is and as fast. `isinstance(store, zarrkit.storage.LocalStore)` asks the plugin's class.
What zarr-python's classes have that these do not is in docs/zarr-python.md.

Besides zarr-python's names, what the `store_metrics` setting (`ZARRKIT_STORE_METRICS=1`) has
counted of every store opened while it was on: `metrics_summary()` (a dict), `metrics_report()`
(a table to print) and `reset_metrics()`.
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import MutableMapping
from typing import Any

from zarrkit import registry
from zarrkit.abc.store import Store
from zarrkit.errors import ArgumentError, InvalidArgumentError, ZarrkitError
from zarrkit.store_opening import metrics_report, metrics_summary, open_store, reset_metrics

from .store_path import StorePath

__all__ = [
    "FsspecStore",
    "LocalStore",
    "MemoryStore",
    "ObjectStore",
    "StoreLike",
    "StorePath",
    "ZipStore",
    "metrics_report",
    "metrics_summary",
    "reset_metrics",
]

StoreLike = Store | StorePath | str | os.PathLike[str] | MutableMapping[str, Any] | None
"""What zarr-python's functions take as `store` (zarrkit's take the same)."""


def _mode(read_only: bool) -> str:
    return "r" if read_only else "a"


class _Face(type):
    """The class of a face: `isinstance` asks the store plugin registered for `scheme`."""

    scheme: str

    def __instancecheck__(cls, obj: object) -> bool:
        try:
            plugin = registry.lookup("store", cls.scheme)
        except ZarrkitError:  # (the plugin's optional library is not installed)
            return False
        return isinstance(obj, plugin)

    def __subclasscheck__(cls, sub: type) -> bool:
        try:
            plugin = registry.lookup("store", cls.scheme)
        except ZarrkitError:
            return False
        return issubclass(sub, plugin)


class MemoryStore(metaclass=_Face):
    """zarr-python's `MemoryStore(store_dict=None, *, read_only=False)`: a new store of this
    process's memory (zarrkit's `memory` plugin); given a dict, a store over that dict.

    The call takes:

    - `store_dict`: A mapping to keep the keys in (None: a new, empty store).
    - `read_only`: Open it for reading only.
    """

    scheme = "memory"

    def __new__(  # type: ignore[misc]  # (a face returns the plugin's store)
        cls, store_dict: MutableMapping[str, Any] | None = None, *, read_only: bool = False
    ) -> Store:
        if store_dict is not None:
            # (a mapping is a store `open_store` offers to the store plugins to adapt)
            return open_store(store_dict, mode=_mode(read_only))  # type: ignore[arg-type]
        return open_store("memory://", mode=_mode(read_only))


class LocalStore(metaclass=_Face):
    """zarr-python's `LocalStore(root, *, read_only=False)`: files under a folder (zarrkit's
    `file` plugin).

    The call takes:

    - `root`: The folder (created on the first write).
    - `read_only`: Open it for reading only (writes raise `zarrkit.errors.ReadOnlyError`).

    Raises:
        TypeError: `root` is not a string or path, as zarr-python raises.
    """

    scheme = "file"

    def __new__(  # type: ignore[misc]
        cls, root: str | os.PathLike[str], *, read_only: bool = False
    ) -> Store:
        if not isinstance(root, (str, os.PathLike)):
            raise TypeError(
                f"'root' must be a string or Path instance. Got an instance of {type(root)} instead."
            )
        return open_store(os.fspath(root), mode=_mode(read_only))


#: zarr-python's zip modes -> zarrkit's
_ZIP_MODES = {"r": "r", "a": "a", "w": "w", "x": "w-"}
#: zipfile's compression constants -> the zip plugin's names
_ZIP_COMPRESSION = {
    zipfile.ZIP_STORED: "stored",
    zipfile.ZIP_DEFLATED: "deflate",
    zipfile.ZIP_BZIP2: "bzip2",
    zipfile.ZIP_LZMA: "lzma",
}


class ZipStore(metaclass=_Face):
    """zarr-python's `ZipStore(path, *, mode="r", read_only=None, compression=ZIP_STORED)`:
    a zip archive (zarrkit's `zip` plugin), written when the store is closed or flushed.
    `mode="w"` starts the archive empty, as zipfile's "w" does; "x" refuses an existing one.

    The call takes:

    - `path`: The archive's file.
    - `mode`: zipfile's mode: "r", "a", "w" or "x".
    - `read_only`: Open it for reading only (None: when `mode` is "r").
    - `compression`: zipfile's constant for the members' compression.
    - `allowZip64`: Accepted for zarr-python's signature (zarrkit always allows ZIP64).

    Raises:
        ValueError: an unknown `mode` or `compression`, as zarr-python raises.
        FileExistsError: `mode="x"` and the archive exists.
        zarrkit.errors.StoreError: `mode="r"` and no archive at `path`.
    """

    scheme = "zip"

    def __new__(  # type: ignore[misc]
        cls,
        path: str | os.PathLike[str],
        *,
        mode: str = "r",
        read_only: bool | None = None,
        compression: int = zipfile.ZIP_STORED,
        allowZip64: bool = True,
    ) -> Store:
        if hasattr(path, "read"):  # an open file, as zipfile takes: the archive at its name
            path = _file_name(path)
            read_only = True if read_only is None else read_only
        if mode not in _ZIP_MODES:
            raise InvalidArgumentError(f"mode must be one of {sorted(_ZIP_MODES)}, got {mode!r}")
        if compression not in _ZIP_COMPRESSION:
            raise InvalidArgumentError(f"unsupported zip compression {compression!r}")
        if read_only is None:
            read_only = mode == "r"
        where = os.path.abspath(os.fspath(path))
        if mode == "x" and os.path.exists(where):
            raise FileExistsError(f"{where} exists (mode 'x' creates a new archive)")
        store = open_store(
            f"zip://{os.fspath(path)}",  # (as given: it prints as given, as zarr-python's does)
            mode="r" if read_only else _ZIP_MODES[mode],
            storage_options={"compression": _ZIP_COMPRESSION[compression]},
        )
        if mode == "w" and not read_only:
            store.erase_prefix("")  # (zipfile's "w" truncates; published on close)
        return store


def _file_name(file: Any) -> str:
    """The path of an open file given for a zip archive (zarrkit's zip store reads the archive
    by its path, with positioned reads); a file without one (`io.BytesIO`) is refused."""
    name = getattr(file, "name", None)
    if not isinstance(name, (str, os.PathLike)) or not os.path.isfile(name):
        raise ArgumentError(
            f"ZipStore takes a path or a file opened on one; {type(file).__name__} has no "
            "file name (write it to a file first)"
        )
    return os.fspath(name)


class FsspecStore(metaclass=_Face):
    """zarr-python's `FsspecStore`: a store over an fsspec filesystem (zarrkit's `fsspec+*`
    plugin): `FsspecStore.from_url(url, storage_options=..., read_only=...)` or
    `FsspecStore(fs, path=..., read_only=...)`.

    The call takes:

    - `fs`: An fsspec filesystem.
    - `read_only`: Open it for reading only.
    - `path`: The store's root inside the filesystem.
    - `allowed_exceptions`: Accepted for zarr-python's signature; zarrkit's store turns the filesystem's errors into `zarrkit.errors.StoreError`.
    """

    scheme = "fsspec+file"

    def __new__(  # type: ignore[misc]
        cls, fs: Any, read_only: bool = False, path: str = "/", allowed_exceptions: Any = None
    ) -> Store:
        protocol = fs.protocol[0] if isinstance(fs.protocol, tuple) else fs.protocol
        plugin = registry.lookup("store", f"fsspec+{protocol}")
        store: Store = plugin(fs, path, mode=_mode(read_only))
        return store

    @classmethod
    def from_url(
        cls,
        url: str,
        storage_options: dict[str, Any] | None = None,
        read_only: bool = False,
        allowed_exceptions: Any = None,
    ) -> Store:
        if "://" not in url:  # (a plain path, as fsspec reads it: its local filesystem)
            url = "file://" + os.path.abspath(url)
        target = url if url.startswith("fsspec+") else f"fsspec+{url}"
        return open_store(target, mode=_mode(read_only), storage_options=storage_options)


class ObjectStore(metaclass=_Face):
    """zarr-python's `ObjectStore(store, *, read_only=False)` over an obstore store object
    (`obstore.store.S3Store(...)`, ...): zarrkit's `obstore+*` plugin.

    The call takes:

    - `store`: The obstore store object.
    - `read_only`: Open it for reading only.

    Raises:
        zarrkit.errors.ArgumentError: no installed store plugin takes `store` (it is not an
            obstore store, or obstore is not installed: `pip install 'zarrkit[obstore]'`).
    """

    scheme = "obstore+s3"

    def __new__(cls, store: Any, *, read_only: bool = False) -> Store:  # type: ignore[misc]
        return open_store(store, mode=_mode(read_only))
