"""Process-wide settings, each overridable by a `ZARRKIT_*` environment variable.

Kept deliberately small: a setting belongs here only when it is not a property of one array.

Two ways to change them, both in force at once and both undone on leaving a `with` block:

    zarrkit.config.set(threads=4)                   # zarrkit's settings by keyword
    zarrkit.config.set({"array.order": "F"})        # zarr-python's keys (`zarr.config.set`)
    with zarrkit.config.set({"async.concurrency": 32}): ...

`get()` is the current `Settings`; `get("array.order")` a zarr-python key's value (a key that
maps onto a setting answers the setting). `reset()`, `pprint()` and `to_dict()` are
zarr-python's too. Which keys exist and what each is comes from the key tables installed in the
`zarrkit.config_keys` entry-point group (`ConfigKeys`; zarr-python's is `zarrkit.zarr_config`),
so the settings themselves name nothing of zarr-python.
"""

from __future__ import annotations

import os
import pprint as _pprint
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType
from typing import Any, Protocol, overload, runtime_checkable

from . import entry_points, forksafe
from .errors import ConfigError, PluginLoadError, UnknownConfigKeyError


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ConfigError(f"environment variable {name} must be an integer, got {raw!r}") from None


def _env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return float(raw)
    except ValueError:
        raise ConfigError(f"environment variable {name} must be a number, got {raw!r}") from None


def _env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    return raw.strip().lower() in {"1", "true", "yes", "on"}


def _env_prefer() -> dict[tuple[str, str], str]:
    """ZARRKIT_PREFER="codec:gzip=some-dist;data_type:int2=other-dist"."""
    table: dict[tuple[str, str], str] = {}
    for item in filter(None, (p.strip() for p in os.environ.get("ZARRKIT_PREFER", "").split(";"))):
        try:
            target, dist = item.split("=", 1)
            kind, name = target.split(":", 1)
        except ValueError:
            raise ConfigError(
                f"ZARRKIT_PREFER entry {item!r} must look like 'kind:name=distribution'"
            ) from None
        table[(kind.strip(), name.strip())] = dist.strip()
    return table


def _env_schemes() -> dict[str, str]:
    """ZARRKIT_STORE_SCHEMES="s3=obstore+s3;gs=obstore+gs"."""
    table: dict[str, str] = {}
    for item in filter(
        None, (p.strip() for p in os.environ.get("ZARRKIT_STORE_SCHEMES", "").split(";"))
    ):
        scheme, sep, target = item.partition("=")
        if not sep or not scheme.strip() or not target.strip():
            raise ConfigError(
                f"ZARRKIT_STORE_SCHEMES entry {item!r} must look like 'scheme=other-scheme'"
            )
        table[scheme.strip().lower()] = target.strip().lower()
    return table


@dataclass(frozen=True)
class Settings:
    """The process-wide settings, each field defaulting to its `ZARRKIT_*` environment
    variable (docs/guide/configuration.md lists them); `get()` returns the current ones."""

    threads: int = field(default_factory=lambda: _env_int("ZARRKIT_THREADS", os.cpu_count() or 1))
    write_empty_chunks: bool = field(
        default_factory=lambda: _env_bool("ZARRKIT_WRITE_EMPTY_CHUNKS", False)
    )
    prefer: dict[tuple[str, str], str] = field(default_factory=_env_prefer)
    #: write chunks and shards that a write covers partly through `Store.update_many`, so
    #: writers in other processes of a store with `safe_updates` never lose each other's updates
    safe_updates: bool = field(default_factory=lambda: _env_bool("ZARRKIT_SAFE_UPDATES", True))
    #: wrap every store opened by URL or path in the store registry's `metrics` wrapper
    store_metrics: bool = field(default_factory=lambda: _env_bool("ZARRKIT_STORE_METRICS", False))
    #: requests a network store keeps in flight at once, and selections `Array.get_many`
    #: reads at once: waiting on the network costs no CPU, so this is not the thread count.
    #: The default lets a group of up to 128 members have all their documents read in one
    #: round trip, while keeping under S3's rate per prefix (5,500 GETs a second) at a first
    #: byte after 25 ms; obstore and tensorstore's S3 driver set no bound of their own.
    io_concurrency: int = field(default_factory=lambda: _env_int("ZARRKIT_IO_CONCURRENCY", 128))
    #: seconds a network request may go without progress (connecting, or waiting for the next
    #: bytes of an answer) before it fails as timed out; read when a network store is opened,
    #: and given to its client unless the store's own options set the client's equivalent
    io_timeout: float = field(default_factory=lambda: _env_float("ZARRKIT_IO_TIMEOUT", 30.0))
    #: attempts after the first that a network store makes of a request that failed in a way
    #: worth another try (a 5xx answer, throttling, a connection fault or timeout, a body cut
    #: short), backing off exponentially with jitter; read when a network store is opened
    io_retries: int = field(default_factory=lambda: _env_int("ZARRKIT_IO_RETRIES", 4))
    #: URL schemes opened as another scheme: {"s3": "obstore+s3"} picks the store behind s3://
    store_schemes: dict[str, str] = field(default_factory=_env_schemes)
    #: whether an array handle keeps the shard indexes it read: "remote" (stores whose calls
    #: are round trips, `preferred_fetch_bytes` set), "always" or "never". A kept index misses
    #: a shard rewritten through another handle until the array is opened again.
    index_cache: str = field(
        default_factory=lambda: os.environ.get("ZARRKIT_INDEX_CACHE") or "remote"
    )
    #: the most bytes a chunk's decoding may produce at a step whose size the chunk spec does not
    #: fix (variable-length types such as strings, codecs that cannot state a bound): a stored
    #: value that decodes to more is refused as corrupt rather than exhausting memory. Read when
    #: an array's codec chain is bound (when the array is opened).
    max_chunk_bytes: int = field(
        default_factory=lambda: _env_int("ZARRKIT_MAX_CHUNK_BYTES", 512 << 20)
    )
    #: what arrays of variable-length strings (v3 `string`, v2 `|O` with vlen-utf8) read as:
    #: "StringDType", numpy's variable-width strings (numpy >= 2), as zarr-python 3 returns
    #: them; or "object", arrays of Python `str` (always, with numpy 1). Writes take either.
    #: Read when an array is opened or created.
    string_dtype: str = field(
        default_factory=lambda: os.environ.get("ZARRKIT_STRING_DTYPE") or "StringDType"
    )
    #: the memory order ("C" or "F") of what reads return, for an array handle made without
    #: one (`config={"order": ...}`); fixed in the handle when it is made, as zarr-python's
    #: `array.order` is
    order: str = field(default_factory=lambda: os.environ.get("ZARRKIT_ORDER") or "C")
    #: the Zarr format of what the creating functions write when no `zarr_format` is given
    default_zarr_format: int = field(
        default_factory=lambda: _env_int("ZARRKIT_DEFAULT_ZARR_FORMAT", 3)
    )
    #: the indentation of metadata documents written in the v3 and v2 formats (None: one line)
    json_indent: int | None = 2
    #: values given to keys of the installed key table that set no setting (zarr-python's
    #: keys that mean nothing to zarrkit: reported by `get(key)`, with no effect), by key
    kept_keys: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        if not self.io_timeout > 0:  # (also refuses NaN)
            raise ConfigError(
                f"io_timeout (ZARRKIT_IO_TIMEOUT) must be > 0 seconds, got {self.io_timeout!r}"
            )
        if self.io_retries < 0:
            raise ConfigError(
                f"io_retries (ZARRKIT_IO_RETRIES) must be >= 0, got {self.io_retries!r}"
            )
        if self.string_dtype not in STRING_DTYPES:
            raise ConfigError(
                f"string_dtype (ZARRKIT_STRING_DTYPE) must be one of {STRING_DTYPES}, "
                f"got {self.string_dtype!r}"
            )
        if self.order not in ("C", "F"):
            raise ConfigError(f"order (ZARRKIT_ORDER) must be 'C' or 'F', got {self.order!r}")
        if self.default_zarr_format not in (2, 3):
            raise ConfigError(
                f"default_zarr_format (ZARRKIT_DEFAULT_ZARR_FORMAT) must be 2 or 3, "
                f"got {self.default_zarr_format!r}"
            )
        indent = self.json_indent
        if indent is not None and (type(indent) is not int or indent < 0):
            raise ConfigError(f"json_indent must be None or an integer >= 0, got {indent!r}")


@runtime_checkable
class ConfigKeys(Protocol):
    """A table of another library's configuration keys, the object an entry point of the
    `zarrkit.config_keys` group names (zarr-python's is `zarrkit.zarr_config`). `get`, `set`
    and `to_dict` hand it every key that is not a `Settings` field."""

    def value(self, settings: Settings, key: str) -> Any:
        """The value of `key` under `settings`, or of every key under the namespace `key` as
        a dict. Raises `UnknownConfigKeyError` (a KeyError) when there is neither."""
        ...

    def changes(self, settings: Settings, given: Mapping[str, Any]) -> dict[str, Any]:
        """The `Settings` fields to replace so that `settings` holds the keys `given` (name
        -> value): the settings they map to, and `kept_keys` with the values of keys that set
        none. Raises `UnknownConfigKeyError` or `ConfigError` for a key or value it refuses."""
        ...

    def to_dict(self, settings: Settings) -> dict[str, Any]:
        """Every key with its value under `settings`, nested by namespace."""
        ...


#: the entry-point group of key tables
KEYS_GROUP = "zarrkit.config_keys"


class _NoKeys:
    """What `_keys()` answers when no key table is installed: only the settings' own names."""

    def value(self, settings: Settings, key: str) -> Any:
        raise UnknownConfigKeyError(f"{key!r} is not a zarrkit setting (no key table is installed)")

    def changes(self, settings: Settings, given: Mapping[str, Any]) -> dict[str, Any]:
        return {name: self.value(settings, name) for name in given}

    def to_dict(self, settings: Settings) -> dict[str, Any]:
        return {}


_tables: list[ConfigKeys] = []
_tables_lock = forksafe.lock()


def _keys() -> ConfigKeys:
    """The installed key table, loaded on first use (one; the first by distribution name when
    several are)."""
    with _tables_lock:
        if not _tables:
            rows = sorted(entry_points.in_group(KEYS_GROUP), key=lambda row: row[1] or "")
            table: ConfigKeys = _NoKeys()
            if rows:
                ep = rows[0][0]
                try:
                    table = ep.load()
                except Exception as exc:
                    raise PluginLoadError(
                        f"the configuration key table {ep.value!r} failed to load: "
                        f"{type(exc).__name__}: {exc}"
                    ) from exc
                if not isinstance(table, ConfigKeys):
                    raise PluginLoadError(
                        f"the configuration key table {ep.value!r} is not a "
                        f"zarrkit.config.ConfigKeys (value, changes, to_dict): {table!r}"
                    )
            _tables.append(table)
        return _tables[0]


#: the choices of the `string_dtype` setting
STRING_DTYPES = ("StringDType", "object")


_lock = forksafe.lock()
_current = Settings()


_NO_DEFAULT: Any = object()
_FIELDS = frozenset(f.name for f in fields(Settings))


@overload
def get() -> Settings: ...
@overload
def get(key: str, default: Any = ...) -> Any: ...
def get(key: str | None = None, default: Any = _NO_DEFAULT) -> Any:
    """The current `Settings`; or, given a key, its value: a zarr-python key (`"array.order"`;
    a namespace such as `"array"` gives a dict of its keys) or a `Settings` field's name.
    `default` is answered for a key that does not exist, instead of a `KeyError`."""
    current = _current
    if key is None:
        return current
    if key in _FIELDS:
        return getattr(current, key)
    try:
        return _keys().value(current, key)
    except (KeyError, ValueError):
        if default is _NO_DEFAULT:
            raise
        return default


def to_dict() -> dict[str, Any]:
    """zarr-python's configuration as a nested dict (its `zarr.config.to_dict()`), each key
    with the value zarrkit uses: a mapped key its setting's, any other what was given."""
    return _keys().to_dict(_current)


def pprint(**kwargs: Any) -> None:
    """Print `to_dict()`, as zarr-python's `zarr.config.pprint()` prints its configuration."""
    _pprint.pprint(to_dict(), **kwargs)


class Change:
    """What `set` changed, already in force for the whole process. Used as a context manager,
    the settings from before are back on leaving the block, as with `override`."""

    def __init__(self, previous: Settings) -> None:
        #: the settings before the change
        self.previous = previous

    def __enter__(self) -> Settings:
        return _current

    def __exit__(self, *exc: object) -> None:
        global _current
        with _lock:
            _current = self.previous

    def __repr__(self) -> str:
        return f"<zarrkit.config change from {self.previous!r}>"


def set(arg: Mapping[str, Any] | None = None, /, **changes: Any) -> Change:
    """Change settings for the whole process (in a `with` block, for the block only).

    `changes` are `Settings` fields by name (`threads=4`) or zarr-python's keys, with `__`
    for `.` as zarr-python's keyword form has them (`array__order="F"`); `arg` is a dict of
    zarr-python's keys (`{"array.order": "F"}`) or of field names. See `zarrkit.zarr_config`
    for what each zarr-python key does in zarrkit."""
    global _current
    given: dict[str, Any] = dict(arg or {})
    for name, value in changes.items():
        given[name if name in _FIELDS else name.replace("__", ".")] = value
    with _lock:
        previous = _current
        _current = _changed(previous, given)
    return Change(previous)


def _changed(current: Settings, given: Mapping[str, Any]) -> Settings:
    """`current` with `given` applied: everything is checked before anything changes."""
    keys = {name: value for name, value in given.items() if name not in _FIELDS}
    updates = _keys().changes(current, keys) if keys else {}
    return replace(current, **{**updates, **{k: v for k, v in given.items() if k in _FIELDS}})


@contextmanager
def override(**changes: Any) -> Iterator[Settings]:
    """`set` for the duration of a `with` block (the settings before are back after it)."""
    with set(**changes) as settings:
        yield settings


def reset() -> None:
    """Every setting back to its default (environment variables read again), and every
    zarr-python key to zarr-python's default, as `zarr.config.reset()` does."""
    global _current
    with _lock:
        _current = Settings()


def prefer(kind: str, name: str, distribution: str) -> None:
    """Choose which distribution provides `name` when several installed ones do."""
    set(prefer={**_current.prefer, (kind, name): distribution})
