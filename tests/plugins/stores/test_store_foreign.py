"""Objects of other libraries as stores: a dict or any mapping, an fsspec mapper, and any
zarr-python 3 store (through the bridge plugin), each accepted wherever a zarrkit store is,
and each honouring the store contract (the conformance suite runs over the bridge)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, MutableMapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from zarrkit_testing.store_tests import ReadableStoreTests, StoreTests

import zarrkit as zk
from zarrkit import registry
from zarrkit.abc.store import ByteRange, Store, SuffixRange
from zarrkit.errors import ReadOnlyError, StoreError
from zarrkit.plugins.stores.adapters.mapping import MappingStore
from zarrkit.plugins.stores.remote.fsspec import FsspecStore
from zarrkit.store_opening import open_store

zarr = pytest.importorskip("zarr")
fsspec = pytest.importorskip("fsspec")

from zarrkit.plugins.stores.adapters.zarr_python import ZarrPythonStore  # noqa: E402

pytestmark = pytest.mark.interop  # through zarr-python 3


# -- the conformance suite over each ----------------------------------------------------------
class TestMappingStore(StoreTests):
    @pytest.fixture
    def store(self) -> Store:
        return open_store({}, mode="w")

    def store_reopen(self, store: Store) -> Store:
        assert isinstance(store, MappingStore)
        return open_store(store.mapping, mode="r")


class TestReadOnlyMapping(ReadableStoreTests):
    """A `Mapping` that is not mutable: readable and listable, refusing writes."""

    @pytest.fixture
    def store_with(self) -> Any:
        return lambda items: open_store(_Frozen(dict(items)), mode="a")


class TestBridgeOverZarrMemoryStore(StoreTests):
    @pytest.fixture
    def store(self) -> Store:
        return open_store(zarr.storage.MemoryStore(), mode="w")

    def store_reopen(self, store: Store) -> Store:
        assert isinstance(store, ZarrPythonStore)
        return open_store(store.inner.with_read_only(True), mode="r")


class TestBridgeOverZarrLocalStore(StoreTests):
    concurrent_writers = (4, 25)

    @pytest.fixture
    def store(self, tmp_path: Path) -> Store:
        return open_store(zarr.storage.LocalStore(tmp_path / "z"), mode="w")

    def store_reopen(self, store: Store) -> Store:
        assert isinstance(store, ZarrPythonStore)
        return open_store(zarr.storage.LocalStore(store.inner.root, read_only=True), mode="a")


class TestFsspecMapper(StoreTests):
    # fsspec's local file system opens the file with "wb" (truncating it) and then writes, so
    # a reader may see an empty or partial value; the mapping store cannot do better
    atomic_overwrites = False

    @pytest.fixture
    def store(self, tmp_path: Path) -> Store:
        (tmp_path / "m").mkdir()
        return open_store(fsspec.get_mapper(str(tmp_path / "m")), mode="w")

    def store_reopen(self, store: Store) -> Store:
        assert isinstance(store, MappingStore)
        return open_store(store.mapping, mode="r")


class _Frozen(Mapping[str, bytes]):
    def __init__(self, data: dict[str, bytes]) -> None:
        self._data = data

    def __getitem__(self, key: str) -> bytes:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)


# -- which plugin takes what ------------------------------------------------------------------
def test_each_object_goes_to_the_plugin_that_knows_it(tmp_path: Path) -> None:
    assert type(open_store({})) is MappingStore
    # a mapper of a remote (async) filesystem reads through the filesystem; a local one
    # through its own methods, which make the folders a local filesystem needs
    remote = open_store(fsspec.get_mapper("s3://bucket/x.zarr", anon=True))
    assert type(remote) is FsspecStore and remote.root == "bucket/x.zarr"
    assert type(open_store(fsspec.get_mapper(str(tmp_path)))) is MappingStore
    assert type(open_store(zarr.storage.MemoryStore())) is ZarrPythonStore
    zk_store = zk.store_opening.open_store("memory://")
    assert open_store(zk_store) is zk_store


def test_something_no_plugin_takes_is_refused() -> None:
    with pytest.raises(TypeError, match=r"got object\b"):
        open_store(object())
    with pytest.raises(TypeError, match="storage_options"):
        open_store({}, storage_options={"anon": True})


def test_a_runtime_store_class_is_asked_before_the_installed_ones() -> None:
    """The order `open_store` documents: `adapt_order`, then runtime registrations."""

    class Tagged(dict):  # a mapping the mapping store would also take
        pass

    class TaggedStore(MappingStore):
        names = zk.abc.names("tagged")
        adapt_order = 100

        @classmethod
        def adapt(cls, obj: object, *, mode: str = "r") -> MappingStore | None:
            return cls(obj, mode=mode) if isinstance(obj, Tagged) else None

    handle = registry.register("store", TaggedStore)
    try:
        assert type(open_store(Tagged())) is TaggedStore
        assert type(open_store({})) is MappingStore
    finally:
        registry.unregister(handle)
    assert type(open_store(Tagged())) is MappingStore


# -- arrays and groups over each ----------------------------------------------------------------
def _stores(tmp_path: Path) -> dict[str, Any]:
    (tmp_path / "fs").mkdir()
    return {
        "dict": {},
        "fsspec-mapper": fsspec.get_mapper(str(tmp_path / "fs")),
        "zarr-memory": zarr.storage.MemoryStore(),
        "zarr-local": zarr.storage.LocalStore(tmp_path / "zl"),
    }


@pytest.mark.parametrize("kind", ["dict", "fsspec-mapper", "zarr-memory", "zarr-local"])
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_arrays_and_groups_over_foreign_stores(tmp_path: Path, kind: str, zarr_format: int) -> None:
    foreign = _stores(tmp_path)[kind]
    data = np.arange(60, dtype="<f8").reshape(6, 10)
    root = zk.open_group(foreign, mode="w", zarr_format=zarr_format)
    root.attrs["title"] = "foreign"
    arr = root.create_array("a", shape=data.shape, chunks=(4, 4), dtype=data.dtype)
    arr[...] = data
    arr[1:3, 2:5] = -1
    expected = data.copy()
    expected[1:3, 2:5] = -1
    again = zk.open_group(foreign, mode="r")
    assert again.attrs["title"] == "foreign"
    assert np.array_equal(again["a"][...], expected)
    assert sorted(again.array_keys()) == ["a"]
    # and zarr-python reads the same from the same object
    if kind.startswith("zarr"):
        theirs = zarr.open_group(foreign, mode="r")
        assert np.array_equal(theirs["a"][...], expected)
        assert theirs.attrs["title"] == "foreign"


def test_zarr_python_writes_into_a_zarr_store_zarrkit_reads(tmp_path: Path) -> None:
    foreign = zarr.storage.LocalStore(tmp_path / "z")
    data = np.arange(100, dtype="<i4").reshape(10, 10)
    theirs = zarr.create_array(foreign, name="x", shape=data.shape, chunks=(3, 3), dtype="i4")
    theirs[...] = data
    ours = zk.open_group(foreign, mode="r")["x"]
    assert np.array_equal(ours[...], data)
    assert np.array_equal(ours[2:7, 1:9], data[2:7, 1:9])


def test_read_only_modes_are_honoured(tmp_path: Path) -> None:
    foreign = zarr.storage.MemoryStore()
    zk.create_array(foreign, shape=(4,), chunks=(2,), dtype="u1")[...] = 7
    with pytest.raises(ReadOnlyError):
        zk.open_array(foreign, mode="r")[...] = 1
    frozen = zk.open_array(foreign.with_read_only(True), mode="r+")
    with pytest.raises(ReadOnlyError):
        frozen[...] = 1
    assert (zk.open_array(foreign, mode="r")[...] == 7).all()


# -- failures of the foreign store come out as zarrkit errors ---------------------------------
class _Failing(MutableMapping[str, bytes]):
    """A mapping whose backend breaks on one key."""

    def __init__(self, broken: str) -> None:
        self.data: dict[str, bytes] = {}
        self.broken = broken

    def __getitem__(self, key: str) -> bytes:
        if key == self.broken:
            raise OSError("disk on fire")
        return self.data[key]

    def __setitem__(self, key: str, value: bytes) -> None:
        if key == self.broken:
            raise OSError("disk on fire")
        self.data[key] = value

    def __delitem__(self, key: str) -> None:
        del self.data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)


def test_a_failing_mapping_gives_store_errors_naming_key_and_operation() -> None:
    backend = _Failing("0")
    arr = zk.create_array(backend, shape=(4,), chunks=(2,), dtype="u1", zarr_format=2)
    with pytest.raises(StoreError) as raised:
        arr[...] = 1
    assert (raised.value.key, raised.value.operation) == ("0", "write")
    backend.broken = "1"
    backend.data["0"] = bytes(2)
    with pytest.raises(StoreError) as raised:
        arr[...]
    assert raised.value.key == "1" and raised.value.operation == "read"
    assert "disk on fire" in str(raised.value)


class _FailingZarrStore(zarr.storage.MemoryStore):  # type: ignore[misc]
    broken = "x/c/0"

    async def get(self, key: str, prototype: Any, byte_range: Any = None) -> Any:
        if key == self.broken:
            raise ConnectionError("backend went away")
        return await super().get(key, prototype, byte_range)

    async def set(self, key: str, value: Any) -> None:
        if key == self.broken:
            raise PermissionError("no writes here")
        await super().set(key, value)


def test_a_failing_zarr_store_gives_store_errors_naming_key_and_operation() -> None:
    foreign = _FailingZarrStore()
    arr = zk.create_array(foreign, path="x", shape=(4,), chunks=(2,), dtype="u1")
    with pytest.raises(StoreError) as raised:
        arr[...] = 1
    assert (raised.value.key, raised.value.operation) == ("x/c/0", "write")
    assert "no writes here" in str(raised.value)
    foreign.broken = "x/c/1"
    arr[:2] = 3
    with pytest.raises(StoreError) as raised:
        arr[...]
    assert (raised.value.key, raised.value.operation) == ("x/c/1", "read")
    assert "backend went away" in str(raised.value)


def test_a_zarr_store_that_refuses_ranges_past_the_end_is_answered_by_the_contract() -> None:
    """zarr-python lets a store refuse a range that starts past the end or is empty."""

    class Strict(zarr.storage.MemoryStore):  # type: ignore[misc]
        async def get(self, key: str, prototype: Any, byte_range: Any = None) -> Any:
            value = await super().get(key, prototype, None)
            if value is None or byte_range is None:
                return value
            size = len(value)
            rng = byte_range
            if isinstance(rng, zarr.abc.store.RangeByteRequest) and (
                rng.start >= size or rng.end <= rng.start or rng.end > size
            ):
                raise ValueError("range not satisfiable")
            if isinstance(rng, zarr.abc.store.SuffixByteRequest) and rng.suffix > size:
                raise ValueError("range not satisfiable")
            return await super().get(key, prototype, byte_range)

    store = open_store(Strict(), mode="w")
    store.set("k", bytes(range(10)))
    assert store.get("k", ByteRange(8, 5)) == bytes([8, 9])
    assert store.get("k", ByteRange(20, 5)) == b""
    assert store.get("k", SuffixRange(50)) == bytes(range(10))
    assert store.get("missing", ByteRange(20, 5)) is None


@pytest.mark.parametrize("kind", ["dict", "zarr-memory"])
def test_xarray_and_dask_over_foreign_stores(tmp_path: Path, kind: str) -> None:
    xr = pytest.importorskip("xarray")
    pytest.importorskip("dask")
    from zarrkit.dask import from_zarrkit
    from zarrkit.xarray import to_zarrkit

    foreign = _stores(tmp_path)[kind]
    ds = xr.Dataset({"t": (("x", "y"), np.arange(20.0).reshape(4, 5))}, attrs={"a": 1})
    to_zarrkit(ds, foreign, mode="w")
    xr.testing.assert_identical(xr.open_dataset(foreign, engine="zarrkit").load(), ds)
    lazy = from_zarrkit(foreign, "t", chunks=(2, 5))
    assert lazy.numblocks == (2, 1) and np.array_equal(lazy.compute(), ds["t"].values)


def test_a_zarr_store_answering_something_else_than_bytes_is_a_store_error() -> None:
    class Odd(zarr.storage.MemoryStore):  # type: ignore[misc]
        async def get(self, key: str, prototype: Any, byte_range: Any = None) -> Any:
            return 42 if key == "k" else await super().get(key, prototype, byte_range)

    store = open_store(Odd(), mode="w")
    with pytest.raises(StoreError) as raised:
        store.get("k")
    assert (raised.value.key, raised.value.operation) == ("k", "read")
    assert "int" in str(raised.value)
