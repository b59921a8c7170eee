"""Failure at latency, through the proxies of the test bed (tests/support/store_servers.py `NetBed`), for
every network store: throttling (S3's 503 SlowDown) and 5xx answers, a server that stops
answering, an answer cut mid-body. Each read ends in the stored values or a `StoreError`
naming the key and the operation (never fill values, never a partial chunk), each write in
the new values or a `StoreError` that leaves the stored ones as they were; the `io_retries`
and `io_timeout` settings bound how long that takes."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("moto.server")

from store_servers import NetBed, Traffic, obstore_s3_options

import zarrkit as zk
from zarrkit import config
from zarrkit.errors import StoreError

pytestmark = pytest.mark.network

#: a generous bound on any one failing read or write: only a hang comes near it
HANG_GUARD = 30.0
#: `io_timeout` where a stall must end in an error (seconds)
STALL_TIMEOUT = 1.0


@pytest.fixture(scope="module")
def bed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NetBed]:
    with NetBed(tmp_path_factory.mktemp("served"), delay=0.005) as server:
        yield server


@pytest.fixture
def net(bed: NetBed) -> Iterator[NetBed]:
    """The bed, its faults cleared (and stalled requests let go) after each test."""
    for proxy in (bed.s3_proxy, bed.http_proxy):
        proxy.traffic.reset()
        proxy.traffic.delay = 0.005
    yield bed
    for proxy in (bed.s3_proxy, bed.http_proxy):
        proxy.traffic.reset()
        proxy.traffic.delay = 0.005


@dataclass
class Remote:
    """An array on one network store, through one of the bed's proxies; `path` is where the
    proxy sees it."""

    url: str
    options: dict[str, Any]
    traffic: Traffic
    data: np.ndarray
    path: str
    opened: list[zk.Array] = field(default_factory=list)

    def open(self, **settings: Any) -> zk.Array:
        """The array, by a store opened under `settings` (read when a store is opened)."""
        with config.override(**settings):
            array = zk.open_array(self.url, mode="a", storage_options=self.options)
        self.opened.append(array)
        return array

    def chunk_gets(self) -> list[str]:
        return [path for _, path, _ in self.traffic.gets(self.path + "/c/")]

    def chunk_puts(self) -> list[str]:
        with self.traffic.lock:
            requests = list(self.traffic.requests)
        return [p for m, p, _ in requests if m == "PUT" and p.startswith(self.path + "/c/")]

    def settle(self) -> None:
        """Let the requests a failed read left running end (the http store's threads go on
        with their attempts after the first failure), so none reaches the next test."""
        for array in self.opened:
            array.store.close()
        self.traffic.reset()  # (lets stalled requests go)
        deadline = time.monotonic() + HANG_GUARD
        while self.traffic.in_flight and time.monotonic() < deadline:
            time.sleep(0.01)


DATA = np.arange(64, dtype="f4").reshape(8, 8) + 1  # no value is the fill value, 0
CHUNKS = 4


def _create(url: str, options: dict[str, Any]) -> None:
    array = zk.create_array(
        url, shape=(8, 8), chunks=(4, 4), dtype="f4", fill_value=0, storage_options=options
    )
    array[...] = DATA


def _s3(net: NetBed, backend: str) -> Remote:
    url = f"{backend}+s3://{net.bucket}/{uuid.uuid4().hex}/a.zarr"
    if backend == "fsspec":  # no retries or timeouts of its own: those of the settings
        options: dict[str, Any] = {
            "key": "testing",
            "secret": "testing",
            "client_kwargs": {"endpoint_url": net.s3_endpoint, "region_name": "us-east-1"},
        }
    else:
        options = obstore_s3_options(net.s3_endpoint)
    _create(url, options)
    net.reset()
    path = f"/{url.split('://', 1)[1]}"
    return Remote(url, options, net.s3_proxy.traffic, DATA, path)


def _http(net: NetBed, backend: str) -> Remote:
    name = f"{uuid.uuid4().hex}.zarr"
    _create(str(Path(net.files.root) / name), {})
    net.reset()
    if backend == "stdlib":
        return Remote(f"{net.http_url}/{name}", {}, net.http_proxy.traffic, DATA, f"/{name}")
    options = {"client_options": {"allow_http": True}}
    url = f"obstore+{net.http_url}/{name}"
    return Remote(url, options, net.http_proxy.traffic, DATA, f"/{name}")


WRITABLE = ["fsspec-s3", "obstore-s3"]
ALL = [*WRITABLE, "http", "obstore-http"]


def _remote(net: NetBed, kind: str) -> Remote:
    if kind == "fsspec-s3":
        pytest.importorskip("s3fs")
    if kind.startswith("obstore"):
        pytest.importorskip("obstore")
    if kind in WRITABLE:
        return _s3(net, kind.split("-")[0])
    return _http(net, "stdlib" if kind == "http" else "obstore")


@pytest.fixture(params=ALL)
def remote(request: pytest.FixtureRequest, net: NetBed) -> Iterator[Remote]:
    made = _remote(net, request.param)
    yield made
    made.settle()


@pytest.fixture(params=WRITABLE)
def writable(request: pytest.FixtureRequest, net: NetBed) -> Iterator[Remote]:
    made = _remote(net, request.param)
    yield made
    made.settle()


def _fails_naming_a_chunk(remote: Remote, array: zk.Array, operation: str) -> StoreError:
    def attempt() -> None:
        if operation == "read":
            array[...]
        else:
            array[...] = -remote.data

    start = time.monotonic()
    with pytest.raises(StoreError) as info:
        attempt()
    assert time.monotonic() - start < HANG_GUARD
    error = info.value
    assert error.key is not None and error.key.startswith("c/")
    assert error.operation == operation
    assert error.key in str(error) and operation in str(error)
    return error


# -- throttling and 5xx answers ------------------------------------------------------------------
def test_throttling_twice_is_retried_and_reads_every_value(remote: Remote) -> None:
    array = remote.open()
    remote.traffic.faults = ["slowdown", "slowdown"]
    np.testing.assert_array_equal(array[...], remote.data)
    assert len(remote.chunk_gets()) == CHUNKS + 2  # the two throttled reads, asked again


def test_throttled_writes_are_retried_and_store_every_value(writable: Remote) -> None:
    array = writable.open()
    writable.traffic.faults = ["slowdown", "internal"]
    array[...] = writable.data * 2
    assert len(writable.chunk_puts()) == CHUNKS + 2
    np.testing.assert_array_equal(writable.open()[...], writable.data * 2)


@pytest.mark.parametrize("fault", ["slowdown", "internal"])
def test_a_server_that_keeps_failing_is_a_store_error(remote: Remote, fault: str) -> None:
    array = remote.open(io_retries=1)
    remote.traffic.always = fault
    error = _fails_naming_a_chunk(remote, array, "read")
    asked = [p for p in remote.chunk_gets() if p == f"{remote.path}/{error.key}"]
    assert len(asked) == 2  # the first attempt and the one retry `io_retries` allows


def test_failed_writes_leave_the_stored_chunks_as_they_were(writable: Remote) -> None:
    array = writable.open(io_retries=1)
    writable.traffic.always = "slowdown"
    _fails_naming_a_chunk(writable, array, "write")
    writable.traffic.always = None
    np.testing.assert_array_equal(writable.open()[...], writable.data)


# -- a server that stops answering -------------------------------------------------------------------
@pytest.mark.parametrize("fault", ["stall", "stall-body"])
def test_a_stalled_read_times_out_as_a_store_error(remote: Remote, fault: str) -> None:
    """Before its headers or halfway through its body: `io_timeout`, not a hang. (A second,
    not less: opening the array under the same timeout must not fail on a loaded machine.)"""
    array = remote.open(io_timeout=STALL_TIMEOUT, io_retries=0)
    remote.traffic.always = fault
    _fails_naming_a_chunk(remote, array, "read")


def test_a_stalled_write_times_out_as_a_store_error(writable: Remote) -> None:
    array = writable.open(io_timeout=STALL_TIMEOUT, io_retries=0)
    writable.traffic.always = "stall"
    _fails_naming_a_chunk(writable, array, "write")
    writable.traffic.reset()
    np.testing.assert_array_equal(writable.open()[...], writable.data)


def test_a_stall_once_is_retried(remote: Remote) -> None:
    array = remote.open(io_timeout=0.5)
    remote.traffic.faults = ["stall-body"]
    np.testing.assert_array_equal(array[...], remote.data)


# -- answers cut mid-body ---------------------------------------------------------------------------
def test_a_body_cut_once_is_read_again(remote: Remote) -> None:
    array = remote.open()
    remote.traffic.faults = ["truncate"]
    np.testing.assert_array_equal(array[...], remote.data)
    assert len(remote.chunk_gets()) == CHUNKS + 1


def test_bodies_always_cut_are_a_store_error_never_part_of_a_chunk(remote: Remote) -> None:
    array = remote.open(io_retries=1)
    remote.traffic.always = "truncate"
    error = _fails_naming_a_chunk(remote, array, "read")
    with pytest.raises(StoreError):  # one chunk alone, as a window reads it
        array[:4, :4]
    assert error.key is not None


def test_a_server_ignoring_ranges_and_cutting_the_body_never_gives_part_of_a_range(
    tmp_path: Path,
) -> None:
    """The body of a 200 answer to a range read is read only up to the range's end: one cut
    before it is a short body to read again, not a short range."""
    from store_servers import FileServer, address, serving

    from zarrkit.abc.store import ByteRange
    from zarrkit.plugins.stores.remote.http import HttpStore

    value = bytes(range(256)) * 64
    (tmp_path / "k").write_bytes(value)
    with serving(FileServer(tmp_path, ignore_range=True)) as server:
        store = HttpStore(f"http://{address(server)}", backoff=0.01, retries=1)
        server.traffic.faults = ["truncate"]
        assert store.get("k", ByteRange(10_000, 1000)) == value[10_000:11_000]
        assert len(server.traffic.gets("k")) == 2
        server.traffic.always = "truncate"
        with pytest.raises(StoreError, match="'k'"):
            store.get("k", ByteRange(10_000, 1000))


def test_io_settings_are_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZARRKIT_IO_TIMEOUT", "2.5")
    monkeypatch.setenv("ZARRKIT_IO_RETRIES", "0")
    assert (config.Settings().io_timeout, config.Settings().io_retries) == (2.5, 0)
    for name, raw in [("ZARRKIT_IO_TIMEOUT", "soon"), ("ZARRKIT_IO_TIMEOUT", "0")]:
        monkeypatch.setenv(name, raw)
        with pytest.raises(ValueError, match=name):
            config.Settings()
    monkeypatch.setenv("ZARRKIT_IO_TIMEOUT", "1")
    monkeypatch.setenv("ZARRKIT_IO_RETRIES", "-1")
    with pytest.raises(ValueError, match="ZARRKIT_IO_RETRIES"):
        config.Settings()
    with pytest.raises(ValueError, match="io_timeout"):
        config.set(io_timeout=float("nan"))
