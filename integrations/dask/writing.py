"""Writing dask arrays through zarrkit, refusing blocks that would race on a stored value."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import dask.array as da
import dask.local
import dask.threaded
from zarrkit.errors import ReadOnlyError, SelectionError, UnsafeWriteError, ValueCastError

from .opening import open_source
from .reading import storage_chunks


def to_zarrkit(
    arr: Any,
    target: Any,
    path: str = "",
    *,
    region: Any = None,
    storage_options: dict | None = None,
    mode: str = "a",
    safe_chunks: bool = True,
    compute: bool = True,
    return_stored: bool = False,
    **create: Any,
) -> Any:
    """Write the dask array `arr` into a zarrkit array, as `dask.array.to_zarr` does for
    zarr-python: one task per dask block, each writing through zarrkit.

    `target`: a URL or path, a zarrkit Store (with `path` and `storage_options`), or an open
    zarrkit Array. A URL or store is opened with `mode` (a: open or create, w: replace, w-:
    create only, r+: must exist); an array it creates gets `arr`'s shape and dtype, and
    `create` (chunks, shards, codecs, fill_value, dimension_names, attributes, zarr_format),
    with `arr`'s block shape as its chunks unless `chunks` or `shards` is given.

    `region`: a tuple of slices, one per dimension, where `arr` goes in an existing array
    (default: all of it). `safe_chunks`: see the package docstring; a refused write raises
    `UnsafeWriteError` before anything is written. `compute` and `return_stored` as in
    `dask.array.store`."""
    arr = da.asarray(arr)
    if any(math.isnan(n) for n in arr.shape):
        raise ValueCastError(
            "the dask array has unknown chunk sizes; call "
            "arr.compute_chunk_sizes() before writing it"
        )
    if safe_chunks and region is None and mode != "r+" and not _is_array(target):
        _check_planned(arr, create)  # before an array is created for nothing
    array = _target(arr, target, path, mode, storage_options, region, create)
    regions = _region(region, array, arr.shape)
    _refuse_lost_memory_writes(array, arr)
    if safe_chunks:
        check_alignment(
            arr.chunks, regions, storage_chunks(array), "shard" if array.shards else "chunk", array
        )
    return da.store(
        arr, array, lock=False, regions=regions, compute=compute, return_stored=return_stored
    )


def _is_array(target: Any) -> bool:
    import zarrkit

    return isinstance(target, zarrkit.Array)


def _check_planned(arr: Any, create: dict[str, Any]) -> None:
    """`check_alignment` against the chunks or shards an array about to be created gets."""
    shards = create.get("shards")
    if isinstance(shards, dict):
        shards = shards.get("shape")
    planned = shards if shards is not None else create.get("chunks")
    if planned is None:
        return  # (blocks of arr become the chunks: aligned)
    units = (planned,) * arr.ndim if isinstance(planned, int) else tuple(planned)
    if len(units) != arr.ndim or not all(isinstance(u, int) and u > 0 for u in units):
        return  # (create_array refuses it with its own error)
    regions = tuple(slice(0, n) for n in arr.shape)
    check_alignment(
        arr.chunks,
        regions,
        units,
        "shard" if shards is not None else "chunk",
        None,
        create.get("dimension_names"),
    )


def _target(
    arr: Any,
    target: Any,
    path: str,
    mode: str,
    storage_options: dict | None,
    region: Any,
    create: dict[str, Any],
) -> Any:
    import zarrkit

    if isinstance(target, zarrkit.Array) and create:
        raise TypeError(
            f"creation arguments {sorted(create)} are for a new array, and {target.name!r} exists"
        )
    if mode == "r":
        raise ReadOnlyError("cannot write a dask array with mode 'r'")
    if region is not None or mode == "r+":
        array = open_source(target, path, mode="r+", storage_options=storage_options)
    else:
        if "chunks" not in create and "shards" not in create:
            create["chunks"] = tuple(max(1, int(c[0])) if c else 1 for c in arr.chunks)
        array = open_source(
            target,
            path,
            mode=mode,
            storage_options=storage_options,
            shape=arr.shape,
            dtype=arr.dtype,
            **create,
        )
    if array.read_only:
        raise ReadOnlyError(f"array {array.name!r} in {array.store} is open read-only")
    return array


def _region(region: Any, array: Any, shape: Sequence[int]) -> tuple[slice, ...]:
    """The region as slices of the array, checked to have `shape`."""
    if region is None:
        region = (slice(None),) * array.ndim
    if not isinstance(region, tuple):
        region = (region,)
    if len(region) != array.ndim or not all(isinstance(s, slice) for s in region):
        raise SelectionError(
            f"region= is a tuple of {array.ndim} slices (one per dimension "
            f"of {array.name!r}), got {region!r}"
        )
    out = []
    for d, (s, n) in enumerate(zip(region, array.shape)):
        start, stop, step = s.indices(n)
        if step != 1:
            raise SelectionError(f"region= slices have step 1; dimension {d} has {step}")
        out.append(slice(start, max(start, stop)))
    got = tuple(s.stop - s.start for s in out)
    if got != tuple(shape):
        raise ValueCastError(
            f"a dask array of shape {tuple(shape)} cannot be written to the "
            f"region {_show(out)} of {array.name!r} (shape {got}), of an array of "
            f"shape {array.shape}"
        )
    return tuple(out)


def check_alignment(
    chunks: Sequence[Sequence[int]],
    regions: Sequence[slice],
    units: Sequence[int],
    what: str,
    array: Any,
    dimension_names: Sequence[str | None] | None = None,
) -> None:
    """Refuse blocks that share a stored chunk or shard (see the package docstring): `units`
    is the shape of the stored values, `array` the target (None: not created yet)."""
    if array is not None:
        dimension_names = array.dimension_names
    names = tuple(dimension_names or ()) + (None,) * len(chunks)
    label = f" of {array.name!r}" if array is not None else ""
    for d, (sizes, region, unit) in enumerate(zip(chunks, regions, units)):
        at = region.start
        for size in sizes[:-1]:
            at += int(size)
            if at % unit and at < region.stop:
                named = f" ({names[d]!r})" if names[d] else ""
                lo = at - at % unit
                nominal = max(int(s) for s in sizes)
                suggest = max(unit, round(nominal / unit) * unit)
                offset = (
                    f"; the region starts at {region.start}, so the first block must end "
                    f"on a multiple of {unit} too"
                    if region.start % unit
                    else ""
                )
                raise UnsafeWriteError(
                    f"dask blocks along dimension {d}{named}{label} meet at index "
                    f"{at}, inside the {what} [{lo}, {lo + unit}): two tasks would each "
                    f"rewrite that {what}, and in different processes one update would be "
                    f"lost. Rechunk so that blocks along dimension {d} are multiples of "
                    f"{unit}, e.g. arr.rechunk({{{d}: {suggest}}}){offset}; or pass "
                    f"safe_chunks=False to rely on the store's locking (safe on the threaded "
                    f"scheduler, where zarrkit locks each {what})"
                )


def _refuse_lost_memory_writes(array: Any, arr: Any) -> None:
    """Tasks in other processes would each write into their own copy of a memory store."""
    from zarrkit import registry

    memory_store = registry.lookup("store", "memory")
    store = array.store
    while not isinstance(store, memory_store) and hasattr(type(store), "wrap"):
        store = store.inner
    if not isinstance(store, memory_store):
        return
    from dask.base import get_scheduler

    scheduler = get_scheduler(collections=[arr])
    if scheduler not in (None, dask.threaded.get, dask.local.get_sync):
        raise UnsafeWriteError(
            f"{array.store} lives in this process: tasks run in other "
            f"processes would write into their own copies and the writes "
            f"would be lost. Write to a store on disk or in the cloud, or "
            f"compute on the threaded scheduler"
        )


def _show(region: Sequence[slice]) -> str:
    return "[" + ", ".join(f"{s.start}:{s.stop}" for s in region) + "]"
