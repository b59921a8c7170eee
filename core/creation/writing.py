"""Creating a node: an array's arguments turned into one document of its format (through the
format's own `creation_arguments` and `array_document`), the room made for it in the store
(`prepare_path`: what is in the way, missing parents), and the document written; groups alike
(`write_group`). The `Array` a caller gets back is validated before anything is written."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from .. import codec_chain, hooks
from ..array import Array, ArrayConfig
from ..codec import ChunkSpec, Codec
from ..errors import (
    AmbiguousExtensionError,
    ArgumentError,
    ConflictingArgumentsError,
    ContainsArrayError,
    MetadataError,
    contains_error,
)
from ..formats import available, check_node_fits, get_format
from ..formats.documents import check_chunk_size, check_dimensions, check_nesting
from ..metadata import ArrayMetadata, GroupMetadata
from ..names import V2, V3
from ..negotiation import extension_from_arg
from ..node import node_class
from ..paths import normalize_path
from ..store import Range, Store
from ..store_opening import open_store
from .arguments import (
    ARRAY_ARGUMENTS,
    CodecArgs,
    array_config,
    check_arguments,
    codecs_from_args,
    data_type_from_arg,
    format_name,
    is_auto,
    listed,
    plugin_default,
    settled_by_codecs,
    transformers_from_args,
    v2_options,
    v3_chain,
)
from .chunking import (
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
    format_module = get_format(fmt)
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
    elif fmt == V2:
        if codec_args.codecs is not None and codec_args.split:
            raise ConflictingArgumentsError("give codecs= or filters=/compressors=, not both")
        codecs = codec_args.codecs
        format_options = v2_options(codec_args, format_options)
        if order is not None:
            format_options["order"] = order
    else:  # the 2020 draft takes zarr-python 2.x's `compressor` and `filters`, as v2 does
        if codec_args.codecs is not None and codec_args.split:
            raise ConflictingArgumentsError("give codecs= or filters=/compressors=, not both")
        codecs = codec_args.codecs
        format_options = v2_options(codec_args, format_options)
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
        storage_transformers=transformers_from_args(storage_transformers, fmt),
    )
    metadata = format_module.parse_array(
        format_module.load_document(format_module.encode_document(doc), where), where
    )
    # the array validates its codec chain before anything is written
    array = node_class(Array)(store, path, metadata, config=config)
    prepare_path(store, path, fmt, overwrite=overwrite)
    format_module.write_metadata(store, path, doc)
    return array


def write_group(
    store: Store,
    path: str,
    *,
    attributes: Mapping[str, Any] | None = None,
    zarr_format: Any = None,
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
            raise ContainsArrayError(f"cannot create {path!r}: {ancestor or '/'!r} is an array")
    existing = found_at(path)
    if existing is not None:
        if not overwrite:
            raise contains_error(existing.node_type)(
                f"{'an' if existing.node_type == 'array' else 'a'} {existing.node_type} already exists at {path or '/'!r} "
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
