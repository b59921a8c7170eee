"""The standard-library HTTP store against a real HTTP server on 127.0.0.1 (started here):
read-only conformance, arrays and groups by path, listing refused, faults, merged ranges."""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from store_servers import FileServer, address, serving
from zarrkit_testing.store_tests import ReadableStoreTests

import zarrkit as zk
from zarrkit.abc.store import ByteRange, Store, SuffixRange
from zarrkit.errors import CapabilityError, ReadOnlyError, StoreError
from zarrkit.plugins.stores.local.local import LocalStore
from zarrkit.plugins.stores.remote.http import HttpStore

pytestmark = pytest.mark.network


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("www")


@pytest.fixture(scope="module")
def server(served: Path) -> Iterator[FileServer]:
    with serving(FileServer(served)) as running:
        yield running  # type: ignore[misc]


@pytest.fixture
def traffic(server: FileServer) -> Iterator[Any]:
    server.traffic.reset()
    yield server.traffic
    server.traffic.reset()


def _place(served: Path) -> tuple[str, Path]:
    name = uuid.uuid4().hex
    return name, served / name


class TestHttpStore(ReadableStoreTests):
    @pytest.fixture
    def store_with(self, served: Path, server: FileServer) -> Any:
        def fill(items: Mapping[str, bytes]) -> Store:
            name, folder = _place(served)
            LocalStore(folder, mode="w").set_many(items)
            return HttpStore(f"http://{address(server)}/{name}")

        return fill


# -- arrays and groups over HTTP ------------------------------------------------------------------
def _hierarchy(served: Path, server: FileServer) -> tuple[str, np.ndarray]:
    name, folder = _place(served)
    data = np.arange(12 * 10, dtype="<f8").reshape(12, 10)
    root = zk.open_group(str(folder), mode="w", attributes={"title": "over http"})
    array = root.create_group("g").create_array(
        "a", shape=data.shape, chunks=(5, 4), dtype="f8", fill_value=-1
    )
    array[:] = data
    return f"http://{address(server)}/{name}", data


def test_open_arrays_and_groups_by_path(served: Path, server: FileServer) -> None:
    url, data = _hierarchy(served, server)
    array = zk.open_array(url, path="g/a")
    assert isinstance(array.store, HttpStore)
    np.testing.assert_array_equal(array[...], data)
    np.testing.assert_array_equal(array[3:9, 7], data[3:9, 7])
    group = zk.open_group(url)
    assert group.attrs["title"] == "over http"
    np.testing.assert_array_equal(group["g"]["a"][2:4], data[2:4])


def test_listing_members_needs_a_listable_store(served: Path, server: FileServer) -> None:
    url, _ = _hierarchy(served, server)
    with pytest.raises(CapabilityError, match="list"):
        list(zk.open_group(url).members())


def test_writes_are_refused(served: Path, server: FileServer) -> None:
    url, data = _hierarchy(served, server)
    with pytest.raises(ReadOnlyError):
        zk.open_array(url, path="g/a", mode="r+")[0, 0] = 5
    with pytest.raises(ReadOnlyError):
        zk.create_array(url, path="new", shape=(3,), dtype="u1")
    np.testing.assert_array_equal(zk.open_array(url, path="g/a")[...], data)


def test_keys_are_percent_encoded(served: Path, server: FileServer, traffic: Any) -> None:
    name, folder = _place(served)
    LocalStore(folder, mode="w").set("a b/ü?#", b"odd")
    store = HttpStore(f"http://{address(server)}/{name}")
    assert store.get("a b/ü?#") == b"odd"
    assert traffic.gets()[-1][1] == f"/{name}/a%20b/%C3%BC%3F%23"


# -- batches ---------------------------------------------------------------------------------------
def test_get_ranges_merges_nearby_ranges(served: Path, server: FileServer, traffic: Any) -> None:
    name, folder = _place(served)
    shard = bytes(range(256)) * 64
    LocalStore(folder, mode="w").set("shard", shard)
    store = HttpStore(f"http://{address(server)}/{name}")
    requests = [("shard", ByteRange(i * 128, 100)) for i in range(100)]
    assert store.get_ranges(requests) == [shard[i * 128 : i * 128 + 100] for i in range(100)]
    assert len(traffic.gets("shard")) == 1


def test_get_many_runs_requests_concurrently(
    served: Path, server: FileServer, traffic: Any
) -> None:
    name, folder = _place(served)
    items = {f"c/{i}": bytes([i]) * 3 for i in range(16)}
    LocalStore(folder, mode="w").set_many(items)
    store = HttpStore(f"http://{address(server)}/{name}", max_workers=8)
    traffic.delay = 0.1
    assert store.get_many(list(items)) == items
    # as many in their delay at once as the store has workers (checked at the proxy rather
    # than timed, which a loaded machine can stall)
    assert traffic.max_in_flight == 8


@pytest.mark.parametrize("backend", ["stdlib", "fsspec"])
def test_server_ignoring_range_is_cut_locally(tmp_path: Path, backend: str) -> None:
    LocalStore(tmp_path, mode="w").set("k", bytes(range(100)))
    with serving(FileServer(tmp_path, ignore_range=True)) as plain:
        if backend == "fsspec":
            pytest.importorskip("aiohttp")
            from zarrkit.store_opening import open_store

            store: Store = open_store(f"fsspec+http://{address(plain)}")
        else:
            store = HttpStore(f"http://{address(plain)}")
        assert store.get("k", ByteRange(10, 5)) == bytes(range(10, 15))
        assert store.get("k", SuffixRange(3)) == bytes([97, 98, 99])
        assert store.get("k", ByteRange(95)) == bytes(range(95, 100))
        assert store.get_ranges([("k", ByteRange(0, 2)), ("k", ByteRange(98, 10))]) == [
            b"\x00\x01",
            b"\x62\x63",
        ]


# -- faults ----------------------------------------------------------------------------------------
def test_transient_5xx_and_dropped_connections_are_retried(
    served: Path, server: FileServer, traffic: Any
) -> None:
    url, data = _hierarchy(served, server)
    array = zk.open_array(url, path="g/a")
    traffic.reset()
    traffic.faults = [503, "drop", 500]
    np.testing.assert_array_equal(array[...], data)
    assert len(traffic.requests) == 9 + 3  # nine chunks, three faults retried


def test_persistent_5xx_raises_store_error_not_fill_values(
    served: Path, server: FileServer, traffic: Any
) -> None:
    url, _ = _hierarchy(served, server)
    array = zk.open_array(url, path="g/a")
    store = array.store
    assert isinstance(store, HttpStore)
    store.backoff = 0.01
    traffic.always = 500
    with pytest.raises(StoreError) as info:
        array[...]
    assert info.value.key is not None and info.value.key.startswith("g/a/c/")
    assert url in str(info.value) and "HTTP 500" in str(info.value)


def test_body_cut_short_raises_store_error(served: Path, server: FileServer, traffic: Any) -> None:
    url, _ = _hierarchy(served, server)
    store = HttpStore(url, backoff=0.01)
    traffic.always = "truncate"
    with pytest.raises(StoreError, match="g/a/zarr.json"):
        store.get("g/a/zarr.json")


def test_server_gone_raises_store_error(tmp_path: Path) -> None:
    LocalStore(tmp_path, mode="w").set("k", b"v")
    with serving(FileServer(tmp_path)) as gone:
        store = HttpStore(f"http://{address(gone)}", backoff=0.01, retries=1)
        assert store.get("k") == b"v"
    with pytest.raises(StoreError, match="'k'"):
        store.get("k")
    with pytest.raises(StoreError):
        store.exists("k")


# -- choosing the backend by URL ----------------------------------------------------------------------
def test_http_urls_open_the_stdlib_store_and_fsspec_on_request(
    served: Path, server: FileServer
) -> None:
    pytest.importorskip("aiohttp")
    from zarrkit.plugins.stores.remote.fsspec import FsspecStore

    url, data = _hierarchy(served, server)
    assert isinstance(zk.open_array(url, path="g/a").store, HttpStore)
    through_fsspec = zk.open_array(f"fsspec+{url}", path="g/a")
    assert isinstance(through_fsspec.store, FsspecStore)
    np.testing.assert_array_equal(through_fsspec[...], data)
    with pytest.raises(ReadOnlyError):
        through_fsspec[0, 0] = 1


def test_bad_http_urls_are_refused() -> None:
    for url in ("http://", "ftp://host/x", "http://host/x?query=1"):
        with pytest.raises(ValueError):
            HttpStore(url)


# -- consolidated metadata: a hierarchy browsable without listing -------------------------------------
@pytest.mark.parametrize("zarr_format", [3, 2])
def test_consolidated_metadata_makes_a_hierarchy_browsable(
    served: Path, server: FileServer, zarr_format: int
) -> None:
    name, folder = _place(served)
    data = np.arange(20, dtype="i4").reshape(4, 5)
    root = zk.open_group(str(folder), mode="w", zarr_format=zarr_format)
    root.create_group("g").create_array("a", shape=(4, 5), chunks=(2, 2), dtype="i4")[:] = data
    root.create_array("b", shape=(3,), dtype="f8")
    zk.consolidate_metadata(str(folder))
    url = f"http://{address(server)}/{name}"
    group = zk.open_group(url)
    assert [member for member, _ in group.members()] == ["b", "g"]
    assert [member for member, _ in group["g"].members()] == ["a"]
    np.testing.assert_array_equal(group["g"]["a"][...], data)
    assert not group.store.listable  # the members came from the consolidated document
    with pytest.raises(CapabilityError):
        list(zk.open_group(url, use_consolidated=False).members())


def test_implicit_groups_of_the_2020_draft_need_listing(served: Path, server: FileServer) -> None:
    """An implicit group exists only as a prefix: without listing, the answer is an error,
    never "no such group"."""
    name, folder = _place(served)
    root = zk.open_group(str(folder), mode="w", zarr_format="v3-draft-2020")
    root.create_array("x/y/a", shape=(4,), chunks=(2,), dtype="i4")[:] = [1, 2, 3, 4]
    url = f"http://{address(server)}/{name}"
    assert zk.open_array(url, path="x/y/a")[...].tolist() == [1, 2, 3, 4]  # by path: fine
    with pytest.raises(CapabilityError, match="implicit group"):
        zk.open_group(url, path="x")
    with pytest.raises(CapabilityError):
        list(zk.open_group(url).members())
