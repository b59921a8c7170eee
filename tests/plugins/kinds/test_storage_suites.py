"""The storage transformer and store conformance suites: a transformer the kernel's tests own
passes `StorageTransformerTests` (and is used through `create_array(storage_transformers=)`),
and each suite fails, on the right test, for a deliberately broken plugin of its kind."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from zarrkit_testing import StorageTransformerTests, StoreTests
from zarrkit_testing.store_tests import VALUE
from zarrkit_testing.transformers import MovingTransformer

import zarrkit as zk
from zarrkit.abc import (
    V3,
    ByteRange,
    Range,
    StorageTransformer,
    Store,
    check_known_fields,
    config_value,
    names,
)
from zarrkit.errors import MetadataError, UnknownExtensionError
from zarrkit.helpers import extension_from_json, open_store
from zarrkit.plugins.stores.memory import MemoryStore


# -- a working transformer: every stored byte XORed with a key ------------------------------
@dataclass(frozen=True)
class XorTransformer(StorageTransformer):
    names = names("test.xor")

    key: int = 0x5A

    @classmethod
    def from_json(
        cls, name: str, configuration: Mapping[str, Any], format: str = V3
    ) -> XorTransformer:
        check_known_fields(configuration, {"key"}, owner=name)
        return cls(config_value(configuration, "key", int, owner=name, default=0x5A))

    def configuration(self, format: str = V3) -> dict[str, Any]:
        return {"key": self.key}

    def wrap(self, store: Store, node_path: str) -> Store:
        return _XorStore(store, self.key)


class _XorStore(Store):
    def __init__(self, inner: Store, key: int) -> None:
        self.inner, self.table = inner, bytes(b ^ key for b in range(256))
        self.read_only, self.writeable = inner.read_only, inner.writeable

    def get(self, key: str, byte_range: Range | None = None) -> bytes | None:
        stored = self.inner.get(key, byte_range)  # XOR is per byte: ranges map to themselves
        return None if stored is None else stored.translate(self.table)

    def set(self, key: str, value: Any) -> None:
        self.inner.set(key, memoryview(value).tobytes().translate(self.table))

    def erase(self, key: str) -> None:
        self.inner.erase(key)

    def list(self) -> Iterator[str]:
        return self.inner.list()


class TestXorTransformer(StorageTransformerTests):
    bad_configurations = ({"key": "5A"}, {"key": 1, "mask": 2})

    @pytest.fixture
    def transformer(self, zarrkit_register: Any) -> XorTransformer:
        zarrkit_register("storage_transformer", XorTransformer)
        return XorTransformer(0x21)


class TestMovingTransformer(StorageTransformerTests):
    """zarrkit_testing's transformer that keeps chunks under other keys: the suite's array
    paths (count, size, check, copy, convert) find them through it."""

    @pytest.fixture
    def transformer(self, zarrkit_register: Any) -> MovingTransformer:
        zarrkit_register("storage_transformer", MovingTransformer)
        return MovingTransformer()


# -- create_array(storage_transformers=...) ---------------------------------------------------
@pytest.fixture
def xor(zarrkit_register: Any) -> type[XorTransformer]:
    zarrkit_register("storage_transformer", XorTransformer)
    return XorTransformer


@pytest.mark.parametrize("given", ["test.xor", {"name": "test.xor"}, XorTransformer()])
def test_create_array_writes_through_its_transformers(xor: type, given: Any) -> None:
    store = MemoryStore()
    data = np.arange(12, dtype="uint8").reshape(3, 4)
    a = zk.create_array(
        store, path="g/a", shape=(3, 4), chunks=(2, 4), dtype="uint8", storage_transformers=[given]
    )
    a[...] = data
    doc = json.loads(store.get("g/a/zarr.json") or b"")
    assert doc["storage_transformers"] == [{"name": "test.xor", "configuration": {"key": 0x5A}}]
    plain = zk.create_array(store, path="g/b", shape=(3, 4), chunks=(2, 4), dtype="uint8")
    plain[...] = data
    stored, unchanged = store.get("g/a/c/0/0"), store.get("g/b/c/0/0")
    assert stored is not None and unchanged is not None
    assert stored == unchanged.translate(bytes(b ^ 0x5A for b in range(256)))
    np.testing.assert_array_equal(zk.open_array(store, path="g/a")[...], data)
    np.testing.assert_array_equal(a[1:, 1:], data[1:, 1:])


def test_create_array_refuses_transformers_it_cannot_use(xor: type) -> None:
    with pytest.raises(UnknownExtensionError, match="no.such"):
        zk.create_array({}, shape=(2,), dtype="i1", storage_transformers=["no.such"])
    with pytest.raises(MetadataError, match=r"storage_transformers\[0\]"):
        zk.create_array({}, shape=(2,), dtype="i1", storage_transformers=[{"name": 3}])
    with pytest.raises(UnknownExtensionError, match="storage transformer 'gzip'"):
        zk.create_array({}, shape=(2,), dtype="i1", storage_transformers=["gzip"])
    gzip = extension_from_json(
        "codec", {"name": "gzip", "configuration": {"level": 1}}, V3, key="c"
    )
    with pytest.raises(MetadataError, match="expected a storage transformer, got"):
        zk.create_array({}, shape=(2,), dtype="i1", storage_transformers=[gzip])
    with pytest.raises(MetadataError, match="zarr format 2 has no storage transformers"):
        zk.create_array(
            {}, shape=(2,), dtype="i1", zarr_format=2, storage_transformers=["test.xor"]
        )
    with pytest.raises(MetadataError, match="'key' must be int"):
        zk.create_array(
            {},
            shape=(2,),
            dtype="i1",
            storage_transformers=[{"name": "test.xor", "configuration": {"key": "x"}}],
        )


# -- broken transformers fail the suite -------------------------------------------------------
class _Prefixed(Store):
    """Stores every key under `prefix` in place of the node path (the node path dropped)."""

    def __init__(self, inner: Store, node_path: str) -> None:
        self.inner, self.cut = inner, len(node_path) + 1 if node_path else 0

    def _key(self, key: str) -> str:
        return "chunks/" + key[self.cut :]

    def get(self, key: str, byte_range: Range | None = None) -> bytes | None:
        return self.inner.get(self._key(key), byte_range)

    def set(self, key: str, value: Any) -> None:
        self.inner.set(self._key(key), value)

    def erase(self, key: str) -> None:
        self.inner.erase(self._key(key))

    def list(self) -> Iterator[str]:
        return (k for k in self.inner.list())


class DropsNodePath(XorTransformer):
    def wrap(self, store: Store, node_path: str) -> Store:
        return _Prefixed(store, node_path)


class _Truncating(_XorStore):
    def set(self, key: str, value: Any) -> None:
        super().set(key, memoryview(value).tobytes()[:-1])


class CorruptsBytes(XorTransformer):
    def wrap(self, store: Store, node_path: str) -> Store:
        return _Truncating(store, self.key)


class _EmptyForAbsent(_XorStore):
    def get(self, key: str, byte_range: Range | None = None) -> bytes | None:
        return super().get(key, byte_range) or b""


class AbsentAsEmpty(XorTransformer):
    def wrap(self, store: Store, node_path: str) -> Store:
        return _EmptyForAbsent(store, self.key)


class RawConfigErrors(XorTransformer):
    @classmethod
    def from_json(
        cls, name: str, configuration: Mapping[str, Any], format: str = V3
    ) -> XorTransformer:
        return cls(int(configuration.get("key", 0x5A)))  # "5A" -> a raw ValueError


def _suite() -> StorageTransformerTests:
    suite = StorageTransformerTests()
    suite.registered = False
    return suite


def test_transformer_suite_catches_a_transformer_that_drops_the_node_path() -> None:
    suite, broken = _suite(), DropsNodePath()
    suite.test_values_read_back(broken, "g/temp")  # alone, an array reads back its values
    with pytest.raises(AssertionError, match="reads another array's chunk"):
        suite.test_arrays_sharing_a_store_keep_their_chunks_apart(broken)
    with pytest.raises(AssertionError, match="written outside 'a/'"):
        suite.test_writes_stay_under_the_node(broken, "a")


def test_transformer_suite_catches_corrupted_bytes() -> None:
    with pytest.raises(AssertionError, match="read back wrong through the transformer"):
        _suite().test_values_read_back(CorruptsBytes(), "a")


def test_transformer_suite_catches_absence_read_as_empty() -> None:
    with pytest.raises(AssertionError):
        _suite().test_absent_is_absent(AbsentAsEmpty(), "a")


def test_transformer_suite_catches_raw_configuration_errors() -> None:
    suite = _suite()
    suite.bad_configurations = ({"key": "5A"},)
    with pytest.raises(ValueError, match="5A"):  # not a MetadataError: the test fails
        suite.test_bad_configuration_is_a_metadata_error(RawConfigErrors())
    suite.test_bad_configuration_is_a_metadata_error(XorTransformer())


# -- broken stores fail the store suite -------------------------------------------------------
class StaleListing(MemoryStore):
    """Lists what was there the first time it listed."""

    def __init__(self) -> None:
        super().__init__(mode="w")
        self.seen: list[str] | None = None

    def list(self) -> Iterator[str]:
        if self.seen is None:
            self.seen = sorted(super().list())
        return iter(self.seen)

    def list_prefix(self, prefix: str) -> Iterator[str]:
        return (k for k in self.list() if k.startswith(prefix))

    def list_dir(self, prefix: str) -> tuple[list[str], list[str]]:
        return Store.list_dir(self, prefix)


class WrongRanges(MemoryStore):
    """Reads one byte too many of every range."""

    def get(self, key: str, byte_range: Range | None = None) -> bytes | None:
        if isinstance(byte_range, ByteRange) and byte_range.length is not None:
            byte_range = ByteRange(byte_range.offset, byte_range.length + 1)
        return super().get(key, byte_range)


def _filled(store: Store) -> Any:
    def fill(items: Mapping[str, bytes]) -> Store:
        store.set_many(items)
        return store

    return fill


def test_store_suite_catches_stale_listings() -> None:
    suite = StoreTests()
    suite.test_listing_follows_writes_and_erases(MemoryStore(mode="w"))
    with pytest.raises(AssertionError):
        suite.test_listing_follows_writes_and_erases(StaleListing())
    with pytest.raises(AssertionError):
        suite.test_list(StaleListing())


def test_store_suite_catches_wrong_byte_ranges() -> None:
    suite = StoreTests()
    good, bad = MemoryStore(mode="w"), WrongRanges(mode="w")
    suite.test_byte_range(_filled(good), ByteRange(10, 5), VALUE[10:15])
    with pytest.raises(AssertionError):
        suite.test_byte_range(_filled(bad), ByteRange(10, 5), VALUE[10:15])
    with pytest.raises(AssertionError):
        suite.test_ranges_of_an_overwritten_value(WrongRanges(mode="w"))


def test_the_suite_wraps_any_store_it_is_given() -> None:
    """`inner_store` is the suite's one hook for the store wrapped: a transformer meant for
    one backend runs the suite over it."""

    class OverMapping(StorageTransformerTests):
        registered = False

        def inner_store(self) -> Store:
            return open_store({}, mode="w")

    OverMapping().test_values_read_back(XorTransformer(), "a")


@pytest.mark.interop
def test_zarr_python_reads_the_rest_of_the_metadata(xor: type, tmp_path: Path) -> None:
    """zarr-python 3.4 implements no storage transformer, so it refuses the array, naming
    the transformer; everything else zarrkit wrote is metadata it reads (shown with the
    transformer left out of a copy, whose XOR key 0 stores the bytes unchanged)."""
    zarr = pytest.importorskip("zarr")
    data = np.arange(20, dtype="<f4").reshape(4, 5)
    a = zk.create_array(
        str(tmp_path), shape=data.shape, chunks=(2, 5), dtype="f4", storage_transformers=[xor(0)]
    )
    a[...] = data
    with pytest.raises(ValueError, match="test.xor"):
        zarr.open_array(str(tmp_path), mode="r")
    doc = json.loads((tmp_path / "zarr.json").read_text())
    del doc["storage_transformers"]
    (tmp_path / "zarr.json").write_text(json.dumps(doc))
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path), mode="r")[...], data)
