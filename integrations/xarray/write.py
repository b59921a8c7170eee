"""Writing xarray Datasets and DataTrees through zarrkit: `Dataset.to_zarr` and
`DataTree.to_zarr` (xarray/backends/writers.py) step for step, with a `ZarrkitStore` in place
of xarray's `ZarrStore`. xarray's `dump_to_store` encodes the variables (CF times and
timedeltas, scale/offset, strings, fill values) and its `ArrayWriter` writes numpy data at once
and dask data block by block (`dask.array.store`), so the encodings are xarray's own.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from xarray import DataArray
from xarray.backends.api import DATAARRAY_NAME, DATAARRAY_VARIABLE, delayed_close_after_writes
from xarray.backends.common import ArrayWriter
from xarray.backends.writers import _validate_dataset_names, dump_to_store
from xarray.backends.zarr import _choose_default_mode
from zarrkit.abc import V2, V3, StoreLike
from zarrkit.errors import MetadataError

from .store import ZarrkitStore, open_group, opens_its_store

if TYPE_CHECKING:
    from xarray.core.types import ZarrWriteModes

Region = Mapping[str, "slice | Literal['auto']"] | Literal["auto"] | None


def to_zarrkit(
    dataset: Any,
    store: StoreLike,
    mode: ZarrWriteModes | None = None,
    group: str | None = None,
    encoding: Mapping | None = None,
    *,
    compute: bool = True,
    consolidated: bool | None = None,
    append_dim: Hashable | None = None,
    region: Region = None,
    safe_chunks: bool = True,
    align_chunks: bool = False,
    storage_options: dict | None = None,
    zarr_format: int | None = None,
    write_empty_chunks: bool | None = None,
    chunkmanager_store_kwargs: dict | None = None,
) -> Any:
    """Write `dataset` to `store` (a path, any zarrkit store URL, or a zarrkit store) as
    `Dataset.to_zarr` does, with the same arguments and meanings: `mode` w / w- / a / a- / r+
    (default w-, or a with `append_dim`, r+ with `region`), `region` (slices per dimension, or
    "auto" to find them from the coordinates), `encoding` per variable (`chunks`, `shards`,
    `compressors`, `filters`, `serializer`, v3 `fill_value`), `consolidated` (None or True:
    consolidate the store's root afterwards), `zarr_format` (3 unless the group exists).
    A DataArray is written as `DataArray.to_zarr` writes it (`as_dataset`).

    Returns the store (or, with `compute=False`, a dask Delayed that writes the data)."""
    if isinstance(dataset, DataArray):
        dataset = as_dataset(dataset)
    _validate_dataset_names(dataset)
    for v in dataset.variables.values():
        if v.size == 0:
            v.load()
    zstore = writable_store(
        store,
        mode=mode,
        group=group,
        consolidated=consolidated,
        append_dim=append_dim,
        region=region,
        safe_chunks=safe_chunks,
        align_chunks=align_chunks,
        storage_options=storage_options,
        zarr_format=zarr_format,
        write_empty_chunks=write_empty_chunks,
    )
    dataset = zstore._validate_and_autodetect_region(dataset)  # type: ignore[misc]  # ZarrStore logic, duck-typed
    zstore._validate_encoding(encoding or {})  # type: ignore[misc]  # ZarrStore logic, duck-typed
    writer = ArrayWriter()
    try:
        dump_to_store(dataset, zstore, writer, encoding=encoding or {})
        writes = writer.sync(compute=compute, chunkmanager_store_kwargs=chunkmanager_store_kwargs)
    finally:
        if compute:
            zstore.close()
    return zstore if compute else delayed_close_after_writes(writes, zstore)


def as_dataset(array: DataArray) -> Any:
    """The dataset `DataArray.to_zarr` writes for `array`, so `open_dataarray` reads it back
    by the same names: an unnamed array, or one named as a coordinate or dimension (which the
    netCDF data model cannot hold), as `__xarray_dataarray_variable__`, keeping such a name in
    the attribute `__xarray_dataarray_name__`."""
    if array.name is None:
        return array.to_dataset(name=DATAARRAY_VARIABLE)
    if array.name in array.coords or array.name in array.dims:
        dataset = array.to_dataset(name=DATAARRAY_VARIABLE)
        dataset.attrs[DATAARRAY_NAME] = array.name
        return dataset
    return array.to_dataset()


def datatree_to_zarrkit(
    tree: Any,
    store: StoreLike,
    mode: ZarrWriteModes = "w-",
    encoding: Mapping[str, Any] | None = None,
    write_inherited_coords: bool = False,
    *,
    compute: bool = True,
    consolidated: bool | None = None,
    region: Region = None,
    safe_chunks: bool = True,
    align_chunks: bool = False,
    storage_options: dict | None = None,
    zarr_format: int | None = None,
    write_empty_chunks: bool | None = None,
    chunkmanager_store_kwargs: dict | None = None,
) -> Any:
    """Write a DataTree as `DataTree.to_zarr` does: one group per node, `encoding` keyed by
    node path."""
    encoding = dict(encoding or {})
    if set(encoding) - set(tree.groups):
        raise ValueError(
            f"unexpected encoding group name(s) provided: {set(encoding) - set(tree.groups)}"
        )
    root = writable_store(
        store,
        mode=mode,
        consolidated=consolidated,
        region=region,
        safe_chunks=safe_chunks,
        align_chunks=align_chunks,
        storage_options=storage_options,
        zarr_format=zarr_format,
        write_empty_chunks=write_empty_chunks,
    )
    writer = ArrayWriter()
    try:
        _dump_tree(tree, root, writer, encoding, write_inherited_coords)
        writes = writer.sync(compute=compute, chunkmanager_store_kwargs=chunkmanager_store_kwargs)
    finally:
        if compute:
            root.close()
    return root if compute else delayed_close_after_writes(writes, root)


def _dump_tree(
    tree: Any,
    root: ZarrkitStore,
    writer: ArrayWriter,
    encoding: Mapping,
    write_inherited_coords: bool,
) -> None:
    """Each node of the tree into its group, as `DataTree.to_zarr` does."""
    for rel_path, node in tree.subtree_with_keys:
        at_root = node is tree
        dataset = node.to_dataset(inherit=write_inherited_coords or at_root)
        node_store = root if at_root else root.get_child_store(rel_path)
        dataset = node_store._validate_and_autodetect_region(dataset)  # type: ignore[misc]  # as above
        node_store._validate_encoding(encoding)  # type: ignore[misc]  # as above
        dump_to_store(dataset, node_store, writer, encoding=encoding.get(node.path))


def writable_store(
    store: StoreLike,
    *,
    mode: ZarrWriteModes | None,
    group: str | None = None,
    consolidated: bool | None,
    append_dim: Hashable | None = None,
    region: Region,
    safe_chunks: bool,
    align_chunks: bool,
    storage_options: dict | None,
    zarr_format: int | None,
    write_empty_chunks: bool | None,
) -> ZarrkitStore:
    """xarray's `get_writable_zarr_store`: the mode from the arguments, and whether to
    consolidate afterwards (not for r+, which changes no metadata)."""
    mode = _choose_default_mode(mode=mode, append_dim=append_dim, region=region)
    consolidate = mode != "r+" and (consolidated or consolidated is None)
    if zarr_format not in (None, 2, 3):
        raise MetadataError(
            f"xarray writes zarr format 2 or 3, got {zarr_format!r}",
            field="zarr_format",
            where="to_zarrkit",
        )
    zgroup = open_group(
        store, mode=mode, group=group, storage_options=storage_options, zarr_format=zarr_format
    )
    if zgroup.metadata.format not in (V2, V3):  # an existing group of the 2020 draft
        raise MetadataError(
            f"xarray writes zarr format 2 or 3; group {zgroup.name!r} is {zgroup.metadata.format}",
            field="zarr_format",
            where=str(zgroup.store),
        )
    return ZarrkitStore(
        zgroup,
        mode=mode,
        consolidate_on_close=consolidate,
        append_dim=append_dim,
        write_region=region,
        safe_chunks=safe_chunks,
        align_chunks=align_chunks,
        write_empty=write_empty_chunks,
        close_store_on_close=opens_its_store(store),
    )
