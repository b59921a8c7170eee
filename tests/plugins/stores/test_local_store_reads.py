"""The local store's `read_many`, which learns the size of an array's chunk files and reads
each in one call when it can: every value is the file's, whatever the sizes, and a value still
held is never overwritten by a later call (large files go into buffers a thread reuses)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import zarrkit as zk
from zarrkit.plugins.stores.local.local import LocalStore

KIB = 1024


def _files(store: LocalStore, sizes: dict[str, int], seed: int) -> dict[str, bytes]:
    rng = np.random.default_rng(seed)
    values = {
        key: rng.integers(0, 256, size, dtype=np.uint8).tobytes() for key, size in sizes.items()
    }
    for key, value in values.items():
        store.set(key, value)
    return values


def test_files_larger_than_the_ones_before_come_back_whole(tmp_path: Path) -> None:
    """The store learns the size of the files from the first ones; a larger file is sized
    and read again whole, not from where the first read stopped."""
    store = LocalStore(tmp_path, mode="w")
    values = _files(store, {f"c/{i}": 100 * KIB + i for i in range(4)}, seed=1)
    values |= _files(store, {"c/big": 300 * KIB, "c/huge": 3 << 20}, seed=2)
    with store.reading() as source:
        for keys in (["c/0", "c/1"], ["c/2", "c/big", "c/3"], ["c/huge", "c/0"], ["c/1", "c/big"]):
            got = source.read_many(keys)
            assert {key: bytes(value) for key, value in got.items()} == {k: values[k] for k in keys}


def test_values_held_across_calls_keep_their_bytes(tmp_path: Path) -> None:
    store = LocalStore(tmp_path, mode="w")
    values = _files(store, {f"c/{i}": 120 * KIB - 7 * i for i in range(8)}, seed=3)
    with store.reading() as source:
        source.read_many(["c/0"])  # (the store learns the files' size)
        first = source.read_many([f"c/{i}" for i in range(4)])
        second = source.read_many([f"c/{i}" for i in range(4, 8)])
        again = source.read_many([f"c/{i}" for i in range(4)])
    for got in (first, second, again):
        assert {key: bytes(value) for key, value in got.items()} == {k: values[k] for k in got}


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_an_array_of_unevenly_compressed_chunks_reads_back_exactly(
    tmp_path: Path, threads: int
) -> None:
    """Chunks of noise (stored at about their size) beside constant ones (a few bytes), so the
    files of one read differ by orders of magnitude, read on several threads."""
    rng = np.random.default_rng(4)
    data = rng.normal(size=(512, 1024)).astype("float32")
    data[::2, ::3] = 1.0
    data[128:256] = 0.5
    path = str(tmp_path / "a.zarr")
    array = zk.create_array(path, shape=data.shape, chunks=(64, 128), dtype="float32")
    array[...] = data
    with zk.config.set(threads=threads):
        for _ in range(3):
            again = zk.open_array(path, mode="r")
            np.testing.assert_array_equal(again[...], data)
            np.testing.assert_array_equal(again[100:400, 50:1000], data[100:400, 50:1000])
