"""The store wrappers: the LRU byte cache and the metrics recorder, each passing the store
conformance suite in front of a real store, plus what each adds, and the `store_metrics`
setting that wraps every store zarrkit opens."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import numpy as np
import pytest
from zarrkit_testing.store_tests import StoreTests

import zarrkit as zk
from zarrkit import config, store_opening
from zarrkit.abc.store import ByteRange, Store, SuffixRange
from zarrkit.errors import CapabilityError, ReadOnlyError
from zarrkit.plugins.stores.local.local import LocalStore
from zarrkit.plugins.stores.memory import MemoryStore
from zarrkit.plugins.stores.remote.http import HttpStore
from zarrkit.plugins.stores.wrappers.cache import CachingStore
from zarrkit.plugins.stores.wrappers.metrics import Collector, MetricsStore


class TestCachingStore(StoreTests):
    @pytest.fixture
    def store(self, tmp_path: Path) -> CachingStore:
        return CachingStore(LocalStore(tmp_path / "root", mode="w"), max_bytes=4096)

    def store_reopen(self, store: Store) -> Store:
        assert isinstance(store, CachingStore)
        return CachingStore(LocalStore(store.inner.root, mode="r"))  # type: ignore[attr-defined]


class TestMetricsStore(StoreTests):
    @pytest.fixture
    def store(self) -> MetricsStore:
        return MetricsStore(
            MemoryStore(f"metrics-{uuid.uuid4().hex}", mode="w"), collector=Collector()
        )

    def store_reopen(self, store: Store) -> Store:
        assert isinstance(store, MetricsStore) and isinstance(store.inner, MemoryStore)
        return MetricsStore(MemoryStore(store.inner.name, mode="r"), collector=Collector())


# -- the cache ---------------------------------------------------------------------------------------
def _counted(inner: Store) -> tuple[CachingStore, Collector]:
    """A cache in front of a metrics wrapper: the collector counts what reached the store."""
    collector = Collector()
    return CachingStore(MetricsStore(inner, collector=collector), max_bytes=1000), collector


def _reads(collector: Collector) -> int:
    stats = next(iter(collector.summary().values()), {})
    return sum(s["keys"] for op, s in stats.items() if op.startswith("get"))


def test_cache_serves_repeated_reads_without_the_store() -> None:
    cache, collector = _counted(MemoryStore())
    cache.set_many({"a": b"x" * 100, "b": b"y" * 100})
    for _ in range(5):
        assert cache.get("a") == b"x" * 100
        assert cache.get("a", ByteRange(10, 5)) == b"x" * 5  # cut from the cached value
        assert cache.get_many(["a", "b", "missing"]) == {"a": b"x" * 100, "b": b"y" * 100}
    assert _reads(collector) == 1 + 2 + 4  # a; then b and missing; then missing, 4 more times
    info = cache.cache_info()
    assert (info.entries, info.bytes) == (2, 200) and info.hits > 10


def test_cache_caches_ranges_of_values_it_does_not_hold() -> None:
    cache, collector = _counted(MemoryStore())
    cache.set("shard", bytes(range(256)))
    for _ in range(3):
        assert cache.get("shard", SuffixRange(16)) == bytes(range(240, 256))  # a shard index
    assert _reads(collector) == 1
    assert cache.cache_info().bytes == 16


def test_cache_stays_within_its_bytes_evicting_least_recently_used() -> None:
    cache, collector = _counted(MemoryStore())
    cache.set_many({f"k{i}": bytes([i]) * 300 for i in range(5)})
    for i in range(5):
        cache.get(f"k{i}")
    assert cache.cache_info().bytes <= 1000
    cache.get("k4")  # still held
    cache.get("k3")
    before = _reads(collector)
    cache.get("k0")  # evicted long ago
    assert _reads(collector) == before + 1
    cache.set("huge", b"z" * 5000)  # larger than the whole cache: passed through, not held
    assert cache.get("huge") == b"z" * 5000
    assert cache.cache_info().bytes <= 1000


def test_writes_through_the_cache_are_read_back_not_stale() -> None:
    cache, _ = _counted(MemoryStore())
    cache.set("k", b"old")
    assert cache.get("k") == b"old"
    assert cache.get("k", ByteRange(0, 1)) == b"o"
    cache.set("k", b"new")
    assert cache.get("k") == b"new" and cache.get("k", ByteRange(0, 1)) == b"n"
    cache.erase("k")
    assert cache.get("k") is None
    cache.set_many({"g/a": b"1", "g/b": b"2"})
    assert cache.get_many(["g/a", "g/b"]) == {"g/a": b"1", "g/b": b"2"}
    cache.erase_prefix("g/")
    assert cache.get_many(["g/a", "g/b"]) == {}


def test_cache_in_front_of_a_read_only_store_keeps_its_capabilities(tmp_path: Path) -> None:
    cache = CachingStore(HttpStore("http://127.0.0.1:9/x"))
    assert not cache.writeable and not cache.listable
    with pytest.raises(ReadOnlyError):
        cache.set("k", b"v")
    with pytest.raises(CapabilityError):
        list(cache.list())


def test_cache_url_wraps_another_url(tmp_path: Path) -> None:
    url = f"cache://{tmp_path / 'data.zarr'}"
    array = zk.create_array(
        url, shape=(10,), chunks=(5,), dtype="u2", storage_options={"cache_bytes": 1 << 16}
    )
    array[:] = np.arange(10)
    assert isinstance(array.store, CachingStore) and array.store.max_bytes == 1 << 16
    assert isinstance(array.store.inner, LocalStore)
    np.testing.assert_array_equal(zk.open_array(url)[...], np.arange(10))
    assert array.store.root == tmp_path / "data.zarr"  # the backend's own attributes show through


# -- metrics -------------------------------------------------------------------------------------------
def test_metrics_count_calls_keys_bytes_and_errors(caplog: pytest.LogCaptureFixture) -> None:
    collector = Collector()
    store = MetricsStore(MemoryStore(), collector=collector)
    with caplog.at_level(logging.DEBUG, logger="zarrkit.store"):
        store.set_many({"a": b"12345", "b": b"678"})
        store.get_many(["a", "b", "c"])
        store.get_ranges([("a", ByteRange(0, 2)), ("b", None)])
        store.list_dir("")
        with pytest.raises(ValueError):
            store.get("../x")
    [(label, ops)] = collector.summary().items()
    assert label == repr(store.inner) and label.startswith("MemoryStore('memory://")
    assert ops["set_many"] | {"seconds": 0} == {
        "calls": 1,
        "keys": 2,
        "bytes": 8,
        "seconds": 0,
        "errors": 0,
    }
    assert (ops["get_many"]["keys"], ops["get_many"]["bytes"]) == (3, 8)
    assert (ops["get_ranges"]["keys"], ops["get_ranges"]["bytes"]) == (2, 5)
    assert ops["list_dir"]["keys"] == 2
    assert ops["get"]["errors"] == 1
    assert any("set_many keys=2 bytes=8" in r.getMessage() for r in caplog.records)
    report = collector.report()
    assert label in report and "get_many" in report


def test_store_metrics_setting_wraps_every_opened_store(tmp_path: Path) -> None:
    store_opening.reset_metrics()
    with config.override(store_metrics=True):
        array = zk.create_array(str(tmp_path / "a.zarr"), shape=(8,), chunks=(4,), dtype="i4")
        array[:] = np.arange(8)
        assert isinstance(array.store, MetricsStore)
        assert isinstance(store_opening.open_store(array.store), MetricsStore)  # not wrapped twice
        assert not isinstance(array.store.inner, MetricsStore)
        zk.open_array(str(tmp_path / "a.zarr"))[...]
    # (read through the public names, `zarrkit.storage`, as a user and the CLI read them)
    summary = zk.storage.metrics_summary()
    [ops] = [ops for label, ops in summary.items() if "a.zarr" in label]
    assert ops["set_many"]["keys"] == 2 and ops["get_many"]["keys"] >= 2
    assert "set_many" in zk.storage.metrics_report()
    assert not isinstance(zk.open_array(str(tmp_path / "a.zarr")).store, MetricsStore)
    zk.storage.reset_metrics()
    assert zk.storage.metrics_summary() == {}


def test_store_metrics_environment_variable(tmp_path: Path) -> None:
    code = textwrap.dedent("""
        import json, sys, numpy as np, zarrkit as zk
        from zarrkit import store_opening
        a = zk.create_array(sys.argv[1], shape=(6,), chunks=(2,), dtype="u1")
        a[:] = np.arange(6)
        print(json.dumps(store_opening.metrics_summary()))
        print(store_opening.metrics_report(), file=sys.stderr)
    """)
    env = {**os.environ, "ZARRKIT_STORE_METRICS": "1"}
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "m.zarr")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    [ops] = json.loads(done.stdout).values()
    assert ops["set_many"]["keys"] == 3 and ops["set"]["calls"] >= 1  # 3 chunks, metadata
    assert "store metrics:" in done.stderr and "set_many" in done.stderr
