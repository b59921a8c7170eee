"""The obstore store against a real S3 API (moto's server on 127.0.0.1) and a real HTTP file
server, through the proxies of the latency test bed (tests/store_servers.py `NetBed`) where
requests are counted and faults injected."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("obstore")
pytest.importorskip("moto.server")

from store_servers import NetBed

import zarrkit as zk
from zarrkit import config
from zarrkit.errors import ReadOnlyError, StoreError
from zarrkit.plugins.stores.objectstore import ObstoreStore
from zarrkit.store import ByteRange
from zarrkit.store_opening import open_store
from zarrkit.testing.store_tests import StoreTests

pytestmark = pytest.mark.network


@pytest.fixture(scope="module")
def bed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NetBed]:
    with NetBed(tmp_path_factory.mktemp("served")) as server:
        yield server


@pytest.fixture
def net(bed: NetBed) -> Iterator[NetBed]:
    for proxy in (bed.s3_proxy, bed.http_proxy):
        proxy.traffic.reset()
    yield bed
    for proxy in (bed.s3_proxy, bed.http_proxy):
        proxy.traffic.reset()


def options(bed: NetBed, **extra: Any) -> dict[str, Any]:
    """obstore's S3 options for the proxied moto server: few, quick retries."""
    return {
        "endpoint": bed.s3_endpoint,
        "access_key_id": "testing",
        "secret_access_key": "testing",
        "region": "us-east-1",
        "client_options": {"allow_http": True, "timeout": "10s"},
        "retry_config": {
            "max_retries": 2,
            "retry_timeout": timedelta(seconds=5),
            "backoff": {
                "init_backoff": timedelta(milliseconds=10),
                "max_backoff": timedelta(milliseconds=100),
                "base": 2,
            },
        },
        **extra,
    }


def _url(bed: NetBed) -> str:
    return f"obstore+s3://{bed.bucket}/{uuid.uuid4().hex}/data.zarr"


class TestObstoreS3(StoreTests):
    concurrent_writers = (4, 16)
    overwrites = 6

    @pytest.fixture
    def store(self, bed: NetBed) -> ObstoreStore:
        return ObstoreStore.from_url(_url(bed), mode="w", **options(bed))

    def store_reopen(self, store: ObstoreStore) -> ObstoreStore:
        return ObstoreStore(store.backend, mode="r", url=store.url)


def test_arrays_round_trip_and_zarr_python_reads_them(net: NetBed) -> None:
    url = _url(net)
    data = np.arange(40 * 30, dtype="f8").reshape(40, 30)
    a = zk.create_array(
        url,
        shape=data.shape,
        chunks=(16, 16),
        shards=(32, 32),
        dtype="f8",
        storage_options=options(net),
    )
    a[...] = data
    np.testing.assert_array_equal(
        zk.open_array(url, storage_options=options(net))[3:37, 5:9], data[3:37, 5:9]
    )
    zarr = pytest.importorskip("zarr")
    from store_servers import s3_options

    fs_url = url.replace("obstore+", "")
    theirs = zarr.open_array(
        fs_url,
        mode="r",
        storage_options={
            "key": "testing",
            "secret": "testing",
            "client_kwargs": {"endpoint_url": net.s3_endpoint, "region_name": "us-east-1"},
        },
    )
    np.testing.assert_array_equal(theirs[...], data)
    assert s3_options  # (the fsspec spelling of the same server)


def test_s3_urls_go_to_obstore_by_configuration(net: NetBed) -> None:
    url = _url(net)
    with config.override(store_schemes={"s3": "obstore+s3"}):
        store = open_store(url.replace("obstore+", ""), mode="w", storage_options=options(net))
    assert isinstance(store, ObstoreStore)


def test_s3_urls_go_to_obstore_by_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZARRKIT_STORE_SCHEMES", "s3=obstore+s3; gs=obstore+gs")
    assert config.Settings().store_schemes == {"s3": "obstore+s3", "gs": "obstore+gs"}
    monkeypatch.setenv("ZARRKIT_STORE_SCHEMES", "s3")
    with pytest.raises(ValueError, match="ZARRKIT_STORE_SCHEMES"):
        config.Settings()


def test_http_reads_through_obstore(net: NetBed, tmp_path_factory: Any) -> None:
    root = Path(net.files.root)
    data = np.arange(100, dtype="i4")
    zk.create_array(str(root / "h.zarr"), shape=(100,), chunks=(10,), dtype="i4")[...] = data
    url = f"obstore+{net.http_url}/h.zarr"
    a = zk.open_array(url, storage_options={"client_options": {"allow_http": True}})
    np.testing.assert_array_equal(a[5:95], data[5:95])
    with pytest.raises(ReadOnlyError):
        a.store.set("x", b"1")


def test_get_ranges_merges_nearby_ranges_into_one_request(net: NetBed) -> None:
    store = ObstoreStore.from_url(_url(net), mode="w", **options(net))
    shard = bytes(range(256)) * 40
    store.set("shard", shard)
    net.s3_proxy.traffic.reset()
    requests = [("shard", ByteRange(i * 100, 100)) for i in range(0, 100, 2)]
    assert store.get_ranges(requests) == [shard[r.offset : r.offset + 100] for _, r in requests]
    assert len(net.s3_proxy.traffic.gets("shard")) == 1


def _array(net: NetBed) -> tuple[str, np.ndarray]:
    url = _url(net)
    data = np.arange(64, dtype="f4").reshape(8, 8) + 1
    zk.create_array(
        url, shape=(8, 8), chunks=(4, 4), dtype="f4", fill_value=0, storage_options=options(net)
    )[...] = data
    return url, data


def test_5xx_answers_raise_store_error_naming_key_and_operation(net: NetBed) -> None:
    url, _ = _array(net)
    array = zk.open_array(url, storage_options=options(net))
    net.s3_proxy.traffic.always = 500
    with pytest.raises(StoreError) as info:
        array[...]
    assert info.value.key is not None and info.value.key.startswith("c/")
    assert info.value.operation == "read" and "read" in str(info.value)
    assert len(net.s3_proxy.traffic.gets(info.value.key)) > 1  # retried before giving up


def test_throttling_is_retried(net: NetBed) -> None:
    url, data = _array(net)
    array = zk.open_array(url, storage_options=options(net))
    net.s3_proxy.traffic.faults = [503, 503]
    np.testing.assert_array_equal(array[...], data)


@pytest.mark.parametrize("fault", ["truncate", "drop"])
def test_a_cut_answer_is_retried_or_a_store_error(net: NetBed, fault: str) -> None:
    url, data = _array(net)
    array = zk.open_array(url, storage_options=options(net))
    net.s3_proxy.traffic.faults = [fault]
    np.testing.assert_array_equal(array[...], data)  # once: obstore asks again
    net.s3_proxy.traffic.always = fault
    with pytest.raises(StoreError) as info:
        array[...]
    assert info.value.key is not None
