"""zarrkit stores handed to zarr-python 3 and to xarray's `engine="zarr"` as a
`zarr.abc.store.Store` (`zarrkit.zarr_python.as_zarr_store`), value for value both ways."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrkit as zk
from zarrkit.errors import InvalidKeyError
from zarrkit.plugins.stores.local.local import LocalStore
from zarrkit.plugins.stores.memory import MemoryStore
from zarrkit.store_opening import open_store

zarr = pytest.importorskip("zarr")
from zarrkit.zarr_python import ZarrkitZarrStore, as_zarr_store  # noqa: E402

pytestmark = pytest.mark.interop  # through zarr-python 3


@pytest.fixture(params=["memory", "local"])
def zk_store(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if request.param == "memory":
        return MemoryStore()
    return LocalStore(tmp_path / "data.zarr", mode="w")


CASES = {
    "f8": np.linspace(-5, 5, 120).reshape(10, 12),
    "i2": np.arange(-60, 60, dtype="i2").reshape(10, 12),
    "u1": (np.arange(120) % 251).astype("u1").reshape(10, 12),
    "bool": (np.arange(120) % 3 == 0).reshape(10, 12),
    "c16": (np.arange(120) + 1j * np.arange(120)[::-1]).reshape(10, 12),
}


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_zarr_python_reads_what_zarrkit_wrote(zk_store: Any, zarr_format: int) -> None:
    root = zk.open_group(zk_store, mode="w", zarr_format=zarr_format)
    root.attrs["about"] = {"n": 1}
    for name, data in CASES.items():
        arr = root.create_array(name, shape=data.shape, chunks=(4, 5), dtype=data.dtype)
        arr[...] = data
    theirs = zarr.open_group(as_zarr_store(zk_store), mode="r")
    assert theirs.attrs["about"] == {"n": 1}
    assert sorted(theirs.array_keys()) == sorted(CASES)
    for name, data in CASES.items():
        got = theirs[name][...]
        assert got.dtype == data.dtype and np.array_equal(got, data)
        assert np.array_equal(theirs[name][3:9, 1:11], data[3:9, 1:11])


def test_zarr_python_reads_a_sharded_array_in_parts(zk_store: Any) -> None:
    data = np.arange(64 * 64, dtype="<u4").reshape(64, 64)
    arr = zk.create_array(
        zk_store,
        shape=data.shape,
        dtype=data.dtype,
        chunks=(32, 32),
        codecs=[
            {
                "name": "sharding_indexed",
                "configuration": {
                    "chunk_shape": [8, 8],
                    "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
                    "index_codecs": [
                        {"name": "bytes", "configuration": {"endian": "little"}},
                        {"name": "crc32c"},
                    ],
                    "index_location": "end",
                },
            }
        ],
    )
    arr[...] = data
    theirs = zarr.open_array(as_zarr_store(zk_store), mode="r")
    assert np.array_equal(theirs[...], data)
    assert np.array_equal(theirs[5:13, 40:47], data[5:13, 40:47])  # inner chunks: ranges


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_zarrkit_reads_what_zarr_python_wrote(zk_store: Any, zarr_format: int) -> None:
    target = as_zarr_store(zk_store, mode="a")
    group = zarr.open_group(target, mode="w", zarr_format=zarr_format)
    group.attrs["made_by"] = "zarr-python"
    for name, data in CASES.items():
        arr = group.create_array(name, shape=data.shape, chunks=(3, 7), dtype=data.dtype)
        arr[...] = data
    sub = group.create_group("sub")
    sub.create_array("v", shape=(5,), chunks=(2,), dtype="i8")[...] = np.arange(5)
    ours = zk.open_group(zk_store, mode="r")
    assert ours.attrs["made_by"] == "zarr-python"
    for name, data in CASES.items():
        assert np.array_equal(ours[name][...], data)
    assert np.array_equal(ours["sub/v"][...], np.arange(5))
    # zarr-python lists, moves through and deletes in the zarrkit store as in its own
    assert sorted(k for k, _ in group.members()) == sorted([*CASES, "sub"])
    del group["sub"]
    assert not any(k.startswith("sub/") for k in zk_store.list())


def test_a_read_only_adapter_refuses_writes(zk_store: Any) -> None:
    zk.create_array(zk_store, shape=(4,), chunks=(2,), dtype="u1")[...] = 5
    frozen = as_zarr_store(zk_store, mode="r")
    assert frozen.read_only
    arr = zarr.open_array(frozen, mode="r")
    assert (arr[...] == 5).all()
    with pytest.raises(ValueError, match="read-only"):
        zarr.open_array(frozen.with_read_only(True), mode="r+")[...] = 1
    assert (zk.open_array(zk_store)[...] == 5).all()


def test_a_zarr_store_through_zarrkit_comes_back_as_itself() -> None:
    theirs = zarr.storage.MemoryStore()
    assert as_zarr_store(theirs, mode="a") is theirs
    ours = MemoryStore()
    wrapped = as_zarr_store(ours, mode="a")
    assert isinstance(wrapped, ZarrkitZarrStore)
    assert open_store(wrapped) is ours  # and a zarrkit store through zarr-python as itself


def test_keys_that_escape_are_refused_through_the_adapter(tmp_path: Path) -> None:
    adapter = as_zarr_store(LocalStore(tmp_path / "s", mode="w"), mode="a")
    buffer = zarr.core.buffer.default_buffer_prototype().buffer.from_bytes(b"x")
    with pytest.raises(InvalidKeyError):
        zarr.core.sync.sync(adapter.set("../outside", buffer))
    assert not (tmp_path / "outside").exists()


# -- xarray's zarr engine over a zarrkit store -----------------------------------------------------
def test_xarray_zarr_engine_over_a_zarrkit_store(zk_store: Any) -> None:
    xr = pytest.importorskip("xarray")
    ds = xr.Dataset(
        {
            "t": (("time", "x"), np.arange(24, dtype="f4").reshape(6, 4)),
            "flag": (("x",), np.array([True, False, True, True])),
        },
        coords={"time": np.arange(6), "x": [10.0, 20.0, 30.0, 40.0]},
        attrs={"title": "adapter"},
    )
    ds.to_zarr(as_zarr_store(zk_store, mode="a"), mode="w", consolidated=True, zarr_format=3)
    back = xr.open_zarr(as_zarr_store(zk_store), consolidated=True)
    xr.testing.assert_identical(back.load(), ds)
    # the same store through zarrkit's own engine, and zarrkit's arrays directly
    ours = xr.open_dataset(zk_store, engine="zarrkit")
    xr.testing.assert_identical(ours.load(), ds)
    assert np.array_equal(zk.open_group(zk_store)["t"][...], ds["t"].values)
    # appending through the zarr engine lands in the zarrkit store
    more = ds.isel(time=slice(0, 2)).assign_coords(time=[6, 7])
    more.to_zarr(as_zarr_store(zk_store, mode="a"), append_dim="time")
    grown = xr.open_dataset(as_zarr_store(zk_store), engine="zarr").load()
    assert grown.sizes["time"] == 8
    assert np.array_equal(grown["t"].values[6:], ds["t"].values[:2])


# -- what zarr-python's StoreTests found (issue 42, item 6) -----------------------------------
def _stores(tmp_path: Path) -> dict[str, str]:
    return {
        "memory": "memory://adapter-checks",
        "local": str(tmp_path / "local.zarr"),
        "zip": str(tmp_path / "data.zip"),
    }


@pytest.mark.parametrize("kind", ["memory", "local", "zip"])
def test_the_root_is_empty_whether_asked_as_empty_or_slash(tmp_path: Path, kind: str) -> None:
    import asyncio

    store = as_zarr_store(_stores(tmp_path)[kind], mode="w")
    assert asyncio.run(store.is_empty("")) and asyncio.run(store.is_empty("/"))
    buffer = zarr.core.buffer.default_buffer_prototype().buffer
    asyncio.run(store.set("a/b", buffer.from_bytes(b"1")))
    assert not asyncio.run(store.is_empty("/")) and not asyncio.run(store.is_empty("a"))
    assert asyncio.run(store.is_empty("c/"))


def test_an_unknown_byte_request_is_named_as_zarr_python_names_it(tmp_path: Path) -> None:
    import asyncio

    store = as_zarr_store(str(tmp_path / "x.zarr"), mode="w")
    prototype = zarr.core.buffer.default_buffer_prototype()
    asyncio.run(store.set("c/0", prototype.buffer.from_bytes(b"\x01\x02\x03\x04")))
    with pytest.raises(TypeError, match=r"Unexpected byte_range, got \(0, 2\)"):
        asyncio.run(store.get("c/0", prototype, byte_range=(0, 2)))  # type: ignore[arg-type]


def test_a_writable_copy_of_a_read_only_store_is_refused_not_pretended(tmp_path: Path) -> None:
    import asyncio

    path = str(tmp_path / "y.zarr")
    zk.create_array(path, shape=(2,), dtype="i1")
    reader = as_zarr_store(path, mode="r")
    assert reader.read_only
    with pytest.raises(NotImplementedError, match="with_read_only is not implemented"):
        reader.with_read_only(False)
    writer = as_zarr_store(path, mode="a")
    again = writer.with_read_only(True).with_read_only(False)
    assert not again.read_only
    buffer = zarr.core.buffer.default_buffer_prototype().buffer
    asyncio.run(again.set("k", buffer.from_bytes(b"v")))  # writable, as it says
    assert LocalStore(path).get("k") == b"v"
