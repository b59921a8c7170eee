"""The chunk engine: batched store calls, the thread count, bounded memory, per-key locks for
read-modify-write, byte-range coalescing, selection regions, and the partial-decode contract
used by a codec that is not sharding (so the engine is seen to ask the chain, not the codec)."""

from __future__ import annotations

import itertools
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

import zarrkit as zk
from zarrkit import config, engine, registry
from zarrkit.abc import (
    ArrayArrayCodec,
    ArrayBytesCodec,
    ArrayBytesPartialDecode,
    BytesBytesCodec,
    BytesBytesDecodeBatch,
    ChunkSpec,
    Region,
)
from zarrkit.abc.extension import names
from zarrkit.abc.store import ByteRange, Store, SuffixRange
from zarrkit.errors import ChunkDecodeError, CodecChainError
from zarrkit.indexing import basic_indexer, chunk_region, orthogonal_indexer, vectorized_indexer
from zarrkit.plugins.stores.memory import MemoryStore

BYTES = {"name": "bytes", "configuration": {"endian": "little"}}
ZSTD = {"name": "zstd", "configuration": {"level": 1, "checksum": False}}


class Recording(Store):
    """A real memory store that records each batch call."""

    def __init__(self) -> None:
        self.inner = MemoryStore()
        self.calls: list[tuple[str, Any]] = []

    def get(self, key, byte_range=None):
        self.calls.append(("get", (key, byte_range)))
        return self.inner.get(key, byte_range)

    def get_many(self, keys):
        keys = list(keys)
        self.calls.append(("get_many", keys))
        return self.inner.get_many(keys)

    def get_ranges(self, requests):
        self.calls.append(("get_ranges", list(requests)))
        return self.inner.get_ranges(list(requests))

    def set(self, key, value):
        self.inner.set(key, value)

    def set_many(self, items):
        self.calls.append(("set_many", list(items)))
        self.inner.set_many(items)

    def erase(self, key):
        self.inner.erase(key)

    def erase_many(self, keys):
        self.calls.append(("erase_many", list(keys)))
        self.inner.erase_many(keys)

    def list(self):
        return self.inner.list()


# -- batching and threads -------------------------------------------------------------------------
@pytest.mark.parametrize("threads", [1, 2, 5])
def test_reads_and_writes_go_out_in_batches_whatever_the_thread_count(threads: int) -> None:
    store = Recording()
    data = np.arange(60 * 70, dtype=np.float64).reshape(60, 70)
    with config.override(threads=threads):
        a = zk.create_array(
            store, shape=(60, 70), chunks=(10, 10), dtype="float64", codecs=[BYTES, ZSTD]
        )
        store.calls.clear()
        a[...] = data  # whole chunks: each thread stores its chunks as it encodes them
        stream = engine.stream_size(store, 800)
        writes = [c for c in store.calls if c[0] == "set_many"]
        assert sorted(k for _, keys in writes for k in keys) == sorted(store.inner.list())[:-1]
        assert all(len(keys) <= stream for _, keys in writes)
        assert len(writes) <= 42 // stream + threads
        store.calls.clear()
        np.testing.assert_array_equal(a[...], data)
        reads = [c for c in store.calls if c[0] == "get_many"]
        assert not [c for c in store.calls if c[0] == "get"]
        assert 1 <= len(reads) <= threads  # one call per thread's share of the batch
        assert sum(len(keys) for _, keys in reads) == 42
        store.calls.clear()
        a[5:15, 3:4] = -1  # partial chunks: old values in one call per share, one set_many
        data[5:15, 3:4] = -1
        assert [len(keys) for name, keys in store.calls if name == "set_many"] == [2]
        assert 1 <= len([c for c in store.calls if c[0] == "get_many"]) <= threads
        np.testing.assert_array_equal(a[...], data)


@pytest.mark.parametrize("preferred", [None, 1 << 20])
def test_whole_chunk_writes_are_stored_in_groups_the_store_asks_for(preferred) -> None:
    """By default a big chunk is stored as soon as it is encoded (its memory is reused for the
    next); a store that asks for more bytes per call gets groups, also through a wrapper,
    the first ones growing from one chunk (so that its first upload starts early)."""
    from zarrkit.plugins.stores.wrappers.wrapper import StoreWrapper

    store = Recording()
    store.preferred_store_bytes = preferred
    data = np.random.default_rng(1).random((512, 1024)).astype("float32")  # 8 of 256 KiB
    with config.override(threads=1):
        a = zk.create_array(
            StoreWrapper(store),
            shape=data.shape,
            chunks=(256, 256),
            dtype="float32",
            codecs=[BYTES, ZSTD],
        )
        store.calls.clear()
        a[...] = data
    groups = [len(keys) for name, keys in store.calls if name == "set_many"]
    assert groups == ([1] * 8 if preferred is None else [1, 4, 3])
    np.testing.assert_array_equal(zk.open_array(store.inner)[...], data)


def test_a_threads_share_of_whole_chunks_is_one_run_of_writes(tmp_path: Path, monkeypatch) -> None:
    """Compressed chunks go to the store one per call, all of a thread's share through one
    `store.writing()`, so a file store opens each key folder once per share, not per chunk
    (each open a walk of the folder's path, a release of the GIL the other thread waits on)."""
    from zarrkit.plugins.stores.local import beneath

    data = np.random.default_rng(3).random((512, 1024)).astype("float32")  # 2 x 4 chunks
    with config.override(threads=1):
        a = zk.create_array(
            tmp_path / "a",
            shape=data.shape,
            chunks=(256, 256),
            dtype="float32",
            codecs=[BYTES, ZSTD],
        )
        folders: list[str] = []
        real_open = beneath.open_folder
        monkeypatch.setattr(
            beneath,
            "open_folder",
            lambda root, folder, *a, **k: (
                folders.append(folder) or real_open(root, folder, *a, **k)
            ),
        )
        a[...] = data
        monkeypatch.undo()
    assert sorted(folders) == ["c/0", "c/1"]  # two rows of chunks, each folder opened once
    np.testing.assert_array_equal(zk.open_array(tmp_path / "a")[...], data)


def test_a_threads_share_of_chunks_is_read_in_one_run(tmp_path: Path, monkeypatch) -> None:
    """A thread reads its share a few chunks per `read_many` (1 MiB), all through one
    `store.reading()`, so a file store opens each key folder once per share."""
    from zarrkit.plugins.stores.local import beneath

    data = np.random.default_rng(4).random((256, 2048)).astype("float32")  # 8 chunks, 1 folder
    a = zk.create_array(
        tmp_path / "a", shape=data.shape, chunks=(256, 256), dtype="float32", codecs=[BYTES, ZSTD]
    )
    a[...] = data
    with config.override(threads=1):
        folders: list[str] = []
        real_open = beneath.open_folder
        monkeypatch.setattr(
            beneath,
            "open_folder",
            lambda root, folder, *a, **k: (
                folders.append(folder) or real_open(root, folder, *a, **k)
            ),
        )
        b = zk.open_array(tmp_path / "a")
        folders.clear()
        got = b[...]
        monkeypatch.undo()
    np.testing.assert_array_equal(got, data)
    assert folders == ["c/0"]  # once, though read in two calls of four chunks


@pytest.mark.parametrize("preferred", [None, 1 << 20])
def test_uncompressed_whole_chunks_are_stored_in_big_groups(preferred) -> None:
    """An uncompressed chain stores views of the written array, which hold no memory: they
    go to the store in groups (a file store looks each folder up once per group); a store
    that asks for a size still gets that (after the first groups, which grow from one chunk).
    Edge chunks (copies) are among them."""
    store = Recording()
    store.preferred_store_bytes = preferred
    data = np.random.default_rng(2).random((512, 1000)).astype("float32")  # 8 of 256 KiB
    with config.override(threads=1):
        a = zk.create_array(
            store, shape=data.shape, chunks=(256, 256), dtype="float32", codecs=[BYTES]
        )
        store.calls.clear()
        a[...] = data
    groups = [len(keys) for name, keys in store.calls if name == "set_many"]
    assert groups == ([8] if preferred is None else [1, 4, 3])
    np.testing.assert_array_equal(zk.open_array(store.inner)[...], data)


class FarAway(MemoryStore):
    """A store that asks for big calls, as a remote one does."""

    preferred_fetch_bytes = 16 << 20


def test_batch_size_follows_threads_chunk_size_and_store() -> None:
    with config.override(threads=2):
        assert engine.batch_size(256 << 10) == 2 * (16 << 20) // (256 << 10)
        assert engine.batch_size(800) == 2 * 64  # small chunks: capped per thread
        assert engine.batch_size(1 << 30) == 4  # huge chunks: two per thread
        assert engine.batch_size(800, MemoryStore()) == 2 * 64
        assert engine.batch_size(800, FarAway()) == 4096  # a round trip per batch: big ones
        assert engine.batch_size(1 << 20, FarAway()) == 2 * 16  # no smaller than for others
    with config.override(threads=8):
        assert engine.batch_size(256 << 10) == 8 * 64


def test_whole_reads_batch_whole_bands_per_thread() -> None:
    """A read's batch holds whole bands (the chunks of one step of the outermost dimension it
    spans several chunks of) per thread where that stays small: the threads take a batch in
    runs, and runs of whole bands write slabs of the output that no other thread touches."""
    from zarrkit.plugins.grids.regular import RegularChunkGrid

    shards = RegularChunkGrid((2048, 2048))
    whole = basic_indexer(Ellipsis, (16384, 8192), shards)
    assert whole.band == 4  # a row of four shards
    assert basic_indexer((3, slice(None)), (16384, 8192), shards).band == 1  # one row: by chunk
    assert basic_indexer((slice(0, 2048), slice(None)), (16384, 8192), shards).band == 1
    cube = basic_indexer(Ellipsis, (64, 64, 64), RegularChunkGrid((16, 16, 32)))
    assert cube.band == 4 * 2
    with config.override(threads=2):
        # 16 MiB shards: two per thread would split a row; a row per thread instead
        assert engine.batch_size(16 << 20) == 4
        assert engine.read_batch_size(16 << 20, MemoryStore(), whole.band) == 8
        # 256 KiB chunks, rows of 32: the batch of 128 is already two rows per thread
        assert engine.read_batch_size(256 << 10, MemoryStore(), 32) == 128
        # bands too long to batch whole (more than 64 chunks per thread): as before
        assert engine.read_batch_size(16 << 20, MemoryStore(), 1000) == 4
        # an empty selection (no chunks in a band)
        empty = basic_indexer((slice(0, 0), slice(None)), (16384, 8192), shards)
        assert engine.read_batch_size(16 << 20, MemoryStore(), empty.band) == 4


def test_reading_many_small_chunks_leaves_the_garbage_collector_idle(tmp_path: Path) -> None:
    """A whole read of 10,000 small chunks: the objects the engine makes per chunk die young,
    so the garbage collector has almost nothing to do (it used to run a full collection in
    the middle of such a read)."""
    import gc

    data = np.arange(2_000_000, dtype="float32")
    a = zk.create_array(tmp_path / "a", shape=data.shape, chunks=(200,), dtype="float32")
    a[...] = data
    runs: list[int] = []

    def count(phase: str, info: dict) -> None:
        if phase == "start":
            runs.append(info["generation"])

    gc.collect()
    gc.callbacks.append(count)
    try:
        out = a[...]
    finally:
        gc.callbacks.remove(count)
    np.testing.assert_array_equal(out, data)
    assert 2 not in runs and len(runs) < 20, runs


def test_a_whole_read_of_big_chunks_reads_every_file_into_one_reused_buffer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Big files (shards) are read into a buffer the thread reuses once nothing holds it; the
    engine must let go of each chunk's value before reading the next, or every file comes in
    fresh memory (page faults: ~140 MiB more of them in a whole read of 32 shards)."""
    from zarrkit.plugins.stores.local import posix

    handed: list[int] = []
    original = posix.reusable

    def spy(use: str, size: int) -> np.ndarray:
        buffer = original(use, size)
        handed.append(buffer.__array_interface__["data"][0])
        return buffer

    data = np.random.default_rng(2).random((4, 1024, 1280)).astype("float32")  # 4 of 5 MiB
    with config.override(threads=1):
        a = zk.create_array(
            tmp_path / "a",
            shape=data.shape,
            chunks=(1, 1024, 1280),
            dtype="float32",
            codecs=[BYTES],
        )
        a[...] = data
        monkeypatch.setattr(posix, "reusable", spy)
        out = a[...]
    np.testing.assert_array_equal(out, data)
    assert len(handed) == 4 and len(set(handed)) == 1, handed


def test_big_buffers_are_placed_clear_of_slow_copies_and_reused_only_when_free() -> None:
    """Copies into a destination 1-31 bytes past the source's place in its page run at a third
    of their speed or less on this machine's CPU; file data starts on a page and numpy's big
    arrays 16 bytes past one, so the engine's big buffers sit where neither is in that window.
    They are mapped memory, so the reuse rule (nothing else holds the buffer) must still see a
    view of one as holding it, and what is written to the buffer handed out meanwhile must not
    reach that view."""
    from zarrkit import buffers

    def address(buffer: Any) -> int:
        return np.asarray(buffer).__array_interface__["data"][0]

    # 64 MiB: above glibc's largest mmap threshold, so a mapping of its own, as big arrays get
    numpy_phase = address(np.empty(64 << 20, dtype=np.uint8)) % 4096
    for buffer in (
        buffers.reusable("test-place", 1 << 20),
        buffers.thread_buffer("test-place", 1 << 20),
    ):
        phase = address(buffer) % 4096
        assert (phase - 0) % 4096 not in range(1, 32), phase
        assert (phase - numpy_phase) % 4096 not in range(1, 32), (phase, numpy_phase)
        assert (numpy_phase - phase) % 4096 not in range(1, 32), (phase, numpy_phase)

    first = buffers.reusable("test-held", 1 << 20)
    first_at = address(first)
    first[:4] = 7
    view = memoryview(first)[:4]
    del first
    second = buffers.reusable("test-held", 1 << 20)
    second[:4] = 9
    assert address(second) != first_at and bytes(view) == b"\x07" * 4  # the view holds it
    del second, view
    assert address(buffers.reusable("test-held", 1 << 20)) == first_at  # free again


def test_writing_many_shards_maps_new_memory_only_for_each_threads_kept_buffer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A shard is assembled in the thread's kept buffer; while that one is still being stored,
    the next comes from numpy's allocator, which reuses freed memory. A new mapping for each
    is fresh pages to fault in and zero: 18 of the 32 shards of a 512 MiB write got one."""
    from zarrkit import buffers

    mapped: list[int] = []
    original = buffers.placed

    def spy(nbytes: int) -> np.ndarray:
        if nbytes >= 1 << 20:
            mapped.append(nbytes)
        return original(nbytes)

    data = np.random.default_rng(3).random((8, 512, 512)).astype("float32")  # 8 shards of 1 MiB
    sharded = [
        {
            "name": "sharding_indexed",
            "configuration": {
                "chunk_shape": [1, 128, 128],
                "codecs": [BYTES, ZSTD],
                "index_codecs": [BYTES],
                "index_location": "end",
            },
        }
    ]
    monkeypatch.setattr(buffers, "placed", spy)
    with config.override(threads=2):
        a = zk.create_array(
            tmp_path / "a", shape=data.shape, chunks=(1, 512, 512), dtype="float32", codecs=sharded
        )
        a[...] = data
    assert len(mapped) <= 2, mapped  # one per thread
    np.testing.assert_array_equal(a[...], data)


def test_whole_read_memory_stays_bounded(tmp_path: Path) -> None:
    """Peak RSS of reading a 64 MiB array: the output plus a working set tied to the thread
    count, not to the array (measured in a fresh process)."""
    a = zk.create_array(
        str(tmp_path), shape=(4096, 4096), chunks=(256, 256), dtype="float32", codecs=[BYTES, ZSTD]
    )
    a[...] = np.random.default_rng(0).random((4096, 4096), dtype=np.float32)
    script = textwrap.dedent(f"""
        import resource, numpy as np, zarrkit as zk
        a = zk.open_array({str(tmp_path)!r})
        a[0:256, 0:256]  # load plugins and the pool first
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        out = a[...]
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print((after - before) * 1024 - out.nbytes)
    """)
    over = int(
        subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, check=True
        ).stdout
    )
    assert over < 48 << 20, f"{over / 2**20:.0f} MiB over the output"


# -- many selections at once (`Array.get_many`) ------------------------------------------------------
_SELECTIONS = [
    np.s_[3:40, 5:70],
    (7, 9),  # a scalar, as a[7, 9] gives it
    np.s_[10:10, :],  # empty
    np.s_[::7, 5],
    np.s_[60:, 100:],
    np.s_[5:9, 5:9],  # inside the first window: the same chunks again
    Ellipsis,
    np.s_[-3:, :4],
]


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("sharded", [False, True])
def test_many_selections_read_together_give_what_each_read_gives(
    threads: int, sharded: bool
) -> None:
    data = np.arange(64 * 128, dtype="int32").reshape(64, 128)
    layout = {"chunks": (4, 8), "shards": (16, 32)} if sharded else {"chunks": (16, 32)}
    a = zk.create_array(
        MemoryStore(),
        shape=data.shape,
        dtype="int32",
        fill_value=-1,
        codecs=[BYTES, ZSTD],
        **layout,
    )
    a[...] = data
    a[32:48, 64:96] = -1  # a chunk (or a shard) left absent
    data[32:48, 64:96] = -1
    with config.override(threads=threads):
        got = a.get_many(_SELECTIONS[::-1] + _SELECTIONS)
    for selection, value in zip(_SELECTIONS[::-1] + _SELECTIONS, got):
        expected = data[selection]
        assert type(value) is type(a[selection])
        np.testing.assert_array_equal(value, expected)


def test_many_windows_fetch_each_chunk_once_in_one_call_per_round() -> None:
    """Windows that share chunks: on one thread they are read as one, every chunk any of them
    touches fetched once in one call (whole chunks) or one call per round (partial decodes
    of shards: each index once, then the inner chunks, none twice)."""
    data = np.arange(256 * 256, dtype="uint16").reshape(256, 256)
    corners = np.random.default_rng(0).integers(0, 256 - 30, size=(40, 2))
    windows = [np.s_[int(r) : int(r) + 30, int(c) : int(c) + 30] for r, c in corners]
    for layout in ({"chunks": (64, 64)}, {"chunks": (16, 16), "shards": (128, 128)}):
        store = Recording()
        a = zk.create_array(store, shape=data.shape, dtype="uint16", codecs=[BYTES, ZSTD], **layout)
        a[...] = data
        store.calls.clear()
        with config.override(threads=1):
            got = a.get_many(windows)
        for window, value in zip(windows, got):
            np.testing.assert_array_equal(value, data[window])
        if "shards" not in layout:
            assert [name for name, _ in store.calls] == ["get_many"]
            keys = store.calls[0][1]
            assert len(keys) == len(set(keys)) == 16  # every chunk, each once
        else:
            assert [name for name, _ in store.calls] == ["get_ranges", "get_ranges"]
            indexes, inner = (requests for _, requests in store.calls)
            assert sorted(key for key, _ in indexes) == sorted(
                a._chunk_key((i, j)) for i in range(2) for j in range(2)
            )
            spans = sorted((key, rng.offset, rng.offset + rng.length) for key, rng in inner)
            for (key, _, end), (next_key, start, _) in itertools.pairwise(spans):
                assert key != next_key or start >= end  # no inner chunk asked for twice


def test_a_selection_too_big_to_share_a_group_is_read_as_a_read_reads_it(monkeypatch) -> None:
    """The selections read together are bounded in size; one beyond it is read alone, in
    the batches any read uses, and still comes back in its place."""
    monkeypatch.setattr(engine.chunks, "GROUP_BYTES", 64 << 10)
    store = Recording()
    data = np.random.default_rng(2).random((512, 512))
    a = zk.create_array(store, shape=data.shape, chunks=(64, 64), dtype="f8", codecs=[BYTES, ZSTD])
    a[...] = data
    store.calls.clear()
    with config.override(threads=1):
        got = a.get_many([np.s_[0:2, 0:2], np.s_[...], np.s_[5:6, 7:9]])
    np.testing.assert_array_equal(got[1], data)
    np.testing.assert_array_equal(got[0], data[0:2, 0:2])
    np.testing.assert_array_equal(got[2], data[5:6, 7:9])
    assert sum(len(keys) for name, keys in store.calls if name == "get_many") == 1 + 64


def test_an_error_in_one_selection_of_many_is_raised_after_the_others_end() -> None:
    store = MemoryStore()
    a = zk.create_array(store, shape=(64, 64), chunks=(8, 8), dtype="i4", codecs=[BYTES, ZSTD])
    a[...] = 1
    store.set(a._chunk_key((7, 7)), b"not zstd")
    with config.override(threads=2), pytest.raises(ChunkDecodeError, match="c/7/7"):
        a.get_many([np.s_[0:8, 0:8], np.s_[60:, 60:], np.s_[0:64, 0:8]])


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("layout", ["chunks", "shards", "shards-edge"])
def test_many_writes_land_in_the_order_given(threads: int, layout: str) -> None:
    """Overlapping selections written at once: each chunk holds what writing them one after
    another leaves, whatever covers a chunk whole, partly, by points or past the array's
    edge; a chunk left all fill is erased."""
    shape = (60, 120) if layout == "shards-edge" else (64, 128)
    grid = {"chunks": (16, 32)} if layout == "chunks" else {"chunks": (4, 8), "shards": (16, 32)}
    store = MemoryStore()
    a = zk.create_array(
        store, shape=shape, dtype="int32", fill_value=0, codecs=[BYTES, ZSTD], **grid
    )
    data = np.arange(np.prod(shape), dtype="int32").reshape(shape) + 1
    a[...] = data
    items = [
        (np.s_[0:16, 0:32], 7),  # a whole chunk (or shard) ...
        (np.s_[2:5, 3:40], 8),  # ... then part of it again, and of its neighbour
        (np.s_[10:50, 30:33], np.arange(120).reshape(40, 3)),
        (np.s_[::5, 100], -4),
        (np.s_[3, :], 9),
        (np.s_[1:3, 4:6], 10),
        (np.s_[-4:, -5:], 11),
        (np.s_[48:64, 96:128], 0),  # all fill over the two before: erased
    ]
    expected = data.copy()
    for selection, value in items:
        expected[selection] = value
    with config.override(threads=threads):
        a.set_many(items)
    np.testing.assert_array_equal(a[...], expected)
    np.testing.assert_array_equal(zk.open_array(store)[...], expected)
    if layout != "shards-edge":
        assert not store.exists(a._chunk_key((3, 3)))


def test_many_writes_read_and_write_each_chunk_once() -> None:
    store = Recording()
    a = zk.create_array(
        store,
        shape=(256, 256),
        dtype="uint16",
        chunks=(16, 16),
        shards=(128, 128),
        codecs=[BYTES, ZSTD],
    )
    a[...] = 1
    corners = np.random.default_rng(3).integers(0, 256 - 30, size=(40, 2))
    items = [
        (np.s_[int(r) : int(r) + 30, int(c) : int(c) + 30], i) for i, (r, c) in enumerate(corners)
    ]
    store.calls.clear()
    with config.override(threads=1):
        a.set_many(items)
    written = [key for name, keys in store.calls if name == "set_many" for key in keys]
    assert sorted(written) == sorted(a._chunk_key((i, j)) for i in range(2) for j in range(2))
    expected = np.ones((256, 256), dtype="uint16")
    for selection, value in items:
        expected[selection] = value
    np.testing.assert_array_equal(a[...], expected)


def test_a_bad_chunk_among_many_writes_leaves_its_group_unwritten() -> None:
    store = MemoryStore()
    a = zk.create_array(store, shape=(32, 32), chunks=(8, 8), dtype="i4", codecs=[BYTES, ZSTD])
    a[...] = 1
    store.set(a._chunk_key((3, 3)), b"not zstd")
    with config.override(threads=1), pytest.raises(ChunkDecodeError, match="c/3/3"):
        a.set_many([(np.s_[0:2, 0:2], 5), (np.s_[30:32, 30:32], 5), (np.s_[0:8, 8:16], 6)])
    assert store.get(a._chunk_key((3, 3))) == b"not zstd"
    np.testing.assert_array_equal(a[0:8, 0:16], 1)  # one group: nothing of it stored


# -- locks -------------------------------------------------------------------------------------------
def test_threads_writing_parts_of_one_chunk_lose_nothing() -> None:
    a = zk.create_array(
        MemoryStore(), shape=(8, 64), chunks=(8, 64), dtype="int32", codecs=[BYTES, ZSTD]
    )
    barrier = threading.Barrier(8)

    def writer(t: int) -> None:
        barrier.wait()
        for j in range(8):
            a[t, j * 8 : (j + 1) * 8] = t * 100 + j + 1

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    expected = np.arange(8)[:, None] * 100 + np.repeat(np.arange(1, 9), 8)[None, :]
    np.testing.assert_array_equal(a[...], expected)


def test_locks_are_taken_in_one_order() -> None:
    """Two writers locking overlapping key sets in opposite orders do not deadlock."""
    keys = [f"k{i}" for i in range(50)]
    done = []

    def hold(order: list[str]) -> None:
        for _ in range(200):
            with engine.locked(order):
                pass
        done.append(1)

    t1 = threading.Thread(target=hold, args=(keys,))
    t2 = threading.Thread(target=hold, args=(keys[::-1],))
    t1.start(), t2.start()
    t1.join(10), t2.join(10)
    assert done == [1, 1]


# -- byte ranges --------------------------------------------------------------------------------------
def test_coalescing_merges_adjacent_ranges_of_one_key() -> None:
    store = Recording()
    store.inner.set("a", bytes(range(100)))
    store.inner.set("b", bytes(range(100, 200)))
    requests = [
        ("a", ByteRange(10, 5)),
        ("b", ByteRange(0, 3)),
        ("a", ByteRange(15, 5)),
        ("a", SuffixRange(4)),
        ("a", ByteRange(12, 2)),
        ("a", ByteRange(50, 1)),
        ("missing", ByteRange(0, 1)),
        ("b", None),
    ]
    got = engine.fetch_ranges(store, requests)
    expected = [store.inner.get(k, r) for k, r in requests]
    assert [None if g is None else bytes(g) for g in got] == expected
    sent = store.calls[-1][1]
    assert ("a", ByteRange(10, 10)) in sent  # 10..15, 15..20 and 12..14 in one read
    assert [r for k, r in sent if k == "b"] == [None]  # b read whole serves its range too
    assert len(sent) == 5


# -- regions -----------------------------------------------------------------------------------------
def test_chunk_regions_of_each_kind_of_selection() -> None:
    from zarrkit.plugins.grids.regular import RegularChunkGrid

    grid = RegularChunkGrid((10, 10))
    (p,) = list(basic_indexer((slice(2, 5), 7), (10, 10), grid))
    r = chunk_region(p.chunk_selection, (10, 10), True)
    assert r.parts == (slice(2, 5), slice(7, 8)) and r.exact
    assert r.covers([(2, 5), (7, 8)]) and not r.covers([(2, 6), (7, 8)])
    (p,) = list(basic_indexer((slice(1, 9, 3), slice(None)), (10, 10), grid))
    r = chunk_region(p.chunk_selection, (10, 10), True)
    assert r.parts[0].tolist() == [1, 4, 7] and r.parts[1] == slice(0, 10)
    assert r.overlap(0, 3, 8).tolist() == [1, 4] and r.overlap(0, 8, 10) is None
    (p,) = list(orthogonal_indexer(([5, 3, 4], [9, 0]), (10, 10), grid))
    r = chunk_region(p.chunk_selection, (10, 10), True)
    assert r.parts[0] == slice(3, 6) and r.parts[1].tolist() == [0, 9] and r.exact
    (p,) = list(vectorized_indexer(([1, 8], [2, 6]), (10, 10), grid))
    r = chunk_region(p.chunk_selection, (10, 10), False)
    assert not r.exact and r.parts[0].tolist() == [1, 8]  # a box around points, not exact
    assert Region.whole((3, 4)).permuted((1, 0)).parts == (slice(0, 4), slice(0, 3))


# -- the contract, with a codec that is not sharding -------------------------------------------------
class RowsCodec(ArrayBytesCodec, ArrayBytesPartialDecode):
    """array->bytes: rows of the chunk stored one after another; can decode a range of rows."""

    names = names("test.rows")
    decoded: ClassVar[list[str]] = []

    def encode(self, data: np.ndarray, spec: ChunkSpec) -> Any:
        return np.ascontiguousarray(data, dtype=spec.dtype).tobytes()

    def decode(self, data: Any, spec: ChunkSpec) -> np.ndarray:
        RowsCodec.decoded.append("whole")
        return np.frombuffer(data, dtype=spec.dtype).reshape(spec.shape)

    def decode_partial(self, region: Region, spec: ChunkSpec):
        RowsCodec.decoded.append("partial")
        rows = region.parts[0]
        lo, hi = (rows.start, rows.stop) if isinstance(rows, slice) else (rows[0], rows[-1] + 1)
        row_bytes = int(np.prod(spec.shape[1:])) * spec.dtype.itemsize
        (data,) = yield [ByteRange(lo * row_bytes, (hi - lo) * row_bytes)]
        if data is None:
            return None
        rows_box = np.frombuffer(data, dtype=spec.dtype).reshape(hi - lo, *spec.shape[1:])
        return rows_box[(slice(None), *(slice(a, b) for a, b in region.bounds()[1:]))]


def test_engine_uses_any_codec_that_declares_partial_decoding() -> None:
    handle = registry.register("codec", RowsCodec)
    try:
        store = Recording()
        a = zk.create_array(
            store, shape=(20, 6), chunks=(10, 6), dtype="int64", codecs=[{"name": "test.rows"}]
        )
        data = np.arange(120).reshape(20, 6)
        a[...] = data
        store.calls.clear()
        RowsCodec.decoded.clear()
        np.testing.assert_array_equal(a[12:14, 1:3], data[12:14, 1:3])
        assert RowsCodec.decoded == ["partial"]
        assert store.calls == [("get_ranges", [("c/1/0", ByteRange(2 * 48, 2 * 48))])]
        RowsCodec.decoded.clear()
        np.testing.assert_array_equal(a[10:20], data[10:20])  # a whole chunk: a whole read
        assert RowsCodec.decoded == ["whole"]
    finally:
        registry.unregister(handle)


class PassThroughCodec(BytesBytesCodec):
    """bytes->bytes that hands its input back (a legal codec: the identity)."""

    names = names("test.pass")

    def encode(self, data: Any, spec: ChunkSpec) -> Any:
        return data

    def decode(self, data: Any, spec: ChunkSpec) -> Any:
        return data


@pytest.mark.parametrize("threads", [1, 2])
def test_a_codec_passing_its_input_on_still_stores_each_chunk(tmp_path: Path, threads: int) -> None:
    """Written chunks are strided views of the value, put in C order in a per-thread buffer
    before the bytes->bytes codecs; a codec returning that buffer must not make every chunk
    the last one written."""
    handle = registry.register("codec", PassThroughCodec)
    try:
        with config.override(threads=threads):
            a = zk.create_array(
                str(tmp_path / "a"),
                shape=(256, 256),
                chunks=(128, 32),
                dtype="float32",
                codecs=[{"name": "bytes"}, {"name": "test.pass"}],
            )
            data = np.random.default_rng(3).random((256, 256), dtype=np.float32)
            a[...] = data
            np.testing.assert_array_equal(zk.open_array(str(tmp_path / "a"))[...], data)
    finally:
        registry.unregister(handle)


class NegateInPlaceCodec(ArrayArrayCodec):
    """array->array that negates its input in place and hands it on (legal: it does not say
    `reads_input_only`), undone on decode."""

    names = names("test.negate")

    def encode(self, data: Any, spec: ChunkSpec) -> Any:
        np.negative(data, out=data)
        return data

    def decode(self, data: Any, spec: ChunkSpec) -> Any:
        return -data


@pytest.mark.parametrize("sharded", [False, True])
def test_whole_chunks_are_handed_over_as_views_only_to_chains_that_just_read(
    tmp_path: Path, sharded: bool
) -> None:
    """A chain whose array codecs only read (`bytes`, `transpose`, `sharding_indexed` over
    them) encodes whole chunks straight from the written value; a codec that writes to its
    input gets a copy, so the caller's array never changes."""
    handle = registry.register("codec", NegateInPlaceCodec)
    try:
        inner = [{"name": "test.negate"}, {"name": "bytes"}]
        codecs = (
            [
                {
                    "name": "sharding_indexed",
                    "configuration": {
                        "chunk_shape": [16, 16],
                        "codecs": inner,
                        "index_codecs": [{"name": "bytes"}, {"name": "crc32c"}],
                    },
                }
            ]
            if sharded
            else inner
        )
        a = zk.create_array(
            str(tmp_path / "neg"),
            shape=(64, 64),
            chunks=(32, 32),
            dtype="int32",
            codecs=codecs,
            fill_value=0,
        )
        assert not a._engine.bound((0, 0)).takes_views
        data = np.arange(64 * 64, dtype=np.int32).reshape(64, 64)
        before = data.copy()
        a[...] = data
        np.testing.assert_array_equal(data, before)
        np.testing.assert_array_equal(zk.open_array(str(tmp_path / "neg"))[...], before)

        plain = [{"name": "transpose", "configuration": {"order": [1, 0]}}, {"name": "bytes"}]
        b = zk.create_array(
            str(tmp_path / "views"),
            shape=(64, 64),
            chunks=(32, 32),
            dtype="int32",
            fill_value=0,
            codecs=[
                {
                    "name": "sharding_indexed",
                    "configuration": {
                        "chunk_shape": [16, 16],
                        "codecs": plain,
                        "index_codecs": [{"name": "bytes"}, {"name": "crc32c"}],
                    },
                }
            ]
            if sharded
            else plain,
        )
        assert b._engine.bound((0, 0)).takes_views
        b[...] = data[::-1]  # a strided, reversed view
        np.testing.assert_array_equal(zk.open_array(str(tmp_path / "views"))[...], before[::-1])
        np.testing.assert_array_equal(data, before)
    finally:
        registry.unregister(handle)


# -- batch decodes (`BytesBytesDecodeBatch`) ----------------------------------------------------------
class XorBatchCodec(BytesBytesCodec, BytesBytesDecodeBatch):
    """bytes->bytes: every byte xor 0x5A. Decodes groups in one call, leaving every third item
    to the per-chunk `decode` (as a codec does with values it cannot vouch for)."""

    names = names("test.xor")
    calls: ClassVar[list[tuple[str, int]]] = []

    def encode(self, data: Any, spec: ChunkSpec) -> Any:
        return (np.frombuffer(memoryview(data).cast("B"), np.uint8) ^ 0x5A).tobytes()

    def decode(self, data: Any, spec: ChunkSpec) -> Any:
        self.calls.append(("one", 1))
        return (np.frombuffer(data, np.uint8) ^ 0x5A).tobytes()

    def batch_decodes(self, spec: ChunkSpec) -> bool:
        return True

    def decode_batch(self, items: Any, spec: ChunkSpec) -> Any:
        self.calls.append(("batch", len(items)))
        return [
            None if i % 3 == 2 else (np.frombuffer(x, np.uint8) ^ 0x5A).tobytes()
            for i, x in enumerate(items)
        ]


def sharded(inner: list, chunk: int) -> list:
    return [
        {
            "name": "sharding_indexed",
            "configuration": {
                "chunk_shape": [chunk],
                "codecs": inner,
                "index_codecs": [{"name": "bytes"}, {"name": "crc32c"}],
            },
        }
    ]


@pytest.mark.parametrize("threads", [1, 2])
def test_a_codec_that_decodes_in_batches_gets_a_shards_inner_chunks_at_once(
    tmp_path: Path, threads: int
) -> None:
    """Any bytes->bytes codec may decode many inner chunks of a shard in one call (on each
    thread, its share); what it leaves is decoded one by one."""
    handle = registry.register("codec", XorBatchCodec)
    try:
        data = np.arange(5000, dtype=np.int32)
        with config.override(threads=threads):
            a = zk.create_array(
                str(tmp_path),
                shape=data.shape,
                chunks=(1000,),
                dtype="int32",
                codecs=sharded([{"name": "bytes"}, {"name": "test.xor"}], 4),
                fill_value=0,
            )
            a[...] = data
            XorBatchCodec.calls.clear()
            np.testing.assert_array_equal(zk.open_array(str(tmp_path))[...], data)
        kinds = XorBatchCodec.calls
        batches = [n for kind, n in kinds if kind == "batch"]
        assert sum(batches) == 1250 and max(batches) > 1
        assert kinds.count(("one", 1)) == sum(len(range(2, n, 3)) for n in batches)
    finally:
        registry.unregister(handle)


class ShortBatchCodec(XorBatchCodec):
    """A faulty plugin: its batch decode drops the last value."""

    names = names("test.short")

    def decode_batch(self, items: Any, spec: ChunkSpec) -> Any:
        return super().decode_batch(items, spec)[:-1]


def test_a_batch_decode_that_loses_values_is_an_error_not_garbage(tmp_path: Path) -> None:
    handle = registry.register("codec", ShortBatchCodec)
    try:
        a = zk.create_array(
            str(tmp_path),
            shape=(400,),
            chunks=(400,),
            dtype="int32",
            codecs=sharded([{"name": "bytes"}, {"name": "test.short"}], 4),
        )
        a[...] = np.arange(400)
        with pytest.raises(
            CodecChainError, match=r"'test.short': decode_batch gave (\d+) values for \d+ chunks"
        ):
            zk.open_array(str(tmp_path))[...]
    finally:
        registry.unregister(handle)
