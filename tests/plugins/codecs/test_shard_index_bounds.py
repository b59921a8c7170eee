"""Shard indexes that lie about where inner chunks are: every entry is checked against the
shard's length (when the whole shard is read), against what an encoded inner chunk can hold,
and against 64-bit overflow, before any buffer is sized from it. Each read, whole or a window,
on a memory and a local store, ends in a ChunkDecodeError naming the shard and the inner chunk,
quickly and without a large allocation; a partial write refuses the same way and writes
nothing."""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from crc32c import crc32c

import zarrkit as zk
from zarrkit.errors import ChunkDecodeError
from zarrkit.plugins.stores.local.local import LocalStore
from zarrkit.plugins.stores.memory import MemoryStore

BYTES = {"name": "bytes", "configuration": {"endian": "little"}}
ZSTD = {"name": "zstd", "configuration": {"level": 3, "checksum": False}}
EMPTY = 2**64 - 1
SHAPE, SHARDS, CHUNKS = (64, 64), (32, 32), (16, 16)
KEY = "a/c/1/0"
#: the index of a shard of 2x2 inner chunks, with its crc32c
INDEX_BYTES = 4 * 16 + 4
PEAK_LIMIT = 8 << 20
SECONDS = 2.0


def make_store(kind: str, tmp_path: Any) -> Any:
    return MemoryStore() if kind == "memory" else LocalStore(tmp_path / "store", mode="w")


def sharded(store: Any, codecs: list[dict], dtype: str = "float64", values: Any = None) -> Any:
    a = zk.create_array(
        store,
        path="a",
        shape=SHAPE,
        chunks=CHUNKS,
        shards=SHARDS,
        dtype=dtype,
        codecs=codecs,
        fill_value=0 if dtype != "string" else "",
    )
    if values is None:
        values = np.arange(np.prod(SHAPE), dtype=dtype).reshape(SHAPE)
    a[...] = values
    return values


def rewrite_index(store: Any, change: Callable[[np.ndarray, int], None]) -> bytes:
    """Change the index of shard `KEY` (its crc32c recomputed, so only the entries lie)."""
    raw = bytes(store.get(KEY))
    index = np.frombuffer(raw[-INDEX_BYTES:-4], "<u8").reshape(2, 2, 2).copy()
    change(index, len(raw))
    table = index.tobytes()
    new = raw[:-INDEX_BYTES] + table + crc32c(table).to_bytes(4, "little")
    store.set(KEY, new)
    return new


def refused(read: Callable[[], Any], match: str) -> tuple[float, int]:
    tracemalloc.start()
    start = time.perf_counter()
    try:
        with pytest.raises(ChunkDecodeError, match=match) as info:
            read()
        seconds = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert info.value.key == KEY, info.value
    assert f"'{KEY}'" in str(info.value)
    return seconds, peak


#: entry of inner chunk (0, 1) -> what the error says
LIES: dict[str, tuple[Callable[[int], tuple[int, int]], str]] = {
    "offset 2**63": (lambda n: (2**63, 2048), "outside"),
    "offset 2**63 - 1": (lambda n: (2**63 - 1, 1), "outside"),
    "nbytes 2**63": (lambda n: (0, 2**63), "claims|outside"),
    "nbytes 2**40": (lambda n: (0, 2**40), "claims|outside"),
    "offset 2**40": (lambda n: (2**40, 2048), "outside|past the end"),
    "offset + nbytes overflows 64 bits": (lambda n: (2**64 - 2, 16), "outside|claims"),
    "nbytes 2**64 - 2": (lambda n: (16, 2**64 - 2), "claims|outside"),
    "just past the shard's end": (lambda n: (n - 2048 + 1, 2048), "outside|past the end"),
    "beyond the shard's length": (lambda n: (n + 100, 2048), "outside|past the end"),
    "only offset absent": (lambda n: (EMPTY, 2048), "only one of offset and nbytes"),
    "only nbytes absent": (lambda n: (0, EMPTY), "only one of offset and nbytes"),
}


@pytest.mark.parametrize("where", ["memory", "local"])
@pytest.mark.parametrize("lie", list(LIES))
def test_lying_index_is_refused_before_any_buffer_is_sized(
    lie: str, where: str, tmp_path: Any
) -> None:
    store = make_store(where, tmp_path)
    data = sharded(store, [BYTES])
    entry, match = LIES[lie]
    before = rewrite_index(store, lambda index, n: index.__setitem__((0, 1), entry(n)))
    a = zk.open_array(store, path="a", mode="r+")
    reads = [
        lambda: a[...],
        lambda: a[33:40, 17:30],
        lambda: a[32, 16],
        lambda: a[32:64, 0:32],
        lambda: a.oindex[[33, 40], [17, 18]],
    ]
    for read in reads:
        seconds, peak = refused(read, match)
        assert seconds < SECONDS, f"{lie}: {seconds:.2f} s"
        assert peak < PEAK_LIMIT, f"{lie}: {peak / 2**20:.1f} MiB"
    with pytest.raises(ChunkDecodeError, match=r"inner chunk \(0, 1\)"):
        a[...]
    with pytest.raises(ChunkDecodeError, match=r"inner chunk \(0, 1\)"):
        a[33:40, 17:30]
    with pytest.raises(ChunkDecodeError):
        a[33, 17] = -1.0
    assert bytes(store.get(KEY)) == before
    np.testing.assert_array_equal(a[:32], data[:32])  # the other shards still read


@pytest.mark.parametrize("where", ["memory", "local"])
def test_index_checks_every_entry_with_a_compressed_inner_chain(where: str, tmp_path: Any) -> None:
    """With zstd inner chunks an entry larger than any zstd frame of an inner chunk can be is
    refused as such, even where it lies within the shard."""
    store = make_store(where, tmp_path)
    sharded(store, [BYTES, ZSTD])
    rewrite_index(store, lambda index, n: index.__setitem__((1, 1), (0, 2**40)))
    a = zk.open_array(store, path="a")
    for read in (lambda: a[...], lambda: a[50:60, 20:30]):
        seconds, peak = refused(read, r"inner chunk \(1, 1\) claims 1099511627776 bytes")
        assert seconds < SECONDS and peak < PEAK_LIMIT


def test_index_read_again_from_the_index_cache_is_still_refused() -> None:
    store = MemoryStore()
    sharded(store, [BYTES])
    rewrite_index(store, lambda index, n: index.__setitem__((0, 1), (0, 2**40)))
    a = zk.open_array(store, path="a")
    for _ in range(3):
        refused(lambda: a[33:40, 17:30], r"inner chunk \(0, 1\)")


def test_valid_indexes_still_read_in_any_order_and_sharing_bytes() -> None:
    """What the spec allows: inner chunks in any order, and two entries pointing at the same
    bytes (a writer may store identical inner chunks once)."""
    store = MemoryStore()
    data = sharded(store, [BYTES])

    def swap(index: np.ndarray, n: int) -> None:
        index[0, 0], index[1, 1] = index[1, 1].copy(), index[0, 0].copy()
        index[1, 0] = index[0, 1]

    rewrite_index(store, swap)
    expected = data.copy()
    shard = expected[32:64, 0:32]
    a00, a11, a01 = shard[:16, :16].copy(), shard[16:, 16:].copy(), shard[:16, 16:].copy()
    shard[:16, :16], shard[16:, 16:], shard[16:, :16] = a11, a00, a01
    a = zk.open_array(store, path="a")
    np.testing.assert_array_equal(a[...], expected)
    np.testing.assert_array_equal(a[40:60, 5:30], expected[40:60, 5:30])


#: a window of a string shard whose index claims 100 MiB for an inner chunk, read from a local
#: store in a process that cannot map 32 MiB more (the store reads ranges into one buffer
#: sized from the request: mapped, so tracemalloc does not see it)
LIMITED_WINDOW = r"""
import resource, sys
import zarrkit as zk
from zarrkit.errors import ChunkDecodeError

a = zk.open_array(sys.argv[1], path="a")
a[0:8, 0:8]  # (the thread pool and the libraries' memory, before the limit)
size = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
resource.setrlimit(resource.RLIMIT_AS, (size + (32 << 20), resource.RLIM_INFINITY))
try:
    a[33:40, 17:30]
except ChunkDecodeError as exc:
    print("refused:", exc)
"""


def test_string_shard_window_never_asks_the_store_for_what_the_index_claims(tmp_path: Any) -> None:
    import subprocess
    import sys

    store = LocalStore(tmp_path / "store", mode="w")
    values = np.array([f"s{i}" for i in range(np.prod(SHAPE))], dtype=object).reshape(SHAPE)
    sharded(store, [{"name": "vlen-utf8"}], dtype="string", values=values)
    rewrite_index(store, lambda index, n: index.__setitem__((0, 1), (8, 100 << 20)))
    done = subprocess.run(
        [sys.executable, "-c", LIMITED_WINDOW, str(tmp_path / "store")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and "refused:" in done.stdout, done.stderr[-2000:]
    assert "inner chunk (0, 1)" in done.stdout and f"'{KEY}'" in done.stdout


@pytest.mark.parametrize("where", ["memory", "local"])
def test_string_shard_entry_past_the_end_is_probed_not_read(where: str, tmp_path: Any) -> None:
    """Variable-length inner chunks have no size the spec fixes (the configured cap bounds
    them): an entry claiming 100 MiB of a small shard is found out before the store is asked
    for those bytes, in a window as in a whole read."""
    store = make_store(where, tmp_path)
    values = np.array([f"s{i}" for i in range(np.prod(SHAPE))], dtype=object).reshape(SHAPE)
    sharded(store, [{"name": "vlen-utf8"}], dtype="string", values=values)
    rewrite_index(store, lambda index, n: index.__setitem__((0, 1), (8, 100 << 20)))
    a = zk.open_array(store, path="a")
    for read in (lambda: a[...], lambda: a[33:40, 17:30]):
        seconds, peak = refused(read, r"inner chunk \(0, 1\).*(outside|past the end)")
        assert seconds < SECONDS and peak < PEAK_LIMIT, (seconds, peak)
    np.testing.assert_array_equal(a[33:40, 1:9], values[33:40, 1:9])


def test_large_string_inner_chunk_reads_in_windows(tmp_path: Any) -> None:
    """The probe costs an honest shard nothing but one small read: a 6 MiB string reads."""
    store = MemoryStore()
    values = np.array([f"s{i}" for i in range(np.prod(SHAPE))], dtype=object).reshape(SHAPE)
    values[33, 17] = "x" * (6 << 20)
    sharded(store, [{"name": "vlen-utf8"}], dtype="string", values=values)
    a = zk.open_array(store, path="a")
    assert a[33, 17] == values[33, 17]
    np.testing.assert_array_equal(a[30:40, 10:20], values[30:40, 10:20])
