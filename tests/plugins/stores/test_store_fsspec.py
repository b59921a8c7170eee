"""The fsspec store against a real S3 API (moto's server on 127.0.0.1, started here), fsspec's
memory filesystem, zarr-python reading and writing the same buckets, and network faults."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

pytest.importorskip("s3fs")
pytest.importorskip("moto.server")

from store_servers import Moto, Proxy, address, s3_options, serving
from zarrkit_testing.store_tests import StoreTests

import zarrkit as zk
from zarrkit.abc.store import ByteRange, Store
from zarrkit.errors import ReadOnlyError, StoreError, UnknownExtensionError
from zarrkit.plugins.stores.remote.fsspec import FsspecStore

pytestmark = pytest.mark.network

BUCKET = "zarrkit-tests"


@pytest.fixture(scope="module")
def proxy(moto: Moto) -> Iterator[Proxy]:
    """A proxy in front of moto that counts requests and injects faults."""
    with serving(Proxy(moto.address)) as server:
        yield server  # type: ignore[misc]


@pytest.fixture
def traffic(proxy: Proxy) -> Iterator[Any]:
    proxy.traffic.reset()
    yield proxy.traffic
    proxy.traffic.reset()


def _url() -> str:
    return f"s3://{BUCKET}/{uuid.uuid4().hex}/data.zarr"


# -- the conformance suite on S3 ---------------------------------------------------------------------
class TestS3Store(StoreTests):
    concurrent_writers = (4, 16)  # each write is a round trip to the S3 server
    overwrites = 6

    @pytest.fixture
    def store(self, moto: Moto) -> FsspecStore:
        return FsspecStore.from_url(_url(), mode="w", **s3_options(moto.endpoint))

    def store_reopen(self, store: Store) -> Store:
        assert isinstance(store, FsspecStore)
        endpoint = store.fs.client_kwargs["endpoint_url"]
        return FsspecStore.from_url(store.url, mode="r", **s3_options(endpoint))


# -- URLs and arrays ------------------------------------------------------------------------------
def test_open_s3_url_with_storage_options(moto: Moto) -> None:
    url = "fsspec+" + _url()
    options = s3_options(moto.endpoint)
    data = np.arange(1000, dtype="i4").reshape(20, 50)
    group = zk.open_group(url, mode="w", storage_options=options)
    array = group.create_array("a", shape=data.shape, chunks=(7, 11), dtype="i4", fill_value=-1)
    array[:] = data
    array[3:5, :] = -1  # chunks equal to the fill value are erased on S3 too
    reopened = zk.open(url, path="a", storage_options=options)
    assert isinstance(reopened.store, FsspecStore)
    expected = data.copy()
    expected[3:5, :] = -1
    np.testing.assert_array_equal(reopened[...], expected)
    assert [name for name, _ in zk.open_group(url, storage_options=options).members()] == ["a"]


def test_read_only_url_refuses_writes(moto: Moto) -> None:
    url = _url()
    zk.create_array(url, shape=(4,), dtype="u1", storage_options=s3_options(moto.endpoint))
    array = zk.open_array(url, storage_options=s3_options(moto.endpoint))
    with pytest.raises(ReadOnlyError):
        array[:] = 1


@pytest.mark.interop
def test_zarr_python_reads_what_zarrkit_wrote_on_s3(moto: Moto) -> None:
    import zarr

    url = _url()
    options = s3_options(moto.endpoint)
    data = np.linspace(0, 1, 600, dtype="f8").reshape(20, 30)
    array = zk.create_array(
        url,
        shape=data.shape,
        chunks=(6, 7),
        dtype="f8",
        attributes={"units": "m"},
        storage_options=options,
    )
    array[:] = data
    theirs = zarr.open_array(
        store=zarr.storage.FsspecStore.from_url(url, storage_options=options, read_only=True)
    )
    np.testing.assert_array_equal(theirs[...], data)
    assert theirs.attrs["units"] == "m"


@pytest.mark.interop
def test_zarrkit_reads_what_zarr_python_wrote_on_s3(moto: Moto) -> None:
    import zarr

    url = _url()
    options = s3_options(moto.endpoint)
    data = np.arange(2 * 30 * 40, dtype="<u2").reshape(2, 30, 40)
    store = zarr.storage.FsspecStore.from_url(url, storage_options=options, read_only=False)
    root = zarr.open_group(store=store, mode="w")
    theirs = root.create_array(
        "x", shape=data.shape, chunks=(1, 8, 16), dtype="<u2", shards=(2, 16, 32)
    )
    theirs[...] = data
    mine = zk.open_array(url, path="x", storage_options=options)
    np.testing.assert_array_equal(mine[...], data)
    np.testing.assert_array_equal(mine[1, 3:17, 5], data[1, 3:17, 5])


# -- batches: merged ranges, concurrent reads ------------------------------------------------------
def _through_proxy(proxy: Proxy, **extra: Any) -> dict[str, Any]:
    return s3_options(f"http://{address(proxy)}", **extra)


def test_get_ranges_merges_nearby_ranges_into_one_request(proxy: Proxy, traffic: Any) -> None:
    store = FsspecStore.from_url(_url(), mode="w", **_through_proxy(proxy))
    shard = bytes(range(256)) * 40
    store.set("shard", shard)
    traffic.reset()
    requests = [("shard", ByteRange(i * 100, 100)) for i in range(0, 100, 2)]  # gaps of 100 bytes
    answers = store.get_ranges(requests)
    assert answers == [shard[r.offset : r.offset + 100] for _, r in requests]  # type: ignore[union-attr]
    assert len(traffic.gets("shard")) == 1


def test_get_many_reads_concurrently(proxy: Proxy, traffic: Any) -> None:
    store = FsspecStore.from_url(_url(), mode="w", **_through_proxy(proxy))
    items = {f"c/{i}": bytes([i]) * 10 for i in range(16)}
    store.set_many(items)
    traffic.reset()
    traffic.delay = 0.1
    assert store.get_many(list(items)) == items
    # at least half of them in their delay at once: far from one request after another
    # (checked at the proxy rather than timed, which a loaded machine can stall)
    assert traffic.max_in_flight >= 8


# -- faults -----------------------------------------------------------------------------------------
def _array_through(proxy: Proxy) -> tuple[str, dict[str, Any], np.ndarray]:
    url = "fsspec+" + _url()  # (s3fs's retries and faults)
    options = _through_proxy(proxy)
    data = np.arange(64, dtype="f4").reshape(8, 8) + 1
    array = zk.create_array(
        url, shape=(8, 8), chunks=(4, 4), dtype="f4", fill_value=0, storage_options=options
    )
    array[:] = data
    return url, options, data


def test_5xx_answers_raise_store_error_naming_key_and_store(proxy: Proxy, traffic: Any) -> None:
    url, options, _ = _array_through(proxy)
    array = zk.open_array(url, storage_options=options)
    traffic.reset()
    traffic.always = 500
    with pytest.raises(StoreError) as info:
        array[...]
    message = str(info.value)
    assert "c/" in message and url.split("://", 1)[1] in message
    assert info.value.key is not None and info.value.key.startswith("c/")
    assert len(traffic.gets(info.value.key)) > 1  # retried before giving up


def test_transient_5xx_answers_are_retried(proxy: Proxy, traffic: Any) -> None:
    url, options, data = _array_through(proxy)
    array = zk.open_array(url, storage_options=options)
    traffic.reset()
    traffic.faults = [503]
    np.testing.assert_array_equal(array[...], data)
    assert len(traffic.gets(url.split("://", 1)[1])) == 4 + 1  # four chunks, one asked twice


def test_body_cut_short_raises_store_error(proxy: Proxy, traffic: Any) -> None:
    url, options, _ = _array_through(proxy)
    array = zk.open_array(url, storage_options=options)
    traffic.reset()
    traffic.always = "truncate"
    with pytest.raises(StoreError):
        array[0:4, 0:4]


def test_server_stopped_mid_read_never_gives_fill_values() -> None:
    """Reads race a server going away: each read is exact or raises StoreError."""
    server = Moto()
    stopper = None
    try:
        server.create_bucket(BUCKET)
        url = "fsspec+" + _url()
        options = s3_options(server.endpoint, attempts=1)
        data = np.arange(40 * 40, dtype="i8").reshape(40, 40) + 1
        array = zk.create_array(
            url, shape=data.shape, chunks=(5, 5), dtype="i8", fill_value=0, storage_options=options
        )
        array[:] = data
        reader = zk.open_array(url, storage_options=options)
        np.testing.assert_array_equal(reader[...], data)
        stopper = threading.Timer(0.2, server.stop)
        stopper.start()
        deadline = time.monotonic() + 30

        def read_until_it_fails() -> None:
            while time.monotonic() < deadline:  # each read is exact until one fails
                np.testing.assert_array_equal(reader[...], data)

        with pytest.raises(StoreError):
            read_until_it_fails()
    finally:
        if stopper is not None:
            stopper.join()
        server.stop()


# -- fsspec's other filesystems ------------------------------------------------------------------------
def test_fsspec_memory_filesystem_through_the_async_wrapper() -> None:
    url = f"fsspec+memory://zarrkit-{uuid.uuid4().hex}/data.zarr"
    data = np.arange(30, dtype="u2").reshape(5, 6)
    array = zk.create_array(url, shape=data.shape, chunks=(2, 4), dtype="u2")
    array[:] = data
    assert isinstance(array.store, FsspecStore)
    np.testing.assert_array_equal(zk.open_array(url)[...], data)
    store = array.store
    key = "c/0/0"
    whole = store.get(key)
    assert whole is not None
    assert store.get_ranges([(key, ByteRange(1, 3)), (key, None), ("missing", None)]) == [
        whole[1:4],
        whole,
        None,
    ]


def test_unknown_fsspec_protocol_is_a_clear_error() -> None:
    with pytest.raises(UnknownExtensionError, match="nosuchprotocol"):
        zk.open_group("fsspec+nosuchprotocol://x/y")
