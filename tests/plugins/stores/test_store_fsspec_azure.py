"""The fsspec store on Azure (adlfs) against Azurite, Microsoft's emulator on 127.0.0.1
(tests/support/azurite_server.py): the store contract, and sharded arrays, whose index is the end of
a shard and Azure answers no suffix range. Plain `az://` opens this store where adlfs is
installed (`cloud_routing`)."""

from __future__ import annotations

import uuid
from typing import Any

import numpy as np
import pytest

pytest.importorskip("adlfs")

from azurite_server import read_end_while_replaced
from zarrkit_testing.store_tests import StoreTests

import zarrkit as zk
from zarrkit.abc.store import Store, SuffixRange
from zarrkit.plugins.stores.remote.fsspec import FsspecStore
from zarrkit.store_opening import open_store

pytestmark = pytest.mark.network

CONTAINER = "bed"  # (made by the `azurite` fixture)


def _url() -> str:
    return f"az://{CONTAINER}/{uuid.uuid4().hex}/data.zarr"


class TestFsspecAzure(StoreTests):
    concurrent_writers = (4, 16)  # each write is a round trip to the server
    overwrites = 6

    @pytest.fixture
    def store(self, azurite: Any) -> FsspecStore:
        return FsspecStore.from_url(_url(), mode="w", **azurite.fsspec_options())

    def store_reopen(self, store: Store) -> Store:
        assert isinstance(store, FsspecStore)
        options = {"connection_string": store.fs.connection_string}
        return FsspecStore.from_url(store.url, mode="r", **options)


def test_plain_az_urls_open_fsspec_where_adlfs_is_installed(azurite: Any) -> None:
    store = open_store(_url(), mode="w", storage_options=azurite.fsspec_options())
    assert isinstance(store, FsspecStore)


def test_a_suffix_read_by_size_never_mixes_two_values(azurite: Any) -> None:
    """The value is replaced between the size's request and the range's. adlfs cannot make
    the range conditional, so the ETag is asked again after it: it changed, and the read
    starts again, answering the new value's end."""
    with azurite.proxied() as (proxy, endpoint):
        through = azurite.fsspec_options()
        through["connection_string"] = through["connection_string"].replace(
            azurite.endpoint, endpoint
        )
        url = _url()
        store = FsspecStore.from_url(url, mode="w", **through)
        other = FsspecStore.from_url(url, mode="w", **azurite.fsspec_options())
        methods = read_end_while_replaced(store, other, proxy.traffic)
    assert methods == ["HEAD", "GET", "HEAD"] * 2  # the first ETags differ: again


def test_sharded_arrays_round_trip_and_zarr_python_reads_them(azurite: Any) -> None:
    url = _url()
    options = azurite.fsspec_options()
    data = np.arange(64 * 48, dtype="f8").reshape(64, 48)
    a = zk.create_array(
        url, shape=data.shape, chunks=(8, 8), shards=(32, 24), dtype="f8", storage_options=options
    )
    a[...] = data
    a[3:9, 40:47] = -1.0  # a partial write of a shard: its index read back, then rewritten
    data[3:9, 40:47] = -1.0
    ours = zk.open_array(url, storage_options=options)
    np.testing.assert_array_equal(ours[5:60, 7:45], data[5:60, 7:45])
    assert ours.store.get("c/0/0", SuffixRange(16)) is not None  # (the index: by size)
    zarr = pytest.importorskip("zarr")
    theirs = zarr.open_array(url, mode="r", storage_options=options)
    np.testing.assert_array_equal(theirs[...], data)
