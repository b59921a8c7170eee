"""zarrkit.dask: lazy reads one task per stored chunk or shard, writes that refuse blocks which
would share a stored value, on the threaded and the process schedulers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import zarrkit
from zarrkit.errors import ReadOnlyError, StoreError, UnsafeWriteError, ValueCastError

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
zd = pytest.importorskip("zarrkit.dask")


def _data(shape: tuple[int, ...] = (100, 60)) -> np.ndarray:
    return np.arange(np.prod(shape), dtype="float64").reshape(shape)


def _sharded(tmp_path: Path, name: str = "s.zarr") -> zarrkit.Array:
    array = zarrkit.create_array(
        str(tmp_path / name),
        shape=(100, 60),
        dtype="float64",
        chunks=(10, 20),
        shards=(50, 60),
        dimension_names=["y", "x"],
    )
    array[...] = _data()
    return array


# -- reading ------------------------------------------------------------------------------------
def test_one_task_per_shard_by_default(tmp_path: Path) -> None:
    array = _sharded(tmp_path)
    lazy = zd.from_zarrkit(str(tmp_path / "s.zarr"))
    assert lazy.chunks == ((50, 50), (60,)) and lazy.dtype == np.float64
    assert np.array_equal(lazy.compute(), _data())
    assert array.to_dask().chunks == lazy.chunks
    assert lazy.name == array.to_dask().name  # one graph per array, not per handle


def test_one_task_per_chunk_without_shards(tmp_path: Path) -> None:
    array = zarrkit.create_array(
        str(tmp_path / "c.zarr"), shape=(100, 60), dtype="int32", chunks=(30, 25)
    )
    array[...] = _data().astype("int32")
    lazy = array.to_dask()
    assert lazy.chunks == ((30, 30, 30, 10), (25, 25, 10))
    assert np.array_equal(lazy[5:95, 3:50].compute(), _data()[5:95, 3:50].astype("int32"))


def test_chunks_path_store_and_group(tmp_path: Path) -> None:
    root = zarrkit.create_group(str(tmp_path / "g.zarr"))
    root.create_array("a", shape=(40,), dtype="int16", chunks=(8,))[...] = np.arange(40)
    store = root.store
    for lazy in (
        zd.from_zarrkit(str(tmp_path / "g.zarr"), path="a", chunks=16),
        zd.from_zarrkit(store, path="a", chunks=16),
        zd.from_zarrkit(root, "a", chunks=16),
        root["a"].to_dask(chunks=16),
    ):
        assert lazy.chunks == ((16, 16, 8),)
        assert lazy.sum().compute() == sum(range(40))


def test_reads_on_the_process_scheduler(tmp_path: Path) -> None:
    _sharded(tmp_path)
    lazy = zd.from_zarrkit(str(tmp_path / "s.zarr"))
    with dask.config.set(scheduler="processes", num_workers=2):
        assert float(lazy.sum().compute()) == float(_data().sum())


def test_reads_a_memory_store_in_other_processes() -> None:
    """A memory store pickles its contents: process workers read a copy."""
    array = zarrkit.create_array("memory://", shape=(20,), dtype="int64", chunks=(5,))
    array[...] = np.arange(20)
    with dask.config.set(scheduler="processes", num_workers=2):
        assert int(array.to_dask().sum().compute()) == sum(range(20))


# -- writing ------------------------------------------------------------------------------------
@pytest.mark.interop
def test_to_zarrkit_creates_an_array_readable_by_zarr_python(tmp_path: Path) -> None:
    zarr = pytest.importorskip("zarr")
    source = da.from_array(_data(), chunks=(50, 60))
    zd.to_zarrkit(source, str(tmp_path / "new.zarr"), chunks=(10, 20), shards=(50, 60))
    written = zarrkit.open_array(str(tmp_path / "new.zarr"))
    assert written.shards == (50, 60) and written.chunks == (10, 20)
    assert np.array_equal(zarr.open_array(str(tmp_path / "new.zarr"), mode="r")[...], _data())


def test_to_zarrkit_uses_the_blocks_as_chunks_by_default(tmp_path: Path) -> None:
    zd.to_zarrkit(da.from_array(_data(), chunks=(25, 30)), str(tmp_path / "d.zarr"))
    written = zarrkit.open_array(str(tmp_path / "d.zarr"))
    assert written.chunks == (25, 30) and np.array_equal(written[...], _data())


def test_region_write_into_an_existing_array(tmp_path: Path) -> None:
    array = _sharded(tmp_path)
    zd.to_zarrkit(da.zeros((50, 60), chunks=(50, 60)), array, region=(slice(50, 100), slice(None)))
    expected = _data()
    expected[50:] = 0
    assert np.array_equal(array[...], expected)
    with pytest.raises(ValueCastError, match=r"shape \(10, 60\) cannot be written to the region"):
        zd.to_zarrkit(da.zeros((10, 60)), array, region=(slice(0, 20), slice(None)))


def test_misaligned_blocks_are_refused_before_anything_is_written(tmp_path: Path) -> None:
    array = _sharded(tmp_path)
    with pytest.raises(
        UnsafeWriteError,
        match=r"dimension 0 \('y'\).*index 30, inside the shard "
        r"\[0, 50\).*arr.rechunk\(\{0: 50\}\)",
    ):
        zd.to_zarrkit(da.zeros((100, 60), chunks=(30, 60)), array)
    assert np.array_equal(array[...], _data())
    # a region whose blocks meet inside a shard: refused too
    with pytest.raises(UnsafeWriteError, match="region starts at 10"):
        zd.to_zarrkit(
            da.zeros((80, 60), chunks=(45, 60)), array, region=(slice(10, 90), slice(None))
        )
    # a new array whose shards the blocks would share: refused, and nothing created
    with pytest.raises(UnsafeWriteError, match="dimension 1"):
        zd.to_zarrkit(
            da.zeros((100, 60), chunks=(50, 25)),
            str(tmp_path / "n.zarr"),
            chunks=(10, 10),
            shards=(50, 30),
        )
    assert not (tmp_path / "n.zarr").exists()


def test_aligned_region_edges_inside_a_shard_are_written(tmp_path: Path) -> None:
    """Only the boundaries between blocks matter: a region starting inside a shard whose
    blocks then meet on shard boundaries has one task per shard."""
    array = _sharded(tmp_path)
    zd.to_zarrkit(
        da.ones((80, 60), chunks=((40, 40), (60,))), array, region=(slice(10, 90), slice(None))
    )
    expected = _data()
    expected[10:90] = 1
    assert np.array_equal(array[...], expected)


def test_safe_chunks_false_writes_misaligned_blocks_on_threads(tmp_path: Path) -> None:
    array = _sharded(tmp_path)
    source = da.from_array(-_data(), chunks=(7, 13))
    with dask.config.set(scheduler="threads"):
        zd.to_zarrkit(source, array, safe_chunks=False)
    assert np.array_equal(array[...], -_data())


def test_writes_on_the_process_scheduler(tmp_path: Path) -> None:
    array = _sharded(tmp_path)
    with dask.config.set(scheduler="processes", num_workers=2):
        zd.to_zarrkit(da.from_array(_data() + 1, chunks=(50, 60)), array)
    assert np.array_equal(zarrkit.open_array(str(tmp_path / "s.zarr"))[...], _data() + 1)


def test_memory_target_on_the_process_scheduler_is_refused() -> None:
    array = zarrkit.create_array("memory://", shape=(10,), dtype="int8", chunks=(5,))
    with dask.config.set(scheduler="processes"):
        with pytest.raises(UnsafeWriteError, match="would be lost"):
            zd.to_zarrkit(da.ones(10, chunks=5, dtype="int8"), array)
    zd.to_zarrkit(da.ones(10, chunks=5, dtype="int8"), array, compute=True)
    assert array[...].tolist() == [1] * 10


def test_compute_false_and_return_stored(tmp_path: Path) -> None:
    delayed = zd.to_zarrkit(
        da.from_array(_data(), chunks=(50, 60)), str(tmp_path / "l.zarr"), compute=False
    )
    assert np.array_equal(zarrkit.open_array(str(tmp_path / "l.zarr"))[...], np.zeros((100, 60)))
    delayed.compute()
    assert np.array_equal(zarrkit.open_array(str(tmp_path / "l.zarr"))[...], _data())
    stored = zd.to_zarrkit(
        da.from_array(_data() * 3, chunks=(50, 60)),
        zarrkit.open_array(str(tmp_path / "l.zarr"), mode="r+"),
        return_stored=True,
    )
    assert np.array_equal(stored.compute(), _data() * 3)


def test_read_only_targets_are_refused(tmp_path: Path) -> None:
    _sharded(tmp_path)
    with pytest.raises(ReadOnlyError):
        zd.to_zarrkit(
            da.zeros((100, 60), chunks=(50, 60)), zarrkit.open_array(str(tmp_path / "s.zarr"))
        )
    with pytest.raises(ReadOnlyError):
        zd.to_zarrkit(da.zeros((100, 60), chunks=(50, 60)), str(tmp_path / "s.zarr"), mode="r")


def test_zip_writer_on_threads_and_its_refusal_on_processes(tmp_path: Path) -> None:
    """A zip store open for writing keeps its changes in this process: dask's threads write
    it; process workers are refused it (it unpickles only where it was pickled) rather than
    losing the writes."""
    url = f"zip://{tmp_path / 'd.zip'}"
    source = da.from_array(_data(), chunks=(50, 60))
    zd.to_zarrkit(source, url, chunks=(10, 20), shards=(50, 60))
    written = zarrkit.open_array(url, mode="r+")
    with dask.config.set(scheduler="processes", num_workers=2):
        with pytest.raises(StoreError, match="open for writing unpickles only in the process"):
            zd.to_zarrkit(source * 0, written)
    written.store.close()
    assert np.array_equal(zarrkit.open_array(url)[...], _data())


def test_v2_array_blocks_are_its_chunks(tmp_path: Path) -> None:
    array = zarrkit.create_array(
        str(tmp_path / "v2.zarr"), shape=(30, 30), dtype="<i8", chunks=(7, 30), zarr_format=2
    )
    array[...] = np.arange(900).reshape(30, 30)
    lazy = array.to_dask()
    assert lazy.chunks == ((7, 7, 7, 7, 2), (30,))
    assert int(lazy.sum().compute()) == sum(range(900))


def test_to_zarrkit_into_a_group(tmp_path: Path) -> None:
    group = zarrkit.create_group(str(tmp_path / "g.zarr")).create_group("sub")
    zd.to_zarrkit(
        da.from_array(_data(), chunks=(50, 60)), group, path="x", shards=(50, 60), chunks=(25, 30)
    )
    assert np.array_equal(zarrkit.open_array(str(tmp_path / "g.zarr"), path="sub/x")[...], _data())
    assert np.array_equal(zd.from_zarrkit(group, path="x").compute(), _data())
