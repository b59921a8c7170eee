"""Turning what a user passes as `store` (a path, a URL, a store object) into a store.

Stores are plugins found by URL scheme in the `zarrkit.stores` registry; a plain path is the
`file` scheme; a URL no store claims is an `UnknownExtensionError` naming the scheme.
`storage_options` go to the store's `from_url` as keyword arguments.

Any other object (a dict, an fsspec mapper, another library's store) is offered to the store
classes of the registry, each asked through its class method `adapt(obj, mode=)` until one
answers with a store. They are asked in this order: by `adapt_order` (lower first), then
classes registered at runtime (newest first), then entry points in order of name; each class
once. A class that answers None does not recognise the object. The setting
`store_schemes` (`ZARRKIT_STORE_SCHEMES="s3=obstore+s3"`) opens a scheme's URLs as another's.

With the setting `store_metrics` (`ZARRKIT_STORE_METRICS=1`) every store returned is wrapped by
the store registry's `metrics` entry: a wrapper class with `wrap(store)` and the class methods
`summary()`, `report()` and `reset()` over what all its instances recorded. The kernel names
no class: a site may register its own `metrics` wrapper.
"""

from __future__ import annotations

import os
from typing import Any

from . import config, registry
from .abc.store import MODES, Store, StoreLike, check_mode, scheme_of
from .errors import ArgumentError, PluginLoadError

#: the store registry's name for the wrapper the `store_metrics` setting applies
METRICS_WRAPPER = "metrics"

__all__ = [
    "MODES",
    "StoreLike",
    "check_mode",
    "metrics_report",
    "metrics_summary",
    "open_store",
    "reset_metrics",
    "scheme_of",
]


def open_store(
    store: StoreLike,
    *,
    mode: str = "r",
    storage_options: dict[str, Any] | None = None,
) -> Store:
    """Open a store from a path, a URL (its scheme picks the store plugin) or an object a store
    plugin adapts; a store is returned as it is.

    Args:
        store: The path, URL, store or object.
        mode: The open mode ("r", "r+", "a", "w", "w-").
        storage_options: Options for the store plugin (credentials, endpoint, ...).

    Raises:
        InvalidArgumentError: `mode` is not an open mode.
        UnknownExtensionError: no installed store plugin takes the URL's scheme.
        ArgumentError: `store` is an object no installed store plugin adapts.
        StoreNotFoundError: the place does not exist where the mode needs it to.
        StoreError: the store failed to open.
    """
    opened = _open(store, mode, storage_options)
    if config.get().store_metrics:
        opened = _metrics_wrapper().wrap(opened)
    return opened


def _open(store: object, mode: str, storage_options: dict[str, Any] | None) -> Store:
    check_mode(mode)
    if isinstance(store, Store):
        return store
    as_store = getattr(type(store), "as_zarrkit_store", None)  # (a view of one: a StorePath)
    if callable(as_store):
        return as_store(store)  # type: ignore[no-any-return]
    if isinstance(store, os.PathLike):
        store = os.fspath(store)
    if not isinstance(store, str):
        return _adapt(store, mode, storage_options)
    options = dict(storage_options or {})
    scheme = scheme_of(store)
    routed = config.get().store_schemes.get(scheme)  # e.g. s3:// through another backend
    if routed is not None and "://" in store:
        store, scheme = f"{routed}://{store.split('://', 1)[1]}", routed
    cls = _store_class(scheme)
    return cls.from_url(store, mode=mode, **options)


_ORIGINS = {"runtime": 0, "entry point": 1}


def _adapt(obj: object, mode: str, storage_options: dict | None) -> Store:
    """A store over `obj` from the first store class that recognises it (see the module's
    docstring for the order)."""
    if storage_options:
        raise ArgumentError(
            f"storage_options {sorted(storage_options)} apply to a path or URL, "
            f"not to a {type(obj).__name__} object"
        )
    failures: list[str] = []
    candidates: list[tuple[int, int, int, str, type[Store]]] = []
    for i, (provider, cls, error) in enumerate(registry.get_registry("store").load_all()):
        if cls is None:
            failures.append(f"{provider.name!r}: {error}")
        elif issubclass(cls, Store):
            rank = _ORIGINS.get(provider.origin, 2)
            order = i if rank < 1 else 0  # runtime registrations: as registered
            candidates.append((cls.adapt_order, rank, order, provider.name, cls))
    seen: set[type] = set()
    for *_, cls in sorted(candidates, key=lambda c: c[:4]):
        if cls in seen:
            continue
        seen.add(cls)
        adapted = cls.adapt(obj, mode=mode)
        if adapted is not None:
            return adapted
    hint = "; store plugins that failed to load: " + "; ".join(failures) if failures else ""
    raise ArgumentError(
        f"store must be a path, a URL, a zarrkit Store or an object a store plugin adapts "
        f"(a mapping, an fsspec mapper, a zarr-python store), got {type(obj).__name__}{hint}"
    )


def _store_class(scheme: str) -> type[Store]:
    cls = registry.lookup("store", scheme)
    if not issubclass(cls, Store):
        raise PluginLoadError(
            f"the store plugin for {scheme}:// is {cls.__module__}.{cls.__qualname__}, "
            f"which is not a zarrkit Store"
        )
    return cls


# -- store metrics (what a CLI flag or a user switches on with `store_metrics`) -----------------
def _metrics_wrapper() -> Any:
    """The registered `metrics` wrapper class: `wrap`, plus `summary`, `report` and `reset`
    over every instance; a site's own class need not derive from the first-party one."""
    return registry.lookup("store", METRICS_WRAPPER)


def metrics_summary() -> dict[str, dict[str, dict[str, Any]]]:
    """What every metrics-wrapped store in this process recorded:
    {store: {operation: {"calls", "keys", "bytes", "seconds", "errors"}}}."""
    summary: dict[str, dict[str, dict[str, Any]]] = _metrics_wrapper().summary()
    return summary


def metrics_report() -> str:
    """What every metrics-wrapped store in this process recorded, as a table for printing."""
    report: str = _metrics_wrapper().report()
    return report


def reset_metrics() -> None:
    """Forget what every metrics-wrapped store in this process recorded."""
    _metrics_wrapper().reset()
