"""zarr-python's node calls run unchanged against `zarr` and `zarrkit`: `Group.get_group` /
`get_array`, `create_group()` / `open_group()` without a store, a pickled array `==` its
original, `create_hierarchy`, and `ContainsGroupError` / `ContainsArrayError` where each
applies."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import pytest

import zarrkit
from zarrkit.errors import ContainsArrayError, ContainsGroupError, ContainsNodeError

zarr = pytest.importorskip("zarr")

pytestmark = [pytest.mark.interop, pytest.mark.filterwarnings("ignore:::zarr")]

LIBRARIES = pytest.mark.parametrize("zk", [zarr, zarrkit], ids=["zarr", "zarrkit"])


def _raised(call: Any) -> str:
    try:
        call()
    except Exception as exc:
        return type(exc).__name__
    return "nothing"


@LIBRARIES
def test_get_group_and_get_array(zk: Any) -> None:
    root = zk.create_group(zk.storage.MemoryStore())
    sub = root.create_group("sub")
    sub.create_array("x", shape=(2,), dtype="i4")
    assert root.get_group("sub").path == "sub"
    assert root.get_array("sub/x").shape == (2,)
    assert sub.get_array("x").path == "sub/x"
    assert _raised(lambda: root.get_group("sub/x")) == "ContainsArrayError"
    assert _raised(lambda: root.get_array("sub")) == "ContainsGroupError"
    # (zarr-python: Array/GroupNotFoundError, FileNotFoundErrors; zarrkit: NodeNotFoundError,
    # a KeyError, as for every missing node: see docs/zarr-python.md)
    with pytest.raises((KeyError, FileNotFoundError)):
        root.get_array("nope")
    with pytest.raises((KeyError, FileNotFoundError)):
        root.get_group("nope")


@LIBRARIES
def test_no_store_is_a_new_memory_store(zk: Any) -> None:
    a, b = zk.create_group(None), zk.open_group()
    assert str(a.store).startswith("memory://") and str(b.store).startswith("memory://")
    assert str(a.store) != str(b.store)  # (two stores; zarr-python: == while both empty)
    a.create_array("x", shape=(1,), dtype="u1")
    assert list(a.array_keys()) == ["x"] and list(b.array_keys()) == []


@LIBRARIES
def test_pickled_array_equals_its_original(zk: Any, tmp_path: Path) -> None:
    for store in (zk.storage.MemoryStore(), str(tmp_path / zk.__name__)):
        a = zk.create_array(store, shape=(3,), dtype="f4")
        a[...] = 1.5
        again = pickle.loads(pickle.dumps(a))
        assert again == a
        assert again[...].tolist() == [1.5, 1.5, 1.5]


def test_difference_pickled_memory_copy_differs_once_written() -> None:
    """A pickled private memory store is a copy: equal to its original while the contents
    are (as zarr-python's), and two new `MemoryStore()`s are two stores (unlike zarr-python's,
    see docs/zarr-python.md)."""
    a = zarrkit.create_array(zarrkit.storage.MemoryStore(), shape=(2,), dtype="i4")
    copy = pickle.loads(pickle.dumps(a))
    assert copy == a
    copy[0] = 5
    assert copy != a
    twins = [zarr.create_array({}, shape=(1,), dtype="i1") for _ in range(2)]
    assert twins[0] == twins[1]  # (zarr-python: equal contents)
    ours = [zarrkit.create_array({}, shape=(1,), dtype="i1") for _ in range(2)]
    assert ours[0] != ours[1]


@LIBRARIES
def test_contains_errors_where_each_applies(zk: Any) -> None:
    store = zk.storage.MemoryStore()
    root = zk.create_group(store)
    root.create_array("arr", shape=(1,), dtype="u1")
    root.create_group("grp")
    kinds = [
        _raised(lambda: zk.create_group(store, path="arr")),
        _raised(lambda: zk.create_group(store, path="grp")),
        _raised(lambda: zk.create_array(store, name="arr", shape=(1,), dtype="u1")),
        _raised(lambda: zk.create_array(store, name="grp", shape=(1,), dtype="u1")),
        _raised(lambda: root.get_group("arr")),
        _raised(lambda: root.get_array("grp")),
    ]
    assert kinds == [
        "ContainsArrayError",
        "ContainsGroupError",
        "ContainsArrayError",
        "ContainsGroupError",
        "ContainsArrayError",
        "ContainsGroupError",
    ]
    # where zarr-python raises other errors, zarrkit's say which kind of node is in the way
    # (docs/zarr-python.md)
    others = [
        _raised(lambda: root.require_group("arr")),
        _raised(lambda: root.require_array("grp", shape=(1,), dtype="u1")),
        _raised(lambda: zk.open_group(store, path="arr", mode="w-")),
    ]
    if zk is zarr:
        assert others == ["TypeError", "TypeError", "FileExistsError"]
    else:
        assert others == ["ContainsArrayError", "ContainsGroupError", "ContainsArrayError"]
    assert issubclass(ContainsArrayError, ContainsNodeError)
    assert issubclass(ContainsGroupError, ContainsNodeError)
    assert zarrkit.errors.ContainsArrayError is ContainsArrayError


@LIBRARIES
def test_create_hierarchy(zk: Any) -> None:
    from zarr.core.group import GroupMetadata

    source = zarr.create_array({}, shape=(4,), dtype="i2", attributes={"u": 1})
    store = zk.storage.MemoryStore()
    nodes = {
        "a/b": GroupMetadata(attributes={"name": "leaf"}),
        "/a/x": source.metadata,
        "": GroupMetadata(attributes={"root": True}),
    }
    made = dict(zk.create_hierarchy(store=store, nodes=nodes))
    assert {p: type(n).__name__ for p, n in made.items()} == {
        "": "Group",
        "a": "Group",
        "a/b": "Group",
        "a/x": "Array",
    }
    root = zk.open_group(store, mode="r")
    assert dict(root.attrs) == {"root": True}
    assert dict(root["a/b"].attrs) == {"name": "leaf"}
    assert (root["a/x"].shape, dict(root["a/x"].attrs)) == ((4,), {"u": 1})
    again = {"a/b": GroupMetadata()}
    assert _raised(lambda: list(zk.create_hierarchy(store=store, nodes=again))) == (
        "ContainsGroupError"
    )
    under_array = {"a/x/y": GroupMetadata()}
    assert _raised(lambda: list(zk.create_hierarchy(store=store, nodes=under_array))) == (
        "ContainsArrayError"
    )
    replaced = dict(zk.create_hierarchy(store=store, nodes=again, overwrite=True))
    assert list(replaced) == ["a/b"]  # (existing implicit groups are kept, not yielded)


def test_create_hierarchy_takes_zarrkits_metadata_and_documents() -> None:
    source = zarrkit.create_array({}, shape=(2, 2), dtype="f8", attributes={"k": "v"})
    store = zarrkit.storage.MemoryStore()
    made = dict(
        zarrkit.create_hierarchy(
            store=store,
            nodes={"g/a": source.metadata, "g": {"zarr_format": 3, "node_type": "group"}},
        )
    )
    assert sorted(made) == ["", "g", "g/a"]
    assert zarrkit.open_array(store, path="g/a").metadata.to_dict() == source.metadata.to_dict()
