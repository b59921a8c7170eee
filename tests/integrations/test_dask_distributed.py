"""zarrkit on a real dask.distributed cluster of two worker processes: read and write a sharded
array on the local filesystem and on S3 (moto), with nothing logged at warning level or above on
the workers (Python warnings and every library's logs included)."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from store_servers import Moto, s3_options

import zarrkit

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")
zd = pytest.importorskip("zarrkit.dask")

pytestmark = pytest.mark.network

BUCKET = "distributed"
#: what a loaded machine makes the cluster say about itself, whatever the tasks do
_HEALTH = ("Event loop was unresponsive", "full garbage collections took")


def _log_everything(dask_worker: Any) -> None:
    """Route Python warnings and all loggers into the log the worker keeps for the client."""
    logging.captureWarnings(True)
    root = logging.getLogger()
    if dask_worker._deque_handler not in root.handlers:
        root.addHandler(dask_worker._deque_handler)


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    # dashboard on a free port: 8787 may be another cluster's, and distributed warns then
    with distributed.LocalCluster(
        processes=True, n_workers=2, threads_per_worker=1, dashboard_address=":0", host="127.0.0.1"
    ) as cluster:
        with distributed.Client(cluster) as client:
            client.run(_log_everything)
            yield client


@pytest.fixture(autouse=True)
def quiet_workers(client: Any) -> Iterator[None]:
    """Fails the test if a worker logged a warning (or worse) while it ran."""
    client.run(_clear_log)
    yield
    assert not _loud(client)


def _clear_log(dask_worker: Any) -> None:
    dask_worker._deque_handler.clear()


def _loud(client: Any) -> list[tuple[str, str, str]]:
    return [
        (worker, level, message)
        for worker, logs in client.get_worker_logs().items()
        for level, message in logs
        if logging.getLevelName(level) >= logging.WARNING and not any(h in message for h in _HEALTH)
    ]


def _warn() -> int:
    import warnings

    warnings.warn("a warning raised in a task", RuntimeWarning, stacklevel=2)
    return 1


def test_a_warning_in_a_task_is_seen(client: Any) -> None:
    """The check above can fail: a task's warning reaches the worker log the client reads."""
    assert client.submit(_warn, pure=False).result() == 1
    assert any("a warning raised in a task" in m for _, _, m in _loud(client))
    client.run(_clear_log)


def _data() -> np.ndarray:
    return np.arange(256 * 192, dtype="float32").reshape(256, 192)


def _round_trip(target: str, options: dict | None) -> None:
    """Write a sharded array from dask blocks on the workers, read it back lazily there."""
    source = da.from_array(_data(), chunks=(64, 96))
    zd.to_zarrkit(
        source,
        target,
        chunks=(32, 48),
        shards=(64, 96),
        storage_options=options,
        dimension_names=["y", "x"],
    )
    array = zarrkit.open_array(target, storage_options=options)
    assert array.shards == (64, 96) and np.array_equal(array[...], _data())

    lazy = zd.from_zarrkit(target, storage_options=options)
    assert lazy.numblocks == (4, 2)
    assert float(lazy.sum().compute()) == float(_data().sum())
    assert np.array_equal(lazy[30:200:3, 5:150].compute(), _data()[30:200:3, 5:150])

    # a region of whole shards rewritten from the workers
    zd.to_zarrkit(
        -lazy[64:192],
        zarrkit.open_array(target, mode="r+", storage_options=options),
        region=(slice(64, 192), slice(None)),
    )
    expected = _data()
    expected[64:192] *= -1
    assert np.array_equal(zarrkit.open_array(target, storage_options=options)[...], expected)


def test_local_filesystem(client: Any, tmp_path: Path) -> None:
    _round_trip(str(tmp_path / "sharded.zarr"), None)


def test_s3(client: Any, moto: Moto) -> None:
    _round_trip(f"s3://{BUCKET}/{uuid.uuid4().hex}/sharded.zarr", s3_options(moto.endpoint))


def test_misaligned_write_is_refused_on_the_cluster(client: Any, tmp_path: Path) -> None:
    target = str(tmp_path / "m.zarr")
    with pytest.raises(zarrkit.errors.UnsafeWriteError, match="dimension 0"):
        zd.to_zarrkit(
            da.zeros((256, 192), chunks=(100, 96)), target, chunks=(32, 48), shards=(64, 96)
        )


def test_memory_store_write_is_refused_on_the_cluster(client: Any) -> None:
    array = zarrkit.create_array("memory://", shape=(8,), dtype="int8", chunks=(4,))
    with pytest.raises(zarrkit.errors.UnsafeWriteError, match="would be lost"):
        zd.to_zarrkit(da.ones(8, chunks=4, dtype="int8"), array)


def _dataset() -> Any:
    xr = pytest.importorskip("xarray")
    time = np.array("2020-01-01", dtype="datetime64[ns]") + np.arange(12) * np.timedelta64(1, "D")
    return xr.Dataset(
        {
            "t": (("time", "y", "x"), np.random.default_rng(1).random((12, 64, 48), "float32")),
            "flag": (("time",), np.arange(12, dtype="int16")),
        },
        coords={"time": time, "y": np.arange(64), "x": np.arange(48) * 0.5},
        attrs={"title": "on the cluster"},
    )


@pytest.mark.parametrize("store", ["local", "s3"])
def test_xarray_dataset_with_chunks(client: Any, tmp_path: Path, moto: Moto, store: str) -> None:
    """A dataset written through zarrkit, opened with engine="zarrkit" and `chunks=`, reduced
    and written again on the workers: the same as the eager data, and as zarr-python's engine."""
    xr = pytest.importorskip("xarray")
    from zarrkit.xarray import to_zarrkit

    if store == "local":
        target, options = str(tmp_path / "ds.zarr"), None
    else:
        target = f"s3://{BUCKET}/{uuid.uuid4().hex}/ds.zarr"
        options = s3_options(moto.endpoint)
    ds = _dataset()
    to_zarrkit(
        ds,
        target,
        mode="w",
        storage_options=options,
        encoding={"t": {"chunks": (3, 32, 48), "shards": (6, 64, 48)}},
    )

    lazy = xr.open_dataset(target, engine="zarrkit", chunks={}, storage_options=options)
    theirs = xr.open_dataset(target, engine="zarr", chunks={}, storage_options=options)
    assert lazy["t"].chunks == theirs["t"].chunks == ((3,) * 4, (32, 32), (48,))
    mean = lazy["t"].mean(dim=("y", "x")).compute()  # read on the workers
    xr.testing.assert_allclose(mean, ds["t"].mean(dim=("y", "x")))
    xr.testing.assert_identical(lazy.compute(), ds)

    # written back from the workers, block by block, then read by zarr-python's engine
    again = f"{target[: -len('ds.zarr')]}again.zarr"
    to_zarrkit(lazy * 2, again, mode="w", storage_options=options)
    xr.testing.assert_identical(
        xr.open_dataset(again, engine="zarr", storage_options=options).load(),
        xr.open_dataset(again, engine="zarrkit", storage_options=options).load(),
    )
    xr.testing.assert_allclose(
        xr.open_dataset(again, engine="zarr", storage_options=options)["t"], ds["t"] * 2
    )
