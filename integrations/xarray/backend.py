"""`engine="zarrkit"`: xarray's backend entry point (group `xarray.backends`), declared in
pyproject.toml exactly as a third-party package declares one.

Opening builds a `ZarrkitStore` and hands it to xarray's `StoreBackendEntrypoint`, so CF
decoding (times, timedeltas, scale/offset, masking), `chunks=` (xarray wraps the lazy arrays
with dask), `drop_variables` and the rest are xarray's own.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from xarray.backends.common import (
    BackendEntrypoint,
    _normalize_path,
    datatree_from_dict_with_io_cleanup,
)
from xarray.backends.store import StoreBackendEntrypoint
from xarray.core.utils import close_on_error

from .store import ZarrkitStore, open_group, opens_its_store

#: URL schemes that only ever name a Zarr store here (containers and zarrkit's wrappers);
#: other URLs (file paths, s3://, http(s)://) are claimed when they end in ".zarr"
_ZARR_SCHEMES = ("zip", "lmdb", "memory", "cache", "metrics")
#: the keys that make a local folder a Zarr node
_NODE_KEYS = ("zarr.json", ".zgroup", ".zarray", ".zmetadata")

_DECODE_ARGS = (
    "mask_and_scale",
    "decode_times",
    "concat_characters",
    "decode_coords",
    "drop_variables",
    "use_cftime",
    "decode_timedelta",
)


class ZarrkitBackendEntrypoint(BackendEntrypoint):
    """Zarr (v3 and v2) through zarrkit, on every store URL zarrkit opens."""

    description = "Open Zarr v3 and v2 stores (any zarrkit store URL) using zarrkit"
    url = "https://github.com/zarrkit/zarrkit#xarray"
    supports_groups = True
    open_dataset_parameters = (
        "filename_or_obj",
        *_DECODE_ARGS,
        "group",
        "mode",
        "consolidated",
        "storage_options",
        "zarr_format",
        "use_zarr_fill_value_as_mask",
    )

    def guess_can_open(self, filename_or_obj: Any) -> bool:
        from zarrkit.abc import Store

        if isinstance(filename_or_obj, Store):
            return True
        if not isinstance(filename_or_obj, (str, os.PathLike)):
            return False
        text = os.fspath(filename_or_obj).rstrip("/")
        scheme, sep, _rest = text.partition("://")
        if sep and scheme.lower() in _ZARR_SCHEMES:
            return True
        if text.endswith(".zarr"):
            return True
        return not sep and any(os.path.isfile(os.path.join(text, k)) for k in _NODE_KEYS)

    def open_dataset(
        self,
        filename_or_obj: Any,
        *,
        mask_and_scale: bool = True,
        decode_times: bool = True,
        concat_characters: bool = True,
        decode_coords: bool = True,
        drop_variables: str | Iterable[str] | None = None,
        use_cftime: bool | None = None,
        decode_timedelta: bool | None = None,
        group: str | None = None,
        mode: str = "r",
        consolidated: bool | None = None,
        storage_options: dict | None = None,
        zarr_format: int | None = None,
        use_zarr_fill_value_as_mask: bool | None = None,
    ) -> Any:
        _check_mode(mode)
        zgroup = open_group(
            _normalize_path(filename_or_obj),
            mode="r",
            group=group,
            consolidated=consolidated,
            storage_options=storage_options,
        )
        _check_format(zgroup, zarr_format)
        store = ZarrkitStore(
            zgroup,
            use_zarr_fill_value_as_mask=use_zarr_fill_value_as_mask,
            close_store_on_close=opens_its_store(filename_or_obj),
        )
        return _open(
            store,
            mask_and_scale=mask_and_scale,
            decode_times=decode_times,
            concat_characters=concat_characters,
            decode_coords=decode_coords,
            drop_variables=drop_variables,
            use_cftime=use_cftime,
            decode_timedelta=decode_timedelta,
        )

    def open_datatree(self, filename_or_obj: Any, **kwargs: Any) -> Any:
        return datatree_from_dict_with_io_cleanup(
            self.open_groups_as_dict(filename_or_obj, **kwargs)
        )

    def open_groups_as_dict(
        self,
        filename_or_obj: Any,
        *,
        group: str | None = None,
        mode: str = "r",
        consolidated: bool | None = None,
        storage_options: dict | None = None,
        zarr_format: int | None = None,
        use_zarr_fill_value_as_mask: bool | None = None,
        **decode: Any,
    ) -> dict[str, Any]:
        """Every group at and below `group`, as datasets keyed by path ("/" for `group`)."""
        _check_mode(mode)
        zgroup = open_group(
            _normalize_path(filename_or_obj),
            mode="r",
            group=group,
            consolidated=consolidated,
            storage_options=storage_options,
        )
        _check_format(zgroup, zarr_format)
        root = ZarrkitStore(zgroup, use_zarr_fill_value_as_mask=use_zarr_fill_value_as_mask)
        return {
            "/" + path: _open(store, **decode)
            for path, store in sorted(root.child_groups().items())
        }


def _open(store: ZarrkitStore, **decode: Any) -> Any:
    with close_on_error(store):
        return StoreBackendEntrypoint().open_dataset(store, **decode)


def _check_mode(mode: str) -> None:
    """`mode=` as engine="zarr" takes it when reading; only "r" here, as xarray never writes
    through a dataset it opened, and a writable mode would create a missing store."""
    from zarrkit.errors import InvalidArgumentError

    if mode != "r":
        raise InvalidArgumentError(
            f'engine="zarrkit" opens for reading: mode must be "r", got {mode!r} '
            f"(write with zarrkit.xarray.to_zarrkit)"
        )


def _check_format(group: Any, zarr_format: int | None) -> None:
    """`zarr_format=` when opening is a check, as in zarr-python: the data must be of it."""
    from zarrkit.errors import MetadataError

    if zarr_format is not None and f"v{zarr_format}" != group.metadata.format:
        raise MetadataError(
            f"asked for zarr format {zarr_format}, the group "
            f"{group.name!r} is zarr format {group.metadata.format}",
            field="zarr_format",
            where=str(group.store),
        )
