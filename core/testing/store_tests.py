"""A conformance suite every store should pass: subclass it in a test module.

    class TestMyStore(StoreTests):
        @pytest.fixture
        def store(self, tmp_path):
            return MyStore(tmp_path, mode="w")      # writeable and empty

        def store_reopen(self, store):
            return MyStore(store.root, mode="r")    # read-only, same data

`store` (a pytest fixture) is required. `store_reopen` is optional; without it the read-only
tests are skipped. The class name does not start with "Test", so importing it into a test
module does not run it a second time on its own.
"""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest

from zarrkit.errors import ReadOnlyError
from zarrkit.store import ByteRange, Range, Store, SuffixRange

VALUE = bytes(range(100))

#: keys of a small hierarchy, with sibling names that share a prefix ('b' and 'bc')
TREE = [
    "zarr.json",
    "a/zarr.json",
    "a/b/zarr.json",
    "a/b/c/0/0",
    "a/b/c/0/1",
    "a/bc/zarr.json",
    "x/y/z/w",
]

INVALID_KEYS = ["../x", "a/../../x", "/abs", "a//b", "a/./b", "a/", "./a", "a\\b"]


def _fill(store: Store, keys: list[str]) -> None:
    for key in keys:
        store.set(key, key.encode())


class StoreTests:
    """Behaviour a user relies on, whatever the backend."""

    def store_reopen(self, store: Store) -> Store:
        """A read-only store over the data of `store`; override to run the read-only tests."""
        pytest.skip(f"{type(self).__name__} does not define store_reopen")

    # -- values ------------------------------------------------------------------------------
    @pytest.mark.parametrize("value", [b"", b"\x00", VALUE, os.urandom(1 << 20)],
                             ids=["empty", "nul", "100-bytes", "1-MiB"])
    def test_round_trip(self, store: Store, value: bytes) -> None:
        store.set("k", value)
        assert store.get("k") == value
        assert store.exists("k")

    @pytest.mark.parametrize("key", ["zarr.json", ".zattrs", "a.b", "c/0/0", "ключ/ü"])
    def test_round_trip_keys(self, store: Store, key: str) -> None:
        store.set(key, VALUE)
        assert store.get(key) == VALUE
        assert list(store.list()) == [key]

    def test_absent_key(self, store: Store) -> None:
        assert store.get("missing") is None
        assert store.get("missing", ByteRange(0, 1)) is None
        assert not store.exists("missing")
        assert not store.exists("a")  # a prefix of a key is not a key
        store.set("a/b", VALUE)
        assert store.get("a") is None
        assert not store.exists("a")

    def test_overwrite_replaces(self, store: Store) -> None:
        store.set("k", b"a long first value")
        store.set("k", b"short")
        assert store.get("k") == b"short"

    @pytest.mark.parametrize("value", [
        bytearray(b"bytearray"),
        memoryview(b"memoryview"),
        np.arange(6, dtype="<i4"),
        np.arange(12, dtype="u1").reshape(3, 4)[:, ::2],  # not contiguous
    ], ids=["bytearray", "memoryview", "numpy", "numpy-strided"])
    def test_any_buffer(self, store: Store, value: object) -> None:
        expected = memoryview(value).tobytes()
        store.set("k", value)  # type: ignore[arg-type]
        if isinstance(value, (bytearray, np.ndarray)):
            value[0] = 99  # the caller reuses its buffer: what was stored must not change
        assert store.get("k") == expected

    # -- byte ranges -------------------------------------------------------------------------
    @pytest.mark.parametrize("byte_range,expected", [
        (ByteRange(10, 5), VALUE[10:15]),
        (ByteRange(0, 0), b""),
        (ByteRange(90), VALUE[90:]),
        (ByteRange(0), VALUE),
        (SuffixRange(7), VALUE[-7:]),
        (ByteRange(95, 20), VALUE[95:]),  # past the end: clipped
        (ByteRange(150, 5), b""),
        (ByteRange(150), b""),
        (SuffixRange(500), VALUE),
    ], ids=repr)
    def test_byte_range(self, store: Store, byte_range: Range, expected: bytes) -> None:
        store.set("k", VALUE)
        assert store.get("k", byte_range) == expected

    # -- batches -----------------------------------------------------------------------------
    def test_get_many_leaves_out_missing(self, store: Store) -> None:
        store.set("a", b"1")
        store.set("c/d", b"2")
        assert store.get_many(["a", "b", "c/d", "c"]) == {"a": b"1", "c/d": b"2"}
        assert store.get_many([]) == {}

    def test_set_many(self, store: Store) -> None:
        items = {f"c/{i}": bytes([i]) * i for i in range(10)}
        store.set_many(items)
        assert store.get_many(items) == items

    # -- erasing -----------------------------------------------------------------------------
    def test_erase(self, store: Store) -> None:
        store.set("a/b", b"1")
        store.set("a/c", b"2")
        store.erase("a/b")
        assert store.get("a/b") is None
        assert store.get("a/c") == b"2"
        store.erase("a/b")  # already gone: not an error
        store.erase("never/was")

    def test_erasing_last_key_drops_its_prefix(self, store: Store) -> None:
        store.set("g/h/k", b"1")
        store.set("top", b"2")
        store.erase("g/h/k")
        assert store.list_dir("") == (["top"], [])

    def test_erase_prefix_leaves_siblings(self, store: Store) -> None:
        _fill(store, ["a/b/x", "a/b/y/z", "a/bc", "a/bcd/x", "ab/x"])
        store.erase_prefix("a/b/")
        assert sorted(store.list()) == ["a/bc", "a/bcd/x", "ab/x"]
        assert store.list_dir("a/") == (["bc"], ["bcd"])
        store.erase_prefix("missing/")  # nothing there: not an error

    def test_erase_prefix_everything(self, store: Store) -> None:
        _fill(store, TREE)
        store.erase_prefix("")
        assert list(store.list()) == []
        store.set("again", b"1")  # the store is still usable
        assert store.get("again") == b"1"

    # -- listing -----------------------------------------------------------------------------
    def test_list(self, store: Store) -> None:
        assert list(store.list()) == []
        _fill(store, TREE)
        assert sorted(store.list()) == sorted(TREE)

    @pytest.mark.parametrize("prefix,expected", [
        ("", TREE),
        ("a/", [k for k in TREE if k.startswith("a/")]),
        ("a/b/", ["a/b/zarr.json", "a/b/c/0/0", "a/b/c/0/1"]),
        ("a/b", ["a/b/zarr.json", "a/b/c/0/0", "a/b/c/0/1", "a/bc/zarr.json"]),
        ("a/b/c/0/", ["a/b/c/0/0", "a/b/c/0/1"]),
        ("zarr", ["zarr.json"]),
        ("missing/", []),
    ])
    def test_list_prefix(self, store: Store, prefix: str, expected: list[str]) -> None:
        _fill(store, TREE)
        assert sorted(store.list_prefix(prefix)) == sorted(expected)

    @pytest.mark.parametrize("prefix,expected", [
        ("", (["zarr.json"], ["a", "x"])),
        ("a/", (["zarr.json"], ["b", "bc"])),
        ("a/b/", (["zarr.json"], ["c"])),
        ("a/b/c/", ([], ["0"])),
        ("a/b/c/0/", (["0", "1"], [])),
        ("x/y/", ([], ["z"])),
        ("missing/", ([], [])),
        ("zarr.json/", ([], [])),  # a key is not a folder
    ])
    def test_list_dir(self, store: Store, prefix: str, expected: tuple) -> None:
        _fill(store, TREE)
        assert store.list_dir(prefix) == expected

    # -- keys that could escape --------------------------------------------------------------
    @pytest.mark.parametrize("key", INVALID_KEYS)
    def test_invalid_key_refused(self, store: Store, key: str) -> None:
        for attempt in (
            lambda: store.set(key, b"1"),
            lambda: store.set_many({"fine": b"1", key: b"1"}),
            lambda: store.get(key),
            lambda: store.exists(key),
            lambda: store.erase(key),
        ):
            with pytest.raises(ValueError):
                attempt()
        assert list(store.list()) == []

    # -- read-only views ---------------------------------------------------------------------
    def test_read_only_refuses_writes(self, store: Store) -> None:
        _fill(store, TREE)
        view = self.store_reopen(store)
        assert view.get("a/zarr.json") == b"a/zarr.json"
        for attempt in (
            lambda: view.set("new", b"1"),
            lambda: view.set("zarr.json", b"changed"),
            lambda: view.set_many({"new": b"1"}),
            lambda: view.erase("zarr.json"),
            lambda: view.erase_prefix("a/"),
            lambda: view.erase_prefix(""),
        ):
            with pytest.raises(ReadOnlyError):
                attempt()
        assert sorted(store.list()) == sorted(TREE)
        assert store.get("zarr.json") == b"zarr.json"

    def test_read_only_sees_later_writes(self, store: Store) -> None:
        view = self.store_reopen(store)
        store.set("late", b"1")
        assert view.get("late") == b"1"

    # -- threads -----------------------------------------------------------------------------
    def test_concurrent_sets_lose_nothing(self, store: Store) -> None:
        threads, per_thread = 8, 50
        start = threading.Barrier(threads)
        failures: list[BaseException] = []

        def write(t: int) -> None:
            start.wait()
            try:
                for i in range(per_thread):
                    store.set(f"t{t}/{i % 5}/{i}", f"{t}:{i}".encode())
            except BaseException as exc:  # surfaced below; a thread cannot fail the test itself
                failures.append(exc)

        workers = [threading.Thread(target=write, args=(t,)) for t in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        assert failures == []
        expected = {f"t{t}/{i % 5}/{i}": f"{t}:{i}".encode()
                    for t in range(threads) for i in range(per_thread)}
        assert sorted(store.list()) == sorted(expected)
        assert store.get_many(expected) == expected
