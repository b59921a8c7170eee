"""Groups and node paths as a user sees them, on real stores (memory and local)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable
from typing import Any

import numpy as np
import pytest

import zarrkit as zk
from zarrkit.abc.store import Store
from zarrkit.errors import (
    CapabilityError,
    ContainsNodeError,
    NodeNameError,
    NodeNotFoundError,
    ReadOnlyError,
)
from zarrkit.plugins.stores.memory import MemoryStore


def keys(store: Any) -> set[str]:
    return set(store.list())


def node_type(store: Any, path: str) -> str:
    key = f"{path}/zarr.json" if path else "zarr.json"
    return json.loads(store.get(key))["node_type"]


# --------------------------------------------------------------------------------------------
# building a hierarchy


def test_create_through_groups(store):
    root = zk.create_group(store)
    a = root.create_group("a")
    b = a.create_group("b", attributes={"level": 2})
    x = b.create_array("x", shape=(4,), dtype="int16", chunks=(2,))
    x[...] = [1, 2, 3, 4]
    assert isinstance(a, zk.Group) and isinstance(x, zk.Array)
    assert (a.path, b.path, x.path) == ("a", "a/b", "a/b/x")
    assert (a.name, b.name, x.name) == ("/a", "/a/b", "/a/b/x")
    assert b.basename == "b"
    assert {"zarr.json", "a/zarr.json", "a/b/zarr.json", "a/b/x/zarr.json"} <= keys(store)
    assert [node_type(store, p) for p in ("", "a", "a/b", "a/b/x")] == [
        "group",
        "group",
        "group",
        "array",
    ]
    assert_same_data(zk.open_array(store, path="a/b/x")[...], [1, 2, 3, 4])
    assert zk.open_group(store, path="a/b").attrs.asdict() == {"level": 2}


def assert_same_data(got: Any, expected: Iterable) -> None:
    np.testing.assert_array_equal(got, np.asarray(expected))


def test_top_level_path_creates_ancestors(store):
    x = zk.create_array(store, path="a/b/c", shape=(2, 2), dtype="float32")
    assert x.path == "a/b/c"
    for ancestor in ("", "a", "a/b"):
        assert node_type(store, ancestor) == "group"
    assert node_type(store, "a/b/c") == "array"
    g = zk.create_group(store, path="/a/other/deep/")  # slashes around a path are dropped
    assert g.path == "a/other/deep"
    assert node_type(store, "a/other") == "group"
    assert sorted(zk.open_group(store, path="a").keys()) == ["b", "other"]


def test_group_create_array_with_a_relative_path(store):
    """A name with '/' in Group.create_array/create_group is a path below the group."""
    root = zk.create_group(store)
    g = root.create_group("g")
    x = g.create_array("sub/x", shape=(3,), dtype="int8")
    assert x.path == "g/sub/x"
    assert node_type(store, "g/sub") == "group"
    assert g.keys() == ["sub"]
    assert isinstance(g["sub/x"], zk.Array)
    h = g.create_group("sub/h")
    assert h.path == "g/sub/h"
    assert g["sub"].keys() == ["h", "x"]


def test_members_and_keys(store):
    root = zk.create_group(store)
    for name in ("b", "a", "c"):
        root.create_group(name)
    for name in ("z2", "z1"):
        root.create_array(name, shape=(1,), dtype="int8")
    root["a"].create_array("inner", shape=(1,), dtype="int8")
    members = list(root.members())
    assert [n for n, _ in members] == ["a", "b", "c", "z1", "z2"]
    assert [type(m) for _, m in members] == [zk.Group] * 3 + [zk.Array] * 2
    assert [m.path for _, m in members] == ["a", "b", "c", "z1", "z2"]
    assert root.keys() == ["a", "b", "c", "z1", "z2"]
    assert list(root) == root.keys() and len(root) == 5
    assert root.array_keys() == ["z1", "z2"]
    assert root.group_keys() == ["a", "b", "c"]
    assert [n for n, _ in root.arrays()] == ["z1", "z2"]
    assert [n for n, _ in root.groups()] == ["a", "b", "c"]
    assert root["a"].keys() == ["inner"]
    assert root["c"].keys() == [] and len(root["c"]) == 0
    assert "a" in root and "z1" in root and "a/inner" in root
    assert "missing" not in root and "a/missing" not in root and 3 not in root
    for bad in ("", "/", ".", "..", "__x"):
        assert bad not in root


def test_nested_access_and_get(store):
    zk.create_array(store, path="a/b/x", shape=(2,), dtype="int8")
    root = zk.open_group(store)
    assert isinstance(root["a/b"], zk.Group)
    assert root["a/b"].path == "a/b"
    assert isinstance(root["a"]["b"]["x"], zk.Array)
    assert root["a/b/x"].path == "a/b/x"
    with pytest.raises(NodeNotFoundError):
        root["a/nope"]
    with pytest.raises(KeyError):  # a mapping's error too
        root["nope"]
    assert root.get("nope") is None
    assert root.get("nope", 5) == 5
    assert root.get("a/b").path == "a/b"


def test_group_not_listing_stray_prefixes(store):
    """Only folders holding a zarr.json are members (v3 has no implicit groups)."""
    root = zk.create_group(store)
    root.create_group("real")
    store.set("stray/data", b"x")
    assert root.keys() == ["real"]
    assert "stray" not in root


def test_delete_member(store):
    root = zk.create_group(store)
    x = root.create_array("x", shape=(4,), dtype="int8", chunks=(1,))
    x[...] = 7
    g = root.create_group("g")
    g.create_array("y", shape=(2,), dtype="int8")[...] = 1
    root.create_array("xx", shape=(1,), dtype="int8")[...] = 3  # shares the prefix "x"
    del root["x"]
    assert not any(k.startswith("x/") for k in keys(store))
    assert "x" not in root and root.keys() == ["g", "xx"]
    assert_same_data(root["xx"][...], [3])
    del root["g"]
    assert not any(k.startswith("g/") for k in keys(store))
    assert keys(store) == {"zarr.json", "xx/zarr.json", "xx/c/0"}
    with pytest.raises(NodeNotFoundError):
        del root["g"]


def test_delete_nested_member(store):
    zk.create_array(store, path="a/b/x", shape=(2,), dtype="int8")[...] = 1
    root = zk.open_group(store, mode="r+")
    del root["a/b"]
    assert root["a"].keys() == []
    assert keys(store) == {"zarr.json", "a/zarr.json"}


def test_tree(store):
    root = zk.create_group(store)
    root.create_group("g1").create_group("g2").create_array("deep", shape=(3, 4), dtype="int8")
    root.create_array("top", shape=(5,), dtype="float64")
    root.create_group("empty")
    text = root.tree()
    for part in ("g1", "g2", "deep", "top", "empty", "(3, 4)", "(5,)", "float64"):
        assert part in text
    assert text.splitlines()[0] == "/"
    assert len(text.splitlines()) == 6
    assert "deep" in root["g1"].tree() and "top" not in root["g1"].tree()


# --------------------------------------------------------------------------------------------
# names


BAD_NAMES = ["", "/", ".", "..", "..."]


@pytest.mark.parametrize("name", BAD_NAMES)
def test_bad_member_names(store, name):
    root = zk.create_group(store)
    root.create_array("x", shape=(2,), dtype="int8")[...] = 1
    before = {k: store.get(k) for k in store.list()}
    with pytest.raises(NodeNameError):
        root.create_group(name)
    with pytest.raises(NodeNameError):
        root.create_group(name, overwrite=True)
    with pytest.raises(NodeNameError):
        root.create_array(name, shape=(1,), dtype="int8")
    with pytest.raises(NodeNameError):
        root[name]
    with pytest.raises(NodeNameError):
        del root[name]
    assert {k: store.get(k) for k in store.list()} == before
    assert root.keys() == ["x"]


@pytest.mark.parametrize("path", ["a/./b", "a/../b", "a//b", ".", ".."])
def test_bad_paths(store, path):
    with pytest.raises(NodeNameError):
        zk.create_array(store, path=path, shape=(1,), dtype="int8")
    with pytest.raises(NodeNameError):
        zk.create_group(store, path=path)
    with pytest.raises(NodeNameError):
        zk.open_group(store, path=path, mode="a")
    assert keys(store) == set()
    root = zk.create_group(store)
    with pytest.raises(NodeNameError):
        root.create_group(path)


def test_odd_but_valid_names(store):
    root = zk.create_group(store)
    for name in ("a.b", ".hidden", "_single", "with space", "ünï", "x__y", "..a"):
        root.create_group(name)
    assert root.keys() == sorted(["a.b", ".hidden", "_single", "with space", "ünï", "x__y", "..a"])


def test_cannot_create_under_an_array(store):
    x = zk.create_array(store, path="arr", shape=(2, 2), dtype="int8", chunks=(1, 1))
    x[...] = 5
    before = {k: store.get(k) for k in store.list()}
    with pytest.raises(ContainsNodeError):
        zk.create_array(store, path="arr/child", shape=(1,), dtype="int8")
    with pytest.raises(ContainsNodeError):
        zk.create_group(store, path="arr/g/h")
    # with overwrite, and where the new node would sit on the array's own chunks
    with pytest.raises(ContainsNodeError):
        zk.create_array(store, path="arr/c", shape=(1,), dtype="int8", overwrite=True)
    with pytest.raises(ContainsNodeError):
        zk.create_group(store, path="arr/c/0", overwrite=True)
    with pytest.raises(ContainsNodeError):
        zk.open_group(store, path="arr/c", mode="w")
    assert {k: store.get(k) for k in store.list()} == before
    assert_same_data(x[...], [[5, 5], [5, 5]])


def test_existing_node_needs_overwrite(store):
    root = zk.create_group(store)
    x = root.create_array("x", shape=(3,), dtype="int8", chunks=(1,))
    x[...] = [1, 2, 3]
    g = root.create_group("g")
    g.create_array("inner", shape=(1,), dtype="int8")[...] = 9
    before = {k: store.get(k) for k in store.list()}
    with pytest.raises(ContainsNodeError):
        root.create_array("x", shape=(3,), dtype="int8")
    with pytest.raises(ContainsNodeError):
        root.create_group("x")
    with pytest.raises(ContainsNodeError):
        root.create_group("g")
    with pytest.raises(ContainsNodeError):
        zk.create_array(store, path="g", shape=(1,), dtype="int8")
    with pytest.raises(ContainsNodeError):
        zk.create_group(store)
    assert {k: store.get(k) for k in store.list()} == before

    # overwrite replaces the node and everything that was under it
    y = root.create_array("x", shape=(2,), dtype="float64", overwrite=True)
    assert y.shape == (2,) and not any(k.startswith("x/c") for k in keys(store))
    assert_same_data(root["x"][...], [0.0, 0.0])
    h = root.create_group("g", overwrite=True)
    assert h.keys() == [] and not any(k.startswith("g/inner") for k in keys(store))
    z = root.create_array("g", shape=(1,), dtype="int8", overwrite=True)  # group -> array
    assert isinstance(root["g"], zk.Array) and z.shape == (1,)
    root.create_group("x", overwrite=True)  # array -> group
    assert isinstance(root["x"], zk.Group)
    zk.create_group(store, overwrite=True)  # the root: everything goes
    assert keys(store) == {"zarr.json"}


def test_require_group(store):
    root = zk.create_group(store)
    g = root.require_group("g")
    g.attrs["k"] = 1
    assert root.require_group("g").attrs["k"] == 1
    root.create_array("x", shape=(1,), dtype="int8")
    with pytest.raises(ContainsNodeError):
        root.require_group("x")


# --------------------------------------------------------------------------------------------
# attributes, read-only groups, opening


def test_group_attributes_persist(url):
    g = zk.create_group(url, path="g", attributes={"a": 1})
    g.attrs["b"] = [1, "two", None]
    g.attrs.update(c={"d": 1.5}, e=True)
    del g.attrs["a"]
    assert g.attrs.asdict() == {"b": [1, "two", None], "c": {"d": 1.5}, "e": True}
    reopened = zk.open_group(url, path="g")
    assert reopened.attrs.asdict() == {"b": [1, "two", None], "c": {"d": 1.5}, "e": True}
    assert zk.open_group(url)["g"].attrs["e"] is True
    root = zk.open_group(url, mode="r+")
    root.attrs["root"] = "yes"
    assert zk.open(url).attrs["root"] == "yes"


def test_read_only_group(url):
    zk.create_group(url, attributes={"x": 1})
    zk.create_array(url, path="arr", shape=(2,), dtype="int8")
    root = zk.open_group(url, mode="r")
    assert root.read_only
    with pytest.raises(ReadOnlyError):
        root.attrs["y"] = 2
    with pytest.raises(ReadOnlyError):
        root.create_group("g")
    with pytest.raises(ReadOnlyError):
        root.create_array("a", shape=(1,), dtype="int8")
    with pytest.raises(ReadOnlyError):
        del root["arr"]
    member = root["arr"]  # members of a read-only group are read-only
    assert member.read_only
    with pytest.raises(ReadOnlyError):
        member[0] = 1
    with pytest.raises(ReadOnlyError):
        dict(root.members())["arr"][0] = 1
    assert zk.open_group(url).keys() == ["arr"]
    assert zk.open_group(url).attrs.asdict() == {"x": 1}


def test_open_group_on_array_and_missing(url):
    zk.create_array(url, path="arr", shape=(2,), dtype="int8")
    with pytest.raises(NodeNotFoundError, match="array"):
        zk.open_group(url, path="arr")
    with pytest.raises(NodeNotFoundError):
        zk.open_group(url, path="arr", mode="a")
    with pytest.raises(NodeNotFoundError):
        zk.open_group(url, path="missing")
    with pytest.raises(NodeNotFoundError):
        zk.open(url, path="missing")


def test_open_returns_what_is_there(url):
    zk.create_array(url, path="g/arr", shape=(2,), dtype="int8")
    assert isinstance(zk.open(url), zk.Group)
    assert isinstance(zk.open(url, path="g"), zk.Group)
    node = zk.open(url, path="g/arr")
    assert isinstance(node, zk.Array) and node.shape == (2,)
    assert isinstance(zk.open(url, path="g/arr", mode="a"), zk.Array)
    assert isinstance(zk.open(url, path="g", mode="a", shape=(5,), dtype="int8"), zk.Group)


def test_open_mode_a_creates(url):
    g = zk.open(url, path="new_group", mode="a")
    assert isinstance(g, zk.Group)
    a = zk.open(url, path="new_array", mode="a", shape=(3,), dtype="uint16", fill_value=4)
    assert isinstance(a, zk.Array)
    assert_same_data(zk.open(url, path="new_array")[...], [4, 4, 4])
    assert sorted(zk.open_group(url).keys()) == ["new_array", "new_group"]
    g2 = zk.open_group(url, path="other", mode="a", attributes={"k": "v"})
    assert zk.open_group(url, path="other").attrs.asdict() == {"k": "v"}
    assert zk.open_group(url, path="other", mode="a").attrs.asdict() == {"k": "v"}
    assert g2.path == "other"


def test_open_group_modes(url):
    g = zk.open_group(url, mode="w")
    g.create_array("x", shape=(2,), dtype="int8")[...] = 1
    with pytest.raises(ContainsNodeError):
        zk.open_group(url, mode="w-")
    zk.open_group(url, path="fresh", mode="w-")
    replaced = zk.open_group(url, mode="w")  # replaces the root: its members are gone
    assert replaced.keys() == []
    with pytest.raises(TypeError):
        zk.open_group(url, mode="r", attributes={})


def test_memory_url_shares_nodes():
    name = f"memory://test-hierarchy-{uuid.uuid4().hex}"
    root = zk.open_group(name, mode="w")
    root.create_group("g").create_array("x", shape=(3,), dtype="int32")[...] = [1, 2, 3]
    root.attrs["k"] = 1
    again = zk.open_group(name)
    assert again.keys() == ["g"]
    assert again.attrs["k"] == 1
    assert_same_data(again["g/x"][...], [1, 2, 3])
    assert_same_data(zk.open_array(name, path="g/x")[...], [1, 2, 3])
    with pytest.raises(ReadOnlyError):  # opened with mode "r"
        again["g/x"][0] = 5
    other = zk.open_group(f"memory://test-hierarchy-{uuid.uuid4().hex}", mode="w")
    assert other.keys() == []


def test_local_store_layout(tmp_path):
    root = tmp_path / "data.zarr"
    zk.create_array(str(root), path="a/b", shape=(2, 2), dtype="int8", chunks=(1, 2))[...] = 1
    assert (root / "zarr.json").is_file()
    assert (root / "a" / "zarr.json").is_file()
    assert (root / "a" / "b" / "zarr.json").is_file()
    assert (root / "a" / "b" / "c" / "0" / "0").is_file()
    assert (root / "a" / "b" / "c" / "1" / "0").is_file()
    del zk.open_group(str(root), mode="r+")["a"]
    assert not (root / "a").exists()
    assert zk.open_group(str(root)).keys() == []


# --------------------------------------------------------------------------------------------
# a store that cannot list


class UnlistableStore(Store):
    """Reads and writes through a MemoryStore, but cannot list its keys."""

    listable = False

    def __init__(self) -> None:
        self.inner = MemoryStore()

    def get(self, key, byte_range=None):
        return self.inner.get(key, byte_range)

    def set(self, key, value):
        self.inner.set(key, value)

    def erase(self, key):
        self.inner.erase(key)

    def __repr__(self) -> str:
        return "UnlistableStore()"


def test_listing_needs_a_listable_store():
    store = UnlistableStore()
    root = zk.create_group(store)
    root.create_group("g")
    x = root.create_array("x", shape=(3,), dtype="int8", chunks=(2,))
    x[...] = [1, 2, 3]
    for listing in (
        root.keys,
        lambda: list(root.members()),
        lambda: len(root),
        lambda: list(root),
        root.array_keys,
        root.group_keys,
        root.tree,
        lambda: list(root.arrays()),
    ):
        with pytest.raises(CapabilityError, match="list"):
            listing()
    # what needs no listing still works
    assert "g" in root and "x" in root and "y" not in root
    assert isinstance(root["g"], zk.Group)
    assert_same_data(root["x"][...], [1, 2, 3])
    assert_same_data(zk.open_array(store, path="x")[...], [1, 2, 3])
