"""icechunk (transactional, versioned Zarr) through the zarr-python store bridge: a repository on
the local filesystem, written through zarrkit in sessions, committed, and its past snapshots
read back through zarrkit and zarr-python."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrkit as zk
from zarrkit.errors import ReadOnlyError, StoreError
from zarrkit.store_opening import open_store

icechunk = pytest.importorskip("icechunk")
zarr = pytest.importorskip("zarr")

pytestmark = pytest.mark.interop  # through zarr-python 3

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _repository(path: Path) -> Any:
    return icechunk.Repository.create(icechunk.local_filesystem_storage(str(path)))


def test_keys_icechunk_refuses_give_store_errors(tmp_path: Path) -> None:
    """icechunk holds Zarr's keys only (metadata documents and chunks), so it is no general
    key-value store (the store conformance suite does not apply); what it refuses comes back
    as a zarrkit error naming the key and the operation."""
    store = open_store(_repository(tmp_path / "repo").writable_session("main").store, mode="a")
    with pytest.raises(StoreError) as raised:
        store.set("notes.txt", b"hello")
    assert (raised.value.key, raised.value.operation) == ("notes.txt", "write")
    assert "notes.txt" in str(raised.value)


def test_write_commit_and_read_past_snapshots(tmp_path: Path) -> None:
    repo = _repository(tmp_path / "repo")
    first = np.arange(8 * 10, dtype="<f4").reshape(8, 10)

    session = repo.writable_session("main")
    root = zk.open_group(session.store, mode="w")
    root.attrs["version"] = 1
    temps = root.create_array("temps", shape=first.shape, chunks=(3, 4), dtype=first.dtype)
    temps[...] = first
    counts = root.create_group("g").create_array("counts", shape=(5,), chunks=(2,), dtype="i8")
    counts[...] = np.arange(5)
    snapshot_1 = session.commit("first")

    session = repo.writable_session("main")
    root = zk.open_group(session.store, mode="a")
    root.attrs["version"] = 2
    root["temps"][2:5, 3:9] = -1
    del root["g"]
    root.create_array("labels", shape=(3,), chunks=(3,), dtype="u1")[...] = [7, 8, 9]
    snapshot_2 = session.commit("second")
    assert snapshot_1 != snapshot_2

    second = first.copy()
    second[2:5, 3:9] = -1

    past = zk.open_group(repo.readonly_session(snapshot_id=snapshot_1).store, mode="r")
    assert past.attrs["version"] == 1
    assert np.array_equal(past["temps"][...], first)
    assert np.array_equal(past["g/counts"][...], np.arange(5))
    assert "labels" not in past

    now = zk.open_group(repo.readonly_session(branch="main").store, mode="r")
    assert now.attrs["version"] == 2
    assert np.array_equal(now["temps"][...], second)
    assert np.array_equal(now["labels"][...], [7, 8, 9])
    assert sorted(now.group_keys()) == [] and sorted(now.array_keys()) == ["labels", "temps"]

    # zarr-python sees the same snapshots
    theirs = zarr.open_group(repo.readonly_session(snapshot_id=snapshot_1).store, mode="r")
    assert np.array_equal(theirs["temps"][...], first)
    theirs = zarr.open_group(repo.readonly_session(branch="main").store, mode="r")
    assert np.array_equal(theirs["temps"][...], second)


def test_uncommitted_writes_stay_in_their_session(tmp_path: Path) -> None:
    repo = _repository(tmp_path / "repo")
    session = repo.writable_session("main")
    zk.create_array(session.store, shape=(4,), chunks=(2,), dtype="u2")[...] = 3
    session.commit("base")

    pending = repo.writable_session("main")
    zk.open_array(pending.store, mode="r+")[...] = 9
    assert (zk.open_array(pending.store)[...] == 9).all()
    assert (zk.open_array(repo.readonly_session(branch="main").store)[...] == 3).all()
    pending.discard_changes()
    assert (zk.open_array(pending.store)[...] == 3).all()


def test_a_read_only_session_refuses_writes(tmp_path: Path) -> None:
    repo = _repository(tmp_path / "repo")
    session = repo.writable_session("main")
    zk.create_array(session.store, shape=(4,), chunks=(2,), dtype="u2")[...] = 3
    session.commit("base")
    frozen = zk.open_array(repo.readonly_session(branch="main").store, mode="r+")
    with pytest.raises(ReadOnlyError):
        frozen[...] = 1
    assert (zk.open_array(repo.readonly_session(branch="main").store)[...] == 3).all()
