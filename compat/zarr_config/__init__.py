"""zarr-python 3.4's configuration keys (`zarr.config.set({"array.order": "F"})`) and what each
is in zarrkit: the `Settings` field it sets and reads, or nothing (a key kept and reported by
`config.get`, with no effect on zarrkit; docs/zarr-python.md says why for each).

A table of keys for `zarrkit.config`, which finds it through the `zarrkit.config_keys`
entry-point group (`TABLE`, a `zarrkit.config.ConfigKeys`) and hands it every key that is not
one of its own settings' names, so the kernel's settings name nothing of zarr-python.

The defaults are zarr-python's (`zarr/core/config.py`), so `config.get(key)` of a key with no
zarrkit meaning answers what zarr-python would; a mapped key answers zarrkit's setting.
"""

from __future__ import annotations

import difflib
import os
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from zarrkit.config import Settings
from zarrkit.errors import ConfigError, UnknownConfigKeyError


@dataclass(frozen=True)
class Key:
    """One key of zarr-python's configuration (`array.order`): its default there, and the
    `Settings` field it is in zarrkit (if any)."""

    name: str
    default: Any
    #: the `Settings` field this key sets and reads; None: kept, no effect on zarrkit
    setting: str | None = None
    #: checks a value given for the key and turns it into the setting's value
    parse: Callable[[Any], Any] | None = None
    #: said (as a UserWarning) when the key is given a value other than its default, for keys
    #: whose other values would change what a program reads and zarrkit does not do
    unsupported: str | None = None


#: the keys under which any name is taken (zarr-python's codec classes by name, each a dotted
#: import path a program may register): what they name is zarr-python's, never checked here
OPEN_NAMESPACES = ("codecs.",)


def _order(value: Any) -> str:
    if value not in ("C", "F"):
        raise ConfigError(f"array.order must be 'C' or 'F', got {value!r}")
    return str(value)


def _bool(key: str) -> Callable[[Any], bool]:
    def check(value: Any) -> bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{key} must be True or False, got {value!r}")
        return value

    return check


def _count(key: str, *, none: Callable[[], int] | None = None) -> Callable[[Any], int]:
    """An integer >= 1; None is `none()` when the key takes None (zarr-python's 'default')."""

    def check(value: Any) -> int:
        if value is None and none is not None:
            return none()
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigError(f"{key} must be an integer >= 1, got {value!r}")
        return value

    return check


def _default_threads() -> int:
    """What `threads` is when nothing set it: ZARRKIT_THREADS, else one per CPU."""
    raw = os.environ.get("ZARRKIT_THREADS")
    return int(raw) if raw else os.cpu_count() or 1


def _zarr_format(value: Any) -> int:
    if isinstance(value, bool) or value not in (2, 3):
        raise ConfigError(f"default_zarr_format must be 2 or 3, got {value!r}")
    return int(value)


def _indent(value: Any) -> int | None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
        raise ConfigError(f"json_indent must be None or an integer >= 0, got {value!r}")
    return value


_KEYS = (
    Key("default_zarr_format", 3, "default_zarr_format", _zarr_format),
    Key("array.order", "C", "order", _order),
    Key("array.write_empty_chunks", False, "write_empty_chunks", _bool("write_empty_chunks")),
    Key(
        "array.read_missing_chunks",
        True,
        unsupported="zarrkit always reads a chunk that is not stored as the fill value",
    ),
    Key("array.target_shard_size_bytes", None),
    Key("array.rectilinear_chunks", False),
    Key("array.sharding_coalesce_max_gap_bytes", 1 << 20),
    Key("array.sharding_coalesce_max_bytes", 16 << 20),
    Key("array.allow_unsafe_pickle_decode", False),
    Key("async.concurrency", 10, "io_concurrency", _count("async.concurrency")),
    Key("async.timeout", None),
    Key(
        "threading.max_workers",
        None,
        "threads",
        _count("threading.max_workers", none=_default_threads),
    ),
    Key("json_indent", 2, "json_indent", _indent),
    Key("codec_pipeline.path", "zarr.core.codec_pipeline.BatchedCodecPipeline"),
    Key("codec_pipeline.batch_size", 1),
    Key("codec_pipeline.max_workers", None),
    Key("buffer", "zarr.buffer.cpu.Buffer"),
    Key("ndbuffer", "zarr.buffer.cpu.NDBuffer"),
)

#: zarr-python's codec classes by name (the `codecs` namespace), as its defaults have them
_CODECS = {
    "blosc": "zarr.codecs.blosc.BloscCodec",
    "gzip": "zarr.codecs.gzip.GzipCodec",
    "zstd": "zarr.codecs.zstd.ZstdCodec",
    "bytes": "zarr.codecs.bytes.BytesCodec",
    "endian": "zarr.codecs.bytes.BytesCodec",
    "crc32c": "zarr.codecs.crc32c_.Crc32cCodec",
    "sharding_indexed": "zarr.codecs.sharding.ShardingCodec",
    "transpose": "zarr.codecs.transpose.TransposeCodec",
    "vlen-utf8": "zarr.codecs.vlen_utf8.VLenUTF8Codec",
    "vlen-bytes": "zarr.codecs.vlen_utf8.VLenBytesCodec",
    **{
        f"numcodecs.{name}": f"zarr.codecs.numcodecs.{cls}"
        for name, cls in (
            ("bz2", "BZ2"),
            ("crc32", "CRC32"),
            ("crc32c", "CRC32C"),
            ("lz4", "LZ4"),
            ("lzma", "LZMA"),
            ("zfpy", "ZFPY"),
            ("adler32", "Adler32"),
            ("astype", "AsType"),
            ("bitround", "BitRound"),
            ("blosc", "Blosc"),
            ("delta", "Delta"),
            ("fixedscaleoffset", "FixedScaleOffset"),
            ("fletcher32", "Fletcher32"),
            ("gzip", "GZip"),
            ("jenkins_lookup3", "JenkinsLookup3"),
            ("pcodec", "PCodec"),
            ("packbits", "PackBits"),
            ("shuffle", "Shuffle"),
            ("quantize", "Quantize"),
            ("zlib", "Zlib"),
            ("zstd", "Zstd"),
        )
    },
}

KEYS: dict[str, Key] = {
    **{k.name: k for k in _KEYS},
    **{f"codecs.{name}": Key(f"codecs.{name}", path) for name, path in _CODECS.items()},
}

#: zarr-python's keys removed in 3.1 (donfig refuses them with this ValueError too)
REMOVED = frozenset(
    {
        "array.v2_default_compressor.numeric",
        "array.v2_default_compressor.string",
        "array.v2_default_compressor.bytes",
        "array.v2_default_filters.string",
        "array.v2_default_filters.bytes",
        "array.v3_default_filters.numeric",
        "array.v3_default_filters.raw",
        "array.v3_default_filters.bytes",
        "array.v3_default_serializer.numeric",
        "array.v3_default_serializer.string",
        "array.v3_default_serializer.bytes",
        "array.v3_default_compressors.string",
        "array.v3_default_compressors.bytes",
        "array.v3_default_compressors",
    }
)


def key_of(name: str) -> Key:
    """The key `name`; a name under an open namespace is a key of its own, default None.
    Anything else is refused naming the nearest key, where zarr-python would keep a typo."""
    if name in REMOVED:
        raise ConfigError(f"Configuration value {name!r} has been removed")
    found = KEYS.get(name)
    if found is not None:
        return found
    if name.startswith(OPEN_NAMESPACES) and name.count(".") >= 1:
        return Key(name, None)
    close = difflib.get_close_matches(name, list(KEYS), n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise UnknownConfigKeyError(
        f"{name!r} is not a configuration key zarr-python or zarrkit has{hint}"
    )


def under(prefix: str) -> list[Key]:
    """The keys below a namespace (`"array"` -> `array.order`, ...)."""
    return [k for k in KEYS.values() if k.name.startswith(prefix + ".")]


def nested(flat: Mapping[str, Any]) -> dict[str, Any]:
    """{"array.order": "C"} as {"array": {"order": "C"}}, as zarr-python's config holds it."""
    tree: dict[str, Any] = {}
    for name, value in flat.items():
        if name.startswith("codecs."):  # (a codec's name has dots of its own: numcodecs.zlib)
            parents, leaf = ["codecs"], name[len("codecs.") :]
        else:
            *parents, leaf = name.split(".")
        node = tree
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return tree


def _value(settings: Settings, key: Key) -> Any:
    """What `key` is under `settings`: its setting's value, or the value it was given."""
    if key.setting is not None:
        return getattr(settings, key.setting)
    return settings.kept_keys.get(key.name, key.default)


class _Table:
    """zarr-python's keys as `zarrkit.config` asks for them (`zarrkit.config.ConfigKeys`)."""

    def value(self, settings: Settings, key: str) -> Any:
        try:
            return _value(settings, key_of(key))
        except (KeyError, ValueError):
            namespace = under(key)
            given = {k: v for k, v in settings.kept_keys.items() if k.startswith(key + ".")}
            if not namespace and not given:
                raise
        tree: dict[str, Any] = nested({k.name: _value(settings, k) for k in namespace} | given)
        for part in key.split("."):
            tree = tree[part]
        return tree

    def changes(self, settings: Settings, given: Mapping[str, Any]) -> dict[str, Any]:
        updates: dict[str, Any] = {}
        kept = dict(settings.kept_keys)
        for name, value in given.items():
            key = key_of(name)
            parsed = key.parse(value) if key.parse is not None else value
            if key.setting is not None:
                updates[key.setting] = parsed
                continue
            if key.unsupported and value != key.default:
                warnings.warn(
                    f"{name}={value!r} has no effect in zarrkit: {key.unsupported}",
                    UserWarning,
                    stacklevel=4,  # (the caller of zarrkit.config.set)
                )
            kept[name] = value
        if kept != settings.kept_keys:
            updates["kept_keys"] = MappingProxyType(kept)
        return updates

    def to_dict(self, settings: Settings) -> dict[str, Any]:
        flat = {name: _value(settings, key) for name, key in KEYS.items()}
        flat.update(settings.kept_keys)  # (keys under open namespaces, as given)
        return nested(flat)


#: the object the `zarrkit.config_keys` entry point names
TABLE = _Table()
