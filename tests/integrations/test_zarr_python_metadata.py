"""zarr-python's metadata objects (`array.metadata`, `group.metadata`, their `to_dict()`,
`zarr_format`, `node_type`, `attributes`, `consolidated_metadata`) and `array.config`
(`ArrayConfig`), run unchanged against `zarr` and `zarrkit`."""

from __future__ import annotations

import json
from typing import Any

import pytest

import zarrkit
from zarrkit.errors import ArgumentError

zarr = pytest.importorskip("zarr")

pytestmark = [pytest.mark.interop, pytest.mark.filterwarnings("ignore:::zarr")]

LIBRARIES = pytest.mark.parametrize("zk", [zarr, zarrkit], ids=["zarr", "zarrkit"])


def _json(value: Any) -> Any:
    """A `to_dict()` as JSON: zarr-python's tuples and zarrkit's lists alike."""
    return json.loads(json.dumps(value))


def _hierarchy(zk: Any) -> Any:
    store = zk.storage.MemoryStore()
    root = zk.create_group(store, attributes={"title": "t"})
    root.create_array("x", shape=(2,), dtype="u1")
    child = root.create_group("sub", attributes={"k": 1})
    child.create_array("y", shape=(3,), dtype="f4")
    child.create_group("deeper")
    zk.consolidate_metadata(store)
    return zk.open_consolidated(store)


def _described(metadata: Any) -> Any:
    """What a consolidated metadata shows, recursively: each member's kind and attributes."""
    out = {}
    for name, member in metadata.consolidated_metadata.metadata.items():
        row: dict[str, Any] = {
            "node_type": member.node_type,
            "zarr_format": member.zarr_format,
            "attributes": dict(member.attributes),
        }
        if member.node_type == "group":
            row["members"] = _described(member)
        else:
            row["shape"] = list(member.to_dict()["shape"])
        out[name] = row
    return out


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_array_metadata_surface(zarr_format: int) -> None:
    def script(zk: Any) -> Any:
        a = zk.create_array(
            {},
            shape=(2, 3),
            chunks=(1, 3),
            dtype="i4",
            attributes={"a": 1},
            zarr_format=zarr_format,
        )
        m = a.metadata
        doc = _json(m.to_dict())
        doc.pop("storage_transformers", None)  # (zarr-python lists an empty one; see the doc)
        if zarr_format == 2:
            doc["compressor"].pop("checksum", None)  # (numcodecs' get_config; see the doc)
        node_type = getattr(m, "node_type", "array")  # (zarr-python: not on v2 metadata)
        return m.zarr_format, node_type, dict(m.attributes), doc

    assert script(zarrkit) == script(zarr)


def test_group_metadata_and_consolidated_members() -> None:
    theirs, ours = _hierarchy(zarr), _hierarchy(zarrkit)
    for g in (theirs, ours):
        assert g.metadata.zarr_format == 3 and g.metadata.node_type == "group"
    assert dict(ours.metadata.attributes) == dict(theirs.metadata.attributes) == {"title": "t"}
    assert _described(ours.metadata) == _described(theirs.metadata)
    assert list(ours.metadata.consolidated_metadata.metadata) == ["sub", "x"]
    consolidated = ours.metadata.consolidated_metadata
    assert (consolidated.kind, consolidated.must_understand) == ("inline", False)
    assert zarrkit.create_group({}).metadata.consolidated_metadata is None
    assert zarr.create_group({}).metadata.consolidated_metadata is None


@LIBRARIES
def test_array_config_fields_and_defaults(zk: Any) -> None:
    a = zk.create_array({}, shape=(2,), dtype="i4")
    assert repr(a.config) == (
        "ArrayConfig(order='C', write_empty_chunks=False, read_missing_chunks=True, "
        "sharding_coalesce_max_gap_bytes=1048576, sharding_coalesce_max_bytes=16777216)"
    )
    b = zk.create_array({}, shape=(2,), dtype="i4", config={"write_empty_chunks": True})
    assert (b.config.order, b.config.write_empty_chunks) == ("C", True)
    c = a.with_config({"order": "F"})
    assert (c.config.order, c.config.write_empty_chunks) == ("F", False)


@LIBRARIES
def test_array_config_defaults_follow_the_config_when_made(zk: Any) -> None:
    with zk.config.set({"array.write_empty_chunks": True, "array.order": "F"}):
        a = zk.create_array({}, shape=(2,), dtype="i4")
    assert (a.config.order, a.config.write_empty_chunks) == ("F", True)


def test_with_config_refuses_unknown_fields() -> None:
    a = zarrkit.create_array({}, shape=(2,), dtype="i4")
    with pytest.raises(ArgumentError, match="'ordr'"):
        a.with_config({"ordr": "F"})
