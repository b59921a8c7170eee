"""What metadata costs on an object store: the requests and round trips of creating an array,
listing a group and opening a node, counted by the proxy of the test bed
(tests/support/store_servers.py `NetBed`) in front of moto's S3 server. Round trips are shown without
timing: a request the proxy holds until others arrive proves they were in flight together."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator

import numpy as np
import pytest

pytest.importorskip("s3fs")
pytest.importorskip("moto.server")

from store_servers import NetBed, obstore_s3_options

import zarrkit as zk
from zarrkit.errors import ContainsNodeError
from zarrkit.store_opening import open_store

pytestmark = pytest.mark.network


@pytest.fixture
def net(bed: NetBed) -> Iterator[NetBed]:
    bed.reset()
    yield bed
    bed.s3_proxy.traffic.on_request = None


def _url(bed: NetBed) -> str:
    return f"s3://{bed.bucket}/{uuid.uuid4().hex}/data.zarr"


def _log(bed: NetBed) -> list[tuple[str, str]]:
    with bed.s3_proxy.traffic.lock:
        return [(method, path) for method, path, _ in bed.s3_proxy.traffic.requests]


def _hold_until(bed: NetBed, first: int, count: int) -> threading.Event:
    """Hold requests number `first` on at the proxy until `count` of them are in flight (a
    client that sends them in waves never gets there: each waits 10 s, a hang guard). The
    event returned is set when they were all in flight together."""
    together = threading.Event()
    arrived = 0
    lock = threading.Lock()

    def hold(number: int) -> None:
        nonlocal arrived
        if number < first:
            return
        with lock:
            arrived += 1
            if arrived == count:
                together.set()
        together.wait(10)

    bed.s3_proxy.traffic.on_request = hold
    return together


# -- creating ----------------------------------------------------------------------------------
@pytest.mark.parametrize("backend", ["s3", "obstore+s3"])
def test_creating_an_array_at_a_new_url_costs_one_listing_and_one_put(
    net: NetBed, backend: str
) -> None:
    if backend == "obstore+s3":
        pytest.importorskip("obstore")
    url = _url(net)
    options = net.s3_options() if backend == "s3" else obstore_s3_options(net.s3_endpoint)
    url = url.replace("s3://", f"{backend}://", 1)
    net.reset()
    a = zk.create_array(url, shape=(4, 4), chunks=(2, 2), dtype="i4", storage_options=options)
    log = _log(net)
    # an empty place holds no node of any format: one listing of at most one key says so
    assert len(log) == 2, log
    assert log[0][0] == "GET" and "list-type=2" in log[0][1]
    assert log[1][0] == "PUT" and log[1][1].endswith("/data.zarr/zarr.json")
    net.reset()
    a[...] = np.arange(16, dtype="i4").reshape(4, 4)
    assert [m for m, _ in _log(net)] == ["PUT"] * 4  # whole chunks: nothing read
    assert zk.open_array(url, storage_options=options)[1, 1] == 5


def test_creating_a_member_reads_what_is_in_the_way_in_one_round_trip(net: NetBed) -> None:
    url = _url(net)
    options = net.s3_options()
    zk.create_group(url, storage_options=options)
    net.reset()
    # zarr.json (v3; at the root also the 2020 draft's entry point), .zarray and .zgroup (v2)
    # of the new node and of its parent, all at once
    together = _hold_until(net, 1, 6)
    zk.create_array(url, path="x", shape=(2,), dtype="i4", storage_options=options)
    log = _log(net)
    assert together.is_set()
    assert [m for m, _ in log] == ["GET"] * 6 + ["PUT"], log


def test_creating_still_refuses_a_node_of_either_format_in_the_way(net: NetBed) -> None:
    options = net.s3_options()
    for fmt in (2, 3):
        url = _url(net)
        zk.create_array(url, shape=(2,), dtype="i4", zarr_format=fmt, storage_options=options)
        for new in (2, 3):
            with pytest.raises(ContainsNodeError):
                zk.create_array(
                    url, shape=(3,), dtype="i4", zarr_format=new, storage_options=options
                )
            with pytest.raises(ContainsNodeError):
                zk.create_group(url, zarr_format=new, storage_options=options)
        replaced = zk.create_array(
            url, shape=(3,), dtype="u1", overwrite=True, storage_options=options
        )
        assert zk.open_array(url, storage_options=options).shape == (3,) == replaced.shape
        with pytest.raises(ContainsNodeError):  # under an array
            zk.create_group(url, path="x/y", storage_options=options)


# -- listing -----------------------------------------------------------------------------------
def test_a_group_of_a_hundred_arrays_reads_their_metadata_in_one_wave(net: NetBed) -> None:
    url = _url(net)
    options = net.s3_options()
    zk.create_group(url, storage_options=options)
    doc = zk.create_array("memory://", shape=(10,), dtype="i4").metadata.to_json()
    store = open_store(url, mode="a", storage_options=options)
    store.set_many(
        {
            f"a{i:03d}/zarr.json": json.dumps({**doc, "attributes": {"i": i}}).encode()
            for i in range(100)
        }
    )
    net.reset()
    together = _hold_until(net, 3, 100)  # after the group's zarr.json and its listing
    group = zk.open_group(url, storage_options=options)
    found = {name: a.attrs["i"] for name, a in group.arrays()}
    assert found == {f"a{i:03d}": i for i in range(100)}
    assert together.is_set()  # all hundred in flight at once: one round trip, not two
    assert net.requests() == 102


# -- opening -----------------------------------------------------------------------------------
def test_opening_a_v3_node_reads_zarr_json_once_and_no_v2_key(net: NetBed) -> None:
    url = _url(net)
    options = net.s3_options()
    zk.create_group(url, storage_options=options).create_array("x", shape=(2,), dtype="i4")
    opened = (
        lambda: zk.open_group(url, storage_options=options),
        lambda: zk.open_group(url, mode="a", storage_options=options),
        lambda: zk.open_array(url, path="x", storage_options=options),
        lambda: zk.open_array(url, path="x", mode="a", storage_options=options),
        lambda: zk.open(url, path="x", storage_options=options),
        lambda: zk.open(url, path="x", mode="a", storage_options=options),
    )
    for open_node in opened:
        net.reset()
        open_node()
        log = _log(net)
        assert len(log) == 1 and log[0][0] == "GET" and log[0][1].endswith("zarr.json"), log


@pytest.mark.parametrize("backend", ["fsspec+s3", "obstore+s3"])
def test_sizing_an_array_downloads_none_of_it(net: NetBed, backend: str) -> None:
    """`nbytes_stored` sizes each object with a HEAD: no GET of a value (issue 44 item 6)."""
    if backend == "obstore+s3":
        pytest.importorskip("obstore")
    url = _url(net).replace("s3://", f"{backend}://", 1)
    options = net.s3_options() if backend == "fsspec+s3" else obstore_s3_options(net.s3_endpoint)
    a = zk.create_array(url, shape=(64, 64), chunks=(16, 16), dtype="f8", storage_options=options)
    a[...] = np.random.default_rng(0).random((64, 64))
    stored = {k: len(v) for k, v in a.store.get_many(list(a.store.list_prefix(""))).items()}
    net.reset()
    assert a.nbytes_stored() == sum(stored.values())
    log = _log(net)
    gets = [path for method, path in log if method == "GET" and "list-type=2" not in path]
    assert gets == [], gets
    # a HEAD per object at most (s3fs answers from the listing it just made)
    assert len(log) <= 1 + len(stored), log


@pytest.mark.parametrize("backend", ["s3", "fsspec+s3", "obstore+s3"])
def test_a_billion_chunk_grid_is_counted_by_what_is_stored(net: NetBed, backend: str) -> None:
    """`nchunks_initialized` and `info_complete()` on every S3 backend list what is stored,
    never the grid: one listing for a (10**9,) array with one stored chunk (issue 44 item 4)."""
    if backend == "obstore+s3":
        pytest.importorskip("obstore")
    url = _url(net).replace("s3://", f"{backend}://", 1)
    options = obstore_s3_options(net.s3_endpoint) if backend == "obstore+s3" else net.s3_options()
    a = zk.create_array(url, shape=(10**9,), chunks=(1,), dtype="u1", storage_options=options)
    a[123_456_789] = 7
    net.reset()
    assert a.nchunks_initialized == 1
    assert a.info_complete().chunks_initialized == 1
    lists = [path for method, path in _log(net) if method == "GET" and "list-type=2" in path]
    assert 1 <= len(lists) <= 4, lists  # a listing or two per count, not a request per chunk
