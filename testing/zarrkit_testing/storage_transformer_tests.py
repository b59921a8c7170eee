"""A conformance suite every storage transformer should pass: subclass it in a test module.

    class TestMyTransformer(StorageTransformerTests):
        @pytest.fixture
        def transformer(self):
            return MyTransformer(level=3)

It checks what `zarrkit.abc.StorageTransformer` promises the array: values written through
the wrapped store read back (whole, by range, in batches, from several threads); absent keys
read as absent; listing and erasing find what was written; every key carries the array's
node path, so arrays sharing a store never mix their chunks; the capabilities are the
wrapped store's; the metadata JSON round-trips; a bad configuration is a `MetadataError`;
an array created with the transformer reads back what was written; and what counts, sizes,
checks and copies chunks (`nchunks_initialized`, `nbytes_stored`, `zarrkit check`, copy and
convert) finds them through it, wherever it keeps them. `zarrkit_testing.transformers` holds
a transformer that keeps chunks under other keys, to try a plugin's own code paths against.

Optional overrides: `bad_configurations` (configurations `from_json` must refuse; the default
is one unknown field), `registered` (False for a transformer with no entry point: the checks
that go through the registry, and the array round trip, are skipped), `inner_store()` (the
store wrapped; default a fresh in-memory store).
The class name does not start with "Test", so importing it does not run it on its own.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, ClassVar

import numpy as np
import pytest

from zarrkit.abc import (
    V3,
    ByteRange,
    Range,
    StorageTransformer,
    Store,
    SuffixRange,
    parse_named_config,
)
from zarrkit.errors import MetadataError, ReadOnlyError
from zarrkit.helpers import extension_from_json, open_store

VALUE = bytes(range(256)) * 4

#: node paths an array may have: the root, a top-level array, one inside a group
NODE_PATHS = ("", "a", "g/temp")


def _chunk(node_path: str, rest: str) -> str:
    return f"{node_path}/{rest}" if node_path else rest


class StorageTransformerTests:
    """Behaviour every storage transformer owes the arrays that use it."""

    bad_configurations: ClassVar[tuple[Mapping[str, Any], ...]] = (
        {"no such field of any transformer": 1},
    )
    registered: ClassVar[bool] = True

    def inner_store(self) -> Store:
        """The store the transformer wraps in each test: fresh and empty."""
        return open_store("memory://", mode="w")

    # -- metadata ----------------------------------------------------------------------------
    def test_is_a_storage_transformer_with_a_v3_name(self, transformer: StorageTransformer) -> None:
        assert isinstance(transformer, StorageTransformer), (
            f"{type(transformer).__name__} must derive from zarrkit.abc.StorageTransformer"
        )
        assert transformer.written_name(V3), "storage transformers exist in zarr format 3"

    def test_json_round_trip(self, transformer: StorageTransformer) -> None:
        doc = transformer.to_json(V3)
        name, config, _ = parse_named_config(doc, key="storage_transformers")
        again = type(transformer).from_json(name, config, V3)
        assert again.to_json(V3) == doc, f"{doc!r} reads back as {again.to_json(V3)!r}"
        if self.registered:
            found = extension_from_json("storage_transformer", doc, V3, key="t")
            assert type(found) is type(transformer), f"{name!r} resolves to {type(found)}"
            assert found.to_json(V3) == doc

    def test_bad_configuration_is_a_metadata_error(self, transformer: StorageTransformer) -> None:
        """What a user sees of a wrong configuration: a `MetadataError`, not a KeyError or
        TypeError from inside the plugin."""
        name = transformer.written_name(V3)
        for bad in self.bad_configurations:
            with pytest.raises(MetadataError):
                type(transformer).from_json(name, bad, V3)

    # -- values ------------------------------------------------------------------------------
    @pytest.mark.parametrize("node_path", NODE_PATHS)
    def test_values_read_back(self, transformer: StorageTransformer, node_path: str) -> None:
        store = transformer.wrap(self.inner_store(), node_path)
        big = os.urandom(100_000)
        items = {
            _chunk(node_path, "c/0/0"): VALUE,
            _chunk(node_path, "c/0/1"): b"",
            _chunk(node_path, "c/1/0"): big,
        }
        store.set_many(items)
        store.set(_chunk(node_path, "c/1/1"), np.arange(5, dtype="<u2"))
        items[_chunk(node_path, "c/1/1")] = np.arange(5, dtype="<u2").tobytes()
        for key, value in items.items():
            assert store.get(key) == value, f"{key} read back wrong through the transformer"
            assert store.exists(key)
        assert store.get_many(list(items)) == items
        got = store.read_many(list(items))
        assert {k: bytes(memoryview(v)) for k, v in got.items()} == items
        key, big_key = _chunk(node_path, "c/0/0"), _chunk(node_path, "c/1/0")
        requests: list[tuple[str, Range | None]] = [
            (key, ByteRange(10, 5)),
            (big_key, ByteRange(50_000, 1000)),
            (big_key, SuffixRange(7)),
            (key, ByteRange(len(VALUE) - 3, 50)),  # past the end: what there is
            (key, ByteRange(5000, 4)),
            (big_key, None),
        ]
        expected = [VALUE[10:15], big[50_000:51_000], big[-7:], VALUE[-3:], b"", big]
        assert store.get_ranges(requests) == expected
        answers = store.read_ranges(requests)
        assert [None if a is None else bytes(memoryview(a)) for a in answers] == expected
        assert store.get(key, ByteRange(3, 4)) == VALUE[3:7]
        store.set(key, b"short")
        assert store.get(key) == b"short", "an overwrite must replace the value"

    @pytest.mark.parametrize("node_path", NODE_PATHS[1:])
    def test_absent_is_absent(self, transformer: StorageTransformer, node_path: str) -> None:
        """An absent chunk is a chunk of fill values to the array: it must read as None, never
        as empty bytes or an error."""
        store = transformer.wrap(self.inner_store(), node_path)
        missing = _chunk(node_path, "c/9/9")
        assert store.get(missing) is None
        assert store.get(missing, ByteRange(0, 4)) is None
        assert store.get(missing, SuffixRange(4)) is None
        assert not store.exists(missing)
        store.set(_chunk(node_path, "c/0/0"), VALUE)
        assert store.get_many([missing, _chunk(node_path, "c/0/0")]) == {
            _chunk(node_path, "c/0/0"): VALUE
        }
        assert store.get_ranges([(missing, None), (missing, ByteRange(0, 1))]) == [None, None]
        assert not store.exists(_chunk(node_path, "c/0"))  # a prefix of a key is not a key

    # -- keys --------------------------------------------------------------------------------
    def test_arrays_sharing_a_store_keep_their_chunks_apart(
        self, transformer: StorageTransformer
    ) -> None:
        """Each array wraps the store with its own node path, and the keys it is given start
        with that path: arrays at "a", "b" and "g/temp" write chunk "c/0" without clashing."""
        inner = self.inner_store()
        stores = {path: transformer.wrap(inner, path) for path in NODE_PATHS}
        for path, store in stores.items():
            store.set(_chunk(path, "c/0"), f"chunk of {path!r}".encode())
        for path, store in stores.items():
            assert store.get(_chunk(path, "c/0")) == f"chunk of {path!r}".encode(), (
                f"the array at {path!r} reads another array's chunk: keys include the node "
                f"path, and the transformer must keep them apart"
            )

    @pytest.mark.parametrize("node_path", NODE_PATHS[1:])
    def test_writes_stay_under_the_node(
        self, transformer: StorageTransformer, node_path: str
    ) -> None:
        """Erasing an array erases the keys under its path in the store itself: anything a
        transformer stores elsewhere would outlive the array, and `zarr.json` is not its."""
        inner = self.inner_store()
        inner.set(_chunk(node_path, "zarr.json"), b"{}")
        inner.set("other/c/0", b"other")
        store = transformer.wrap(inner, node_path)
        store.set_many({_chunk(node_path, f"c/{i}"): VALUE for i in range(3)})
        outside = [
            k for k in inner.list() if not k.startswith(f"{node_path}/") and k != "other/c/0"
        ]
        assert outside == [], f"written outside {node_path + '/'!r}: {outside}"
        assert inner.get(_chunk(node_path, "zarr.json")) == b"{}"
        assert inner.get("other/c/0") == b"other"
        inner.erase_prefix(f"{node_path}/")
        assert store.get(_chunk(node_path, "c/0")) is None, "a value outlived its array"

    # -- listing and erasing -----------------------------------------------------------------
    @pytest.mark.parametrize("node_path", ["", "g/temp"])
    def test_listing_and_erasing(self, transformer: StorageTransformer, node_path: str) -> None:
        store = transformer.wrap(self.inner_store(), node_path)
        keys = [_chunk(node_path, k) for k in ("c/0/0", "c/0/1", "c/1/0")]
        store.set_many(dict.fromkeys(keys, VALUE))
        chunks = _chunk(node_path, "c/")
        assert sorted(store.list_prefix(chunks)) == keys
        assert store.list_dir(chunks) == ([], ["0", "1"])
        assert store.list_dir(_chunk(node_path, "c/0/")) == (["0", "1"], [])
        store.erase(keys[0])
        assert store.get(keys[0]) is None and not store.exists(keys[0])
        assert sorted(store.list_prefix(chunks)) == keys[1:], "listing shows an erased key"
        store.erase(keys[0])  # already gone: not an error
        store.erase_many([_chunk(node_path, "c/7/7")])
        store.erase_prefix(_chunk(node_path, "c/0/"))
        assert sorted(store.list_prefix(chunks)) == keys[2:]
        assert store.get(keys[1]) is None
        assert store.get(keys[2]) == VALUE

    # -- capabilities and threads ------------------------------------------------------------
    def test_capabilities_are_the_wrapped_stores(self, transformer: StorageTransformer) -> None:
        """Wrapping a read-only store gives a read-only store: the array refuses writes by
        asking the store it writes through."""
        inner = self.inner_store()
        inner.set("a/c/0", VALUE)
        wrapped = transformer.wrap(_ReadOnlyView(inner), "a")
        assert wrapped.capabilities.read_only or not wrapped.capabilities.writeable, (
            "a read-only store wrapped is writeable"
        )
        with pytest.raises(ReadOnlyError):
            wrapped.set("a/c/1", VALUE)
        with pytest.raises(ReadOnlyError):
            wrapped.erase("a/c/0")
        assert inner.get("a/c/1") is None and inner.get("a/c/0") == VALUE

    def test_concurrent_writes_lose_nothing(self, transformer: StorageTransformer) -> None:
        """The chunk engine writes and reads chunks from several threads through one wrapped
        store: a transformer with shared mutable state mixes their values up."""
        store = transformer.wrap(self.inner_store(), "a")
        threads, per_thread = 4, 25
        start = threading.Barrier(threads)
        failures: list[BaseException] = []

        def value(t: int, i: int) -> bytes:
            return bytes([t, i]) * (50 + 37 * i)

        def work(t: int) -> None:
            start.wait()
            try:
                for i in range(per_thread):
                    store.set(f"a/c/{t}/{i}", value(t, i))
                    assert store.get(f"a/c/{t}/{i}") == value(t, i)
            except BaseException as exc:  # surfaced below: a thread cannot fail the test
                failures.append(exc)

        workers = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        assert failures == [], failures[:1]
        expected = {f"a/c/{t}/{i}": value(t, i) for t in range(threads) for i in range(per_thread)}
        assert store.get_many(list(expected)) == expected

    # -- through an array ----------------------------------------------------------------------
    def test_array_round_trip(self, transformer: StorageTransformer) -> None:
        """What a user does: `create_array(..., storage_transformers=[...])`, write, open
        again (the transformer found by its name in `zarr.json`), read."""
        if not self.registered:
            pytest.skip(f"{type(self).__name__}: the transformer has no entry point")
        import json

        import zarrkit

        inner = self.inner_store()
        data = np.arange(60, dtype="int32").reshape(6, 10)
        array = zarrkit.create_array(
            inner,
            path="g/temp",
            shape=data.shape,
            chunks=(4, 4),
            dtype="int32",
            fill_value=-1,
            storage_transformers=[transformer],
        )
        array[:, :7] = data[:, :7]
        doc = json.loads(inner.get("g/temp/zarr.json") or b"{}")
        assert doc["storage_transformers"] == [transformer.to_json(V3)]
        again = zarrkit.open_array(inner, path="g/temp")
        expected = data.copy()
        expected[:, 7:] = -1
        np.testing.assert_array_equal(again[...], expected)

    def test_the_array_paths_go_through_it(
        self,
        transformer: StorageTransformer,
        tmp_path: Any,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        """Everything that counts, sizes, checks or copies an array's chunks reads them
        through its storage transformers, wherever the transformer keeps them:
        `nchunks_initialized`, `nbytes_stored`, `zarrkit check`, `zarrkit.transfer.copy`
        and `convert` see the chunks written (and the copies read back the same values)."""
        if not self.registered:
            pytest.skip(f"{type(self).__name__}: the transformer has no entry point")
        import json

        import zarrkit
        from zarrkit.cli.main import main
        from zarrkit.transfer import convert, copy

        source = str(tmp_path / "source.zarr")
        data = np.arange(60, dtype="int32").reshape(6, 10)
        array = zarrkit.create_array(
            source,
            path="g/temp",
            shape=data.shape,
            chunks=(4, 4),
            dtype="int32",
            fill_value=-1,
            storage_transformers=[transformer],
        )
        array[:, :7] = data[:, :7]  # 4 of the 6 chunks
        expected = data.copy()
        expected[:, 7:] = -1
        opened = zarrkit.open_array(source, path="g/temp")
        assert opened.nchunks_initialized == 4, "nchunks_initialized misses chunks it stored"
        document = len(open_store(source).get("g/temp/zarr.json") or b"")
        assert opened.nbytes_stored() > document, "nbytes_stored counts no chunk"
        capsys.readouterr()
        code = main(["check", "--json", source])
        out = capsys.readouterr().out
        assert code == 0, out
        report = json.loads(out)["arrays"][0]
        assert (report["stored"], report["absent"]) == (4, 2), f"zarrkit check: {report}"
        for name in ("copy", "convert"):
            target = str(tmp_path / f"{name}.zarr")
            done = convert(source, target, to="v3") if name == "convert" else copy(source, target)
            moved = done.chunks_copied + done.chunks_reencoded
            assert moved == 4, f"{name} moved {moved} of the 4 stored chunks: {done.summary()}"
            again = zarrkit.open_array(target, path="g/temp")
            np.testing.assert_array_equal(again[...], expected, err_msg=name)
            assert again.nchunks_initialized == 4, name


class _ReadOnlyView(Store):
    """A read-only view of a store, for stores `open_store` cannot reopen read-only."""

    def __init__(self, inner: Store) -> None:
        self.inner = inner
        self.capabilities = replace(inner.capabilities, read_only=True)

    def get(self, key: str, byte_range: Range | None = None) -> bytes | None:
        return self.inner.get(key, byte_range)

    def list(self) -> Any:
        return self.inner.list()
