"""Creating arrays and groups: what a user passes (zarr-python 3's call shapes, or zarrkit's
canonical `codecs=` / `chunk_grid=`) turned into a metadata document written to a store.

This module sits below `hierarchy` (which imports it for `Group.create_array`) and above
`array`, `formats` and the registries, so creation and the hierarchy never import each other.
It writes group documents too (`write_group`); the `Group` a caller gets back is built by the
caller (`Group.create_group`, `zarrkit.create_group`).

zarr-python's arguments and defaults, when omitted, are zarr-python 3.4's: chunks guessed as
zarr-python guesses them (`chunks="auto"`), the data type's serializer (`bytes` unless it needs
its own), zstd level 0 for v3; `codecs=` naming no array -> bytes codec gets `bytes` inserted,
as zarr-python does. A bare codec name in arguments is the plugin with its own defaults
(`"gzip"`: level 5, as zarr-python's `GzipCodec()`); a codec that has no default for a field
(`"transpose"` needs an `order`) is refused naming the field.
"""

from __future__ import annotations

import difflib
import inspect
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import codec_chain, hooks, registry
from .array import Array, ArrayConfig
from .codec import ChunkSpec, Codec, CodecKind
from .data_type import DataType, data_type_from_native
from .errors import (
    AmbiguousExtensionError,
    ArgumentError,
    ConflictingArgumentsError,
    ContainsNodeError,
    MetadataError,
    UnknownExtensionError,
)
from .extension import Extension
from .formats import available, check_node_fits, get_format
from .formats.documents import check_chunk_size, check_dimensions, check_nesting
from .metadata import ArrayMetadata, GroupMetadata
from .names import V2, V3, V3_DRAFT_2020, check_format
from .negotiation import extension_from_arg
from .paths import normalize_path
from .storage_transformer import StorageTransformer
from .store import Range, Store
from .store_opening import open_store

__all__ = [
    "ARRAY_ARGUMENTS",
    "create_array",
    "data_type_from_arg",
    "extension_from_arg",
    "format_name",
    "prepare_path",
    "write_group",
]

#: zarr-python's upper bound for an inner chunk guessed inside a shard
_SHARDED_INNER_MAX_BYTES = 1 << 20

#: what users may pass as `zarr_format`
_FORMAT_ALIASES: dict[Any, str] = {3: V3, "3": V3, 2: V2, "2": V2}

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
def format_name(zarr_format: Any) -> str:
    """The format's name from what users pass as `zarr_format` (3, 2, "3", or a name)."""
    name = _FORMAT_ALIASES.get(zarr_format, zarr_format)
    if not isinstance(name, str):
        raise ValueError(f"zarr_format must be 3, 2 or {V3_DRAFT_2020!r}, got {zarr_format!r}")
    check_format(name)
    get_format(name)  # NotImplementedError when this installation lacks the format
    return name


def data_type_from_arg(dtype: Any, fmt: str = V3) -> DataType:
    """A Zarr data type from its Zarr name/JSON, a plugin object, or a numpy dtype."""
    if isinstance(dtype, DataType):
        return dtype
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


def _settled_by_codecs(
    ambiguous: AmbiguousExtensionError,
    codec_args: _CodecArgs,
    format_options: Mapping[str, Any],
    fmt: str,
) -> DataType:
    """The data type a dtype naming several (numpy `object`, v2's `|O`) means, as the codecs
    the caller gave say: an object codec's `implied_data_type` (`vlen-utf8`: `string`), as a
    v2 document's filters settle its `|O` when it is read."""
    given = [
        *(() if _is_auto(codec_args.filters) else _listed(codec_args.filters)),
        *(() if _is_auto(codec_args.serializer) else _listed(codec_args.serializer)),
        *_listed(codec_args.codecs),
        *_listed(format_options.get("filters")),
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


def _codecs(items: Any, fmt: str, field: str = "codecs") -> list[Codec]:
    if isinstance(items, (str, Mapping, Codec)) or (
        isinstance(items, type) and issubclass(items, Codec)
    ):
        items = [items]
    return [_codec_arg(c, fmt, f"{field}[{i}]") for i, c in enumerate(items)]


def _transformers(items: Any, fmt: str) -> list[Any]:
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
                f"expected a storage transformer, got {type(transformer).__name__}", key=key
            )
        transformers.append(transformer)
    return transformers


# -- chunks and shards ------------------------------------------------------------------------
def guess_chunks(
    shape: tuple[int, ...], itemsize: int, *, max_bytes: int = 64 * 1024 * 1024
) -> tuple[int, ...]:
    """zarr-python 3.4's `chunks="auto"` (h5py's heuristic: a target size that grows with the
    array's, reached by halving each dimension in turn), so both pick the same chunks."""
    chunks = [max(1, n) for n in shape]
    if itemsize == 0 or not shape:
        return tuple(chunks)
    increment, min_bytes = 256 * 1024, 128 * 1024
    target = increment * (2 ** math.log10(math.prod(chunks) * itemsize / (1024.0 * 1024)))
    target = min(max(target, min_bytes), max_bytes)
    index = 0
    while True:
        nbytes = math.prod(chunks) * itemsize
        near = nbytes < target or abs(nbytes - target) / target < 0.5
        if (near and nbytes < max_bytes) or math.prod(chunks) == 1:
            break
        d = index % len(chunks)
        chunks[d] = math.ceil(chunks[d] / 2.0)
        index += 1
    return tuple(chunks)


def _guess_inner_chunks(shard_shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    """Chunks inside a given shard: each step divides the largest dimension by its smallest
    prime factor, so every chunk dimension still divides the shard's."""
    chunk = [max(1, n) for n in shard_shape]
    while math.prod(chunk) * itemsize > _SHARDED_INNER_MAX_BYTES and max(chunk) > 1:
        i = chunk.index(max(chunk))
        chunk[i] //= next(p for p in range(2, chunk[i] + 1) if chunk[i] % p == 0)
    return tuple(chunk)


def _auto_shards(shape: tuple[int, ...], chunks: tuple[int, ...]) -> tuple[int, ...]:
    """zarr-python 3.4's `shards="auto"`: two chunks per shard along each dimension that holds
    more than eight chunks."""
    return tuple(c * 2 if n // c > 8 else c for n, c in zip(shape, chunks))


def _is_auto(value: Any) -> bool:
    return isinstance(value, str) and value == "auto"


def _chunk_shape(chunks: Any, shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    if chunks is None or _is_auto(chunks):
        return guess_chunks(shape, itemsize)
    if isinstance(chunks, str):
        raise MetadataError(
            f"chunks must be 'auto', an integer or one length per dimension, got {chunks!r}",
            key="chunk_grid",
        )
    if isinstance(chunks, (int, np.integer)) and not isinstance(chunks, bool):
        return tuple(int(chunks) if chunks > 0 else max(1, n) for n in shape)
    if len(tuple(chunks)) != len(shape):
        raise MetadataError(
            f"chunks {tuple(chunks)} must have {len(shape)} dimensions like shape {shape}",
            key="chunk_grid",
        )
    return tuple(int(c) if c not in (None, -1) else max(1, n) for c, n in zip(chunks, shape))


#: a chunk length per dimension, or the list of its chunks' edge lengths (an irregular grid)
GridChunks = tuple[int | tuple[int, ...], ...]


def _is_edge_list(value: Any) -> bool:
    return isinstance(value, (list, tuple)) or (isinstance(value, np.ndarray) and value.ndim == 1)


def _edges(value: Any, length: int, key: str) -> tuple[int, ...]:
    """One dimension's chunk edge lengths as given (zarr-python's rule: positive integers
    that sum to the dimension's length, any sum on a zero-length dimension)."""
    edges = tuple(value)
    if not edges or any(
        isinstance(e, bool) or not isinstance(e, (int, np.integer)) or e < 1 for e in edges
    ):
        raise MetadataError(
            f"chunk edge lengths must be positive integers, got {list(edges)!r}", key=key
        )
    if length > 0 and sum(int(e) for e in edges) != length:
        raise MetadataError(
            f"chunk edge lengths {[int(e) for e in edges]} sum to {sum(int(e) for e in edges)}, "
            f"not to the dimension's length {length}",
            key=key,
        )
    return tuple(int(e) for e in edges)


def _grid_chunks(chunks: Any, shape: tuple[int, ...], itemsize: int, key: str) -> GridChunks:
    """`chunks` (or `shards`) as the default grid takes it: a length per dimension, or per
    dimension the list of edge lengths (`[[10, 20, 5], 4]`), for the grid plugin to keep."""
    if isinstance(chunks, (list, tuple)) and any(_is_edge_list(c) for c in chunks):
        if len(chunks) != len(shape):
            raise MetadataError(
                f"{key} {list(chunks)!r} must have {len(shape)} dimensions like shape {shape}",
                key=key,
            )
        return tuple(
            _edges(c, n, key) if _is_edge_list(c) else _chunk_shape([c], (n,), itemsize)[0]
            for c, n in zip(chunks, shape)
        )
    return _chunk_shape(chunks, shape, itemsize)


def _divides(outer: GridChunks, inner: tuple[int, ...]) -> bool:
    return all(
        all(e % c == 0 for e in (o if isinstance(o, tuple) else (o,))) for o, c in zip(outer, inner)
    )


def _shards_arg(shards: Any, shape: tuple[int, ...]) -> tuple[GridChunks, dict[str, Any]]:
    """The shard shape and the options of `shards` (a shape, or a dict with "shape" and what
    the sharding plugin takes, e.g. "index_location"), checked against the array's shape."""
    options: dict[str, Any] = {}
    if isinstance(shards, Mapping):
        options = dict(shards)
        if "shape" not in options:
            raise MetadataError(f"shards {shards!r} needs a 'shape'", key="shards")
        shards = options.pop("shape")
    if isinstance(shards, (list, tuple)) and any(_is_edge_list(n) for n in shards):
        return _grid_chunks(shards, shape, 1, "shards"), options
    try:
        shard_shape = tuple(int(n) for n in shards)
    except (TypeError, ValueError):
        raise MetadataError(
            f"shards must be a shape (a sequence of positive integers), 'auto' or a "
            f"dict with a shape, got {shards!r}",
            key="shards",
        ) from None
    if len(shard_shape) != len(shape) or any(n <= 0 for n in shard_shape):
        raise MetadataError(
            f"shards {shard_shape} must be {len(shape)} positive lengths, one "
            f"per dimension of shape {shape}",
            key="shards",
        )
    return shard_shape, options


def _sharded(
    fmt: str,
    codecs: list[Codec],
    data_type: DataType,
    fill: Any,
    shard_shape: GridChunks,
    chunk_shape: tuple[int, ...],
    options: dict[str, Any],
) -> Any:
    """The codec chain storing chunks of `chunk_shape` (encoded with `codecs`) in shards of
    `shard_shape` (per dimension a length or edge lengths), as the installed plugin that shards
    for this format writes it."""
    inner = codec_chain.evolve(codecs, ChunkSpec(chunk_shape, data_type, fill))
    if not _divides(shard_shape, chunk_shape):
        raise MetadataError(
            f"shards {shard_shape} must be a multiple of the chunks "
            f"{chunk_shape} in every dimension",
            key="shards",
        )
    answer = hooks.shard_codecs(fmt, shard_shape, chunk_shape, list(inner), options)
    if answer is None:
        raise MetadataError(
            f"zarr format {fmt} arrays cannot have shards here: no installed "
            f"plugin stores chunks in shards for it (hook "
            f"zarrkit_shard_codecs)",
            key="shards",
        )
    return answer


def _default(defaults: dict[str, Any], field: str, fmt: str) -> Any:
    """A default the installed plugins chose (`zarrkit_array_defaults`), or a clear refusal."""
    if field not in defaults:
        raise MetadataError(
            f"no value given and no installed plugin supplies a default "
            f"(hook zarrkit_array_defaults) for zarr format {fmt}",
            key=field,
        )
    return defaults[field]


# -- zarr-python's codec arguments ------------------------------------------------------------
@dataclass(frozen=True)
class _CodecArgs:
    """What a user named of the codec chain, zarr-python's way and zarrkit's."""

    codecs: Any = None
    filters: Any = "auto"
    serializer: Any = "auto"
    compressors: Any = "auto"

    @property
    def split(self) -> bool:
        """Whether any of zarr-python's `filters`, `serializer`, `compressors` was given."""
        return not all(_is_auto(v) for v in (self.filters, self.serializer, self.compressors))


def _listed(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, (str, Mapping, Codec)) or not isinstance(value, Sequence):
        return [value]
    return list(value)


def _v3_chain(args: _CodecArgs, defaults: list[Codec], fmt: str) -> list[Codec] | None:
    """The v3 chain from `codecs` (with the default serializer inserted when it names no
    array -> bytes codec), or from `filters` + `serializer` + `compressors`, each defaulting
    as zarr-python's does; None when nothing was named (the plugins' defaults apply)."""
    if args.codecs is not None:
        if args.split:
            raise ConflictingArgumentsError(
                "give codecs= or filters=/serializer=/compressors=, not both: codecs= is the "
                "whole chain"
            )
        return _with_serializer(_codecs(args.codecs, fmt), defaults)
    if not args.split:
        return None
    filters = [] if _is_auto(args.filters) else _codecs(_listed(args.filters), fmt, "filters")
    if _is_auto(args.serializer):
        serializer = [c for c in defaults if c.kind is CodecKind.ARRAY_BYTES]
    elif args.serializer is None:
        raise ArgumentError("serializer=None: a v3 array needs an array -> bytes codec")
    else:
        serializer = [_codec_arg(args.serializer, fmt, "serializer")]
    if _is_auto(args.compressors):
        compressors = [c for c in defaults if c.kind is CodecKind.BYTES_BYTES]
    else:
        compressors = _codecs(_listed(args.compressors), fmt, "compressors")
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
                key=f"{field}[{i}]" if field != "serializer" else field,
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


def _v2_options(args: _CodecArgs, options: dict[str, Any]) -> dict[str, Any]:
    """zarr-python's `filters`/`compressors` for a v2 (or 2020 draft) array as the format's
    `filters` and `compressor` (they hold at most one compressor and no serializer)."""
    if not _is_auto(args.serializer):
        raise ArgumentError(
            "zarr format 2 arrays (and the 2020 draft's) take no serializer= (their bytes "
            "are the dtype's)"
        )
    if not _is_auto(args.filters):
        options["filters"] = _listed(args.filters)
    if not _is_auto(args.compressors):
        listed = _listed(args.compressors)
        if len(listed) > 1:
            raise ArgumentError(
                f"zarr format 2 arrays hold at most one compressor, got {len(listed)}"
            )
        if "compressor" in options:
            raise ConflictingArgumentsError("give compressor= or compressors=, not both")
        options["compressor"] = listed[0] if listed else None
    return options


def _array_config(
    config: Any, order: str | None, write_empty_chunks: bool | None, fmt: str
) -> ArrayConfig:
    """The runtime settings of an array (not stored): zarr-python's `config=` (a dict or an
    `ArrayConfig`) with `order` (v3) and `write_empty_chunks` given on their own."""
    if isinstance(config, ArrayConfig):
        base = config
    elif config is None:
        base = ArrayConfig()
    elif isinstance(config, Mapping):
        check_arguments(config, ("order", "write_empty_chunks"), "config")
        base = ArrayConfig(
            order=config.get("order", "C"), write_empty_chunks=config.get("write_empty_chunks")
        )
    else:
        raise ArgumentError(f"config must be a dict or an ArrayConfig, got {config!r}")
    if order is not None and fmt == V3:
        base = ArrayConfig(order=order, write_empty_chunks=base.write_empty_chunks)
    if write_empty_chunks is not None:
        base = ArrayConfig(order=base.order, write_empty_chunks=write_empty_chunks)
    return base.checked()


# -- creation ---------------------------------------------------------------------------------
def create_array(
    store: Any,
    *,
    path: str | None = None,
    name: str | None = None,
    shape: Sequence[int] | int | None = None,
    dtype: Any = None,
    data: Any = None,
    chunks: Any = "auto",
    shards: Any = None,
    filters: Any = "auto",
    compressors: Any = "auto",
    serializer: Any = "auto",
    codecs: Any = None,
    fill_value: Any = None,
    order: str | None = None,
    zarr_format: Any = 3,
    attributes: Mapping[str, Any] | None = None,
    chunk_key_encoding: Any = None,
    chunk_grid: Any = None,
    dimension_names: Sequence[str | None] | None = None,
    storage_transformers: Sequence[Any] = (),
    storage_options: dict[str, Any] | None = None,
    overwrite: bool = False,
    config: Any = None,
    write_data: bool = True,
    write_empty_chunks: bool | None = None,
    **format_options: Any,
) -> Array:
    """Create an array (and any missing ancestor groups) and return it open for writing.

    zarr-python 3's arguments (`name`, `data`, `filters`, `serializer`, `compressors`,
    `chunks="auto"`, `shards="auto"`, `order`, `config`, `write_data`) or zarrkit's canonical
    ones (`codecs`, `chunk_grid`). `shards` (a shape, "auto", or a dict with "shape" and e.g.
    "index_location") stores the `chunks` together in one value per shard (v3: the
    `sharding_indexed` codec, written by its plugin). `storage_transformers` (v3 only): each a
    name, a JSON object or a `StorageTransformer`, written to the metadata in order; the
    array's chunks are then read and written through them. `format_options` are arguments only one
    format has (v2: `compressor`, `dimension_separator`; the 2020 draft:
    `chunk_memory_layout`); the format turns them into codecs and a chunk key encoding."""
    check_arguments(format_options, sorted(ARRAY_ARGUMENTS), "create_array")
    if path is not None and name is not None:
        raise ConflictingArgumentsError("give path= or name= (zarr-python's spelling), not both")
    opened = (
        store
        if isinstance(store, Store)
        else open_store(store, mode="a", storage_options=storage_options)
    )
    path = normalize_path(path if name is None else name)
    fmt = format_name(zarr_format)
    if data is not None:
        source = data if isinstance(data, Array) else np.asanyarray(data)
        shape = source.shape if shape is None else shape
        dtype = source.dtype if dtype is None else dtype
    if shape is None or dtype is None:
        raise ArgumentError("create_array needs shape= and dtype= (or data= to take them from)")
    array = _new_array(
        opened,
        path,
        fmt,
        shape=shape,
        dtype=dtype,
        chunks=chunks,
        shards=shards,
        codec_args=_CodecArgs(codecs, filters, serializer, compressors),
        fill_value=fill_value,
        order=order,
        attributes=attributes,
        chunk_key_encoding=chunk_key_encoding,
        chunk_grid=chunk_grid,
        dimension_names=dimension_names,
        storage_transformers=storage_transformers,
        overwrite=overwrite,
        config=_array_config(config, order, write_empty_chunks, fmt),
        format_options=format_options,
    )
    if data is not None and write_data:
        array[...] = data
    return array


def _new_array(
    store: Store,
    path: str,
    fmt: str,
    *,
    shape: Sequence[int] | int,
    dtype: Any,
    chunks: Any,
    shards: Any,
    codec_args: _CodecArgs,
    fill_value: Any,
    order: str | None,
    attributes: Mapping[str, Any] | None,
    chunk_key_encoding: Any,
    chunk_grid: Any,
    dimension_names: Sequence[str | None] | None,
    storage_transformers: Sequence[Any],
    overwrite: bool,
    config: ArrayConfig,
    format_options: dict[str, Any],
) -> Array:
    format_module = get_format(fmt)
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(n) for n in shape)
    where = f"new array {path or '/'!r}"
    if any(n < 0 for n in shape):
        raise MetadataError(f"expected non-negative lengths, got {shape}", key="shape", where=where)
    check_dimensions(shape, "shape", where)
    try:
        data_type = data_type_from_arg(dtype, fmt)
    except AmbiguousExtensionError as exc:
        data_type = _settled_by_codecs(exc, codec_args, format_options, fmt)
    itemsize = data_type.stored_size or 16
    format_options = dict(format_options)
    codecs: Any = None
    if fmt == V3:
        if "compressor" in format_options:  # zarr-python's `create(compressor=)` for v3
            if not _is_auto(codec_args.compressors):
                raise ConflictingArgumentsError("give compressor= or compressors=, not both")
            one = format_options.pop("compressor")
            codec_args = _CodecArgs(
                codec_args.codecs, codec_args.filters, codec_args.serializer, _listed(one)
            )
        separator = format_options.pop("dimension_separator", None)
        if separator is not None and chunk_key_encoding is None:
            chunk_key_encoding = {"name": "default", "configuration": {"separator": separator}}
        defaults = hooks.array_defaults(fmt, data_type, ())
        default_codecs = _codecs(defaults.get("codecs", []), fmt)
        codecs = _v3_chain(codec_args, default_codecs, fmt)
    elif fmt == V2:
        if codec_args.codecs is not None and codec_args.split:
            raise ConflictingArgumentsError("give codecs= or filters=/compressors=, not both")
        codecs = codec_args.codecs
        format_options = _v2_options(codec_args, format_options)
        if order is not None:
            format_options["order"] = order
    else:  # the 2020 draft takes zarr-python 2.x's `compressor` and `filters`, as v2 does
        if codec_args.codecs is not None and codec_args.split:
            raise ConflictingArgumentsError("give codecs= or filters=/compressors=, not both")
        codecs = codec_args.codecs
        format_options = _v2_options(codec_args, format_options)
        if order is not None:
            format_options["order"] = order
    translated = format_module.creation_arguments(data_type, format_options)
    given = {"codecs": codecs, "chunk_key_encoding": chunk_key_encoding}
    clash = sorted(f for f in translated if given.get(f) is not None)
    if clash and format_options:
        raise ArgumentError(
            f"{', '.join(clash)} conflicts with {sorted(format_options)}; give one or the other"
        )
    # without format options, what the format answers is its default: explicit arguments win
    codecs = translated.get("codecs") if codecs is None else codecs
    if chunk_key_encoding is None:
        chunk_key_encoding = translated.get("chunk_key_encoding")
    given_chunks = chunks is not None and not _is_auto(chunks)
    if chunk_grid is not None and given_chunks:
        raise ConflictingArgumentsError("give either chunks or chunk_grid, not both")
    if chunk_grid is not None and shards is not None:
        raise ConflictingArgumentsError("give either shards or chunk_grid, not both")
    inner_shape: tuple[int, ...] = ()
    shard_options: dict[str, Any] = {}
    grid_shape: GridChunks
    if shards is not None and _is_auto(shards):
        inner_shape = (
            _chunk_shape(chunks, shape, itemsize)
            if given_chunks
            else guess_chunks(shape, itemsize, max_bytes=_SHARDED_INNER_MAX_BYTES)
        )
        grid_shape = _auto_shards(shape, inner_shape)
    elif shards is not None:  # the grid's chunks are the shards; `chunks` go inside them
        grid_shape, shard_options = _shards_arg(shards, shape)
        if given_chunks and any(
            isinstance(n, tuple) for n in _grid_chunks(chunks, shape, itemsize, "chunks")
        ):
            raise ConflictingArgumentsError(
                "chunks inside shards are regular: give shards= the edge lengths and "
                "chunks= one chunk shape"
            )
        # (the smallest shard along each dimension stands for all when the edges vary)
        shard = tuple(n if isinstance(n, int) else min(n) for n in grid_shape)
        inner_shape = (
            _chunk_shape(chunks, shard, itemsize)
            if given_chunks
            else _guess_inner_chunks(shard, itemsize)
        )
    else:
        grid_shape = (
            () if chunk_grid is not None else _grid_chunks(chunks, shape, itemsize, "chunks")
        )
    defaults = hooks.array_defaults(fmt, data_type, grid_shape)
    grid = extension_from_arg(
        "chunk_grid", chunk_grid or _default(defaults, "chunk_grid", fmt), fmt, key="chunk_grid"
    )
    check_chunk_size(grid, data_type, "chunk_grid" if chunk_grid is not None else "chunks", where)
    key_encoding = extension_from_arg(
        "chunk_key_encoding",
        chunk_key_encoding or _default(defaults, "chunk_key_encoding", fmt),
        fmt,
        key="chunk_key_encoding",
    )
    fill = data_type.default_fill() if fill_value is None else data_type.fill_from_user(fill_value)
    codec_list: Sequence[Codec] = _codecs(
        _default(defaults, "codecs", fmt) if codecs is None else codecs, fmt
    )
    if shards is not None:
        codec_list = _codecs(
            _sharded(
                fmt, list(codec_list), data_type, fill, grid_shape, inner_shape, shard_options
            ),
            fmt,
        )
    chunk_shape = grid.uniform_chunk_shape or grid.chunk_shape((0,) * len(shape))
    codec_list = codec_chain.evolve(codec_list, ChunkSpec(chunk_shape, data_type, fill))
    doc = format_module.array_document(
        shape=shape,
        data_type=data_type,
        chunk_grid=grid,
        chunk_key_encoding=key_encoding,
        fill_value=fill,
        codecs=codec_list,
        attributes=attributes,
        dimension_names=None if dimension_names is None else list(dimension_names),
        storage_transformers=_transformers(storage_transformers, fmt),
    )
    metadata = format_module.parse_array(
        format_module.load_document(format_module.encode_document(doc), where), where
    )
    # the array validates its codec chain before anything is written
    array = Array(store, path, metadata, config=config)
    prepare_path(store, path, fmt, overwrite=overwrite)
    format_module.write_metadata(store, path, doc)
    return array


def write_group(
    store: Store,
    path: str,
    *,
    attributes: Mapping[str, Any] | None = None,
    zarr_format: Any = 3,
    overwrite: bool = False,
) -> GroupMetadata:
    """Write a new group's document at `path` (a normalized path in an open store), making
    room for it and creating its missing ancestors, and return its metadata."""
    fmt = format_name(zarr_format)
    format_module = get_format(fmt)
    doc = format_module.group_document(attributes)
    where = f"new group {path or '/'!r}"
    check_nesting(doc, where)  # (parsing recurses once per level)
    metadata: GroupMetadata = format_module.parse_group(doc, where)
    prepare_path(store, path, fmt, overwrite=overwrite)
    format_module.write_metadata(store, path, doc)
    return metadata


# -- making room for a node -------------------------------------------------------------------
def prepare_path(store: Store, path: str, fmt: str, *, overwrite: bool) -> None:
    """Make room for a new node at `path` and create its missing ancestor groups. At a
    store's root, a store that can tell in one request that it is empty (`Store.is_empty`:
    an object store's listing) is asked that instead of reading each format's keys."""
    store.require("write", f"create a node at {path or '/'!r}")
    format_module = get_format(fmt)
    check_node_fits(store, path, format_module)  # (its ancestors' keys hold shorter names)
    if not path and store.is_empty("") is True:
        return  # an empty store root: no node of any format in the way, and no ancestors
    # ancestors first: under an array, `path` may be where its chunks are, not a node to erase
    parts = path.split("/") if path else []
    ancestors = ["/".join(parts[:i]) for i in range(len(parts))]
    found_at = _nodes(store, [*ancestors, path])
    missing = []
    for ancestor in ancestors:
        found = found_at(ancestor)
        if found is None:
            missing.append(ancestor)
        elif isinstance(found, ArrayMetadata):
            raise ContainsNodeError(f"cannot create {path!r}: {ancestor or '/'!r} is an array")
    existing = found_at(path)
    if existing is not None:
        if not overwrite:
            raise ContainsNodeError(
                f"a {existing.node_type} already exists at {path or '/'!r} "
                f"in {store}; pass overwrite=True to replace it"
            )
        get_format(existing.format).erase_node(store, path)
    elif overwrite and path:
        format_module.erase_node(store, path)
    if format_module.implicit_groups:
        return  # the format implies ancestors from their descendants (the 2020 draft)
    for ancestor in missing:
        format_module.write_metadata(store, ancestor, format_module.group_document(None))


def _nodes(store: Store, paths: list[str]) -> Any:
    """A lookup of the node (its metadata, or None) at each of `paths`, from one batched read
    of the keys that mark a node in each format rather than a probe of each format per path:
    on a file system every probe walks the whole path, so a node 400 levels down cost 1,600
    walks of up to 400 folders, and on an object store each probe is a request. The batch
    holds only the marker keys (`Format.marker_keys`) and the keys saying whether the store
    holds a hierarchy with implicit groups (the 2020 draft's entry point, the root's
    `zarr.json` that v3 reads anyway); only such a hierarchy is probed by its format, which
    alone can find its implicit groups. A new node at a store's root costs three reads in
    one round trip."""
    keys: dict[str, list[tuple[str, Any]]] = {}
    implicit_formats = []
    for name in available():
        module = get_format(name)
        if module.implicit_groups:
            implicit_formats.append(module)
            for key in module.entry_keys:
                keys.setdefault(key, [])
            continue
        for p in paths:
            for key in module.marker_keys(p):
                keys.setdefault(key, []).append((p, module))
    values = store.get_many(list(keys))
    marked: dict[str, list[Any]] = {}
    for key in values:
        for path, module in keys[key]:
            marked.setdefault(path, []).append(module)
    implicit = next((m for m in implicit_formats if m.holds_hierarchy(values)), None)
    read = _Prefetched(store, values, frozenset(keys))

    def found(path: str) -> ArrayMetadata | GroupMetadata | None:
        for module in marked.get(path, []):
            metadata: ArrayMetadata | GroupMetadata | None = module.read_metadata(read, path)
            if metadata is not None:
                return metadata
        if implicit is not None and implicit.probe(store, path):
            found_implicit: ArrayMetadata | GroupMetadata | None = implicit.read_metadata(
                store, path
            )
            return found_implicit
        return None

    return found


class _Prefetched(Store):
    """`store` as a format reads a node through it (`read_metadata`: reads only), answering
    the keys of creation's batch from what that batch read (`values`; a key of `asked` not
    among them is absent), so a node found in the way is not read twice."""

    def __init__(self, store: Store, values: Mapping[str, bytes], asked: frozenset[str]):
        self._store, self._values, self._asked = store, values, asked

    def get(self, key: str, byte_range: Range | None = None) -> bytes | None:
        if byte_range is None and key in self._asked:
            return self._values.get(key)
        return self._store.get(key, byte_range)

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes]:
        keys = list(keys)
        out = {k: self._values[k] for k in keys if k in self._values}
        out.update(self._store.get_many([k for k in keys if k not in self._asked]))
        return out

    def exists(self, key: str) -> bool:
        return key in self._values if key in self._asked else self._store.exists(key)

    def __repr__(self) -> str:
        return repr(self._store)


# -- zarr-python's shortcuts ------------------------------------------------------------------
#: keywords zarr-python 3's `create` takes that are about zarr-python 2's runtime (a
#: synchronizer, metadata caches, a separate chunk store, a `meta_array`): no-ops there
#: for what zarrkit does, so refused when given anything but their default
_RUNTIME_ONLY = ("synchronizer", "cache_metadata", "cache_attrs", "meta_array", "chunk_store")


def create(
    shape: Sequence[int] | int,
    *,
    store: Any = None,
    path: str | None = None,
    chunks: Any = None,
    dtype: Any = None,
    compressor: Any = "auto",
    fill_value: Any = None,
    order: str | None = None,
    overwrite: bool = False,
    filters: Any = None,
    dimension_separator: str | None = None,
    write_empty_chunks: bool | None = None,
    zarr_format: Any = None,
    attributes: Mapping[str, Any] | None = None,
    chunk_shape: Any = None,
    chunk_key_encoding: Any = None,
    codecs: Any = None,
    dimension_names: Sequence[str | None] | None = None,
    storage_options: dict[str, Any] | None = None,
    config: Any = None,
    mode: str | None = None,
    data: Any = None,
    read_only: bool | None = None,
    object_codec: Any = None,
    **runtime: Any,
) -> Array:
    """zarr-python 3's `zarr.create`: an array of `shape` (float64 unless `dtype` says
    otherwise) in `store` (None: a new in-memory store), with zarr-python 2's `compressor=`
    spelling beside v3's `codecs=`. `mode="w"` replaces what is there."""
    known = [p for p in inspect.signature(create).parameters if p != "runtime"]
    check_arguments(runtime, [*known, *_RUNTIME_ONLY], "create")
    given = sorted(k for k, v in runtime.items() if v is not None)
    if given:
        raise ArgumentError(
            f"create() got {', '.join(given)}: zarr-python 2 runtime settings that zarrkit "
            f"does not have (leave them out)"
        )
    if object_codec is not None:
        raise ArgumentError("create() takes no object_codec= here: give filters= or codecs=")
    if chunks is not None and chunk_shape is not None:
        raise ConflictingArgumentsError("give chunks= or chunk_shape=, not both")
    if mode is not None and mode not in ("a", "w", "w-", "r+", "r"):
        raise ArgumentError(f"mode must be one of 'r', 'r+', 'a', 'w', 'w-', got {mode!r}")
    extra: dict[str, Any] = {}
    if compressor is None:
        extra["compressors"] = None
    elif not _is_auto(compressor):
        extra["compressors"] = [compressor]
    if filters is not None:
        extra["filters"] = filters
    if dimension_separator is not None:
        extra["dimension_separator"] = dimension_separator
    array = create_array(
        "memory://" if store is None else store,
        path=path,
        shape=shape,
        dtype="float64" if dtype is None and data is None else dtype,
        data=data,
        chunks=chunk_shape if chunks is None else chunks,
        codecs=codecs,
        fill_value=fill_value,
        order=order,
        zarr_format=3 if zarr_format is None else zarr_format,
        attributes=attributes,
        chunk_key_encoding=chunk_key_encoding,
        dimension_names=dimension_names,
        storage_options=storage_options,
        overwrite=overwrite or mode == "w",
        config=config,
        write_empty_chunks=write_empty_chunks,
        **extra,
    )
    if read_only:
        return Array(array.store, array.path, array.metadata, read_only=True, config=array.config)
    return array


def empty(shape: Sequence[int] | int, **kwargs: Any) -> Array:
    """zarr-python's `zarr.empty`: an array whose unwritten elements read as the fill value."""
    return create(shape, **kwargs)


def zeros(shape: Sequence[int] | int, **kwargs: Any) -> Array:
    return create(shape, fill_value=0, **kwargs)


def ones(shape: Sequence[int] | int, **kwargs: Any) -> Array:
    return create(shape, fill_value=1, **kwargs)


def full(shape: Sequence[int] | int, fill_value: Any, **kwargs: Any) -> Array:
    return create(shape, fill_value=fill_value, **kwargs)


def array(data: Any, **kwargs: Any) -> Array:
    """zarr-python's `zarr.array`: a new array holding `data` (its shape and dtype unless
    given; its chunks when it is a zarrkit array and `chunks` is not given)."""
    if isinstance(data, Array):
        kwargs.setdefault("chunks", data.chunks)
    else:
        data = np.asanyarray(data)
    kwargs.setdefault("dtype", data.dtype)
    return create(data.shape, data=data, **kwargs)


def like_arguments(a: Any, zarr_format: Any = None) -> dict[str, Any]:
    """The arguments of a new array like `a` (zarr-python's `_like_args`): its shape, chunks
    and dtype; for a zarrkit array also its fill value and, in the same format, its codecs."""
    new: dict[str, Any] = {}
    if hasattr(a, "shape"):
        new["shape"] = tuple(a.shape)
    chunks = getattr(a, "chunks", None)
    if isinstance(chunks, tuple) and all(isinstance(c, int) for c in chunks):
        new["chunks"] = chunks
    if hasattr(a, "dtype"):
        new["dtype"] = a.dtype
    if isinstance(a, Array):
        new["fill_value"] = a.fill_value
        fmt = a.metadata.format if zarr_format is None else format_name(zarr_format)
        new["zarr_format"] = fmt
        if fmt == a.metadata.format:
            if a.shards is None:
                new["codecs"] = list(a.codecs)
            else:
                new["chunks"], new["shards"] = a.chunks, a.shards
                new["filters"] = list(a.filters)
                new["compressors"] = list(a.compressors)
                if a.serializer is not None:
                    new["serializer"] = a.serializer
    elif zarr_format is not None:
        new["zarr_format"] = zarr_format
    return new


def _like(a: Any, zarr_format: Any, kwargs: dict[str, Any], **fixed: Any) -> Array:
    new = like_arguments(a, zarr_format)
    new.update(fixed)
    new.update(kwargs)
    if "filters" in new or "serializer" in new or "shards" in new:
        shape = new.pop("shape")
        new.setdefault("store", "memory://")
        return create_array(new.pop("store"), shape=shape, **new)
    return create(new.pop("shape"), **new)


def empty_like(a: Any, *, zarr_format: Any = None, **kwargs: Any) -> Array:
    return _like(a, zarr_format, kwargs)


def zeros_like(a: Any, *, zarr_format: Any = None, **kwargs: Any) -> Array:
    return _like(a, zarr_format, kwargs, fill_value=0)


def ones_like(a: Any, *, zarr_format: Any = None, **kwargs: Any) -> Array:
    return _like(a, zarr_format, kwargs, fill_value=1)


def full_like(a: Any, *, zarr_format: Any = None, **kwargs: Any) -> Array:
    if "fill_value" not in kwargs and not isinstance(a, Array):
        raise ArgumentError("full_like needs fill_value= for an array that has none")
    return _like(a, zarr_format, kwargs)


def from_array(
    store: Any,
    *,
    data: Any,
    write_data: bool = True,
    chunks: Any = "keep",
    shards: Any = "keep",
    filters: Any = "keep",
    compressors: Any = "keep",
    serializer: Any = "keep",
    **kwargs: Any,
) -> Array:
    """zarr-python's `zarr.from_array`: a new array in `store` with `data`'s values and, from
    a zarrkit array, its chunks, shards and codecs ("keep"); "auto" takes the defaults."""
    source = data if isinstance(data, Array) else np.asanyarray(data)
    kept: dict[str, Any] = {
        "chunks": chunks,
        "shards": shards,
        "filters": filters,
        "compressors": compressors,
        "serializer": serializer,
    }
    for key, value in kept.items():
        if not (isinstance(value, str) and value == "keep"):
            continue
        if not isinstance(source, Array):
            kept[key] = None if key == "shards" else "auto"
        elif key == "serializer":
            kept[key] = source.serializer if source.serializer is not None else "auto"
        else:
            kept[key] = getattr(source, key)
    if isinstance(source, Array):
        kwargs.setdefault("fill_value", source.fill_value)
        kwargs.setdefault("zarr_format", source.metadata.format)
        kwargs.setdefault("attributes", dict(source.attrs))
        kwargs.setdefault("dimension_names", source.dimension_names)
        if kwargs["zarr_format"] != V3:
            kept["serializer"] = "auto"
    new = create_array(
        store,
        shape=source.shape,
        dtype=source.dtype,
        **kept,
        **kwargs,
    )
    if write_data:
        new[...] = source[...]
    return new
