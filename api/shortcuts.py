"""zarr-python 3's shortcut functions over `create_array`, with its call shapes and defaults:
`create`, `empty`, `zeros`, `ones`, `full`, `array`, the `*_like` forms and `from_array`."""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from zarrkit.abc import check_mode
from zarrkit.abc.extension import V3
from zarrkit.api.arrays import Array, public
from zarrkit.api.creation import check_arguments, create_array, format_name, is_auto
from zarrkit.errors import (
    ArgumentError,
    ConflictingArgumentsError,
)

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
    if mode is not None:
        check_mode(mode)
    extra: dict[str, Any] = {}
    if compressor is None:
        extra["compressors"] = None
    elif not is_auto(compressor):
        extra["compressors"] = [compressor]
    if filters is not None:
        extra["filters"] = filters
    if dimension_separator is not None:
        extra["dimension_separator"] = dimension_separator
    array = public(
        create_array(
            "memory://" if store is None else store,
            path=path,
            shape=shape,
            dtype="float64" if dtype is None and data is None else dtype,
            data=data,
            chunks=chunk_shape if chunks is None else chunks,
            codecs=codecs,
            fill_value=fill_value,
            order=order,
            zarr_format=zarr_format,
            attributes=attributes,
            chunk_key_encoding=chunk_key_encoding,
            dimension_names=dimension_names,
            storage_options=storage_options,
            overwrite=overwrite or mode == "w",
            config=config,
            write_empty_chunks=write_empty_chunks,
            **extra,
        )
    )
    if read_only:
        return type(array)(
            array.store, array.path, array.metadata, read_only=True, config=array.config
        )
    return array


def empty(shape: Sequence[int] | int, **kwargs: Any) -> Array:
    """zarr-python's `zarr.empty`: an array whose unwritten elements read as the fill value."""
    return create(shape, **kwargs)


def zeros(shape: Sequence[int] | int, **kwargs: Any) -> Array:
    """`create` with fill value 0: an array that reads as zeros; raises as `create_array`."""
    return create(shape, fill_value=0, **kwargs)


def ones(shape: Sequence[int] | int, **kwargs: Any) -> Array:
    """`create` with fill value 1: an array that reads as ones; raises as `create_array`."""
    return create(shape, fill_value=1, **kwargs)


def full(shape: Sequence[int] | int, fill_value: Any, **kwargs: Any) -> Array:
    """`create` with `fill_value`: an array that reads as it; raises as `create_array`."""
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
        return public(create_array(new.pop("store"), shape=shape, **new))
    return create(new.pop("shape"), **new)


def empty_like(a: Any, *, zarr_format: Any = None, **kwargs: Any) -> Array:
    """`empty` with the shape, dtype and chunks of `a` (an array or a numpy array), `kwargs`
    overriding them; raises as `create_array`."""
    return _like(a, zarr_format, kwargs)


def zeros_like(a: Any, *, zarr_format: Any = None, **kwargs: Any) -> Array:
    """`zeros` shaped like `a`, as `empty_like`."""
    return _like(a, zarr_format, kwargs, fill_value=0)


def ones_like(a: Any, *, zarr_format: Any = None, **kwargs: Any) -> Array:
    """`ones` shaped like `a`, as `empty_like`."""
    return _like(a, zarr_format, kwargs, fill_value=1)


def full_like(a: Any, *, zarr_format: Any = None, **kwargs: Any) -> Array:
    """`full` shaped like `a` (its fill value unless `fill_value` is given), as
    `empty_like`."""
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
    new = public(create_array(store, shape=source.shape, dtype=source.dtype, **kept, **kwargs))
    if write_data:
        new[...] = source[...]
    return new
