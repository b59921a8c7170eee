"""The LMDB store: conformance, one transaction per batch seen whole by reader processes,
the memory map growing, key limits, and arrays through `lmdb://` URLs."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("lmdb")

from zarrkit_testing.store_tests import StoreTests

import zarrkit as zk
from zarrkit.abc.store import Store
from zarrkit.errors import InvalidKeyError, StoreError
from zarrkit.plugins.stores.local.lmdb import LmdbStore


class TestLmdbStore(StoreTests):
    @pytest.fixture
    def store(self, tmp_path: Path) -> LmdbStore:
        return LmdbStore(tmp_path / "db", mode="w")

    def store_reopen(self, store: Store) -> Store:
        assert isinstance(store, LmdbStore)
        return LmdbStore(store.path, mode="r")


#: a reader process: reads all 20 keys of a batch in one get_many until told to stop, and
#: reports every batch it saw mixed (keys from different writes), or "ok <reads>"
READER = """
    import sys, time
    from zarrkit.plugins.stores.local.lmdb import LmdbStore
    store = LmdbStore(sys.argv[1])
    keys = [f"c/{i}" for i in range(20)]
    reads, deadline = 0, time.monotonic() + float(sys.argv[2])
    rounds = set()
    while time.monotonic() < deadline:
        values = store.get_many(keys)
        seen = {v for v in values.values()}
        if len(values) != 20 or len(seen) != 1:
            print("mixed", sorted(seen)[:3]); sys.exit(0)
        rounds |= seen
        reads += 1
    print("ok", reads, len(rounds))
"""


def test_reader_processes_see_each_batch_whole(tmp_path: Path) -> None:
    path = tmp_path / "db"
    writer = LmdbStore(path, mode="w")
    keys = [f"c/{i}" for i in range(20)]
    writer.set_many(dict.fromkeys(keys, b"0" * 100))
    readers = [
        subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(READER), str(path), "1.5"],
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    round = 0
    while any(r.poll() is None for r in readers):
        round += 1
        writer.set_many({k: str(round).encode() * 100 for k in keys})
    outputs = [r.communicate(timeout=60)[0].split() for r in readers]
    assert all(out[0] == "ok" for out in outputs), outputs
    assert all(int(out[1]) > 10 and int(out[2]) > 1 for out in outputs), outputs  # raced writes


def test_a_store_collected_while_another_opens_does_not_hang(tmp_path: Path) -> None:
    """The garbage collector may finalize a forgotten store (its last handle closes the
    environment) at any allocation, also while this thread opens another store and holds the
    lock of the open environments: that must not deadlock."""
    from store_finalizing import opens_while_collecting

    from zarrkit.plugins.stores.local.lmdb import _Env

    forgotten = LmdbStore(tmp_path / "a", mode="w")
    forgotten.set("k", b"kept")
    forgotten.cycle = forgotten  # only the garbage collector can free it
    del forgotten
    assert opens_while_collecting(
        _Env._open_lock, lambda: LmdbStore(tmp_path / "b", mode="w").close()
    ), "finalizing an LMDB store while opening another deadlocked"
    assert LmdbStore(tmp_path / "a").get("k") == b"kept"


def test_memory_map_grows_when_full(tmp_path: Path) -> None:
    store = LmdbStore(tmp_path / "db", mode="w", map_size=64 * 1024)
    value = bytes(range(256)) * 1024  # 256 KiB, more than the map
    store.set_many({f"k{i}": value for i in range(8)})
    assert LmdbStore(tmp_path / "db").get("k7") == value


def test_keys_longer_than_lmdb_allows_are_refused_whole(tmp_path: Path) -> None:
    store = LmdbStore(tmp_path / "db", mode="w")
    with pytest.raises(InvalidKeyError, match="511"):
        store.set_many({"fine": b"1", "x" * 600: b"2"})
    assert list(store.list()) == []


def test_opening_a_missing_environment_to_read_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no LMDB environment"):
        LmdbStore(tmp_path / "missing")
    assert not (tmp_path / "missing").exists()


def test_closed_store_raises_store_error(tmp_path: Path) -> None:
    store = LmdbStore(tmp_path / "db", mode="w")
    store.set("k", b"v")
    store.close()
    with pytest.raises(StoreError):
        store.get("k")


def test_arrays_through_lmdb_urls(tmp_path: Path) -> None:
    url = f"lmdb://{tmp_path / 'data.lmdb'}"
    data = np.arange(20 * 30, dtype="<i8").reshape(20, 30)
    root = zk.open_group(url, mode="w")
    array = root.create_array("a/b", shape=data.shape, chunks=(6, 7), dtype="i8")
    array[:] = data
    array[0:6, 0:7] = 0  # a chunk of fill values is erased
    expected = data.copy()
    expected[0:6, 0:7] = 0
    reopened = zk.open_array(url, path="a/b")
    assert isinstance(reopened.store, LmdbStore)
    np.testing.assert_array_equal(reopened[...], expected)
    assert [name for name, _ in zk.open_group(url).members()] == ["a"]
    assert "a/b/c/0/0" not in set(reopened.store.list_prefix("a/b/c/"))
