"""The example store against zarrkit's conformance suite, and as a user sees it."""

from __future__ import annotations

import numpy as np
import pytest
from zarrkit_example_sqlite import SqliteStore
from zarrkit_testing import StoreTests

import zarrkit as zk


class TestSqliteStore(StoreTests):
    @pytest.fixture
    def store(self, tmp_path):
        with SqliteStore(tmp_path / "data.db", mode="w") as store:
            yield store

    def store_reopen(self, store):
        return SqliteStore(store.path, mode="r")


def test_an_array_by_url(tmp_path):
    url = f"sqlite://{tmp_path / 'data.db'}"
    data = np.arange(100, dtype="float32").reshape(10, 10)
    zk.create_array(url, path="g/a", shape=(10, 10), chunks=(4, 4), dtype="float32")[...] = data
    np.testing.assert_array_equal(zk.open_array(url, path="g/a", mode="r")[...], data)
    assert sorted(zk.open_group(url, mode="r").keys()) == ["g"]
