"""Consolidated metadata (v2 `.zmetadata`, v3 inline `consolidated_metadata`): writing it,
opening through it on a store that can neither list nor be written, and zarr-python's
semantics when it is stale."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

import zarrkit as zk
from zarrkit.abc.store import Store
from zarrkit.errors import CapabilityError, MetadataError, NodeNotFoundError
from zarrkit.plugins.stores.memory import MemoryStore


class ReadOnlyUnlisted(Store):
    """What an HTTP server offers: get by key, nothing else (a real store with only the
    readable capability, over the keys of another store)."""

    listable = False
    writeable = False

    def __init__(self, inner: Store):
        self.inner = inner
        self.reads: list[str] = []

    def get(self, key: str, byte_range: Any = None) -> bytes | None:
        self.reads.append(key)
        return self.inner.get(key, byte_range)

    def __repr__(self) -> str:
        return "ReadOnlyUnlisted()"


def hierarchy(store: Any, fmt: int) -> None:
    g = zk.create_group(store, zarr_format=fmt, attributes={"title": "root"})
    a = g.create_array("a", shape=(6,), chunks=(4,), dtype="<i4", attributes={"units": "m"})
    a[:] = np.arange(6)
    sub = g.create_group("sub", attributes={"level": 1})
    sub.create_array("b", shape=(2, 3), chunks=(1, 3), dtype="<f8", fill_value=0.5)
    sub.create_group("empty").create_group("deeper")


@pytest.fixture(params=[2, 3], ids=["v2", "v3"])
def fmt(request: pytest.FixtureRequest) -> int:
    return request.param


def test_consolidate_writes_the_form_zarr_python_writes(fmt: int) -> None:
    store = MemoryStore()
    hierarchy(store, fmt)
    g = zk.consolidate_metadata(store)
    assert g.keys() == ["a", "sub"]
    if fmt == 2:
        z = json.loads(store.get(".zmetadata"))
        assert z["zarr_consolidated_format"] == 1
        meta = z["metadata"]
        assert sorted(meta) == [
            ".zattrs",
            ".zgroup",
            "a/.zarray",
            "a/.zattrs",
            "sub/.zattrs",
            "sub/.zgroup",
            "sub/b/.zarray",
            "sub/b/.zattrs",
            "sub/empty/.zattrs",
            "sub/empty/.zgroup",
            "sub/empty/deeper/.zattrs",
            "sub/empty/deeper/.zgroup",
        ]
        assert meta["a/.zarray"] == json.loads(store.get("a/.zarray"))
        assert meta["sub/.zattrs"] == {"level": 1} and meta[".zattrs"] == {"title": "root"}
        assert json.loads(store.get(".zgroup")) == {"zarr_format": 2}
    else:
        root = json.loads(store.get("zarr.json"))
        cm = root["consolidated_metadata"]
        assert (cm["kind"], cm["must_understand"]) == ("inline", False)
        assert list(cm["metadata"]) == ["a", "sub", "sub/b", "sub/empty", "sub/empty/deeper"]
        assert cm["metadata"]["a"] == json.loads(store.get("a/zarr.json"))
        assert cm["metadata"]["sub"]["consolidated_metadata"]["metadata"] == {}
        assert "consolidated_metadata" not in json.loads(store.get("sub/zarr.json"))


def test_a_store_that_cannot_list_is_browsable_after_consolidating(fmt: int) -> None:
    inner = MemoryStore()
    hierarchy(inner, fmt)
    remote = ReadOnlyUnlisted(inner)
    with pytest.raises(CapabilityError, match="list"):
        zk.open_group(remote).keys()  # before: no way to find the members
    zk.consolidate_metadata(inner)
    remote.reads.clear()
    g = zk.open_consolidated(remote)
    assert g.tree().splitlines() == [
        "/",
        "├── a (6,) int32",
        "└── sub",
        "    ├── b (2, 3) float64",
        "    └── empty",
        "        └── deeper",
    ]
    assert [n for n, _ in g.members()] == ["a", "sub"]
    assert "sub/b" in g and "nope" not in g
    assert dict(g["sub"].attrs) == {"level": 1}
    assert dict(g["a"].attrs) == {"units": "m"}
    # members came from the group's own metadata: no member document was read
    assert all(
        k.rsplit("/", 1)[-1] in ("zarr.json", ".zgroup", ".zarray", ".zattrs", ".zmetadata")
        and "/" not in k
        for k in remote.reads
    )
    np.testing.assert_array_equal(g["a"][:], np.arange(6))
    np.testing.assert_array_equal(g["sub"]["b"][:], np.full((2, 3), 0.5))
    with pytest.raises(CapabilityError):
        g["a"][0] = 1


def test_open_group_uses_consolidated_metadata_by_default_and_can_ignore_it(fmt: int) -> None:
    store = MemoryStore()
    hierarchy(store, fmt)
    zk.consolidate_metadata(store)
    # stale: a node added afterwards is not seen through the consolidated metadata ...
    zk.create_array(store, path="late", shape=(1,), dtype="|u1", zarr_format=fmt)
    zk.open_array(store, path="a", mode="r+").resize((9,))
    g = zk.open_group(store)
    assert g.keys() == ["a", "sub"]
    assert "late" not in g
    with pytest.raises(NodeNotFoundError, match="consolidated"):
        g["late"]
    assert g["a"].shape == (6,)  # the consolidated (old) metadata
    # ... until it is ignored or consolidated again
    fresh = zk.open_group(store, use_consolidated=False)
    assert fresh.keys() == ["a", "late", "sub"] and fresh["a"].shape == (9,)
    again = zk.consolidate_metadata(store)
    assert again.keys() == ["a", "late", "sub"] and again["a"].shape == (9,)


def test_with_listed_members_sees_the_store_and_keeps_the_document(fmt: int) -> None:
    """What `zarrkit copy` walks: every node stored, the group's document as read."""
    store = MemoryStore()
    hierarchy(store, fmt)
    zk.consolidate_metadata(store)
    zk.create_array(store, path="late", shape=(1,), dtype="|u1", zarr_format=fmt)
    g = zk.open_group(store, mode="r")
    listed = g.with_listed_members()
    assert g.keys() == ["a", "sub"] and listed.keys() == ["a", "late", "sub"]
    assert listed.metadata.to_json() == g.metadata.to_json()
    assert listed.metadata.consolidated_metadata is not None
    assert zk.open_group(store, use_consolidated=False).metadata.consolidated_metadata is None
    assert listed.read_only
    with pytest.raises(CapabilityError, match="list"):
        zk.open_consolidated(ReadOnlyUnlisted(store)).with_listed_members()


def test_open_consolidated_requires_it(fmt: int) -> None:
    store = MemoryStore()
    hierarchy(store, fmt)
    with pytest.raises(MetadataError, match="consolidate_metadata"):
        zk.open_consolidated(store)
    with pytest.raises(NodeNotFoundError):
        zk.consolidate_metadata(store, path="a")  # an array, not a group


def test_deleting_through_a_consolidated_group_updates_it(fmt: int) -> None:
    store = MemoryStore()
    hierarchy(store, fmt)
    zk.consolidate_metadata(store)
    g = zk.open_group(store, mode="r+")
    sub = g["sub"]
    del sub["empty"]
    assert sub.keys() == ["b"] and g["sub"].keys() == ["b"]
    assert zk.open_group(store).tree().splitlines() == [
        "/",
        "├── a (6,) int32",
        "└── sub",
        "    └── b (2, 3) float64",
    ]
    assert zk.open_group(store, use_consolidated=False)["sub"].keys() == ["b"]
    # the group's own attributes can still be changed, keeping the consolidated members
    g.attrs["title"] = "changed"
    reopened = zk.open_consolidated(store)
    assert dict(reopened.attrs) == {"title": "changed"}
    assert reopened.keys() == ["a", "sub"]


def test_consolidate_below_the_root(fmt: int) -> None:
    store = MemoryStore()
    hierarchy(store, fmt)
    zk.consolidate_metadata(store, path="sub")
    root = zk.open_group(store)
    with pytest.raises(MetadataError):
        zk.open_consolidated(store)
    sub = root["sub"]
    assert sub.keys() == ["b", "empty"]
    assert zk.open_consolidated(store, path="sub")["empty"].keys() == ["deeper"]


@pytest.mark.parametrize(
    "zmetadata, field",
    [
        ({"metadata": {}, "zarr_consolidated_format": 2}, "zarr_consolidated_format"),
        ({"metadata": [], "zarr_consolidated_format": 1}, "metadata"),
        ({"metadata": {"a/.zfoo": {}}, "zarr_consolidated_format": 1}, "metadata.a/.zfoo"),
    ],
    ids=["version", "not-object", "unknown-key"],
)
def test_malformed_zmetadata_names_the_field(zmetadata: dict, field: str) -> None:
    store = MemoryStore()
    zk.create_group(store, zarr_format=2)
    store.set(".zmetadata", json.dumps(zmetadata).encode())
    with pytest.raises(MetadataError) as info:
        zk.open_group(store)
    assert info.value.field == field and ".zmetadata" in str(info.value)


def test_malformed_inline_consolidated_metadata_names_the_field() -> None:
    store = MemoryStore()
    zk.create_group(store)
    doc = json.loads(store.get("zarr.json"))
    doc["consolidated_metadata"] = {"kind": "other", "must_understand": False, "metadata": {}}
    store.set("zarr.json", json.dumps(doc).encode())
    with pytest.raises(MetadataError) as info:
        zk.open_group(store)
    assert info.value.field == "consolidated_metadata"
