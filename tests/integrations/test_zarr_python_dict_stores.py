"""A plain dict as the store, filled by one library and read by the other (issue 42, item 7):
zarrkit reads a dict zarr-python filled (its values are zarr-python `Buffer`s); zarr-python
reads a dict zarrkit filled through zarrkit's adapter, since its own `MemoryStore` over that
dict expects `Buffer`s (docs/zarr-python.md)."""

from __future__ import annotations

import numpy as np
import pytest

import zarrkit as zk

pytestmark = pytest.mark.interop
zarr = pytest.importorskip("zarr")


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_zarrkit_reads_a_dict_zarr_python_filled(zarr_format: int) -> None:
    data = np.arange(60, dtype="int16").reshape(6, 10)
    store: dict = {}
    root = zarr.open_group(store, mode="w", zarr_format=zarr_format)
    root.attrs["title"] = "from zarr-python"
    a = root.create_array("a", shape=data.shape, chunks=(4, 4), dtype="int16")
    a[...] = data
    assert any(not isinstance(v, bytes) for v in store.values())  # really its Buffers
    group = zk.open_group(store, mode="r")
    assert group.attrs["title"] == "from zarr-python"
    np.testing.assert_array_equal(group["a"][...], data)
    np.testing.assert_array_equal(zk.open_array(store, path="a")[1:5, 3:9], data[1:5, 3:9])


def test_zarr_python_reads_a_dict_zarrkit_filled_through_the_adapter() -> None:
    from zarrkit.zarr_python import as_zarr_store

    data = np.linspace(0, 1, 24, dtype="float32").reshape(4, 6)
    store: dict = {}
    zk.create_array(store, path="b", shape=data.shape, chunks=(2, 3), dtype="float32")[...] = data
    assert all(isinstance(v, bytes) for v in store.values())  # what zarrkit writes
    read = zarr.open_array(as_zarr_store(store), path="b", mode="r")
    np.testing.assert_array_equal(read[...], data)


def test_a_value_that_is_no_buffer_is_a_store_error() -> None:
    store = {"zarr.json": 42}
    with pytest.raises(zk.errors.StoreError, match="holds a int"):
        zk.open_group(store, mode="r")
