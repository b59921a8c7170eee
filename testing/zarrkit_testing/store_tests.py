"""Conformance suites every store should pass: subclass one in a test module.

    class TestMyStore(StoreTests):
        @pytest.fixture
        def store(self, tmp_path):
            return MyStore(tmp_path, mode="w")      # writeable and empty

        def store_reopen(self, store):
            return MyStore(store.root, mode="r")    # read-only, same data

`store` (a pytest fixture) is required. `store_reopen` is optional; without it the read-only
tests are skipped.

A store that cannot be written through itself (HTTP, a read-only archive format) subclasses
`ReadableStoreTests` instead and defines the fixture `store_with`: a function that puts the
given {key: value} into the backend by other means and returns a store over them. Both suites
check the capabilities a store declares: a non-writeable store must refuse writes with
`ReadOnlyError`, a non-listable one must refuse listings with `CapabilityError`.

The class names do not start with "Test", so importing them into a test module does not run
them a second time on their own.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

import numpy as np
import pytest

from zarrkit.abc import ByteRange, Range, Store, SuffixRange
from zarrkit.errors import CapabilityError, ReadOnlyError

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


StoreWith = Callable[[Mapping[str, bytes]], Store]


class ReadableStoreTests:
    """What every readable store does, whether or not it can be written through itself."""

    @pytest.fixture
    def store_with(self) -> StoreWith:
        """A function: {key: value} -> a store holding exactly those. Subclasses define it."""
        pytest.skip(f"{type(self).__name__} defines no store_with fixture")

    # -- byte ranges -------------------------------------------------------------------------
    @pytest.mark.parametrize(
        "byte_range,expected",
        [
            (ByteRange(10, 5), VALUE[10:15]),
            (ByteRange(0, 0), b""),
            (ByteRange(90), VALUE[90:]),
            (ByteRange(0), VALUE),
            (SuffixRange(7), VALUE[-7:]),
            (ByteRange(95, 20), VALUE[95:]),  # past the end: clipped
            (ByteRange(150, 5), b""),
            (ByteRange(150), b""),
            (SuffixRange(500), VALUE),
            (SuffixRange(0), b""),
        ],
        ids=repr,
    )
    def test_byte_range(self, store_with: StoreWith, byte_range: Range, expected: bytes) -> None:
        store = store_with({"k": VALUE})
        assert store.get("k", byte_range) == expected

    def test_read_whole_values(self, store_with: StoreWith) -> None:
        items = {"zarr.json": b"{}", "a/c/0": VALUE, "a/c/1": b"", "ключ/ü": b"x"}
        store = store_with(items)
        for key, value in items.items():
            assert store.get(key) == value
            assert store.exists(key)
        assert store.get("a") is None and not store.exists("a")  # a prefix is not a key
        assert store.get("missing") is None and not store.exists("missing")
        assert store.get("missing", SuffixRange(3)) is None
        assert store.get("missing", ByteRange(0, 0)) is None

    # -- batches -----------------------------------------------------------------------------
    def test_get_many_leaves_out_missing(self, store_with: StoreWith) -> None:
        store = store_with({"a": b"1", "c/d": b"2"})
        assert store.get_many(["a", "b", "c/d", "c"]) == {"a": b"1", "c/d": b"2"}
        assert store.get_many([]) == {}

    def test_sizes_are_the_lengths_of_the_values(self, store_with: StoreWith) -> None:
        """`sizes` (what `nbytes_stored` and `zarrkit info` count) tells each stored length,
        leaves absent keys and prefixes out, and agrees with what a read returns."""
        values = {"a": b"1", "c/d": b"22", "c/e": b"", "f": bytes(range(256)) * 40}
        store = store_with(values)
        asked = [*values, "missing", "c"]
        assert store.sizes(asked) == {k: len(v) for k, v in values.items()}
        assert store.sizes([]) == {}

    def test_read_many_gives_the_values_of_get_many(self, store_with: StoreWith) -> None:
        """`read_many` (the engine's read) may hand out any bytes-like object; `get_many` and
        `get` stay `bytes`. Values past 4 MiB are where the local store switches buffers."""
        big, small = os.urandom((4 << 20) + 3), os.urandom(1000)
        other = os.urandom(4 << 20)
        store = store_with({"big": big, "small": small, "empty": b"", "other": other})
        got = store.read_many(["small", "missing", "big", "empty"])
        assert sorted(got) == ["big", "empty", "small"]
        assert {k: bytes(memoryview(v)) for k, v in got.items()} == {
            "big": big,
            "small": small,
            "empty": b"",
        }
        # values still held survive the next read (the local store reuses its buffers only
        # once nothing holds them)
        assert bytes(memoryview(store.read_many(["other"])["other"])) == other
        assert bytes(memoryview(got["big"])) == big
        del got
        assert bytes(memoryview(store.read_many(["big"])["big"])) == big
        assert all(type(v) is bytes for v in store.get_many(["big", "small"]).values())
        assert type(store.get("big")) is bytes

    def test_get_ranges_answers_in_request_order(self, store_with: StoreWith) -> None:
        big = os.urandom(300_000)
        store = store_with({"k": VALUE, "big": big, "empty": b""})
        requests: list[tuple[str, Range | None]] = [
            ("big", ByteRange(200_000, 10)),
            ("k", None),
            ("missing", ByteRange(0, 4)),
            ("big", ByteRange(5, 10)),  # neighbours of one key: a store may merge them
            ("big", ByteRange(0, 8)),
            ("big", ByteRange(5, 10)),  # the same range twice
            ("big", SuffixRange(16)),
            ("k", ByteRange(99, 50)),
            ("big", ByteRange(299_990)),
            ("empty", None),
            ("missing", None),
            ("k", ByteRange(500, 1)),
        ]
        expected = [
            big[200_000:200_010],
            VALUE,
            None,
            big[5:15],
            big[:8],
            big[5:15],
            big[-16:],
            VALUE[99:],
            big[299_990:],
            b"",
            None,
            b"",
        ]
        assert store.get_ranges(requests) == expected
        assert store.get_ranges([]) == []

    def test_read_ranges_gives_the_values_of_get_ranges(self, store_with: StoreWith) -> None:
        """`read_ranges` (the partial decoders' read) answers as `get_ranges` does, in any
        bytes-like form; big ranges are where the local store reads into a reused buffer, so
        answers still held must survive the next call unchanged."""
        big, other = os.urandom(400_000), os.urandom(400_000)
        store = store_with({"big": big, "other": other, "k": VALUE, "empty": b""})
        requests: list[tuple[str, Range | None]] = [
            ("big", ByteRange(200_000, 100_000)),
            ("k", None),
            ("missing", ByteRange(0, 70_000)),
            ("big", ByteRange(5, 90_000)),
            ("big", SuffixRange(16)),
            ("big", ByteRange(390_000, 20_000)),  # past the end: what there is
            ("empty", ByteRange(0, 100)),
            ("k", ByteRange(99)),
        ]
        first = store.read_ranges(requests)
        kept = [None if v is None else bytes(memoryview(v)) for v in first]
        assert kept == store.get_ranges(requests)
        second = store.read_ranges(
            [("other", ByteRange(0, 100_000)), ("other", ByteRange(100, 50_000))]
        )
        assert [bytes(memoryview(v)) for v in second] == [other[:100_000], other[100:50_100]]
        assert [None if v is None else bytes(memoryview(v)) for v in first] == kept
        del first, second
        again = store.read_ranges([("other", ByteRange(5, 200_000)), ("big", ByteRange(7, 9))])
        assert [bytes(memoryview(v)) for v in again] == [other[5:200_005], big[7:16]]
        assert store.read_ranges([]) == []

    def test_get_ranges_many_small_reads_of_one_key(self, store_with: StoreWith) -> None:
        """The read pattern of inner chunks in a shard: dozens of adjacent ranges."""
        value = os.urandom(64 * 100)
        store = store_with({"shard": value})
        requests = [("shard", ByteRange(i * 64, 64)) for i in range(99, -1, -3)]
        answers = store.get_ranges(requests)
        assert answers == [value[r.offset : r.offset + 64] for _, r in requests]

    # -- keys that could escape --------------------------------------------------------------
    @pytest.mark.parametrize("key", INVALID_KEYS)
    def test_invalid_key_refused_on_read(self, store_with: StoreWith, key: str) -> None:
        store = store_with({"fine": b"1"})
        for attempt in _attempts(
            lambda: store.get(key),
            lambda: store.get(key, SuffixRange(1)),
            lambda: store.exists(key),
            lambda: store.get_many(["fine", key]),
            lambda: store.get_ranges([("fine", None), (key, None)]),
        ):
            with pytest.raises(ValueError):
                attempt()

    # -- capabilities --------------------------------------------------------------------------
    def test_declared_capabilities_are_enforced(self, store_with: StoreWith) -> None:
        store = store_with({"a/b": b"1"})
        assert store.capabilities.readable
        if not store.capabilities.writeable or store.capabilities.read_only:
            for attempt in _attempts(
                lambda: store.set("a/b", b"2"),
                lambda: store.set_many({"new": b"2"}),
                lambda: store.erase("a/b"),
                lambda: store.erase_prefix("a/"),
                lambda: store.require("write", "write"),
            ):
                with pytest.raises(ReadOnlyError):
                    attempt()
            assert store.get("a/b") == b"1"
        if not store.capabilities.listable:
            for attempt in _attempts(
                lambda: list(store.list()),
                lambda: list(store.list_prefix("a/")),
                lambda: store.list_dir("a/"),
                lambda: store.require("list", "list"),
            ):
                with pytest.raises(CapabilityError):
                    attempt()
        else:
            assert list(store.list()) == ["a/b"]
            assert store.list_dir("") == ([], ["a"])


class StoreTests(ReadableStoreTests):
    """Behaviour a user relies on, whatever the backend, for stores that can be written."""

    #: (threads, writes per thread) of the concurrency test; a slow backend may ask for fewer
    concurrent_writers: tuple[int, int] = (8, 50)
    #: overwrites of one value while other threads read it (`test_overwrite_is_seen_whole_...`)
    overwrites: int = 20
    #: False for a backend that cannot replace a value in one step (fsspec's local file
    #: system, behind a mapper, truncates the file and then writes it): the test is skipped
    atomic_overwrites: bool = True

    @pytest.fixture
    def store_with(self, store: Store) -> StoreWith:
        def fill(items: Mapping[str, bytes]) -> Store:
            store.set_many(items)
            return store

        return fill

    def store_reopen(self, store: Store) -> Store:
        """A read-only store over the data of `store`; override to run the read-only tests."""
        pytest.skip(f"{type(self).__name__} does not define store_reopen")

    # -- values ------------------------------------------------------------------------------
    @pytest.mark.parametrize(
        "value",
        [b"", b"\x00", VALUE, os.urandom(1 << 20)],
        ids=["empty", "nul", "100-bytes", "1-MiB"],
    )
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

    @pytest.mark.parametrize(
        "value",
        [
            bytearray(b"bytearray"),
            memoryview(b"memoryview"),
            np.arange(6, dtype="<i4"),
            np.arange(12, dtype="u1").reshape(3, 4)[:, ::2],  # not contiguous
            np.arange(24, dtype=">f8").reshape(4, 6)[::2, 1::2],
            np.arange(12, dtype="<u2").reshape(3, 4).T,  # Fortran order: stored in C order
        ],
        ids=[
            "bytearray",
            "memoryview",
            "numpy",
            "numpy-strided",
            "numpy-strided-big-endian",
            "numpy-transposed",
        ],
    )
    def test_any_buffer(self, store: Store, value: Any) -> None:
        expected = memoryview(value).tobytes()
        store.set("k", value)
        if isinstance(value, (bytearray, np.ndarray)):
            value[0] = 99  # the caller reuses its buffer: what was stored must not change
        assert store.get("k") == expected

    # -- batches -----------------------------------------------------------------------------
    def test_set_many_of_strided_views(self, store: Store) -> None:
        """Chunks written straight from views of one array (what the engine hands a store)."""
        whole = np.arange(64 * 64, dtype="<f4").reshape(64, 64)
        views = {
            f"c/{i}/{j}": whole[i * 32 : (i + 1) * 32, j * 32 : (j + 1) * 32]
            for i in range(2)
            for j in range(2)
        }
        store.set_many(views)  # type: ignore[arg-type]
        assert store.get_many(list(views)) == {k: v.tobytes() for k, v in views.items()}

    def test_set_many(self, store: Store) -> None:
        items = {f"c/{i}": bytes([i]) * i for i in range(10)}
        store.set_many(items)
        assert store.get_many(items) == items

    def test_a_run_of_reads(self, store: Store) -> None:
        """`reading()`, what the engine reads a thread's chunks through: each call answers as
        `read_many` does, absent keys (and folders) left out, one folder read several times."""
        items = {"c/0/0": b"a", "c/0/1": b"bc", "c/1/0": bytes(range(256)) * 64}
        store.set_many(items)
        with store.reading() as source:
            first = source.read_many(["c/0/0", "c/0/9", "c/9/0"])
            second = source.read_many(["c/0/1", "c/1/0", "c/0/0"])
        assert {k: bytes(v) for k, v in first.items()} == {"c/0/0": b"a"}
        assert {k: bytes(v) for k, v in second.items()} == items
        many = {f"m/{i}/v": bytes([i]) for i in range(100)}  # more folders than a run keeps
        store.set_many(many)
        with store.reading() as source:
            for start in range(0, 100, 7):
                part = [f"m/{i}/v" for i in range(start, min(100, start + 7))]
                assert {k: bytes(v) for k, v in source.read_many(part).items()} == {
                    k: many[k] for k in part
                }

    def test_a_run_of_writes(self, store: Store) -> None:
        """`writing()`, what the engine stores a thread's chunks through: values of several
        calls read back, an erase that empties a folder does not keep the next write of that
        folder from landing, and a batch with a bad key writes nothing of that batch."""
        with store.writing() as target:
            target.set_many({"c/0/0": b"a", "c/0/1": b"b"})
            target.set_many({"c/1/0": np.arange(4, dtype="<u2")})
            target.erase_many(["c/0/0", "c/0/1"])
            target.set_many({"c/0/1": b"again"})
            with pytest.raises(ValueError):  # (InvalidKeyError is one)
                target.set_many({"c/2/0": b"x", "c/../out": b"y"})
        assert store.get_many(["c/0/0", "c/0/1", "c/1/0", "c/2/0"]) == {
            "c/0/1": b"again",
            "c/1/0": np.arange(4, dtype="<u2").tobytes(),
        }

    def test_ranges_of_an_overwritten_value(self, store: Store) -> None:
        """A range is of the value there now: a store that remembers sizes or values (a cache,
        a file handle kept open) must not answer from the old one."""
        store.set("k", VALUE)
        assert store.get("k", SuffixRange(5)) == VALUE[-5:]
        assert store.get("k", ByteRange(90, 5)) == VALUE[90:95]
        store.set("k", b"short")
        assert store.get("k", SuffixRange(3)) == b"ort"
        assert store.get("k", ByteRange(2, 100)) == b"ort"
        assert store.get("k", ByteRange(90, 5)) == b""
        assert store.get_ranges([("k", SuffixRange(50)), ("k", None)]) == [b"short", b"short"]

    def test_overwrite_is_seen_whole_or_not_at_all(self, store: Store) -> None:
        """While one thread overwrites a value, readers on other threads get the old value or
        the new one, never a mix or a part (a torn chunk decodes to garbage or fails)."""
        if not self.atomic_overwrites:
            pytest.skip(f"{type(self).__name__}: the backend does not replace values atomically")
        size = 64 * 1024
        values = [bytes([n]) * size for n in (1, 2)]
        store.set("k", values[0])
        done = threading.Event()
        torn: list[int] = []

        def write(t: int) -> None:
            try:
                if t == 0:
                    for i in range(self.overwrites):
                        store.set("k", values[(i + 1) % 2])
                else:
                    while not done.is_set():
                        whole = store.get("k")
                        part = store.get("k", ByteRange(size // 2, 8))
                        if whole not in values or part not in (b"\x01" * 8, b"\x02" * 8):
                            torn.append(len(whole or b""))
            finally:
                if t == 0:
                    done.set()

        _run_threads(write, 3)
        assert torn == [], f"readers saw {len(torn)} torn values (sizes {torn[:5]})"

    def test_listing_follows_writes_and_erases(self, store: Store) -> None:
        """A listing is of the keys there now: a store that caches listings must drop what it
        cached when keys are written or erased through it."""
        assert sorted(store.list_prefix("a/")) == []
        assert store.list_dir("a/") == ([], [])
        store.set("a/x", b"1")
        assert sorted(store.list_prefix("a/")) == ["a/x"]
        assert store.list_dir("") == ([], ["a"])
        store.set_many({"a/y/0": b"2", "a/z": b"3"})
        assert sorted(store.list_prefix("a/")) == ["a/x", "a/y/0", "a/z"]
        assert store.list_dir("a/") == (["x", "z"], ["y"])
        store.erase("a/x")
        store.erase_many(["a/z", "a/never"])  # an absent key among them: not an error
        assert sorted(store.list()) == ["a/y/0"]
        assert store.list_dir("a/") == ([], ["y"])
        store.erase_prefix("a/y/")
        assert list(store.list()) == [] and store.list_dir("") == ([], [])

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

    @pytest.mark.parametrize(
        "prefix,expected",
        [
            ("", TREE),
            ("a/", [k for k in TREE if k.startswith("a/")]),
            ("a/b/", ["a/b/zarr.json", "a/b/c/0/0", "a/b/c/0/1"]),
            ("a/b", ["a/b/zarr.json", "a/b/c/0/0", "a/b/c/0/1", "a/bc/zarr.json"]),
            ("a/b/c/0/", ["a/b/c/0/0", "a/b/c/0/1"]),
            ("zarr", ["zarr.json"]),
            ("missing/", []),
        ],
    )
    def test_list_prefix(self, store: Store, prefix: str, expected: list[str]) -> None:
        _fill(store, TREE)
        assert sorted(store.list_prefix(prefix)) == sorted(expected)

    @pytest.mark.parametrize(
        "prefix,expected",
        [
            ("", (["zarr.json"], ["a", "x"])),
            ("a/", (["zarr.json"], ["b", "bc"])),
            ("a/b/", (["zarr.json"], ["c"])),
            ("a/b/c/", ([], ["0"])),
            ("a/b/c/0/", (["0", "1"], [])),
            ("x/y/", ([], ["z"])),
            ("missing/", ([], [])),
            ("zarr.json/", ([], [])),  # a key is not a folder
        ],
    )
    def test_list_dir(self, store: Store, prefix: str, expected: tuple) -> None:
        _fill(store, TREE)
        assert store.list_dir(prefix) == expected

    def test_is_empty_answers_right_or_not_at_all(self, store: Store) -> None:
        """A store may not tell cheaply (None); when it answers, the answer is right."""
        assert store.is_empty("") in (True, None)
        _fill(store, TREE)
        for prefix, empty in (
            ("", False),
            ("a/", False),
            ("a/b/c/", False),
            ("x/y/", False),
            ("missing/", True),
            ("zarr.json/", True),  # a key is not a folder
        ):
            assert store.is_empty(prefix) in (empty, None), prefix

    # -- keys that could escape --------------------------------------------------------------
    @pytest.mark.parametrize("key", INVALID_KEYS)
    def test_invalid_key_refused(self, store: Store, key: str) -> None:
        for attempt in _attempts(
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
        for attempt in _attempts(
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

    # -- read-modify-write ---------------------------------------------------------------------
    def test_update_many(self, store: Store) -> None:
        store.set_many({"a/k": b"1", "b": b"2"})
        seen: list[tuple[list[str], dict[str, bytes]]] = []

        def compute(keys: Sequence[str], old: Mapping[str, Any]) -> dict[str, Any]:
            seen.append((list(keys), {k: bytes(v) for k, v in old.items()}))
            return {"a/k": bytes(old["a/k"]) + b"+", "b": None, "c/k": b"new"}

        store.update_many(["a/k", "b", "c/k"], compute)
        assert seen == [(["a/k", "b", "c/k"], {"a/k": b"1", "b": b"2"})]
        assert store.get_many(["a/k", "b", "c/k"]) == {"a/k": b"1+", "c/k": b"new"}
        assert sorted(store.list()) == ["a/k", "c/k"]  # (no lock files or the like show)

    def test_update_many_that_fails_writes_nothing(self, store: Store) -> None:
        store.set("k", b"old")

        def compute(keys: Sequence[str], old: Mapping[str, Any]) -> dict[str, Any]:
            raise ValueError("cannot decode")

        with pytest.raises(ValueError):
            store.update_many(["k", "new/k"], compute)
        assert sorted(store.list()) == ["k"] and store.get("k") == b"old"

    def test_concurrent_updates_lose_nothing(self, store: Store) -> None:
        """Threads that each add their mark to one value: with `safe_updates`, every mark is
        kept (the engine's own per-key locks are not involved here)."""
        if not store.capabilities.safe_updates:
            pytest.skip(f"{type(store).__name__} does not guard updates")
        threads, per_thread = 4, 8

        def add(t: int) -> None:
            for i in range(per_thread):
                store.update_many(["shared/v"], partial(_add_mark, f"{t}.{i};".encode()))

        _run_threads(add, threads)
        marks = store.get("shared/v").decode().split(";")[:-1]  # type: ignore[union-attr]
        assert sorted(marks) == sorted(
            f"{t}.{i}" for t in range(threads) for i in range(per_thread)
        )

    # -- threads -----------------------------------------------------------------------------
    def test_concurrent_sets_lose_nothing(self, store: Store) -> None:
        threads, per_thread = self.concurrent_writers
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
        expected = {
            f"t{t}/{i % 5}/{i}": f"{t}:{i}".encode()
            for t in range(threads)
            for i in range(per_thread)
        }
        assert sorted(store.list()) == sorted(expected)
        assert store.get_many(expected) == expected


def _attempts(*calls: Callable[[], object]) -> tuple[Callable[[], object], ...]:
    """Calls that should each raise the same error (a tuple mypy can type)."""
    return calls


def _add_mark(mark: bytes, keys: Sequence[str], old: Mapping[str, Any]) -> dict[str, bytes]:
    """An update's compute: append `mark` to the value at "shared/v"."""
    return {"shared/v": bytes(old.get("shared/v", b"")) + mark}


def _run_threads(work: Callable[[int], None], threads: int) -> None:
    """Run `work(t)` on `threads` threads started together; re-raise the first failure."""
    start = threading.Barrier(threads)
    failures: list[BaseException] = []

    def run(t: int) -> None:
        start.wait()
        try:
            work(t)
        except BaseException as exc:  # surfaced below; a thread cannot fail the test itself
            failures.append(exc)

    workers = [threading.Thread(target=run, args=(t,)) for t in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    if failures:
        raise failures[0]
