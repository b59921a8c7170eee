"""zarr-python's `zarr.storage.ObjectStore` (over obstore: S3 against moto's server, and the
local filesystem) as a zarrkit store through the zarr-python bridge, and zarrkit's own stores
read by zarr-python over the same bytes: written by one, read by the other, value for value."""

from __future__ import annotations

import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("obstore")
pytest.importorskip("moto.server")
zarr = pytest.importorskip("zarr")

import obstore.store  # noqa: E402
from zarrkit_testing.store_tests import StoreTests  # noqa: E402

import zarrkit as zk  # noqa: E402
from zarrkit.abc.store import Store  # noqa: E402
from zarrkit.errors import StoreError  # noqa: E402
from zarrkit.plugins.stores.adapters.zarr_python import ZarrPythonStore  # noqa: E402
from zarrkit.plugins.stores.remote.objectstore import ObstoreStore  # noqa: E402
from zarrkit.store_opening import open_store  # noqa: E402

pytestmark = pytest.mark.interop  # through zarr-python 3

BUCKET = "obstore-zarr"


def _s3(moto: Any, prefix: str, bucket: str = BUCKET) -> Any:
    return obstore.store.S3Store(
        bucket,
        prefix=prefix,
        endpoint=moto.endpoint,
        access_key_id="testing",
        secret_access_key="testing",
        region="us-east-1",
        client_options={"allow_http": True, "timeout": "10s"},
        retry_config={"max_retries": 1, "retry_timeout": timedelta(seconds=3)},
    )


def _object_store(backend: Any, read_only: bool = False) -> Any:
    return zarr.storage.ObjectStore(backend, read_only=read_only)


class TestBridgeOverObjectStoreS3(StoreTests):
    concurrent_writers = (4, 10)

    @pytest.fixture
    def store(self, moto: Any) -> Store:
        self.prefix = f"suite/{uuid.uuid4().hex}"
        return open_store(_object_store(_s3(moto, self.prefix)), mode="w")

    def store_reopen(self, store: Store) -> Store:
        assert isinstance(store, ZarrPythonStore)
        return open_store(_object_store(store.inner.store, read_only=True), mode="r")


class TestBridgeOverObjectStoreLocal(StoreTests):
    concurrent_writers = (4, 10)

    @pytest.fixture
    def store(self, tmp_path: Path) -> Store:
        backend = obstore.store.LocalStore(tmp_path / "o", mkdir=True)
        return open_store(_object_store(backend), mode="w")

    def store_reopen(self, store: Store) -> Store:
        assert isinstance(store, ZarrPythonStore)
        return open_store(_object_store(store.inner.store, read_only=True), mode="r")


def _backends(moto: Any, tmp_path: Path) -> dict[str, Any]:
    return {
        "s3": _s3(moto, f"data/{uuid.uuid4().hex}"),
        "local": obstore.store.LocalStore(tmp_path / "o", mkdir=True),
    }


DATA = {
    "f4": np.linspace(0, 1, 7 * 9, dtype="f4").reshape(7, 9),
    "i8": np.arange(-31, 32, dtype="i8").reshape(7, 9),
}


@pytest.mark.parametrize("where", ["s3", "local"])
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_zarrkit_writes_zarr_python_reads(
    moto: Any, tmp_path: Path, where: str, zarr_format: int
) -> None:
    backend = _backends(moto, tmp_path)[where]
    root = zk.open_group(_object_store(backend), mode="w", zarr_format=zarr_format)
    root.attrs["by"] = "zarrkit"
    for name, data in DATA.items():
        root.create_array(name, shape=data.shape, chunks=(3, 4), dtype=data.dtype)[...] = data
    theirs = zarr.open_group(_object_store(backend, read_only=True), mode="r")
    assert theirs.attrs["by"] == "zarrkit"
    for name, data in DATA.items():
        got = theirs[name][...]
        assert got.dtype == data.dtype and np.array_equal(got, data)


@pytest.mark.parametrize("where", ["s3", "local"])
def test_zarr_python_writes_zarrkit_reads_and_updates(
    moto: Any, tmp_path: Path, where: str
) -> None:
    backend = _backends(moto, tmp_path)[where]
    group = zarr.open_group(_object_store(backend), mode="w")
    for name, data in DATA.items():
        group.create_array(name, shape=data.shape, chunks=(2, 5), dtype=data.dtype)[...] = data
    ours = zk.open_group(_object_store(backend), mode="a")
    for name, data in DATA.items():
        assert np.array_equal(ours[name][...], data)
        assert np.array_equal(ours[name][1:6, 2:8], data[1:6, 2:8])
    ours["i8"][3:5, 1:7] = 0  # partial chunks: read, merged, written back
    expected = DATA["i8"].copy()
    expected[3:5, 1:7] = 0
    assert np.array_equal(zarr.open_group(_object_store(backend))["i8"][...], expected)


def test_a_missing_bucket_is_a_store_error_naming_the_key(moto: Any) -> None:
    missing = _object_store(_s3(moto, "x", bucket="no-such-bucket"))
    with pytest.raises(StoreError) as raised:
        zk.create_array(missing, shape=(2,), chunks=(2,), dtype="u1")
    assert raised.value.key == "zarr.json"


# -- obstore's own store objects, taken by zarrkit's obstore store directly ------------------------
class TestObstoreObjectLocal(StoreTests):
    concurrent_writers = (4, 10)

    @pytest.fixture
    def store(self, tmp_path: Path) -> Store:
        store = open_store(obstore.store.LocalStore(tmp_path / "raw", mkdir=True), mode="w")
        assert isinstance(store, ObstoreStore)
        return store


def test_an_obstore_object_is_read_by_zarrkit_and_zarr_python(moto: Any) -> None:
    backend = _s3(moto, f"raw/{uuid.uuid4().hex}")
    data = np.arange(30, dtype="<u2").reshape(5, 6)
    zk.create_array(backend, shape=data.shape, chunks=(2, 4), dtype=data.dtype)[...] = data
    assert type(open_store(backend)) is ObstoreStore  # not through zarr-python's bridge
    assert np.array_equal(zk.open_array(backend)[...], data)
    assert np.array_equal(zarr.open_array(_object_store(backend), mode="r")[...], data)
