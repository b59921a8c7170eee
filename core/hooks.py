"""pluggy hooks, for questions with several possible answerers; each has a first-party answer.

| hook | first-party implementer | asked by |
|---|---|---|
| `zarrkit_install_hint` | `zarrkit.plugins.hints` | the registries, on a name nobody provides |
| `zarrkit_array_defaults` | `zarrkit.plugins.defaults` | array creation, where the creator names nothing |
| `zarrkit_shard_codecs` | `zarrkit.plugins.codecs.sharding` | `create_array(shards=...)` |

Supplying an extension is not a hook: that is the registries' job, by entry point (a family of
names by a pattern such as `numcodecs.*`). No hook runs on a per-chunk path or when a node is
opened. Hook modules come from the entry-point group `zarrkit.hooks` and are imported on the
first hook call, never at `import zarrkit`. This module owns every piece of hook state (the
plugin manager, the loaded hook modules, their failures); nothing else resets it but `reset()`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from importlib.metadata import EntryPoint
from types import ModuleType
from typing import Any

import pluggy

from . import entry_points, forksafe

PROJECT = "zarrkit"
#: The entry-point group of hook plugin modules.
GROUP = "zarrkit.hooks"
#: The group's name before 0.2, read for one more release with a DeprecationWarning: it was
#: also the name of the package of first-party plugins (`zarrkit.plugins`).
LEGACY_GROUP = "zarrkit.plugins"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)
"""Marks a function of a hook plugin module (the `zarrkit.hooks` entry-point group) as the
implementation of the zarrkit hook of its name."""

#: hooks zarrkit no longer asks, and what replaced each (a hook plugin implementing one is
#: skipped and reported rather than silently ignored)
REMOVED_HOOKS = {
    "zarrkit_register_extensions": "declare the extensions as entry points (a family by a "
    "name pattern, e.g. 'numcodecs.*')",
    "zarrkit_unknown_extension": "declare an entry point whose name is a pattern",
    "zarrkit_open_store": "declare a store in the entry-point group 'zarrkit.stores' for the "
    "URL scheme (a pattern such as 'fsspec+*' for a family of schemes)",
    "zarrkit_metadata_loaded": "wrap the store (a store entry point for a scheme that takes "
    "another URL, as 'cache://' does) and refuse the documents there",
}


class HookSpecs:
    @hookspec(firstresult=True)
    def zarrkit_install_hint(self, kind: str, name: str, format: str) -> str | None:
        """What to install to get an unknown extension, for the error message."""

    @hookspec(firstresult=True)
    def zarrkit_array_defaults(
        self, format: str, data_type: Any, chunk_shape: tuple[int | tuple[int, ...], ...]
    ) -> dict[str, Any] | None:
        """What a new array gets where its creator names nothing: a dict with any of
        "codecs" (a list), "chunk_grid" (for `chunk_shape`: per dimension a chunk length, or
        the edge lengths of its chunks when they vary) and "chunk_key_encoding", each in the
        spec's JSON form. The first non-None answer wins; the kernel itself names none."""

    @hookspec(firstresult=True)
    def zarrkit_shard_codecs(
        self,
        format: str,
        shard_shape: tuple[int | tuple[int, ...], ...],
        chunk_shape: tuple[int, ...],
        codecs: list[Any],
        options: dict[str, Any],
    ) -> list[Any] | None:
        """The codec chain (the spec's JSON form, or codec objects) that stores chunks of
        `chunk_shape`, encoded with `codecs` (codec objects, defaults filled in), together in
        each chunk of a grid of `shard_shape`: what `create_array(shards=...)` writes.
        `options` are the rest of a `shards` dict (e.g. "index_location"); refuse ones you do
        not know. None: not this plugin, or not this format."""


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
_plugin_eps: dict[str, tuple[str, str | None]] = {}  # plugin name -> (entry point value, dist)
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


def installed_hook_plugins() -> list[entry_points.Row]:
    """Every declared hook plugin entry point (the deprecated group's after the current
    group's); reads distribution metadata only, imports nothing."""
    return entry_points.in_group(GROUP) + entry_points.in_group(LEGACY_GROUP)


def _load_hook_plugins(pm: pluggy.PluginManager) -> None:
    """Register every hook plugin entry point, skipping (with a warning) those that fail.

    One broken third-party hook module must not break every name lookup of every kind (the
    install hint is asked on each registry miss), so it is skipped, warned about, and reported
    by `failures()` in unknown-extension errors and by `zarrkit plugins --check`. pluggy's own
    loader would instead raise on the first failure and silently drop a second plugin of the
    same name.
    """
    _plugin_eps.clear()
    _failures.clear()
    for group in (GROUP, LEGACY_GROUP):
        for ep, dist, _version in entry_points.in_group(group):
            _load_hook_plugin(pm, ep, dist, legacy=group == LEGACY_GROUP)


def _load_hook_plugin(
    pm: pluggy.PluginManager, ep: EntryPoint, dist: str | None, *, legacy: bool
) -> None:
    if pm.is_blocked(ep.name):
        return
    if legacy:
        warnings.warn(
            f"the hook plugin entry point {ep.name!r} = {ep.value!r} from "
            f"{dist or 'an unknown distribution'} is declared in the entry-point group "
            f"{LEGACY_GROUP!r}, which zarrkit reads until 0.3 only: declare it in {GROUP!r}",
            DeprecationWarning,
            stacklevel=4,
        )
    if pm.has_plugin(ep.name):
        taken_by = _plugin_eps.get(ep.name, ("", None))[1] or "another plugin"
        error = f"was skipped: the name is taken by {taken_by}"
        _fail(HookPluginFailure(ep.name, ep.value, dist, error))
        return
    try:
        plugin = ep.load()
        pm.register(plugin, name=ep.name)
    except Exception as exc:  # an installed hook plugin that cannot be imported or registered
        _fail(HookPluginFailure(ep.name, ep.value, dist, f"failed to load: {exc}"))
        return
    removed = _removed_hooks(pm, plugin)
    if removed:
        pm.unregister(plugin)
        _fail(HookPluginFailure(ep.name, ep.value, dist, f"was skipped: {removed}"))
        return
    _plugin_eps[ep.name] = (ep.value, dist)


def _removed_hooks(pm: pluggy.PluginManager, plugin: ModuleType) -> str:
    """Why `plugin` cannot work as written: the hooks it implements that zarrkit does not ask
    (removed ones, with what replaced them, or misspelled ones); '' when there are none."""
    unknown = sorted(c.name for c in pm.get_hookcallers(plugin) or () if not c.has_spec())
    return "; ".join(
        f"it implements {name}, which zarrkit "
        + (f"no longer asks: {REMOVED_HOOKS[name]}" if name in REMOVED_HOOKS else "does not have")
        for name in unknown
    )


def _fail(failure: HookPluginFailure) -> None:
    _failures.append(failure)
    warnings.warn(str(failure), RuntimeWarning, stacklevel=2)


def failures() -> list[HookPluginFailure]:
    """Hook plugins skipped since the last `reset()`: failed to import or register, or
    implementing a hook zarrkit does not ask."""
    manager()
    return list(_failures)


def reset() -> None:
    """Forget loaded hook modules (after installing a distribution at runtime)."""
    global _manager
    with _lock:
        _manager = None
        _plugin_eps.clear()
        _failures.clear()


def install_hint(kind: str, name: str, format: str) -> str | None:
    hint: str | None = manager().hook.zarrkit_install_hint(kind=kind, name=name, format=format)
    return hint


def array_defaults(
    format: str, data_type: Any, chunk_shape: tuple[int | tuple[int, ...], ...]
) -> dict[str, Any]:
    answer: dict[str, Any] | None = manager().hook.zarrkit_array_defaults(
        format=format, data_type=data_type, chunk_shape=tuple(chunk_shape)
    )
    return answer or {}
