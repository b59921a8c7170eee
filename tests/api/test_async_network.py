"""Awaited reads over a slow network: moto's S3 and a file server behind proxies that delay
every request (`NetBed`, tests/support/store_servers.py). What a user of an event loop would
notice: awaited reads overlap (20 reads cost about one delay), the loop stays free while they
wait, a cancelled read leaves nothing running and nothing half written, and on the async
stores (obstore, fsspec, zarr-python's) no pool thread waits on a request."""

from __future__ import annotations

import asyncio
import gc
import os
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

pytest.importorskip("s3fs")
pytest.importorskip("obstore")
pytest.importorskip("moto.server")

from store_servers import NetBed, obstore_s3_options

import zarrkit

pytestmark = pytest.mark.network

DELAY = 0.5
N = 20
BACKENDS = ["obstore+s3", "fsspec+s3", "zarr-python", "http"]


@pytest.fixture
def net(bed: NetBed) -> Iterator[NetBed]:
    bed.set_delay(0.0)
    bed.reset()
    yield bed
    bed.set_delay(0.0)


def _written(bed: NetBed, backend: str, mode: str = "r") -> tuple[Any, np.ndarray]:
    """A (N, 16) array of N chunks written at no delay, and its values; opened again as the
    backend reads it (`http`: the same data served by the file server, read by the HTTP
    store on the I/O pool)."""
    data = np.arange(N * 16, dtype="i4").reshape(N, 16)
    name = uuid.uuid4().hex
    store: Any
    options: dict[str, Any] = {}
    if backend == "http":
        zarrkit.create_array(str(bed.files.root / name), data=data, chunks=(1, 16))
        return zarrkit.open_array(f"{bed.http_url}/{name}"), data
    if backend == "zarr-python":
        zarr_storage = pytest.importorskip("zarr.storage")
        store = zarr_storage.FsspecStore.from_url(
            f"s3://{bed.bucket}/{name}", storage_options=_pooled(bed.s3_options())
        )
    else:
        store = f"{backend}://{bed.bucket}/{name}"
        options = obstore_s3_options(bed.s3_endpoint) if "obstore" in backend else bed.s3_options()
    zarrkit.create_array(store, data=data, chunks=(1, 16), storage_options=options or None)
    return zarrkit.open_array(store, mode=mode, storage_options=options or None), data


def _pooled(options: dict[str, Any]) -> dict[str, Any]:
    """s3fs options with room for N connections (botocore keeps 10 by default), as zarrkit's
    own fsspec store sets them from its concurrency."""
    config = {**options["config_kwargs"], "max_pool_connections": 64}
    return {**options, "config_kwargs": config}


@pytest.mark.parametrize("backend", BACKENDS)
def test_twenty_awaited_reads_overlap_and_the_loop_stays_free(net: NetBed, backend: str) -> None:
    array, data = _written(net, backend)
    face = zarrkit.AsyncArray(array)
    net.set_delay(DELAY)
    net.reset()
    gaps: list[float] = []

    async def ticker(stop: asyncio.Event) -> None:
        last = time.monotonic()
        while not stop.is_set():
            await asyncio.sleep(0.01)
            now = time.monotonic()
            gaps.append(now - last)
            last = now

    async def main() -> tuple[list[Any], float]:
        stop = asyncio.Event()
        ticking = asyncio.create_task(ticker(stop))
        start = time.monotonic()
        values = await asyncio.gather(*[face.getitem(i) for i in range(N)])
        elapsed = time.monotonic() - start
        stop.set()
        await ticking
        return values, elapsed

    # a full collection of the test session's heap can pause every thread for longer than
    # the ticks this measures; it is no read's doing, so it is done before and not during
    gc.collect()
    gc.disable()
    try:
        values, elapsed = asyncio.run(main())
    finally:
        gc.enable()
    for i, value in enumerate(values):
        np.testing.assert_array_equal(value, data[i])
    proxy = net.http_proxy if backend == "http" else net.s3_proxy
    assert proxy.traffic.max_in_flight == N  # all 20 were waiting at once ...
    assert elapsed < 4 * DELAY  # ... so 20 reads took about one delay, not 20
    assert len(gaps) > 10 and max(gaps) < DELAY / 2  # the loop kept ticking meanwhile


#: N awaited reads of row i, as `AsyncArray` and as lazy views read them
READS = {
    "getitem": "asyncio.gather(*[face.getitem(i) for i in range({n})])",
    "views": "zarrkit.read_many_async([array.lazy[i] for i in range({n})])",
    # xarray's `Dataset.load_async()` awaits its backend arrays' `async_getitem`
    "xarray": "asyncio.gather(*[backend.async_getitem(BasicIndexer((i, slice(None))))"
    " for i in range({n})])",
}


def _threads_after_awaited_reads(bed: NetBed, backend: str, how: str = "getitem") -> list[str]:
    """The zarrkit pool threads a fresh process has after 20 awaited reads (`READS[how]`) of
    an array it opened synchronously (opening and sync reads start no I/O-pool thread)."""
    array, _ = _written(bed, backend)
    store = array.store
    if backend == "http":
        where = repr(array.store.url)
        opening = f"zarrkit.open_array({where})"
    elif backend == "zarr-python":
        url = f"s3://{store.inner.path}"
        opening = (
            "zarrkit.open_array(zarr.storage.FsspecStore.from_url("
            f"{url!r}, storage_options={_pooled(bed.s3_options())!r}))"
        )
    else:
        options = obstore_s3_options(bed.s3_endpoint) if "obstore" in backend else bed.s3_options()
        opening = f"zarrkit.open_array({store.url!r}, storage_options={options!r})"
    script = textwrap.dedent(
        f"""
        import asyncio, threading
        import zarr.storage, zarrkit
        array = {opening}
        face = zarrkit.AsyncArray(array)
        if {how == "xarray"}:
            from xarray.core.indexing import BasicIndexer
            from zarrkit.xarray.array import ZarrkitBackendArray
            backend = ZarrkitBackendArray(array)
        async def main():
            return await {READS[how].format(n=N)}
        values = asyncio.run(main())
        assert len(values) == {N}
        print(sorted({{t.name.rsplit("_", 1)[0] for t in threading.enumerate()
                      if t.name.startswith("zarrkit")}}))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=os.environ
    )
    assert done.returncode == 0, done.stderr
    return eval(done.stdout.strip().splitlines()[-1])  # a list of names


@pytest.mark.parametrize("how", list(READS))
@pytest.mark.parametrize("backend", ["obstore+s3", "fsspec+s3", "zarr-python"])
def test_async_stores_are_awaited_natively(net: NetBed, backend: str, how: str) -> None:
    """No I/O-pool, transfer or planning thread waited on a request: the store's own
    coroutines did (decoding ran on the chunk pool)."""
    used = _threads_after_awaited_reads(net, backend, how)
    assert not {"zarrkit-io", "zarrkit-transfer", "zarrkit-views"} & set(used), used


def test_other_stores_are_awaited_on_the_io_pool(net: NetBed) -> None:
    """The plain HTTP store has no coroutines: its reads run on the I/O pool (the check above
    does see such threads)."""
    assert "zarrkit-io" in _threads_after_awaited_reads(net, "http")


def _store_loop(array: Any) -> asyncio.AbstractEventLoop:
    loop: asyncio.AbstractEventLoop = array.chunk_store.reads_loop()
    return loop


def _tasks_on(loop: asyncio.AbstractEventLoop) -> int:
    async def count() -> int:
        return len(asyncio.all_tasks()) - 1  # (not this one)

    return asyncio.run_coroutine_threadsafe(count(), loop).result(10)


def _connections_to(port: int) -> int:
    psutil = pytest.importorskip("psutil")
    return sum(
        1
        for c in psutil.Process().net_connections(kind="tcp")
        if c.raddr and c.raddr.port == port and c.status == psutil.CONN_ESTABLISHED
    )


@pytest.mark.parametrize("backend", ["obstore+s3", "fsspec+s3"])
def test_cancelled_reads_leave_nothing_behind(net: NetBed, backend: str) -> None:
    array, data = _written(net, backend)
    face = zarrkit.AsyncArray(array)
    loop = _store_loop(array)
    port = int(net.s3_endpoint.rsplit(":", 1)[1])
    tasks_before = _tasks_on(loop)
    net.set_delay(2 * DELAY)
    net.reset()

    async def main() -> tuple[float, int, list[asyncio.Task[Any]]]:
        reads = [asyncio.create_task(face.getitem(i)) for i in range(N)]
        while net.s3_proxy.traffic.in_flight < N:  # every request is on its way
            await asyncio.sleep(0.01)
        open_while_reading = _connections_to(port)
        start = time.monotonic()
        for task in reads:
            task.cancel()
        await asyncio.gather(*reads, return_exceptions=True)
        return time.monotonic() - start, open_while_reading, reads

    took, open_while_reading, reads = asyncio.run(main())
    assert all(task.cancelled() for task in reads)
    assert took < DELAY  # cancelled at once, not after the server answered
    assert _tasks_on(loop) <= tasks_before  # nothing left running on the store's loop
    assert open_while_reading >= N
    # the connections that carried the cancelled requests are closed, not left waiting
    assert _connections_to(port) < open_while_reading
    asked = len(net.s3_proxy.traffic.requests)
    time.sleep(2 * DELAY + 0.5)
    assert len(net.s3_proxy.traffic.requests) == asked  # nothing retried behind our back
    net.set_delay(0.0)
    np.testing.assert_array_equal(array[...], data)


@pytest.mark.parametrize("backend", ["obstore+s3", "fsspec+s3"])
def test_cancelled_write_leaves_each_chunk_old_or_new(net: NetBed, backend: str) -> None:
    """A cancelled write has each chunk wholly old or wholly new, and nothing of it runs
    once the cancellation has returned."""
    array, data = _written(net, backend, mode="r+")
    face = zarrkit.AsyncArray(array)
    net.set_delay(DELAY / 5)
    net.reset()

    async def main() -> None:
        write = asyncio.create_task(face.setitem(slice(None), -data))
        while not net.s3_proxy.traffic.requests and not write.done():
            await asyncio.sleep(0.005)
        write.cancel()
        with pytest.raises(asyncio.CancelledError):
            await write

    asyncio.run(main())
    asked = len(net.s3_proxy.traffic.requests)
    time.sleep(3 * DELAY / 5)
    assert len(net.s3_proxy.traffic.requests) == asked  # nothing of the write ran on
    net.set_delay(0.0)
    after = array[...]
    for row, old in zip(after, data):
        assert (row == old).all() or (row == -old).all()


@pytest.mark.parametrize("backend", ["obstore+s3", "fsspec+s3", "zarr-python"])
def test_sync_reads_inside_a_running_loop_do_not_deadlock(net: NetBed, backend: str) -> None:
    """As in a notebook cell: the synchronous API called from a coroutine, beside awaited
    reads of the same array, on a store whose client runs coroutines of its own."""
    array, data = _written(net, backend)
    face = zarrkit.AsyncArray(array)

    async def cell() -> tuple[Any, Any]:
        awaited = asyncio.create_task(face.getitem(slice(0, 5)))
        plain = array[5:10]  # blocks this loop while it reads, and returns
        return plain, await awaited

    plain, awaited = asyncio.run(asyncio.wait_for(cell(), 60))
    np.testing.assert_array_equal(plain, data[5:10])
    np.testing.assert_array_equal(awaited, data[0:5])


@pytest.mark.parametrize("backend", ["obstore+s3", "fsspec+s3"])
@pytest.mark.parametrize("seed", range(3))
def test_random_awaited_windows_equal_sync_reads(net: NetBed, backend: str, seed: int) -> None:
    """The native path (partial decodes of shards, shard indexes shared between concurrent
    reads) reads what the synchronous path reads, for random windows and selections."""
    rng = np.random.default_rng(seed)
    shape = (int(rng.integers(20, 60)), int(rng.integers(20, 60)))
    chunks = (int(rng.integers(2, 8)), int(rng.integers(2, 8)))
    shards = (chunks[0] * int(rng.integers(1, 4)), chunks[1] * int(rng.integers(1, 4)))
    data = rng.integers(0, 1000, shape).astype("u2")
    options = obstore_s3_options(net.s3_endpoint) if "obstore" in backend else net.s3_options()
    url = f"{backend}://{net.bucket}/{uuid.uuid4().hex}"
    written = zarrkit.create_array(
        url, shape=shape, chunks=chunks, shards=shards, dtype="u2", storage_options=options
    )
    written[...] = data
    written[: shape[0] // 3, :] = 0  # (whole shards of fill: not stored)
    array = zarrkit.open_array(url, storage_options=options)
    face = zarrkit.AsyncArray(array)
    windows = []
    for _ in range(12):
        r = sorted(int(x) for x in rng.integers(0, shape[0] + 1, 2))
        c = sorted(int(x) for x in rng.integers(0, shape[1] + 1, 2))
        windows.append((slice(r[0], r[1], int(rng.integers(1, 3))), slice(c[0], c[1])))
    points = tuple(rng.integers(0, n, 7) for n in shape)

    async def go() -> tuple[list[Any], Any]:
        values = await asyncio.gather(*[face.getitem(w) for w in windows])
        return values, await face.get_coordinate_selection(points)

    values, picked = asyncio.run(go())
    for window, value in zip(windows, values):
        np.testing.assert_array_equal(value, array[window])
    np.testing.assert_array_equal(picked, array.vindex[points])
