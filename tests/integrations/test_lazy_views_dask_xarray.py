"""Lazy views (`array.lazy[...]`) inside dask and xarray: `da.from_array(view)` computes the
view's values, one read per dask chunk, and xarray takes a view directly or through dask."""

from __future__ import annotations

import numpy as np
import pytest

import zarrkit as zk
from zarrkit.plugins.stores.memory import MemoryStore

da = pytest.importorskip("dask.array")
xr = pytest.importorskip("xarray")


def _array() -> tuple[zk.Array, np.ndarray]:
    a = zk.create_array(
        MemoryStore(), shape=(40, 30, 6), dtype="f8", shards=(20, 30, 6), chunks=(10, 10, 3)
    )
    expect = np.arange(a.size, dtype="f8").reshape(a.shape)
    a[...] = expect
    return a, expect


CHAINS = {
    "slices": (lambda v: v[5:35:2, ::-3, 1], lambda x: x[5:35:2, ::-3, 1]),
    "oindex": (lambda v: v.oindex[[3, 1, 30], :, [5, 0]].T, lambda x: x[[3, 1, 30]][..., [5, 0]].T),
    "vindex": (
        lambda v: v.vindex[[0, 39, 7], [29, 0, 3]][:, ::-1],
        lambda x: x[[0, 39, 7], [29, 0, 3]][:, ::-1],
    ),
    "newaxis": (
        lambda v: v[None, ..., -1][:, 4:, [2, 2, 9]],
        lambda x: x[None, ..., -1][:, 4:, [2, 2, 9]],
    ),
}


@pytest.mark.parametrize("chain", CHAINS)
def test_dask_from_array_of_a_view_computes_the_view(chain: str) -> None:
    a, expect = _array()
    on_view, on_numpy = CHAINS[chain]
    view = on_view(a.lazy)
    lazy = da.from_array(view, chunks=tuple(max(1, n // 2) for n in view.shape))
    assert lazy.shape == view.shape and lazy.dtype == view.dtype
    got = lazy.compute()
    assert isinstance(got, np.ndarray)
    np.testing.assert_array_equal(got, on_numpy(expect))
    assert (lazy * 2).sum().compute() == 2 * got.sum()


def test_views_of_different_elements_get_different_dask_names() -> None:
    a, _ = _array()
    first = da.from_array(a.lazy.oindex[[1, 2]], chunks=-1)
    other = da.from_array(a.lazy.oindex[[1, 3]], chunks=-1)
    again = da.from_array(a.lazy.oindex[[1, 2]], chunks=-1)
    assert first.name != other.name
    assert first.name == again.name
    np.testing.assert_array_equal(da.concatenate([first, other]).compute()[2:], a[[1, 3]])


def test_xarray_takes_a_view_directly_and_through_dask() -> None:
    a, expect = _array()
    view = a.lazy[::4, 2]
    eager = xr.DataArray(view, dims=("y", "band"))
    np.testing.assert_array_equal(eager.values, expect[::4, 2])
    lazy = xr.DataArray(da.from_array(view, chunks=(5, 6)), dims=("y", "band"))
    assert lazy.chunks == ((5, 5), (6,))
    np.testing.assert_array_equal(lazy.mean("band").values, expect[::4, 2].mean(axis=1))
