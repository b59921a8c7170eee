"""xarray's own zarr tests, run through zarrkit: the `ZarrBase` classes xarray's wheel ships
(`xarray/tests/test_backends.py`), subclassed so that every write goes through
`zarrkit.xarray.to_zarrkit` (`datatree_to_zarrkit` for trees) and every read through
`engine="zarrkit"`, on the same store targets xarray's tests use (zarr-python's MemoryStore,
a directory) in both zarr formats.

The hooks ZarrBase has for this (`save`, `open`, `create_store`) are overridden; what the test
bodies call directly (`Dataset.to_zarr`, `DataArray.to_zarr`, `DataTree.to_zarr`,
`xr.open_zarr`, `engine="zarr"`) is routed to zarrkit by `_through_zarrkit`. Where a test
inspects the store through zarr-python itself (`zarr.open_group(target)`), that is a check of
what zarrkit wrote, as zarr-python reads it.

The tests that cannot apply through zarrkit are listed in `NOT_APPLICABLE`, each with its
reason, and deselected explicitly (never skipped silently); `XFAIL` lists those that fail
for a reason that is not zarrkit's (xarray's own bug).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import Any

import pytest

xr = pytest.importorskip("xarray")
zarr = pytest.importorskip("zarr")
pytest.importorskip("dask")
xtb = pytest.importorskip("xarray.tests.test_backends")

from xarray.tests.conftest import time_unit, use_dask  # noqa: E402, F401  (fixtures they take)

import zarrkit  # noqa: E402
from zarrkit.xarray import datatree_to_zarrkit, to_zarrkit  # noqa: E402
from zarrkit.xarray.backend import ZarrkitBackendEntrypoint  # noqa: E402
from zarrkit.xarray.write import writable_store  # noqa: E402

pytestmark = [
    pytest.mark.interop,  # xarray's tests inspect the stores through zarr-python
]


_PATCHES_ZARR_PYTHON = (
    "patches zarr-python's own classes (zarr.AsyncArray.getitem, AsyncOIndex/AsyncVIndex, "
    "zarr.AsyncGroup.getitem) to count the calls xarray makes into zarr-python; zarrkit reads "
    "without zarr-python, so there is nothing to count"
)

#: xarray's tests that cannot apply through zarrkit, by name (every parametrization) or by the
#: start of a parametrization's name; deselected (conftest.py lists them in the summary)
NOT_APPLICABLE: dict[str, str] = {
    "test_indexing": _PATCHES_ZARR_PYTHON,  # TestZarrDictStore's async indexing tests
    "test_async_load_multiple_variables": _PATCHES_ZARR_PYTHON,
    "test_concurrent_load_multiple_objects": _PATCHES_ZARR_PYTHON,
    "test_avoid_excess_metadata_calls": _PATCHES_ZARR_PYTHON,
    "test_compressor_encoding": (
        "compares encoding['compressors'] with zarr-python's codec objects; zarrkit's engine "
        "gives codecs as their JSON dicts, on purpose (docs/guide/xarray.md)"
    ),
}


def duplicate(item: pytest.Item) -> str | None:
    """TestZarrWriteEmpty subclasses TestZarrDirectoryStore and changes none of its hooks, so
    every test it inherits runs exactly as under TestZarrDirectoryStore: run only the tests it
    defines itself (a quarter of the suite's time saved on CI's two cores)."""
    cls = getattr(item, "cls", None)
    if cls is None or not issubclass(cls, xtb.TestZarrWriteEmpty):
        return None
    name = getattr(item, "originalname", item.name)
    if name in vars(xtb.TestZarrWriteEmpty):
        return None
    return (
        "inherited unchanged by TestZarrWriteEmpty from TestZarrDirectoryStore, "
        "which runs it on the same store target"
    )


#: xarray's tests that fail through zarrkit for a reason that is not zarrkit's: strict xfails
XFAIL: dict[str, str] = {
    "test_zarr_fill_value_setting[2-": (
        "xarray's bug: engine='zarr' drops use_zarr_fill_value_as_mask=False (its "
        "ZarrBackendEntrypoint.open_dataset passes None), and the v2 expectation relies on it; "
        "zarrkit's engine honours the argument"
    ),
}


class _ZarrkitAsZarr(ZarrkitBackendEntrypoint):
    """What `engine="zarr"` (and so `xr.open_zarr`) means in these tests: zarrkit's engine."""


@pytest.fixture(autouse=True)
def _through_zarrkit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Route what xarray's test bodies call directly to zarrkit's writer and engine."""
    from xarray.backends import plugins

    def dataset_to_zarr(self: Any, store: Any = None, *args: Any, **kwargs: Any) -> Any:
        return to_zarrkit(self, store, *args, **kwargs)

    def datatree_to_zarr(self: Any, store: Any, *args: Any, **kwargs: Any) -> Any:
        if kwargs.pop("group", None) is not None:  # as DataTree.to_zarr
            raise NotImplementedError(
                "specifying a root group for the tree has not been implemented"
            )
        return datatree_to_zarrkit(self, store, *args, **kwargs)

    monkeypatch.setattr(xr.Dataset, "to_zarr", dataset_to_zarr)
    monkeypatch.setattr(xr.DataArray, "to_zarr", dataset_to_zarr)
    monkeypatch.setattr(xr.DataTree, "to_zarr", datatree_to_zarr)
    monkeypatch.setitem(plugins.BACKEND_ENTRYPOINTS, "zarr", ("zarr", _ZarrkitAsZarr))


@pytest.fixture(params=xtb.ZARR_FORMATS)
def default_zarr_format(request: pytest.FixtureRequest) -> Iterator[None]:
    """xarray's fixture (the format a write takes when none is given) for zarrkit as well."""
    with zarr.config.set(default_zarr_format=request.param):
        with zarrkit.config.override(default_zarr_format=request.param):
            yield


class ThroughZarrkit:
    """ZarrBase's hooks, writing with `to_zarrkit` and reading with `engine="zarrkit"`."""

    version_kwargs: dict[str, Any]
    create_zarr_target: Any  # xarray's classes provide it (placed after this one in the MRO)

    @contextlib.contextmanager
    def create_store(self, cache_members: bool = False) -> Iterator[Any]:
        with self.create_zarr_target() as target:
            yield writable_store(
                target,
                mode="w",
                consolidated=None,
                region=None,
                safe_chunks=True,
                align_chunks=False,
                storage_options=None,
                zarr_format=self.version_kwargs.get("zarr_format"),
                write_empty_chunks=None,
            )

    def save(self, dataset: Any, store_target: Any, **kwargs: Any) -> Any:
        return to_zarrkit(dataset, store_target, **kwargs, **self.version_kwargs)

    @contextlib.contextmanager
    def open(self, path: Any, **kwargs: Any) -> Iterator[Any]:
        with xr.open_dataset(
            path, engine="zarrkit", mode="r", **kwargs, **self.version_kwargs
        ) as ds:
            yield ds

    def test_load_async(self) -> None:
        """xarray's async test, run on an event loop of its own: xarray runs it with
        pytest-asyncio, which zarrkit's test environment does not install."""
        asyncio.run(xtb.ZarrBase.test_load_async(self))


class TestZarrDictStoreThroughZarrkit(ThroughZarrkit, xtb.TestZarrDictStore):
    pass


class TestZarrDirectoryStoreThroughZarrkit(ThroughZarrkit, xtb.TestZarrDirectoryStore):
    pass


class TestZarrNoConsolidatedMetadataSupportThroughZarrkit(
    ThroughZarrkit, xtb.TestZarrNoConsolidatedMetadataSupport
):
    pass


class TestZarrWriteEmptyThroughZarrkit(ThroughZarrkit, xtb.TestZarrWriteEmpty):
    pass
