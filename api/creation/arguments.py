"""What users pass to create an array, resolved: zarr-python 3's keywords (`filters`,
`serializer`, `compressors`, v2's `compressor`) and zarrkit's canonical `codecs=`, data types
from names, JSON or numpy dtypes, storage transformers, and the array's runtime configuration.
Refusals name the keyword and the nearest one a call takes."""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrkit import registry
from zarrkit.abc.codec import Codec, CodecKind
from zarrkit.abc.data_type import DataType
from zarrkit.abc.extension import V3, Extension
from zarrkit.abc.storage_transformer import StorageTransformer
from zarrkit.array import CONFIG_FIELDS, ArrayConfig
from zarrkit.errors import (
    AmbiguousExtensionError,
    ArgumentError,
    ConflictingArgumentsError,
    MetadataError,
    UnknownExtensionError,
)
from zarrkit.helpers import data_type_from_native
from zarrkit.negotiation import extension_from_arg

#: every keyword `create_array` takes, by the formats that take it (for "did you mean")
_COMMON_ARGUMENTS = (
    "path",
    "name",
    "shape",
    "dtype",
    "data",
    "chunks",
    "shards",
    "filters",
    "compressors",
    "compressor",
    "serializer",
    "codecs",
    "fill_value",
    "order",
    "zarr_format",
    "attributes",
    "chunk_key_encoding",
    "chunk_grid",
    "dimension_names",
    "storage_transformers",
    "dimension_separator",
    "storage_options",
    "overwrite",
    "config",
    "write_data",
    "write_empty_chunks",
)
#: keywords only the 2020 draft takes (zarr-python 2.x's v3 mode)
_DRAFT_ONLY = ("chunk_memory_layout",)
ARRAY_ARGUMENTS = frozenset(_COMMON_ARGUMENTS + _DRAFT_ONLY)


#: keywords of other calls that users carry over, with what to do instead
_INSTEAD = {
    "mode": "it always creates: overwrite=True replaces what is there, and open_array("
    "..., mode=...) opens or creates by mode",
}


def check_arguments(given: Mapping[str, Any], allowed: Sequence[str], call: str) -> None:
    """Refuse a keyword `call` does not take, naming it and the nearest one it does take."""
    for key in given:
        if key not in allowed:
            raise ArgumentError(unknown_argument(key, allowed, call))


def unknown_argument(key: str, allowed: Sequence[str], call: str) -> str:
    if key in _INSTEAD:
        return f"{call}() takes no {key!r}: {_INSTEAD[key]}"
    near = difflib.get_close_matches(key, list(allowed), n=1)
    hint = f"; did you mean {near[0]!r}?" if near else f"; it takes {', '.join(sorted(allowed))}"
    return f"{call}() got an unexpected keyword argument {key!r}{hint}"


# -- resolving what users pass ----------------------------------------------------------------
def data_type_from_arg(dtype: Any, fmt: str = V3) -> DataType:
    """A Zarr data type from its Zarr name/JSON, a plugin object, or a numpy dtype."""
    if isinstance(dtype, DataType):
        return dtype
    held = getattr(dtype, "data_type", None)  # (a face holding one: zarrkit.dtype's ZDType)
    if isinstance(held, DataType):
        return held
    if isinstance(dtype, (str, Mapping)):
        try:
            data_type: DataType = extension_from_arg("data_type", dtype, fmt, key="data_type")
            return data_type
        except UnknownExtensionError as exc:
            if isinstance(dtype, Mapping):
                raise
            unknown = exc
        try:
            np.dtype(dtype)
        except TypeError:
            raise unknown from None
    return data_type_from_native(dtype)


def settled_by_codecs(
    ambiguous: AmbiguousExtensionError,
    codec_args: CodecArgs,
    format_options: Mapping[str, Any],
    fmt: str,
) -> DataType:
    """The data type a dtype naming several (numpy `object`, v2's `|O`) means, as the codecs
    the caller gave say: an object codec's `implied_data_type` (`vlen-utf8`: `string`), as a
    v2 document's filters settle its `|O` when it is read."""
    given = [
        *(() if is_auto(codec_args.filters) else listed(codec_args.filters)),
        *(() if is_auto(codec_args.serializer) else listed(codec_args.serializer)),
        *listed(codec_args.codecs),
        *listed(format_options.get("filters")),
    ]
    for i, item in enumerate(given):
        implied = getattr(
            _codec_arg(_named_form(item), fmt, f"codecs[{i}]"), "implied_data_type", None
        )
        if not implied:
            continue
        cls = registry.lookup("data_type", implied, V3)
        if ambiguous.classes and cls not in ambiguous.classes:
            continue
        data_type: DataType = extension_from_arg("data_type", implied, V3, key="data_type")
        return data_type
    ambiguous.detail += (
        ", or give the codec that says which among the filters (an object codec such as "
        "vlen-utf8 or vlen-bytes)"
    )
    ambiguous.args = (ambiguous._text(),)
    raise ambiguous


def _named_form(item: Any) -> Any:
    """A codec as zarr-python 2 takes it (a numcodecs object or `{"id": ...}` config) in the
    `{"name", "configuration"}` form; anything else as it is."""
    get_config = getattr(item, "get_config", None)
    if callable(get_config) and getattr(item, "codec_id", None):
        item = get_config()
    if isinstance(item, Mapping) and isinstance(item.get("id"), str) and "name" not in item:
        return {"name": item["id"], "configuration": {k: v for k, v in item.items() if k != "id"}}
    return item


def _codec_arg(item: Any, fmt: str, key: str) -> Codec:
    """A codec by its name in `fmt`, else by its v3 name: the canonical chain is v3-style
    (`bytes`, `transpose`), and the format's `array_document` says whether it can express it."""
    try:
        return _user_codec(item, fmt, key)
    except UnknownExtensionError as exc:
        if fmt == V3:
            raise
        unknown = exc
    try:
        return _user_codec(item, V3, key)
    except UnknownExtensionError:
        raise unknown from None


def _user_codec(item: Any, fmt: str, key: str) -> Codec:
    """A codec from arguments. A bare name whose metadata form needs a field the plugin has a
    default for (`"gzip"`: the spec requires `level`) is the plugin built with its defaults,
    as zarr-python's `GzipCodec()` is; a name lacking a field without a default (`"transpose"`,
    `order`) is refused naming that field."""
    try:
        codec: Codec = extension_from_arg("codec", item, fmt, key=key)
        return codec
    except UnknownExtensionError:
        raise
    except MetadataError as exc:
        if not isinstance(item, str):
            raise
        cls = registry.lookup("codec", item, fmt)
        try:
            built = cls()
        except TypeError:
            exc.detail += " (a bare name gets no default for it: give it as a JSON object)"
            exc.args = (exc._text(),)
            raise exc from None
        if not isinstance(built, Codec) or built.written_name(fmt) != item:
            raise
        return built


def codecs_from_args(items: Any, fmt: str, field: str = "codecs") -> list[Codec]:
    if (
        isinstance(items, (str, Mapping, Codec))
        or (isinstance(items, type) and issubclass(items, Codec))
        or not isinstance(items, Iterable)  # (one codec of another library: zarr-python's)
    ):
        items = [items]
    return [_codec_arg(c, fmt, f"{field}[{i}]") for i, c in enumerate(items)]


def transformers_from_args(items: Any, fmt: str) -> list[Any]:
    """The storage transformers named in arguments (one, or a sequence of names, JSON objects
    or instances); the format's `array_document` refuses them where it has none."""
    if items is None:
        return []
    if isinstance(items, (str, Mapping, Extension)) or (
        isinstance(items, type) and issubclass(items, Extension)
    ):
        items = [items]
    transformers = []
    for i, item in enumerate(items):
        key = f"storage_transformers[{i}]"
        transformer = extension_from_arg("storage_transformer", item, fmt, key=key)
        if not isinstance(transformer, StorageTransformer):
            raise MetadataError(
                f"expected a storage transformer, got {type(transformer).__name__}", field=key
            )
        transformers.append(transformer)
    return transformers


# -- zarr-python's codec arguments ------------------------------------------------------------
@dataclass(frozen=True)
class CodecArgs:
    """What a user named of the codec chain, zarr-python's way and zarrkit's."""

    codecs: Any = None
    filters: Any = "auto"
    serializer: Any = "auto"
    compressors: Any = "auto"

    @property
    def split(self) -> bool:
        """Whether any of zarr-python's `filters`, `serializer`, `compressors` was given."""
        return not all(is_auto(v) for v in (self.filters, self.serializer, self.compressors))


def listed(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, (str, Mapping, Codec)) or not isinstance(value, Sequence):
        return [value]
    return list(value)


def v3_chain(args: CodecArgs, defaults: list[Codec], fmt: str) -> list[Codec] | None:
    """The v3 chain from `codecs` (with the default serializer inserted when it names no
    array -> bytes codec), or from `filters` + `serializer` + `compressors`, each defaulting
    as zarr-python's does; None when nothing was named (the plugins' defaults apply)."""
    if args.codecs is not None:
        if args.split:
            raise ConflictingArgumentsError(
                "give codecs= or filters=/serializer=/compressors=, not both: codecs= is the "
                "whole chain"
            )
        return _with_serializer(codecs_from_args(args.codecs, fmt), defaults)
    if not args.split:
        return None
    filters = (
        [] if is_auto(args.filters) else codecs_from_args(listed(args.filters), fmt, "filters")
    )
    if is_auto(args.serializer):
        serializer = [c for c in defaults if c.kind is CodecKind.ARRAY_BYTES]
    elif args.serializer is None:
        raise ArgumentError("serializer=None: a v3 array needs an array -> bytes codec")
    else:
        serializer = [_codec_arg(args.serializer, fmt, "serializer")]
    if is_auto(args.compressors):
        compressors = [c for c in defaults if c.kind is CodecKind.BYTES_BYTES]
    else:
        compressors = codecs_from_args(listed(args.compressors), fmt, "compressors")
    _check_kinds(filters, CodecKind.ARRAY_ARRAY, "filters")
    _check_kinds(serializer, CodecKind.ARRAY_BYTES, "serializer")
    _check_kinds(compressors, CodecKind.BYTES_BYTES, "compressors")
    return [*filters, *serializer, *compressors]


def _check_kinds(codecs: list[Codec], kind: CodecKind, field: str) -> None:
    for i, codec in enumerate(codecs):
        if codec.kind is not kind:
            raise MetadataError(
                f"{codec.written_name(V3)!r} is an {codec.kind.value} codec; {field} takes "
                f"{kind.value} codecs",
                field=f"{field}[{i}]" if field != "serializer" else field,
            )


def _with_serializer(codecs: list[Codec], defaults: list[Codec]) -> list[Codec]:
    """`codecs` with the default array -> bytes codec inserted after the array -> array ones
    when it has none (zarr-python: `codecs=["zstd"]` is `bytes` then `zstd`)."""
    if any(c.kind is CodecKind.ARRAY_BYTES for c in codecs):
        return codecs
    serializer = [c for c in defaults if c.kind is CodecKind.ARRAY_BYTES]
    at = 0
    while at < len(codecs) and codecs[at].kind is CodecKind.ARRAY_ARRAY:
        at += 1
    return [*codecs[:at], *serializer, *codecs[at:]]


def v2_options(args: CodecArgs, options: dict[str, Any]) -> dict[str, Any]:
    """zarr-python's `filters`/`compressors` for a v2 (or 2020 draft) array as the format's
    `filters` and `compressor` (they hold at most one compressor and no serializer)."""
    if not is_auto(args.serializer):
        raise ArgumentError(
            "zarr format 2 arrays (and the 2020 draft's) take no serializer= (their bytes "
            "are the dtype's)"
        )
    if not is_auto(args.filters):
        options["filters"] = listed(args.filters)
    if not is_auto(args.compressors):
        compressors = listed(args.compressors)
        if len(compressors) > 1:
            raise ArgumentError(
                f"zarr format 2 arrays hold at most one compressor, got {len(compressors)}"
            )
        if "compressor" in options:
            raise ConflictingArgumentsError("give compressor= or compressors=, not both")
        options["compressor"] = compressors[0] if compressors else None
    return options


def array_config(
    config: Any, order: str | None, write_empty_chunks: bool | None, fmt: str
) -> ArrayConfig:
    """The runtime settings of an array (not stored): zarr-python's `config=` (a dict or an
    `ArrayConfig`) with `order` (v3) and `write_empty_chunks` given on their own."""
    if isinstance(config, ArrayConfig):
        base = config
    elif config is None:
        base = ArrayConfig()
    elif isinstance(config, Mapping):
        check_arguments(config, CONFIG_FIELDS, "config")
        base = ArrayConfig(**config)  # (the fields not given: their settings')
    else:
        raise ArgumentError(f"config must be a dict or an ArrayConfig, got {config!r}")
    if order is not None and fmt == V3:
        base = dataclasses.replace(base, order=order)
    if write_empty_chunks is not None:
        base = dataclasses.replace(base, write_empty_chunks=write_empty_chunks)
    return base.checked()


def is_auto(value: Any) -> bool:
    return isinstance(value, str) and value == "auto"


def plugin_default(defaults: dict[str, Any], field: str, fmt: str) -> Any:
    """A default the installed plugins chose (`zarrkit_array_defaults`), or a clear refusal."""
    if field not in defaults:
        raise MetadataError(
            f"no value given and no installed plugin supplies a default "
            f"(hook zarrkit_array_defaults) for zarr format {fmt}",
            field=field,
        )
    return defaults[field]
