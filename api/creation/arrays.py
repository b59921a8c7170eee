"""`create_array`: zarr-python 3's arguments (or zarrkit's canonical `codecs=` /
`chunk_grid=`) turned into one canonical `ArraySpec` (every extension built, the chunks and
shards chosen), which the kernel writes (`zarrkit.creation.write_array`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from zarrkit import hooks
from zarrkit.abc.codec import Codec
from zarrkit.abc.extension import V3
from zarrkit.abc.store import Store
from zarrkit.api.arrays import Array, public
from zarrkit.api.creation.arguments import (
    ARRAY_ARGUMENTS,
    CodecArgs,
    array_config,
    check_arguments,
    codecs_from_args,
    data_type_from_arg,
    is_auto,
    listed,
    plugin_default,
    settled_by_codecs,
    transformers_from_args,
    v2_options,
    v3_chain,
)
from zarrkit.api.creation.chunking import (
    SHARDED_INNER_MAX_BYTES,
    GridChunks,
    auto_shards,
    grid_chunks,
    guess_chunks,
    guess_inner_chunks,
    regular_chunks,
    sharded_codecs,
    shards_from_arg,
)
from zarrkit.array import ArrayConfig
from zarrkit.creation import ArraySpec, format_name, write_array
from zarrkit.documents import check_chunk_size, check_dimensions
from zarrkit.errors import (
    AmbiguousExtensionError,
    ArgumentError,
    ConflictingArgumentsError,
    MetadataError,
)
from zarrkit.formats import get_format
from zarrkit.negotiation import extension_from_arg
from zarrkit.paths import normalize_path
from zarrkit.store_opening import open_store

__all__ = ["create_array"]


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
    zarr_format: Any = 3,  # (zarr-python: 3, not the `default_zarr_format` setting)
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

    Takes zarr-python 3's arguments or zarrkit's canonical ones (`codecs`, `chunk_grid`).
    Extensions (`dtype`, codecs, `chunk_grid`, `chunk_key_encoding`) are each a name, the
    spec's JSON form (`{"name": ..., "configuration": ...}`) or a plugin object.

    Args:
        store: A path, a URL, a zarrkit store, or an object a store plugin adapts.
        path: The array's path inside the store (`name` is zarr-python's spelling).
        name: The same as `path`; give one of them.
        shape: The array's shape (an int for one dimension); taken from `data` when None.
        dtype: The data type (also a numpy dtype); taken from `data` when None.
        data: Values to write, whose shape and dtype the array takes unless given.
        chunks: The chunk shape, or "auto" to choose one as zarr-python does.
        shards: A shard shape (a multiple of `chunks`), "auto", or a dict with "shape"
            and e.g. "index_location": stores the chunks packed in one value per shard.
        filters: Array -> array codecs ("auto": none, or the format's default).
        compressors: Bytes -> bytes codecs ("auto": zstd, as zarr-python writes).
        serializer: The array -> bytes codec ("auto": the data type's default).
        codecs: The whole codec chain at once, instead of the three above (`bytes` is
            inserted when it names no array -> bytes codec).
        fill_value: The value of chunks never written: a scalar or its JSON encoding
            ("NaN", "0x7fc00001", ...); None is the data type's default.
        order: The memory order ("C" or "F") of what reads return.
        zarr_format: 3, 2 or "v3-draft-2020".
        attributes: The array's attributes (JSON values).
        chunk_key_encoding: How chunk coordinates become keys (default: the format's).
        chunk_grid: The chunk grid, instead of `chunks` (zarrkit's canonical form).
        dimension_names: A name (or None) per dimension.
        storage_transformers: v3 only; each a name, a JSON object or a
            `StorageTransformer`, applied in order to every chunk read and write.
        storage_options: Options for the store a URL opens.
        overwrite: Replace a node already at `path` (else it is an error).
        config: Runtime settings of the handle returned (`ArrayConfig` or a dict).
        write_data: False creates the array without writing `data`.
        write_empty_chunks: Store chunks equal to the fill value everywhere.
        **format_options: Arguments only one format has (v2: `compressor`,
            `dimension_separator`; the 2020 draft: `chunk_memory_layout`).

    Returns:
        The new array, open for reading and writing.

    Raises:
        ArgumentError: an argument this call does not take, or no shape and dtype.
        ConflictingArgumentsError: arguments that exclude each other (`path` and `name`,
            `codecs` and the three-part form, ...).
        UnknownExtensionError: a data type, codec or other extension no installed plugin
            provides.
        MetadataError: an extension's configuration is invalid (the message names the field);
            `CodecChainError` for codecs that do not fit together or the data type,
            `ShardShapeError` for shards that are not a multiple of the chunks.
        ValueCastError: the fill value or `data` cannot be stored in the data type.
        ContainsArrayError: a node is already at `path` and `overwrite` is false
            (`ContainsGroupError` for a group).
        ReadOnlyError: the store cannot be written.
        StoreError: the store failed.
    """
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
        codec_args=CodecArgs(codecs, filters, serializer, compressors),
        fill_value=fill_value,
        order=order,
        attributes=attributes,
        chunk_key_encoding=chunk_key_encoding,
        chunk_grid=chunk_grid,
        dimension_names=dimension_names,
        storage_transformers=storage_transformers,
        overwrite=overwrite,
        config=array_config(config, order, write_empty_chunks, fmt),
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
    codec_args: CodecArgs,
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
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(n) for n in shape)
    where = f"new array {path or '/'!r}"
    if any(n < 0 for n in shape):
        raise MetadataError(
            f"expected non-negative lengths, got {shape}", field="shape", where=where
        )
    check_dimensions(shape, "shape", where)
    try:
        data_type = data_type_from_arg(dtype, fmt)
    except AmbiguousExtensionError as exc:
        data_type = settled_by_codecs(exc, codec_args, format_options, fmt)
    itemsize = data_type.stored_size or 16
    format_options = dict(format_options)
    codecs: Any = None
    if fmt == V3:
        if "compressor" in format_options:  # zarr-python's `create(compressor=)` for v3
            if not is_auto(codec_args.compressors):
                raise ConflictingArgumentsError("give compressor= or compressors=, not both")
            one = format_options.pop("compressor")
            codec_args = CodecArgs(
                codec_args.codecs, codec_args.filters, codec_args.serializer, listed(one)
            )
        separator = format_options.pop("dimension_separator", None)
        if separator is not None and chunk_key_encoding is None:
            chunk_key_encoding = {"name": "default", "configuration": {"separator": separator}}
        defaults = hooks.array_defaults(fmt, data_type, ())
        default_codecs = codecs_from_args(defaults.get("codecs", []), fmt)
        codecs = v3_chain(codec_args, default_codecs, fmt)
    else:  # v2, and the 2020 draft: zarr-python 2.x's `compressor` and `filters`
        if codec_args.codecs is not None and codec_args.split:
            raise ConflictingArgumentsError("give codecs= or filters=/compressors=, not both")
        codecs = codec_args.codecs
        format_options = v2_options(codec_args, format_options)
        if order is not None:
            format_options["order"] = order
    translated = get_format(fmt).creation_arguments(data_type, format_options)
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
    given_chunks = chunks is not None and not is_auto(chunks)
    if chunk_grid is not None and given_chunks:
        raise ConflictingArgumentsError("give either chunks or chunk_grid, not both")
    if chunk_grid is not None and shards is not None:
        raise ConflictingArgumentsError("give either shards or chunk_grid, not both")
    inner_shape: tuple[int, ...] = ()
    shard_options: dict[str, Any] = {}
    grid_shape: GridChunks
    if shards is not None and is_auto(shards):
        inner_shape = (
            regular_chunks(chunks, shape, itemsize)
            if given_chunks
            else guess_chunks(shape, itemsize, max_bytes=SHARDED_INNER_MAX_BYTES)
        )
        grid_shape = auto_shards(shape, inner_shape)
    elif shards is not None:  # the grid's chunks are the shards; `chunks` go inside them
        grid_shape, shard_options = shards_from_arg(shards, shape)
        if given_chunks and any(
            isinstance(n, tuple) for n in grid_chunks(chunks, shape, itemsize, "chunks")
        ):
            raise ConflictingArgumentsError(
                "chunks inside shards are regular: give shards= the edge lengths and "
                "chunks= one chunk shape"
            )
        # (the smallest shard along each dimension stands for all when the edges vary)
        shard = tuple(n if isinstance(n, int) else min(n) for n in grid_shape)
        inner_shape = (
            regular_chunks(chunks, shard, itemsize)
            if given_chunks
            else guess_inner_chunks(shard, itemsize)
        )
    else:
        grid_shape = (
            () if chunk_grid is not None else grid_chunks(chunks, shape, itemsize, "chunks")
        )
    defaults = hooks.array_defaults(fmt, data_type, grid_shape)
    grid = extension_from_arg(
        "chunk_grid",
        chunk_grid or plugin_default(defaults, "chunk_grid", fmt),
        fmt,
        key="chunk_grid",
    )
    check_chunk_size(grid, data_type, "chunk_grid" if chunk_grid is not None else "chunks", where)
    key_encoding = extension_from_arg(
        "chunk_key_encoding",
        chunk_key_encoding or plugin_default(defaults, "chunk_key_encoding", fmt),
        fmt,
        key="chunk_key_encoding",
    )
    fill = data_type.default_fill() if fill_value is None else data_type.fill_from_user(fill_value)
    codec_list: Sequence[Codec] = codecs_from_args(
        plugin_default(defaults, "codecs", fmt) if codecs is None else codecs, fmt
    )
    if shards is not None:
        codec_list = codecs_from_args(
            sharded_codecs(
                fmt, list(codec_list), data_type, fill, grid_shape, inner_shape, shard_options
            ),
            fmt,
        )
    spec = ArraySpec(
        shape=shape,
        data_type=data_type,
        chunk_grid=grid,
        chunk_key_encoding=key_encoding,
        fill_value=fill,
        codecs=tuple(codec_list),
        attributes=attributes,
        dimension_names=None if dimension_names is None else tuple(dimension_names),
        storage_transformers=tuple(transformers_from_args(storage_transformers, fmt)),
    )
    return public(write_array(store, path, fmt, spec, config=config, overwrite=overwrite))
