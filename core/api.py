"""The public functions: create and open arrays and groups in any store.

`store` is a path, a URL or a store object; `codecs`, `dtype`, `chunk_grid` and
`chunk_key_encoding` take the spec's JSON form, a bare name, or a plugin object.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from . import codec_chain, hooks
from .array import Array
from .codec import ChunkSpec, Codec
from .data_type import DataType, data_type_from_native
from .errors import ContainsNodeError, MetadataError, NodeNotFoundError, UnknownExtensionError
from .formats import get_format
from .formats.documents import check_chunk_size, check_dimensions, check_nesting
from .hierarchy import Group, normalize_path, open_node, prepare_path, read_metadata
from .names import V2, V3, V3_DRAFT_2020, check_format
from .negotiation import resolve_extension_arg as resolve_extension_arg  # moved; re-exported
from .storage import check_mode, open_store

__all__ = [
    "Array",
    "Group",
    "consolidate_metadata",
    "create_array",
    "create_group",
    "open",
    "open_array",
    "open_consolidated",
    "open_group",
]

_TARGET_CHUNK_BYTES = 1 << 20


# -- resolving what users pass ----------------------------------------------------------------
#: what users may pass as `zarr_format`
_FORMAT_ALIASES = {3: V3, "3": V3, 2: V2, "2": V2}


def _format_name(zarr_format: Any) -> str:
    name = _FORMAT_ALIASES.get(zarr_format, zarr_format)
    if not isinstance(name, str):
        raise ValueError(f"zarr_format must be 3, 2 or {V3_DRAFT_2020!r}, got {zarr_format!r}")
    check_format(name)
    get_format(name)  # NotImplementedError when this installation lacks the format
    return name


def resolve_data_type(dtype: Any, fmt: str = V3) -> DataType:
    """A Zarr data type from its Zarr name/JSON, a plugin object, or a numpy dtype."""
    if isinstance(dtype, DataType):
        return dtype
    if isinstance(dtype, (str, Mapping)):
        try:
            return resolve_extension_arg("data_type", dtype, fmt, key="data_type")
        except UnknownExtensionError as exc:
            if isinstance(dtype, Mapping):
                raise
            unknown = exc
        try:
            np.dtype(dtype)
        except TypeError:
            raise unknown from None
    return data_type_from_native(dtype)


def _chunk_shape(chunks: Any, shape: tuple[int, ...], dtype: DataType) -> tuple[int, ...]:
    if chunks is None:
        return _guess_chunks(shape, dtype.item_size or 16)
    if isinstance(chunks, (int, np.integer)) and not isinstance(chunks, bool):
        return tuple(int(chunks) if chunks > 0 else max(1, n) for n in shape)
    if len(tuple(chunks)) != len(shape):
        raise MetadataError(
            f"chunks {tuple(chunks)} must have {len(shape)} dimensions like shape {shape}",
            key="chunk_grid",
        )
    return tuple(int(c) if c not in (None, -1) else max(1, n) for c, n in zip(chunks, shape))


def _shards_arg(shards: Any, shape: tuple[int, ...]) -> tuple[tuple[int, ...], dict]:
    """The shard shape and the options of `shards` (a shape, or a dict with "shape" and what
    the sharding plugin takes, e.g. "index_location"), checked against the array's shape."""
    options: dict = {}
    if isinstance(shards, Mapping):
        options = dict(shards)
        if "shape" not in options:
            raise MetadataError(f"shards {shards!r} needs a 'shape'", key="shards")
        shards = options.pop("shape")
    try:
        shard_shape = tuple(int(n) for n in shards)
    except (TypeError, ValueError):
        raise MetadataError(
            f"shards must be a shape (a sequence of positive integers) or a "
            f"dict with one, got {shards!r}",
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
    shard_shape: tuple[int, ...],
    chunk_shape: tuple[int, ...],
    options: dict,
) -> Any:
    """The codec chain storing chunks of `chunk_shape` (encoded with `codecs`) in shards of
    `shard_shape`, as the installed plugin that shards for this format writes it."""
    inner = codec_chain.evolve(codecs, ChunkSpec(chunk_shape, data_type, fill))
    if any(s % c for s, c in zip(shard_shape, chunk_shape)):
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


def _default(defaults: dict, field: str, fmt: str) -> Any:
    """A default the installed plugins chose (`zarrkit_array_defaults`), or a clear refusal."""
    if field not in defaults:
        raise MetadataError(
            f"no value given and no installed plugin supplies a default "
            f"(hook zarrkit_array_defaults) for zarr format {fmt}",
            key=field,
        )
    return defaults[field]


def _guess_chunks(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    """Halve the largest dimension until a chunk is about 1 MiB: a safe default, not a tuned one."""
    chunk = [max(1, n) for n in shape]
    while math.prod(chunk) * itemsize > _TARGET_CHUNK_BYTES and max(chunk) > 1:
        i = chunk.index(max(chunk))
        chunk[i] = -(-chunk[i] // 2)
    return tuple(chunk)


def _guess_inner_chunks(shard_shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    """`_guess_chunks` for chunks inside a shard: each step divides the largest dimension by
    its smallest prime factor, so every chunk dimension still divides the shard's."""
    chunk = [max(1, n) for n in shard_shape]
    while math.prod(chunk) * itemsize > _TARGET_CHUNK_BYTES and max(chunk) > 1:
        i = chunk.index(max(chunk))
        chunk[i] //= next(p for p in range(2, chunk[i] + 1) if chunk[i] % p == 0)
    return tuple(chunk)


def _codecs(items: Any, fmt: str) -> list[Codec]:
    if isinstance(items, (str, Mapping, Codec)):
        items = [items]
    return [_codec_arg(c, fmt, f"codecs[{i}]") for i, c in enumerate(items)]


def _codec_arg(item: Any, fmt: str, key: str) -> Codec:
    """A codec by its name in `fmt`, else by its v3 name: the canonical chain is v3-style
    (`bytes`, `transpose`), and the format's `array_document` says whether it can express it."""
    try:
        return resolve_extension_arg("codec", item, fmt, key=key)
    except UnknownExtensionError as exc:
        if fmt == V3:
            raise
        unknown = exc
    try:
        return resolve_extension_arg("codec", item, V3, key=key)
    except UnknownExtensionError:
        raise unknown from None


# -- creation ---------------------------------------------------------------------------------
def create_array(
    store: Any,
    *,
    path: str = "",
    shape: Sequence[int] | int,
    dtype: Any,
    chunks: Sequence[int] | int | None = None,
    codecs: Any = None,
    fill_value: Any = None,
    chunk_key_encoding: Any = None,
    dimension_names: Sequence[str | None] | None = None,
    attributes: Mapping[str, Any] | None = None,
    zarr_format: Any = 3,
    overwrite: bool = False,
    chunk_grid: Any = None,
    shards: Sequence[int] | Mapping[str, Any] | None = None,
    storage_options: dict | None = None,
    **format_options: Any,
) -> Array:
    """Create an array (and any missing ancestor groups) and return it open for writing.

    `shards` (a shape, or a dict with "shape" and e.g. "index_location") stores the `chunks`,
    encoded with `codecs`, together in one value per shard, as zarr-python's `shards=` does
    (v3: the `sharding_indexed` codec, written by its plugin). `format_options` are arguments
    only one format has (v2: `compressor`, `filters`, `order`, `dimension_separator`); the
    format turns them into codecs and a chunk key encoding."""
    opened = open_store(store, mode="a", storage_options=storage_options)
    return _create_array_in(
        opened,
        normalize_path(path),
        shape=shape,
        dtype=dtype,
        chunks=chunks,
        codecs=codecs,
        fill_value=fill_value,
        shards=shards,
        chunk_key_encoding=chunk_key_encoding,
        dimension_names=dimension_names,
        attributes=attributes,
        zarr_format=zarr_format,
        overwrite=overwrite,
        chunk_grid=chunk_grid,
        **format_options,
    )


def _create_array_in(
    store: Any,
    path: str,
    *,
    shape: Any,
    dtype: Any,
    chunks: Any = None,
    codecs: Any = None,
    fill_value: Any = None,
    chunk_key_encoding: Any = None,
    dimension_names: Any = None,
    attributes: Any = None,
    zarr_format: Any = 3,
    overwrite: bool = False,
    chunk_grid: Any = None,
    shards: Any = None,
    **format_options: Any,
) -> Array:
    fmt = _format_name(zarr_format)
    format_module = get_format(fmt)
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(n) for n in shape)
    where = f"new array {path or '/'!r}"
    if any(n < 0 for n in shape):
        raise MetadataError(f"expected non-negative lengths, got {shape}", key="shape", where=where)
    check_dimensions(shape, "shape", where)
    data_type = resolve_data_type(dtype, fmt)
    translated = format_module.creation_arguments(data_type, format_options)
    given = {"codecs": codecs, "chunk_key_encoding": chunk_key_encoding}
    clash = sorted(f for f in translated if given.get(f) is not None)
    if clash and format_options:
        raise TypeError(
            f"{', '.join(clash)} conflicts with {sorted(format_options)}; give one or the other"
        )
    # without format options, what the format answers is its default: explicit arguments win
    codecs = translated.get("codecs") if codecs is None else codecs
    if chunk_key_encoding is None:
        chunk_key_encoding = translated.get("chunk_key_encoding")
    if chunk_grid is not None and chunks is not None:
        raise ValueError("give either chunks or chunk_grid, not both")
    if chunk_grid is not None and shards is not None:
        raise ValueError("give either shards or chunk_grid, not both")
    if shards is not None:  # the grid's chunks are the shards; `chunks` go inside them
        grid_shape, shard_options = _shards_arg(shards, shape)
        inner_shape = (
            _chunk_shape(chunks, grid_shape, data_type)
            if chunks is not None
            else _guess_inner_chunks(grid_shape, data_type.item_size or 16)
        )
    else:
        grid_shape = () if chunk_grid is not None else _chunk_shape(chunks, shape, data_type)
    defaults = hooks.array_defaults(fmt, data_type, grid_shape)
    grid = resolve_extension_arg(
        "chunk_grid", chunk_grid or _default(defaults, "chunk_grid", fmt), fmt, key="chunk_grid"
    )
    check_chunk_size(grid, data_type, "chunks" if chunk_grid is None else "chunk_grid", where)
    key_encoding = resolve_extension_arg(
        "chunk_key_encoding",
        chunk_key_encoding or _default(defaults, "chunk_key_encoding", fmt),
        fmt,
        key="chunk_key_encoding",
    )
    fill = data_type.default_fill() if fill_value is None else data_type.fill_from_user(fill_value)
    codec_list = _codecs(_default(defaults, "codecs", fmt) if codecs is None else codecs, fmt)
    if shards is not None:
        codec_list = _codecs(
            _sharded(fmt, codec_list, data_type, fill, grid_shape, inner_shape, shard_options), fmt
        )
    chunk_shape = grid.uniform_chunk_shape or grid.chunk_shape((0,) * len(shape))
    codec_list = codec_chain.evolve(codec_list, ChunkSpec(chunk_shape, data_type, fill))
    if dimension_names is not None:
        dimension_names = list(dimension_names)
    doc = format_module.array_document(
        shape=shape,
        data_type=data_type,
        chunk_grid=grid,
        chunk_key_encoding=key_encoding,
        fill_value=fill,
        codecs=codec_list,
        attributes=attributes,
        dimension_names=dimension_names,
    )
    metadata = format_module.parse_array(
        format_module.load_document(format_module.encode_document(doc), where), where
    )
    array = Array(store, path, metadata)  # validates the codec chain before anything is written
    prepare_path(store, path, fmt, overwrite=overwrite)
    format_module.write_metadata(store, path, doc)
    return array


def create_group(
    store: Any,
    *,
    path: str = "",
    attributes: Mapping[str, Any] | None = None,
    zarr_format: Any = 3,
    overwrite: bool = False,
    storage_options: dict | None = None,
) -> Group:
    opened = open_store(store, mode="a", storage_options=storage_options)
    return _create_group_in(
        opened,
        normalize_path(path),
        attributes=attributes,
        zarr_format=zarr_format,
        overwrite=overwrite,
    )


def _create_group_in(
    store: Any, path: str, *, attributes: Any = None, zarr_format: Any = 3, overwrite: bool = False
) -> Group:
    fmt = _format_name(zarr_format)
    format_module = get_format(fmt)
    doc = format_module.group_document(attributes)
    where = f"new group {path or '/'!r}"
    check_nesting(doc, where)  # (parsing recurses once per level)
    metadata = format_module.parse_group(doc, where)
    prepare_path(store, path, fmt, overwrite=overwrite)
    format_module.write_metadata(store, path, doc)
    return Group(store, path, metadata)


# -- opening ----------------------------------------------------------------------------------
def open_array(
    store: Any,
    *,
    path: str = "",
    mode: str = "r",
    storage_options: dict | None = None,
    **create_kwargs: Any,
) -> Array:
    """Open an array. Modes: r, r+ (must exist), a (create if missing), w (replace), w- (new)."""
    node = _open_or_create(store, path, mode, storage_options, "array", create_kwargs)
    if not isinstance(node, Array):
        raise NodeNotFoundError(path or "/", node.store, what="array (found a group)")
    return node


def open_group(
    store: Any,
    *,
    path: str = "",
    mode: str = "r",
    storage_options: dict | None = None,
    use_consolidated: bool | None = None,
    **create_kwargs: Any,
) -> Group:
    """Open a group. Consolidated metadata is used when the group has it (`use_consolidated`
    None), required (True) or ignored (False), as in zarr-python; see formats/consolidated.py."""
    from .hierarchy import apply_use_consolidated as choose

    node = _open_or_create(store, path, mode, storage_options, "group", create_kwargs)
    if not isinstance(node, Group):
        raise NodeNotFoundError(path or "/", node.store, what="group (found an array)")
    return choose(node, use_consolidated)


def open_consolidated(
    store: Any, *, path: str = "", mode: str = "r", storage_options: dict | None = None
) -> Group:
    """Open a group through its consolidated metadata (an error when it has none): members come
    from one document, so a store that cannot list (HTTP) can be browsed."""
    return open_group(
        store, path=path, mode=mode, storage_options=storage_options, use_consolidated=True
    )


def consolidate_metadata(
    store: Any, path: str = "", *, storage_options: dict | None = None
) -> Group:
    """Write the metadata of every node below the group at `path` into that group (v3:
    `consolidated_metadata` in its zarr.json; v2: `.zmetadata`), as zarr-python does."""
    from .hierarchy import consolidate_metadata as consolidate

    return consolidate(store, path, storage_options=storage_options)


def open(
    store: Any,
    *,
    path: str = "",
    mode: str = "r",
    storage_options: dict | None = None,
    **create_kwargs: Any,
) -> Array | Group:
    """Open whatever node is at `path`; when creating, an array if `shape` is given, else a group."""
    kind = "array" if "shape" in create_kwargs else "group"
    return _open_or_create(store, path, mode, storage_options, kind, create_kwargs)


def _open_or_create(
    store: Any, path: str, mode: str, storage_options: dict | None, kind: str, create_kwargs: dict
) -> Array | Group:
    check_mode(mode)
    opened = open_store(store, mode=mode, storage_options=storage_options)
    path = normalize_path(path)
    read_only = mode == "r"
    if mode in ("r", "r+"):
        if create_kwargs:
            raise TypeError(
                f"creation arguments {sorted(create_kwargs)} need mode 'a', 'w' or 'w-'"
            )
        return open_node(opened, path, read_only=read_only)
    if mode == "a" and read_metadata(opened, path) is not None:
        return open_node(opened, path, read_only=False)
    if mode == "w-" and read_metadata(opened, path) is not None:
        raise ContainsNodeError(f"a node already exists at {path or '/'!r} in {opened}")
    overwrite = mode == "w"
    if kind == "array":
        return _create_array_in(opened, path, overwrite=overwrite, **create_kwargs)
    return _create_group_in(opened, path, overwrite=overwrite, **create_kwargs)
