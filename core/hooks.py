"""pluggy hooks, for questions with several possible answerers.

Name lookup is not one of them (that is the registries' job, by entry point), and no hook runs
on a per-chunk path. Hook modules come from the entry-point group `zarrkit.plugins` and are
imported on the first hook call, never at `import zarrkit`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pluggy

from . import forksafe

PROJECT = "zarrkit"
#: The entry-point group of hook plugin modules.
GROUP = "zarrkit.plugins"
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
    def zarrkit_array_defaults(
        self, format: str, data_type: Any, chunk_shape: tuple[int, ...]
    ) -> dict | None:
        """What a new array gets where its creator names nothing: a dict with any of
        "codecs" (a list), "chunk_grid" (for `chunk_shape`) and "chunk_key_encoding", each in
        the spec's JSON form. The first non-None answer wins; the kernel itself names none."""

    @hookspec(firstresult=True)
    def zarrkit_shard_codecs(
        self,
        format: str,
        shard_shape: tuple[int, ...],
        chunk_shape: tuple[int, ...],
        codecs: list,
        options: dict,
    ) -> list | None:
        """The codec chain (the spec's JSON form, or codec objects) that stores chunks of
        `chunk_shape`, encoded with `codecs` (codec objects, defaults filled in), together in
        each chunk of a grid of `shard_shape`: what `create_array(shards=...)` writes.
        `options` are the rest of a `shards` dict (e.g. "index_location"); refuse ones you do
        not know. None: not this plugin, or not this format."""

    @hookspec(firstresult=True)
    def zarrkit_open_store(self, url: str, options: dict) -> Any:
        """Open a store for a URL no store plugin claims by scheme; the first non-None wins."""

    @hookspec
    def zarrkit_metadata_loaded(self, node: Any) -> None:
        """Inspect a node's metadata after it is read; raise to refuse it."""


@dataclass(frozen=True)
class HookPluginFailure:
    """A hook plugin entry point that was skipped, and why."""

    name: str
    value: str
    distribution: str | None
    error: str

    def __str__(self) -> str:
        return (
            f"the hook plugin entry point {self.name!r} = {self.value!r} from "
            f"{self.distribution or 'an unknown distribution'} {self.error}"
        )


_lock = forksafe.rlock()
_manager: pluggy.PluginManager | None = None
_extensions_registered = False
_plugin_eps: dict[
    str, tuple[str, str | None]
] = {}  # plugin name -> (entry point value, distribution)
_failures: list[HookPluginFailure] = []


def manager() -> pluggy.PluginManager:
    global _manager
    if _manager is None:
        with _lock:
            if _manager is None:
                pm = pluggy.PluginManager(PROJECT)
                pm.add_hookspecs(HookSpecs)
                _load_hook_plugins(pm)
                _manager = pm
    return _manager


def _load_hook_plugins(pm: pluggy.PluginManager) -> None:
    """Register every hook plugin entry point, skipping (with a warning) those that fail.

    One broken third-party hook module must not break every name lookup of every kind (hooks
    run on each registry miss), so it is skipped, warned about, and reported by `failures()`
    in unknown-extension errors and by `zarrkit plugins --check`. pluggy's own loader would
    instead raise on the first failure and silently drop a second plugin of the same name.
    """
    _plugin_eps.clear()
    _failures.clear()
    from .registry import installed_entry_points  # (the registries import this module)

    for ep, dist, _version in installed_entry_points(GROUP):
        if pm.is_blocked(ep.name):
            continue
        if pm.has_plugin(ep.name):
            taken_by = _plugin_eps.get(ep.name, ("", None))[1] or "another plugin"
            error = f"was skipped: the name is taken by {taken_by}"
            _fail(HookPluginFailure(ep.name, ep.value, dist, error))
            continue
        try:
            pm.register(ep.load(), name=ep.name)
        except Exception as exc:  # an installed hook plugin that cannot be imported or registered
            _fail(HookPluginFailure(ep.name, ep.value, dist, f"failed to load: {exc}"))
            continue
        _plugin_eps[ep.name] = (ep.value, dist)


def _fail(failure: HookPluginFailure) -> None:
    _failures.append(failure)
    warnings.warn(str(failure), RuntimeWarning, stacklevel=2)


def failures() -> list[HookPluginFailure]:
    """Hook plugins skipped since the last `reset()`: failed to import or register, or whose
    `zarrkit_register_extensions` raised."""
    manager()
    return list(_failures)


def reset() -> None:
    """Forget loaded hook modules (after installing a distribution at runtime)."""
    global _manager, _extensions_registered
    from .registry import forget_installed

    forget_installed()
    with _lock:
        _manager = None
        _extensions_registered = False
        _plugin_eps.clear()
        _failures.clear()


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
            plugin_name = pm.get_name(impl.plugin) or impl.plugin_name
            value, dist = _plugin_eps.get(plugin_name, (plugin_name, None))

            def register(kind: str, cls: type, name: str | None = None, _dist=dist) -> None:
                get_registry(kind)._add_hooked(cls, name, _dist)

            try:
                impl.function(register=register)
            except Exception as exc:  # like a failed import: skip it, do not fail every lookup
                error = f"failed in zarrkit_register_extensions: {exc!r}"
                _fail(HookPluginFailure(plugin_name, value, dist, error))
        _extensions_registered = True


def unknown_extension(kind: str, name: str, format: str) -> type | None:
    return manager().hook.zarrkit_unknown_extension(kind=kind, name=name, format=format)


def install_hint(kind: str, name: str, format: str) -> str | None:
    return manager().hook.zarrkit_install_hint(kind=kind, name=name, format=format)


def array_defaults(format: str, data_type: Any, chunk_shape: tuple[int, ...]) -> dict:
    answer = manager().hook.zarrkit_array_defaults(
        format=format, data_type=data_type, chunk_shape=tuple(chunk_shape)
    )
    return answer or {}


def shard_codecs(
    format: str,
    shard_shape: tuple[int, ...],
    chunk_shape: tuple[int, ...],
    codecs: list,
    options: dict,
) -> list | None:
    return manager().hook.zarrkit_shard_codecs(
        format=format,
        shard_shape=tuple(shard_shape),
        chunk_shape=tuple(chunk_shape),
        codecs=codecs,
        options=options,
    )


def open_store(url: str, options: dict) -> Any:
    return manager().hook.zarrkit_open_store(url=url, options=options)


def metadata_loaded(node: Any) -> None:
    manager().hook.zarrkit_metadata_loaded(node=node)
