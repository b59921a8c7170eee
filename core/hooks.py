"""pluggy hooks, for questions with several possible answerers.

Name lookup is not one of them (that is the registries' job, by entry point), and no hook runs
on a per-chunk path. Hook modules come from the entry-point group `zarrkit.plugins` and are
imported on the first hook call, never at `import zarrkit`.
"""

from __future__ import annotations

import threading
from typing import Any, Callable

import pluggy

PROJECT = "zarrkit"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


class HookSpecs:
    @hookspec
    def zarrkit_register_extensions(self, register: Callable[..., None]) -> None:
        """Add extensions whose names are only known at run time.

        Call `register(kind, cls, name=None)` for each; used for dynamic families such as a
        bridge exposing every codec of another library.
        """

    @hookspec(firstresult=True)
    def zarrkit_unknown_extension(self, kind: str, name: str, format: str) -> type | None:
        """Last chance to provide an extension no registry knows; the first non-None wins."""

    @hookspec(firstresult=True)
    def zarrkit_install_hint(self, kind: str, name: str, format: str) -> str | None:
        """What to install to get an unknown extension, for the error message."""

    @hookspec(firstresult=True)
    def zarrkit_open_store(self, url: str, options: dict) -> Any:
        """Open a store for a URL no store plugin claims by scheme; the first non-None wins."""

    @hookspec
    def zarrkit_metadata_loaded(self, node: Any) -> None:
        """Inspect a node's metadata after it is read; raise to refuse it."""


_lock = threading.RLock()
_manager: pluggy.PluginManager | None = None
_extensions_registered = False


def manager() -> pluggy.PluginManager:
    global _manager
    if _manager is None:
        with _lock:
            if _manager is None:
                pm = pluggy.PluginManager(PROJECT)
                pm.add_hookspecs(HookSpecs)
                pm.load_setuptools_entrypoints("zarrkit.plugins")
                _manager = pm
    return _manager


def reset() -> None:
    """Forget loaded hook modules (after installing a distribution at runtime)."""
    global _manager, _extensions_registered
    with _lock:
        _manager = None
        _extensions_registered = False


def extensions_registered() -> bool:
    return _extensions_registered


def ensure_registered_extensions() -> None:
    """Run `zarrkit_register_extensions` once per process (or per `registry.refresh()`)."""
    global _extensions_registered
    if _extensions_registered:
        return
    with _lock:
        if _extensions_registered:
            return
        from .registry import get_registry

        pm = manager()
        for impl in pm.hook.zarrkit_register_extensions.get_hookimpls():
            dist = _distribution_of(pm, impl.plugin)

            def register(kind: str, cls: type, name: str | None = None, _dist=dist) -> None:
                get_registry(kind)._add_hooked(cls, name, _dist)

            impl.function(register=register)
        _extensions_registered = True


def _distribution_of(pm: pluggy.PluginManager, plugin: object) -> str | None:
    for plug, dist in pm.list_plugin_distinfo():
        if plug is plugin:
            return dist.metadata["Name"]
    return None


def unknown_extension(kind: str, name: str, format: str) -> type | None:
    return manager().hook.zarrkit_unknown_extension(kind=kind, name=name, format=format)


def install_hint(kind: str, name: str, format: str) -> str | None:
    return manager().hook.zarrkit_install_hint(kind=kind, name=name, format=format)


def open_store(url: str, options: dict) -> Any:
    return manager().hook.zarrkit_open_store(url=url, options=options)


def metadata_loaded(node: Any) -> None:
    manager().hook.zarrkit_metadata_loaded(node=node)
