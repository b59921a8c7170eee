"""What to say when no node is found: the store's own account of the place (`Store.diagnose`)
turned into the error that fits it, so a missing folder, a folder of other files, a plain file,
a missing bucket and a refused permission each read differently from "no node at path '/'"."""

from __future__ import annotations

from collections.abc import Iterable

from .abc.store import Diagnosis, Store
from .errors import (
    NodeNotFoundError,
    NotZarrError,
    PermissionDeniedError,
    StoreNotFoundError,
    ZarrkitError,
)
from .formats import RESERVED_NAMES

_BY_KIND: dict[str, type[NodeNotFoundError]] = {
    "missing": StoreNotFoundError,
    "not_a_container": NotZarrError,
    "denied": PermissionDeniedError,
}


def node_not_found(store: Store, path: str, *, diagnose: bool = True) -> NodeNotFoundError:
    """The error for "no node at `path` in `store`", as precise as the store can make it.
    The store's root is diagnosed (a member missing from a group that was opened needs no
    diagnosis: `diagnose=False`, so a miss costs no further request)."""
    if not diagnose:
        return NodeNotFoundError(path or "/", store)
    try:
        absence = store.diagnose("")
    except ZarrkitError:  # the diagnosis failed too: the plain error is still true
        absence = None
    if isinstance(absence, Diagnosis):
        return _BY_KIND[absence.kind](path or "/", store, reason=absence.detail)
    if path:
        return NodeNotFoundError(path, store)
    return _root_not_zarr(store)


def _root_not_zarr(store: Store) -> NodeNotFoundError:
    """The store's root is there but holds no node: say whether it is empty or what it
    holds instead of Zarr metadata."""
    if not store.capabilities.listable:
        return NodeNotFoundError("/", store)
    try:
        found: tuple[Iterable[str], Iterable[str]] = store.list_dir("")
    except ZarrkitError:
        return NodeNotFoundError("/", store)
    keys, prefixes = [str(k) for k in found[0]], [str(p) for p in found[1]]
    if not keys and not prefixes:
        return NodeNotFoundError("/", store, reason="the store is empty")
    unread = sorted(RESERVED_NAMES.intersection(keys))
    if unread:  # listed, yet reading it found nothing: the backend would not let us read it
        return PermissionDeniedError(
            "/",
            store,
            reason=f"{', '.join(unread)} is there but cannot be read (no permission?)",
        )
    shown = sorted([*keys, *(f"{p}/" for p in prefixes)])
    listed = ", ".join(repr(k) for k in shown[:5]) + (", ..." if len(shown) > 5 else "")
    documents = ", ".join(sorted(RESERVED_NAMES - {".zattrs", ".zmetadata"}))
    return NotZarrError(
        "/",
        store,
        reason=f"not a Zarr store: it holds {listed} but no Zarr metadata ({documents})",
    )
