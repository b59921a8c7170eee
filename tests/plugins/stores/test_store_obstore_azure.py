"""The obstore store against a real Azure Blob Storage API (Azurite, Microsoft's emulator, on
127.0.0.1: tests/support/azurite_server.py): the store contract, sharded arrays (Azure answers no
suffix ranges), zarr-python reading what zarrkit wrote, and plain `az://` URLs."""

from __future__ import annotations

import sys
import uuid
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

pytest.importorskip("obstore")

from azurite_server import read_end_while_replaced
from obstore_cases import QUICK_RETRIES, ObstoreStoreTests

import zarrkit as zk
from zarrkit.abc.store import ByteRange, SuffixRange
from zarrkit.errors import PluginLoadError, StoreError
from zarrkit.plugins.stores.remote.objectstore import ObstoreStore
from zarrkit.store_opening import open_store

pytestmark = pytest.mark.network

CONTAINER = "bed"  # (made by the `azurite` fixture)


def _url() -> str:
    return f"obstore+az://{CONTAINER}/{uuid.uuid4().hex}/data.zarr"


class TestObstoreAzure(ObstoreStoreTests):
    @pytest.fixture
    def store(self, azurite: Any) -> ObstoreStore:
        return ObstoreStore.from_url(_url(), mode="w", **azurite.options())


def test_suffix_ranges_are_read_though_azure_answers_none(azurite: Any) -> None:
    """Azure's API has no suffix range (`bytes=-n`): the store asks for the object's size, then
    for the range it ends with, as a suffix is answered elsewhere (the whole value when it is
    shorter than the suffix)."""
    store = ObstoreStore.from_url(_url(), mode="w", **azurite.options())
    value = bytes(range(200))
    store.set("k", value)
    assert store.get("k", SuffixRange(16)) == value[-16:]
    assert store.get("k", SuffixRange(500)) == value
    assert store.get_ranges([("k", SuffixRange(4)), ("k", ByteRange(10, 5))]) == [
        value[-4:],
        value[10:15],
    ]
    assert store.get("absent", SuffixRange(4)) is None


@pytest.fixture
def proxied(azurite: Any) -> Iterator[tuple[Any, dict[str, Any]]]:
    """A proxy in front of Azurite, and obstore's options through it, with quick retries."""
    with azurite.proxied() as (proxy, endpoint):
        yield proxy, azurite.options(endpoint=endpoint, retry_config=QUICK_RETRIES)


def test_a_suffix_read_by_size_never_mixes_two_values(
    azurite: Any, proxied: tuple[Any, dict[str, Any]]
) -> None:
    """The value is replaced between the size's request and the range's: the range is asked
    for only if the ETag read with the size still holds, so the read starts again and answers
    the new value's end, not a slice of the new value cut at the old one's size."""
    proxy, options = proxied
    url = _url()
    store = ObstoreStore.from_url(url, mode="w", **options)
    other = ObstoreStore.from_url(url, mode="w", **azurite.options())
    methods = read_end_while_replaced(store, other, proxy.traffic)
    assert methods == ["HEAD", "GET", "HEAD", "GET"]  # the first range refused (If-Match)


def _sharded(options: dict[str, Any]) -> tuple[str, np.ndarray]:
    url = _url()
    data = np.arange(32 * 32, dtype="i4").reshape(32, 32)
    zk.create_array(
        url, shape=data.shape, chunks=(8, 8), shards=(16, 16), dtype="i4", storage_options=options
    )[...] = data
    return url, data


def test_throttling_and_5xx_are_retried_then_a_store_error(
    proxied: tuple[Any, dict[str, Any]],
) -> None:
    """Azure throttles with 503 (ServerBusy): retried, the data comes back whole. A server that
    keeps failing ends in a StoreError naming the key and the operation, after retries."""
    proxy, options = proxied
    url, data = _sharded(options)
    array = zk.open_array(url, storage_options=options)
    proxy.traffic.faults = [503, 503]
    np.testing.assert_array_equal(array[2:30, 3:29], data[2:30, 3:29])
    proxy.traffic.always = 500
    with pytest.raises(StoreError) as info:
        array[...]
    assert info.value.key is not None and info.value.operation == "read"


@pytest.mark.parametrize("fault", ["truncate", "drop"])
def test_a_cut_answer_is_retried_or_a_store_error(
    proxied: tuple[Any, dict[str, Any]], fault: str
) -> None:
    proxy, options = proxied
    url, data = _sharded(options)
    array = zk.open_array(url, storage_options=options)
    proxy.traffic.faults = [fault]
    np.testing.assert_array_equal(array[...], data)  # once: obstore asks again
    proxy.traffic.always = fault
    with pytest.raises(StoreError) as info:
        array[...]
    assert info.value.key is not None


def test_sharded_arrays_round_trip_and_zarr_python_reads_them(azurite: Any) -> None:
    url = _url()
    data = np.arange(64 * 48, dtype="f8").reshape(64, 48)
    a = zk.create_array(
        url,
        shape=data.shape,
        chunks=(8, 8),
        shards=(32, 24),
        dtype="f8",
        storage_options=azurite.options(),
    )
    a[...] = data
    a[3:9, 40:47] = -1.0  # a partial write of a shard: its index is read back, then rewritten
    data[3:9, 40:47] = -1.0
    ours = zk.open_array(url, storage_options=azurite.options())
    np.testing.assert_array_equal(ours[5:60, 7:45], data[5:60, 7:45])  # inner chunks by range
    np.testing.assert_array_equal(ours[...], data)

    zarr = pytest.importorskip("zarr")
    from obstore.store import AzureStore

    prefix = url.split(f"{CONTAINER}/", 1)[1]
    theirs = zarr.open_array(
        zarr.storage.ObjectStore(AzureStore(CONTAINER, prefix=prefix, **azurite.options())),
        mode="r",
    )
    np.testing.assert_array_equal(theirs[...], data)


def test_zarrkit_reads_what_zarr_python_writes(azurite: Any) -> None:
    zarr = pytest.importorskip("zarr")
    from obstore.store import AzureStore

    prefix = f"{uuid.uuid4().hex}/theirs.zarr"
    data = np.arange(30 * 20, dtype="i4").reshape(30, 20)
    theirs = zarr.create_array(
        zarr.storage.ObjectStore(AzureStore(CONTAINER, prefix=prefix, **azurite.options())),
        shape=data.shape,
        chunks=(5, 5),
        shards=(10, 10),
        dtype="i4",
    )
    theirs[...] = data
    ours = zk.open_array(f"obstore+az://{CONTAINER}/{prefix}", storage_options=azurite.options())
    np.testing.assert_array_equal(ours[2:29, 3:17], data[2:29, 3:17])


def test_plain_az_urls_open_obstore_without_adlfs(
    azurite: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without adlfs, `az://` opens obstore's store rather than failing for want of fsspec's
    filesystem."""
    monkeypatch.setitem(sys.modules, "adlfs", None)  # (not installed, whatever this venv has)
    url = _url().replace("obstore+", "")
    store = open_store(url, mode="w", storage_options=azurite.options())
    assert isinstance(store, ObstoreStore)
    a = zk.create_array(
        url, shape=(10,), chunks=(5,), dtype="i2", storage_options=azurite.options()
    )
    a[...] = np.arange(10, dtype="i2")
    assert zk.open_array(url, storage_options=azurite.options())[3:8].tolist() == [3, 4, 5, 6, 7]


@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded")
def test_a_forked_child_is_told_how_to_open_az_urls(
    azurite: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """obstore's runtime does not survive a fork, and without adlfs `az://` has no other
    backend: a child forked after its parent used obstore gets an error saying what to do,
    not a hang."""
    from process_cases import in_fork

    monkeypatch.setitem(sys.modules, "adlfs", None)
    url = _url().replace("obstore+", "")
    zk.create_array(url, shape=(4,), dtype="i1", storage_options=azurite.options())[...] = 1

    def child() -> str:
        try:
            zk.open_array(url, storage_options=azurite.options())
        except PluginLoadError as exc:
            return str(exc)
        return "opened"

    said = in_fork(child)
    assert "forked" in said and "spawn" in said and "adlfs" in said


def test_stores_in_one_container_share_a_client_and_keep_their_keys(azurite: Any) -> None:
    one = ObstoreStore.from_url(_url(), mode="w", **azurite.options())
    two = ObstoreStore.from_url(_url(), mode="w", **azurite.options())
    assert one.backend is two.backend and one.root != two.root
    one.set("k", b"1")
    assert two.get("k") is None and one.get("k") == b"1"


def test_a_missing_container_is_a_store_error_naming_the_key(azurite: Any) -> None:
    store = ObstoreStore.from_url(
        f"obstore+az://no-such-{uuid.uuid4().hex[:8]}/x.zarr", mode="w", **azurite.options()
    )
    with pytest.raises(StoreError) as info:
        store.set("zarr.json", b"{}")
    assert info.value.key == "zarr.json" and info.value.operation == "write"
