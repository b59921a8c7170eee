"""Lazy, cached registries of extensions, one per kind, each backed by an entry-point group.

Nothing is scanned or imported until a name is first looked up; looking a name up imports only
the module that provides it, unless the name is not an entry-point name, in which case every
provider of that kind is loaded once to ask it about aliases and name patterns.

An extension is supplied in one of two ways: an entry point in the kind's group (what every
installed plugin, first-party ones included, does), or `register()` at run time (tests, and
applications that build a class on the fly). `Registry.lookup(name, format)` tries, in order:

  1. classes registered at run time, newest first;
  2. the entry point whose name is exactly `name` and whose class declares it in `format`
     (when several distributions declare it, only the one chosen by `config.prefer` /
     ZARRKIT_PREFER is imported);
  3. aliases and name patterns of every entry point (`endian` -> `bytes`, `numcodecs.*`,
     `r*`), loading every provider of the kind once, and only on a miss;
  4. otherwise `UnknownExtensionError`, with the answer of the `zarrkit_install_hint` hook
     and the providers that failed to load.

When several classes answer in step 2 or 3, precedence decides before anything is called a
conflict (`_choose`): a distribution chosen by `config.prefer` / ZARRKIT_PREFER first; then a
class that NAMES the extension (its name or an alias in that format) over one that answers
generically (through a name pattern, `matches_name`, or declaring `generic = True`, as a bridge
to another registry does), so installing a package that names a codec never breaks data the
bridge read before. What is left tied is a `PluginConflictError` when it comes from several
distributions, and an `AmbiguousExtensionError` (never a "clash") when one distribution has
several classes for the name: only the metadata can say which is meant (v2's `|O`, by its
object codec), so the format or the caller settles it.

That order lives in `Registry._resolve` (step 4 in `_lookup_uncached`) and nowhere else. This
module owns the registries' state; the installed entry points are read by
`zarrkit.entry_points`, and the hooks own theirs (`refresh()` asks each to forget through its
public `reset`/`forget`).
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from importlib.metadata import EntryPoint
from typing import Any

from . import config, entry_points, forksafe, hooks
from .abc.chunk_grid import ChunkGrid
from .abc.chunk_key_encoding import ChunkKeyEncoding
from .abc.codec import Codec
from .abc.data_type import DataType
from .abc.extension import FORMATS, V3, ExtensionNames
from .abc.memory_layout import MemoryLayout
from .abc.metadata_field import MetadataField
from .abc.storage_transformer import StorageTransformer
from .abc.store import Store
from .errors import (
    AmbiguousExtensionError,
    InvalidArgumentError,
    InvalidPluginError,
    PluginConflictError,
    PluginLoadError,
    UnknownExtensionError,
)

#: kind -> entry-point group
GROUPS: dict[str, str] = {
    "codec": "zarrkit.codecs",
    "data_type": "zarrkit.data_types",
    "chunk_grid": "zarrkit.chunk_grids",
    "chunk_key_encoding": "zarrkit.chunk_key_encodings",
    "memory_layout": "zarrkit.memory_layouts",
    "storage_transformer": "zarrkit.storage_transformers",
    "store": "zarrkit.stores",
    "metadata_field": "zarrkit.metadata_fields",  # top-level document fields (metadata_field.py)
}


#: the contract every class of a kind derives from (`zarrkit.abc`)
BASES: dict[str, type] = {
    "codec": Codec,
    "data_type": DataType,
    "chunk_grid": ChunkGrid,
    "chunk_key_encoding": ChunkKeyEncoding,
    "memory_layout": MemoryLayout,
    "storage_transformer": StorageTransformer,
    "store": Store,
    "metadata_field": MetadataField,
}


def _normalize_dist(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class Provider:
    """One declared provider of an extension: an entry point or a runtime registration."""

    name: str
    value: str
    distribution: str | None
    version: str | None
    origin: str  # "entry point" or "runtime"
    entry_point: EntryPoint | None = None

    @property
    def module(self) -> str:
        return self.value.split(":", 1)[0]

    @property
    def loaded(self) -> bool:
        return self.module in sys.modules


@dataclass(frozen=True)
class Handle:
    """What `register()` returns; give it to `unregister()` to take the registration back."""

    kind: str
    provider: Provider
    cls: type


class Registry:
    def __init__(self, kind: str):
        if kind not in GROUPS:
            raise InvalidArgumentError(
                f"unknown extension kind {kind!r}; expected one of {sorted(GROUPS)}"
            )
        self.kind = kind
        self.group = GROUPS[kind]
        self._lock = forksafe.rlock()
        self._entries: dict[str, list[Provider]] | None = None
        self._runtime: list[Handle] = []
        #: bumped whenever what this registry can answer changes (for caches built on it)
        self.generation = 0
        self._classes: dict[Provider, type] = {}
        self._cache: dict[tuple[str, str], type] = {}
        self._cache_settings: object = None

    # -- discovery -------------------------------------------------------------------------
    def entries(self) -> dict[str, list[Provider]]:
        """Entry-point providers by name; reads distribution metadata only, imports nothing."""
        with self._lock:
            if self._entries is None:
                table: dict[str, list[Provider]] = {}
                seen: set[tuple[str, str, str]] = set()
                for ep, dist_name, version in entry_points.in_group(self.group):
                    key = (ep.name, ep.value, _normalize_dist(dist_name or ""))
                    if key in seen:  # one distribution visible twice on sys.path
                        continue
                    seen.add(key)
                    table.setdefault(ep.name, []).append(
                        Provider(ep.name, ep.value, dist_name, version, "entry point", ep)
                    )
                self._entries = table
            return self._entries

    def refresh(self) -> None:
        """Forget what was scanned (after installing a distribution at runtime)."""
        entry_points.forget()
        with self._lock:
            self._entries = None
            self._classes.clear()
            self._cache.clear()
            self.generation += 1

    # -- runtime registration --------------------------------------------------------------
    def register(self, cls: type, *, name: str | None = None) -> Handle:
        # refuse a class that is no plugin of this kind now, not on every later lookup
        _check_extension_class(cls, self.kind)
        name = name or _primary_name(cls)
        provider = Provider(name, f"{cls.__module__}:{cls.__qualname__}", None, None, "runtime")
        handle = Handle(self.kind, provider, cls)
        with self._lock:
            self._runtime.insert(0, handle)
            self._cache.clear()
            self.generation += 1
        return handle

    def unregister(self, handle: Handle) -> None:
        with self._lock:
            try:
                self._runtime.remove(handle)
            except ValueError:
                raise InvalidArgumentError(
                    f"{handle.provider.name!r} is not registered at runtime"
                ) from None
            self._cache.clear()
            self.generation += 1

    # -- lookup ----------------------------------------------------------------------------
    def lookup(self, name: str, format: str = V3, *, where: str | None = None) -> type[Any]:
        """The class providing the extension `name` in `format`, or a clear error."""
        settings = config.get()
        key = (name, format)
        cache = self._cache
        if self._cache_settings is settings:
            found = cache.get(key)
            if found is not None:
                return found
        with self._lock:
            if self._cache_settings is not settings:
                self._cache.clear()
                self._cache_settings = settings
            cls = self._lookup_uncached(name, format, where)
            self._cache[key] = cls
            return cls

    def find(self, name: str, format: str = V3) -> type[Any] | None:
        """The class providing `name` in `format`, or None: `lookup` without the error (and
        its install hint), for a caller to whom an unknown name is an answer."""
        settings = config.get()
        if self._cache_settings is settings:
            found = self._cache.get((name, format))
            if found is not None:
                return found
        with self._lock:
            if self._cache_settings is not settings:
                self._cache.clear()
                self._cache_settings = settings
            cls = self._resolve(name, format, [])
            if cls is not None:
                self._cache[(name, format)] = cls
            return cls

    def _lookup_uncached(self, name: str, format: str, where: str | None) -> type:
        failures: list[str] = []
        cls = self._resolve(name, format, failures)
        if cls is not None:
            return cls
        # 4. nobody: say what to install, and what failed to load
        hint = hooks.install_hint(self.kind, name, format)
        failures.extend(str(f) for f in hooks.failures())
        if failures:
            extra = "; these providers failed to load: " + "; ".join(failures)
            hint = (hint or "") + extra if hint else extra.lstrip("; ")
        raise UnknownExtensionError(self.kind, name, format, hint=hint, where=where)

    def _resolve(self, name: str, format: str, failures: list[str]) -> type | None:
        """Steps 1 to 3 of the module docstring's lookup order, in one place."""
        # 1. runtime registrations, newest first
        for handle in self._runtime:
            if handle.provider.name == name or _matches(handle.cls, name, format):
                return handle.cls
        # 2. the entry point of exactly this name (imports only its module)
        exact = self._preferred(name, self.entries().get(name, []))
        fitting = [
            (p, c) for p, c in ((p, self._load(p)) for p in exact) if _matches(c, name, format)
        ]
        if fitting:
            return self._choose(name, format, fitting)
        # 3. aliases and patterns of every entry point (loads them all, once)
        matches = [
            (provider, cls)
            for provider, cls in self._load_all(failures)
            if provider.name != name and _matches(cls, name, format)
        ]
        if matches:
            return self._choose(name, format, matches)
        return None

    def _preferred(self, name: str, providers: list[Provider]) -> list[Provider]:
        """Only the configured distribution's providers of `name`, when it is among them.

        Applied before loading, so the module of a distribution not chosen is never imported
        (it may be broken, or slow to import).
        """
        wanted = config.get().prefer.get((self.kind, name))
        if wanted is None or len(providers) < 2:
            return providers
        chosen = [
            p
            for p in providers
            if p.distribution and _normalize_dist(p.distribution) == _normalize_dist(wanted)
        ]
        return chosen or providers

    def _choose(self, name: str, format: str, candidates: list[tuple[Provider, type]]) -> type:
        """One class among several that answer `name`, by the precedence of the module doc."""
        outcome = precedence(self.kind, name, format, candidates)
        if isinstance(outcome, type):
            return outcome
        raise outcome

    def _load(self, provider: Provider) -> type:
        cls = self._classes.get(provider)
        if cls is None:
            assert provider.entry_point is not None, "only entry points are loaded"
            try:
                cls = provider.entry_point.load()
                _check_extension_class(cls, self.kind)
            except Exception as exc:  # an installed plugin that cannot be imported or used
                error = (
                    InvalidPluginError if isinstance(exc, InvalidPluginError) else PluginLoadError
                )
                raise error(
                    f"the {self.kind} entry point {provider.name!r} = {provider.value!r} from "
                    f"{provider.distribution or 'an unknown distribution'} failed to load: {exc}"
                ) from exc
            self._classes[provider] = cls
        return cls

    def _load_all(self, failures: list[str] | None = None) -> Iterable[tuple[Provider, type]]:
        for providers in self.entries().values():
            for provider in providers:
                try:
                    yield provider, self._load(provider)
                except PluginLoadError as exc:
                    if failures is not None:
                        failures.append(str(exc))

    # -- listing ---------------------------------------------------------------------------
    def providers(self) -> list[Provider]:
        """Every declared provider, without importing any of them."""
        out = [h.provider for h in self._runtime]
        for providers in self.entries().values():
            out.extend(providers)
        return out

    def load_all(self) -> list[tuple[Provider, type | None, str | None]]:
        """Every provider with its class (or the error that stopped it loading)."""
        rows: list[tuple[Provider, type | None, str | None]] = [
            (handle.provider, handle.cls, None) for handle in self._runtime
        ]
        for providers in self.entries().values():
            for provider in providers:
                try:
                    rows.append((provider, self._load(provider), None))
                except PluginLoadError as exc:
                    rows.append((provider, None, str(exc.__cause__ or exc)))
        return rows


def _names_of(cls: type) -> ExtensionNames:
    names: ExtensionNames | None = getattr(cls, "names", None)
    if names is None:
        raise InvalidPluginError(f"{cls!r} declares no `names`; every extension class must")
    return names


def _check_extension_class(obj: object, kind: str) -> None:
    """Refuse what an entry point loaded (or a caller registers) unless it is a class of the
    kind's contract with usable `names`.

    Checked once at load, so that one bad provider (an entry point naming a module or a
    function, a class of another kind, or a class without names) is reported as that provider
    failing to load instead of failing every later lookup of its kind.
    """
    if not isinstance(obj, type):
        raise InvalidPluginError(f"{obj!r} is not a class")
    base = BASES[kind]
    if not issubclass(obj, base):
        raise InvalidPluginError(
            f"{obj.__module__}.{obj.__qualname__} is not a {kind} plugin: it does not derive "
            f"from zarrkit.abc.{base.__name__}"
        )
    if not callable(getattr(_names_of(obj), "matches", None)):
        raise InvalidPluginError(f"`names` of {obj!r} is not a zarrkit.abc.ExtensionNames")


def _matches(cls: type, name: str, format: str) -> bool:
    """Whether a class of a kind's base (checked at load: `_check_extension_class`) answers
    for `name` in `format`: its `matches_name`, which both bases declare."""
    return bool(cls.matches_name(name, format))  # type: ignore[attr-defined]


def spelled_by(cls: type, name: str, format: str) -> bool:
    """Whether `cls` names the extension `name` in `format` (as its name or an alias), rather
    than answering for it generically (a pattern, `matches_name`, or `generic = True`)."""
    if getattr(cls, "generic", False):
        return False
    spelling = _names_of(cls).get(format)
    return spelling is not None and (name == spelling.name or name in spelling.aliases)


def precedence(
    kind: str, name: str, format: str, candidates: list[tuple[Provider, type]]
) -> type | PluginConflictError | AmbiguousExtensionError:
    """The class that answers `name` among `candidates` (each answers it), or the error that
    says why none does: the rule of the module docstring, shared with `zarrkit plugins --check`
    so that what it reports is what a lookup does."""
    distinct: dict[type, Provider] = {}
    for provider, cls in candidates:
        distinct.setdefault(cls, provider)
    wanted = config.get().prefer.get((kind, name))
    if wanted is not None and len(distinct) > 1:
        chosen = {
            c: p
            for c, p in distinct.items()
            if p.distribution and _normalize_dist(p.distribution) == _normalize_dist(wanted)
        }
        distinct = chosen or distinct
    named = {c: p for c, p in distinct.items() if spelled_by(c, name, format)}
    tied = named or distinct
    if len(tied) == 1:
        return next(iter(tied))
    labels = sorted(
        f"{p.distribution or p.origin} {p.version or ''} ({p.value})".replace("  ", " ")
        for p in tied.values()
    )
    dists = {_normalize_dist(p.distribution or p.origin) for p in tied.values()}
    if len(dists) > 1:
        return PluginConflictError(kind, name, labels)
    return AmbiguousExtensionError(kind, name, format, labels, tuple(tied))


def _primary_name(cls: type) -> str:
    names = _names_of(cls)
    for fmt in FORMATS:
        spelling = names.get(fmt)
        if spelling is not None:
            return spelling.name or (f"/{spelling.pattern}/" if spelling.pattern else "?")
    raise InvalidPluginError(f"{cls!r} declares no name in any format")


_registries: dict[str, Registry] = {}
_registries_lock = forksafe.lock()


def get_registry(kind: str) -> Registry:
    """The registry of the extensions of `kind` ("codec", "data_type", ...), one per process."""
    registry = _registries.get(kind)
    if registry is None:
        with _registries_lock:
            registry = _registries.setdefault(kind, Registry(kind))
    return registry


def lookup(kind: str, name: str, format: str = V3, *, where: str | None = None) -> type[Any]:
    """The class providing the extension `name` of `kind` in `format` (see the module doc)."""
    return get_registry(kind).lookup(name, format, where=where)


def register(kind: str, cls: type, *, name: str | None = None) -> Handle:
    """Add an extension class for this process; it wins over installed plugins of that name."""
    return get_registry(kind).register(cls, name=name)


def unregister(handle: Handle) -> None:
    get_registry(handle.kind).unregister(handle)


def refresh() -> None:
    """Rescan every entry-point group (after installing or removing a distribution at runtime):
    the installed entry points, every registry, and the hook plugins."""
    importlib.invalidate_caches()
    entry_points.forget()
    for kind in GROUPS:
        get_registry(kind).refresh()
    hooks.reset()
