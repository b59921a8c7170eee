"""Node names a store cannot hold are refused with InvalidKeyError before anything is written:
names of metadata documents (any format) and names longer than the store's file-name limit.
Creating a deep hierarchy costs store work linear in its depth."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import zarrkit as zk
from zarrkit.errors import InvalidKeyError
from zarrkit.plugins.stores.local.local import LocalStore
from zarrkit.plugins.stores.memory import MemoryStore
from zarrkit.plugins.stores.wrappers.metrics import Collector, MetricsStore

FORMATS = [3, 2, "v3-draft-2020"]


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(
    "name", ["zarr.json", ".zarray", ".zgroup", ".zattrs", ".zmetadata", "a/zarr.json/b"]
)
def test_names_of_metadata_documents_are_refused(tmp_path, fmt, name):
    store = LocalStore(tmp_path / "s", mode="w")
    root = zk.create_group(store, zarr_format=fmt)
    before = _files(tmp_path)
    with pytest.raises(InvalidKeyError, match="name of a metadata document"):
        root.create_group(name)
    with pytest.raises(InvalidKeyError, match="name of a metadata document"):
        root.create_array(name, shape=(2,), dtype="u1")
    with pytest.raises(InvalidKeyError):
        zk.create_array(store, path=name, shape=(2,), dtype="u1", zarr_format=fmt)
    assert _files(tmp_path) == before  # nothing written
    assert name not in root
    with pytest.raises(InvalidKeyError):
        root[name]


@pytest.mark.parametrize("fmt", FORMATS)
def test_names_too_long_for_the_file_system_are_refused_before_writing(tmp_path, fmt):
    store = LocalStore(tmp_path / "s", mode="w")
    root = zk.create_group(store, zarr_format=fmt)
    limit = os.pathconf(tmp_path, "PC_NAME_MAX")
    before = _files(tmp_path)
    for name in ["x" * 300, f"new/parents/{'y' * (limit + 1)}", "é" * (limit // 2 + 1)]:
        with pytest.raises(InvalidKeyError, match=f"at most {limit} bytes"):
            root.create_group(name)
        with pytest.raises(InvalidKeyError, match=f"at most {limit} bytes"):
            root.create_array(name, shape=(2,), dtype="u1")
        assert _files(tmp_path) == before  # not even the missing parents
        assert name not in root
        with pytest.raises(InvalidKeyError):
            root[name]
    # the longest name that fits is fine (the draft adds `.array.json` to it)
    longest = "z" * (limit - (11 if fmt == "v3-draft-2020" else 0))
    root.create_array(longest, shape=(2,), dtype="u1")[:] = 5
    assert zk.open_array(store, path=longest)[:].tolist() == [5, 5]


def test_a_store_without_a_name_limit_takes_long_names():
    root = zk.create_group(MemoryStore())
    root.create_group("x" * 1000)
    assert root.keys() == ["x" * 1000]


def test_wrappers_report_the_name_limit_of_the_store_they_wrap(tmp_path):
    store = LocalStore(tmp_path / "s", mode="w")
    assert (
        MetricsStore(store).name_limit()
        == store.name_limit()
        == os.pathconf(tmp_path, "PC_NAME_MAX")
    )
    with pytest.raises(InvalidKeyError):
        zk.create_group(MetricsStore(store), path="n" * 300)


def _creation_cost(depth: int, fmt) -> tuple[int, int]:
    """Store calls and keys asked to create a group `depth` levels down in a fresh store."""
    collector = Collector()
    store = MetricsStore(MemoryStore(), collector=collector)
    zk.create_group(store, zarr_format=fmt)
    collector.reset()
    zk.create_group(store, path="/".join(["g"] * depth), zarr_format=fmt)
    (summary,) = collector.summary().values()
    return (sum(s["calls"] for s in summary.values()), sum(s["keys"] for s in summary.values()))


@pytest.mark.parametrize("fmt", FORMATS)
def test_creating_a_deep_node_costs_store_work_linear_in_its_depth(fmt):
    calls_n, keys_n = _creation_cost(100, fmt)
    calls_2n, keys_2n = _creation_cost(200, fmt)
    assert calls_2n <= 2.5 * calls_n
    assert keys_2n <= 2.5 * keys_n
    if fmt != "v3-draft-2020":  # (whose implicit groups need its own probe per level)
        # the ancestors are looked for in one batched call, not probed format by format
        # (a walk of the whole path each on a file system); a level costs its write
        assert calls_2n <= 2 * 200 + 10


def test_chunk_keys_too_long_for_the_file_system_are_refused_before_writing(tmp_path):
    store = LocalStore(tmp_path / "s", mode="w")
    zk.create_group(store, zarr_format=2)
    before = _files(tmp_path)
    # v2 joins the 64 indices of a chunk with '.': '9999.9999.[...]' is 319 bytes
    with pytest.raises(InvalidKeyError, match="chunk keys cannot be stored"):
        zk.create_array(
            store, path="a", shape=(10_000,) * 64, chunks=(1,) * 64, dtype="u1", zarr_format=2
        )
    assert _files(tmp_path) == before
    # the same array with '/' between the indices has short segments
    a = zk.create_array(
        store,
        path="a",
        shape=(10_000,) * 64,
        chunks=(1,) * 64,
        dtype="u1",
        zarr_format=2,
        dimension_separator="/",
    )
    a[(9_999,) * 64] = 7
    assert zk.open_array(store, path="a")[(9_999,) * 64] == 7


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(
    "name", ["__xarray_dataarray_variable__", "__values__", "__", "___x", "a/__b"]
)
def test_names_starting_with_two_underscores_are_nodes_like_any_other(tmp_path, fmt, name):
    """zarr-python and xarray write these in both formats (the v3 spec reserves the prefix,
    docs/zarr-python.md), so zarrkit writes and reopens them too."""
    store = LocalStore(tmp_path / "s", mode="w")
    root = zk.create_group(store, zarr_format=fmt)
    root.create_array(name, shape=(2,), dtype="u1")[...] = 7
    root.create_group("g").create_group(name.rpartition("/")[2])
    reopened = zk.open_group(LocalStore(tmp_path / "s", mode="r"))
    assert reopened[name][...].tolist() == [7, 7]
    assert zk.open_array(str(tmp_path / "s"), path=name).path == name
    assert name.rpartition("/")[2] in reopened["g"]
    assert name.partition("/")[0] in [*reopened.group_keys(), *reopened.array_keys()]


@pytest.mark.interop
@pytest.mark.parametrize("fmt", [2, 3])
def test_zarr_python_reads_and_writes_the_same_underscore_names(tmp_path, fmt):
    zarr = pytest.importorskip("zarr")
    theirs = zarr.create_group(str(tmp_path / "theirs"), zarr_format=fmt)
    theirs.create_array("__values__", shape=(2,), dtype="u1")[...] = 3
    assert zk.open_array(str(tmp_path / "theirs"), path="__values__")[...].tolist() == [3, 3]
    ours = zk.create_group(str(tmp_path / "ours"), zarr_format=fmt)
    ours.create_array("__values__", shape=(2,), dtype="u1")[...] = 5
    assert zarr.open_group(str(tmp_path / "ours"))["__values__"][...].tolist() == [5, 5]
