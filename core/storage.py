"""Turning what a user passes as `store` (a path, a URL, a store object) into a store.

Stores are plugins found by URL scheme in the `zarrkit.stores` registry; a plain path is the
`file` scheme. A URL no store claims goes to the `zarrkit_open_store` hook before failing.
"""

from __future__ import annotations

import os
import re
from typing import Any

from . import hooks, registry
from .errors import UnknownExtensionError
from .store import MODES, Store, check_mode

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*)://")

__all__ = ["MODES", "check_mode", "open_store", "scheme_of"]


def scheme_of(url: str) -> str:
    match = _SCHEME.match(url)
    return match.group(1).lower() if match else "file"


def open_store(store: Any, *, mode: str = "r", storage_options: dict | None = None) -> Store:
    check_mode(mode)
    if isinstance(store, Store):
        return store
    if isinstance(store, os.PathLike):
        store = os.fspath(store)
    if not isinstance(store, str):
        raise TypeError(f"store must be a path, a URL or a zarrkit Store, got {type(store).__name__}")
    options = dict(storage_options or {})
    scheme = scheme_of(store)
    try:
        cls = registry.resolve("store", scheme)
    except UnknownExtensionError:
        opened = hooks.open_store(store, {"mode": mode, **options})
        if opened is not None:
            return opened
        raise
    return cls.from_url(store, mode=mode, **options)
