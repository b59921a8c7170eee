"""Awaited reads of one array started together share one plan (`zarrkit.views.batched`), on
moto's S3 behind a counting, delaying proxy (`NetBed`, tests/support/store_servers.py). What a
user of `asyncio.gather` notices: 100 windows cost the requests `get_many` costs, not one
read's each; every caller gets its own values; a chunk that does not decode fails only the
windows that need it; a cancelled caller leaves the others their values, and cancelling all
of them cancels the batch's requests."""

from __future__ import annotations

import asyncio
import threading
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
from zarrkit.errors import ChunkDecodeError, SelectionError, ValueTooLargeError

pytestmark = pytest.mark.network

BACKENDS = ["obstore+s3", "fsspec+s3"]
SHAPE = (512, 512)
CHUNKS = (32, 32)
SHARDS = (256, 256)
WINDOW = 40
DELAY = 0.3


@pytest.fixture
def net(bed: NetBed) -> Iterator[NetBed]:
    bed.set_delay(0.0)
    bed.reset()
    yield bed
    bed.set_delay(0.0)


def _options(bed: NetBed, backend: str) -> dict[str, Any]:
    return obstore_s3_options(bed.s3_endpoint) if "obstore" in backend else bed.s3_options()


def _written(bed: NetBed, backend: str, *, shards: Any = SHARDS) -> tuple[str, np.ndarray]:
    """The URL of a 512 x 512 uint16 array in 32 x 32 chunks (in 256 x 256 shards unless
    `shards` is None), written at no delay, and its values."""
    data = np.random.default_rng(7).integers(0, 1000, SHAPE).astype("u2")
    url = f"{backend}://{bed.bucket}/{uuid.uuid4().hex}"
    array = zarrkit.create_array(
        url,
        shape=SHAPE,
        chunks=CHUNKS,
        shards=shards,
        dtype="u2",
        storage_options=_options(bed, backend),
    )
    array[...] = data
    return url, data


def _opened(bed: NetBed, backend: str, url: str) -> Any:
    """The array opened anew (no shard index kept yet), the proxy's counts then cleared."""
    array = zarrkit.open_array(url, storage_options=_options(bed, backend))
    bed.reset()
    return array


def _windows(n: int = 100, seed: int = 0) -> list[tuple[slice, slice]]:
    rng = np.random.default_rng(seed)
    corners = rng.integers(0, SHAPE[0] - WINDOW, (n, 2))
    return [(slice(int(r), int(r) + WINDOW), slice(int(c), int(c) + WINDOW)) for r, c in corners]


async def _gathered(array: Any, windows: list[Any]) -> list[Any]:
    face = zarrkit.AsyncArray(array)
    return await asyncio.gather(*[face.getitem(w) for w in windows])


async def _one_by_one(array: Any, windows: list[Any]) -> list[Any]:
    face = zarrkit.AsyncArray(array)
    return [await face.getitem(w) for w in windows]


@pytest.mark.parametrize("backend", BACKENDS)
def test_gathered_windows_cost_what_reading_them_together_costs(net: NetBed, backend: str) -> None:
    """100 windows of a sharded array awaited through `asyncio.gather` make no more requests
    (and move no more bytes) than `get_many` and `read_many` of the same windows, and far
    fewer than the same windows awaited one by one."""
    url, data = _written(net, backend)
    windows = _windows()
    ways = {
        "get_many": lambda a: a.get_many(windows),
        "read_many": lambda a: zarrkit.read_many([a.lazy[w] for w in windows]),
        "gather": lambda a: asyncio.run(_gathered(a, windows)),
        "read_many_async": lambda a: asyncio.run(
            zarrkit.read_many_async([a.lazy[w] for w in windows])
        ),
        "one_by_one": lambda a: asyncio.run(_one_by_one(a, windows)),
    }
    requests: dict[str, int] = {}
    sent: dict[str, int] = {}
    for name, read in ways.items():
        array = _opened(net, backend, url)
        values = read(array)
        requests[name], sent[name] = net.requests(), net.sent_bytes()
        for window, value in zip(windows, values):
            np.testing.assert_array_equal(value, data[window])
    together = min(requests["get_many"], requests["read_many"])
    assert requests["gather"] <= together, requests
    assert requests["read_many_async"] <= together, requests
    assert 4 * requests["gather"] < requests["one_by_one"], requests
    assert sent["gather"] <= min(sent["get_many"], sent["read_many"]), sent


def _shard_index(blob: bytes, inner: int) -> np.ndarray:
    """(offset, length) of each inner chunk of a shard, from its index at the end (zarr's
    default: little-endian uint64 pairs, then a crc32c)."""
    return np.frombuffer(blob[-(16 * inner + 4) : -4], "<u8").reshape(inner, 2)


def _corrupt_inner_chunk(array: Any, row: int, col: int) -> None:
    """The bytes of inner chunk (row, col) of shard (0, 0) overwritten (its index intact)."""
    key = array._chunk_key((0, 0))
    blob = bytearray(array.store.get(key))
    per_row = SHARDS[1] // CHUNKS[1]
    offset, length = _shard_index(bytes(blob), per_row * (SHARDS[0] // CHUNKS[0]))[
        row * per_row + col
    ]
    blob[int(offset) : int(offset + length)] = b"\xff" * int(length)
    array.store.set(key, bytes(blob))


def _touches(window: tuple[slice, slice], row: int, col: int) -> bool:
    rows = range(window[0].start // CHUNKS[0], (window[0].stop - 1) // CHUNKS[0] + 1)
    cols = range(window[1].start // CHUNKS[1], (window[1].stop - 1) // CHUNKS[1] + 1)
    return row in rows and col in cols


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("broken", ["inner chunk", "chunk", "oversized chunk"])
def test_an_error_reaches_only_the_windows_that_need_its_chunk(
    net: NetBed, backend: str, broken: str
) -> None:
    """A corrupt inner chunk of a shard, a corrupt chunk, or a chunk too large to be one
    (the store refuses it: `ValueTooLargeError`, whose key fails the windows reading it and
    the others are read again) fails the windows that touch it; the others read their
    values in the same gather."""
    url, data = _written(net, backend, shards=SHARDS if broken == "inner chunk" else None)
    array = zarrkit.open_array(url, mode="r+", storage_options=_options(net, backend))
    row, col = 2, 3
    if broken == "inner chunk":
        _corrupt_inner_chunk(array, row, col)
    else:
        value = b"\xff" * 64 if broken == "chunk" else b"\x00" * (8 << 20)
        array.store.set(array._chunk_key((row, col)), value)
    expected = ChunkDecodeError if broken != "oversized chunk" else ValueTooLargeError
    windows = _windows(60, seed=3)
    hit = [w for w in windows if _touches(w, row, col)]
    assert 0 < len(hit) < len(windows)

    async def gather() -> list[Any]:
        face = zarrkit.AsyncArray(_opened(net, backend, url))
        return await asyncio.gather(*[face.getitem(w) for w in windows], return_exceptions=True)

    for window, value in zip(windows, asyncio.run(gather())):
        if _touches(window, row, col):
            assert isinstance(value, expected), (window, value)
        else:
            assert isinstance(value, np.ndarray), (window, value)
            np.testing.assert_array_equal(value, data[window])


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_cancelled_caller_leaves_the_others_their_values(net: NetBed, backend: str) -> None:
    """Callers cancelled while their batch waits on the store return at once with
    `CancelledError`; the batch goes on for the others, who get their values."""
    url, data = _written(net, backend)
    face = zarrkit.AsyncArray(_opened(net, backend, url))
    windows = _windows(30, seed=5)
    net.set_delay(DELAY)

    async def main() -> tuple[list[asyncio.Task[Any]], float, list[Any]]:
        reads = [asyncio.create_task(face.getitem(w)) for w in windows]
        while not net.s3_proxy.traffic.in_flight:  # the batch waits on the store
            await asyncio.sleep(0.01)
        start = time.monotonic()
        for task in reads[::3]:
            task.cancel()
        await asyncio.wait(reads[::3])
        took = time.monotonic() - start
        return reads, took, await asyncio.gather(*reads, return_exceptions=True)

    reads, took, values = asyncio.run(main())
    assert took < DELAY / 2  # the cancelled ones did not wait for the batch
    for i, (window, value) in enumerate(zip(windows, values)):
        if i % 3 == 0:
            assert reads[i].cancelled()
        else:
            np.testing.assert_array_equal(value, data[window])


@pytest.mark.parametrize("backend", BACKENDS)
def test_cancelling_every_caller_cancels_the_batch(net: NetBed, backend: str) -> None:
    """When every caller of a batch is cancelled, its requests are cancelled with them: the
    last caller returns at once, and no request is made afterwards."""
    url, data = _written(net, backend)
    array = _opened(net, backend, url)
    face = zarrkit.AsyncArray(array)
    net.set_delay(2 * DELAY)

    async def main() -> float:
        reads = [asyncio.create_task(face.getitem(w)) for w in _windows(50, seed=6)]
        while not net.s3_proxy.traffic.in_flight:
            await asyncio.sleep(0.01)
        start = time.monotonic()
        for task in reads:
            task.cancel()
        await asyncio.gather(*reads, return_exceptions=True)
        assert all(task.cancelled() for task in reads)
        return time.monotonic() - start

    assert asyncio.run(main()) < DELAY
    asked = len(net.s3_proxy.traffic.requests)
    time.sleep(2 * DELAY + 0.5)
    assert len(net.s3_proxy.traffic.requests) == asked  # nothing went on behind our back
    net.set_delay(0.0)
    window = _windows(1)[0]
    np.testing.assert_array_equal(asyncio.run(_gathered(array, [window]))[0], data[window])


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_kind_of_read_in_one_batch(
    net: NetBed, backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Basic, orthogonal, coordinate, mask and block selections, a single element, reads into
    `out=` (one of another data type) and views, all started together and read in small
    groups (some selections alone), each equal to numpy's answer."""
    import zarrkit.views.together as together

    monkeypatch.setattr(together, "GROUP_BYTES", 64 << 10)
    url, data = _written(net, backend)
    array = _opened(net, backend, url)
    face = zarrkit.AsyncArray(array)
    mask = np.zeros(SHAPE, bool)
    mask[100:140:3, 7:300:11] = True
    points = ([0, 511, 300, 42], [511, 0, 42, 300])
    into = np.zeros((20, 30), "f8")
    same = np.zeros((5, 512), "u2")

    async def main() -> list[Any]:
        return await asyncio.gather(
            *[face.getitem(w) for w in _windows(20, seed=8)],
            face.getitem((slice(None, None, 7), slice(500, 3, -5))),
            face.getitem((17, 400)),
            face.get_orthogonal_selection(([5, 300, 2], slice(10, 40))),
            face.get_coordinate_selection(points),
            face.get_mask_selection(mask),
            face.get_block_selection((1, slice(0, 1))),  # (blocks are shards)
            face.get_basic_selection((slice(10, 30), slice(100, 130)), out=into),
            face.get_basic_selection((slice(250, 255), slice(None)), out=same),
            array.lazy[::-3, 20].result_async(),
            face.getitem(slice(None)),
        )

    values = asyncio.run(main())
    expected = [
        *[data[w] for w in _windows(20, seed=8)],
        data[::7, 500:3:-5],
        data[17, 400],
        data[np.ix_([5, 300, 2], range(10, 40))],
        data[points],
        data[mask],
        data[256:512, 0:256],
        data[10:30, 100:130].astype("f8"),
        data[250:255],
        data[::-3, 20],
        data,
    ]
    for value, want in zip(values, expected):
        np.testing.assert_array_equal(value, want)
        assert np.asarray(value).dtype == want.dtype
    assert values[-4] is into and values[-3] is same
    assert np.ndim(values[21]) == 0 and not isinstance(values[21], np.ndarray)


def test_a_bad_selection_fails_its_caller_alone(net: NetBed) -> None:
    """A selection that does not fit the array raises `SelectionError` to its caller when it
    starts; the reads gathered with it read their values."""
    url, data = _written(net, "obstore+s3")
    face = zarrkit.AsyncArray(_opened(net, "obstore+s3", url))
    windows = _windows(10, seed=9)

    async def main() -> list[Any]:
        reads = [face.getitem(w) for w in windows]
        reads.insert(4, face.getitem((slice(None), slice(None), 0)))
        return await asyncio.gather(*reads, return_exceptions=True)

    values = asyncio.run(main())
    assert isinstance(values.pop(4), SelectionError)
    for window, value in zip(windows, values):
        np.testing.assert_array_equal(value, data[window])


def test_loops_in_several_threads_read_one_array(net: NetBed) -> None:
    """Event loops in two threads gathering reads of one array at the same time: each
    loop's reads form batches of their own, and every read gets its values."""
    url, data = _written(net, "obstore+s3")
    array = _opened(net, "obstore+s3", url)
    windows = [_windows(40, seed=seed) for seed in (10, 11)]
    net.set_delay(0.05)
    results: dict[int, list[Any]] = {}

    def run(i: int) -> None:
        results[i] = asyncio.run(_gathered(array, windows[i]))

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    for i in range(2):
        for window, value in zip(windows[i], results[i]):
            np.testing.assert_array_equal(value, data[window])
