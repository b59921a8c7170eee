"""Metadata read and written back unchanged stays the same document: field order, aliases,
unknown-but-allowed fields and configuration spellings survive an attribute update."""

from __future__ import annotations

import json

import numpy as np
import pytest
import zarr

import zarrkit as zk

pytestmark = pytest.mark.interop


def test_zarr_python_document_survives_an_attribute_update(tmp_path):
    path = tmp_path / "z.zarr"
    z = zarr.create_array(
        store=str(path),
        shape=(6, 5),
        chunks=(3, 5),
        dtype="float64",
        fill_value=np.nan,
        dimension_names=["a", None],
        attributes={"k": [1, 2]},
    )
    z[:] = np.arange(30.0).reshape(6, 5)
    before = json.loads((path / "zarr.json").read_text())

    a = zk.open_array(str(path), mode="r+")
    a.attrs["k"] = [1, 2]  # same value: the document must not change at all
    after = json.loads((path / "zarr.json").read_text())
    assert after == before
    assert list(after) == list(before)  # field order kept too


def test_aliases_and_optional_unknown_fields_are_kept(tmp_path):
    doc = {
        "zarr_format": 3,
        "node_type": "array",
        "shape": [4],
        "data_type": "int32",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "."}},
        "fill_value": 7,
        "codecs": [{"name": "endian", "configuration": {"endian": "big"}}],
        "attributes": {},
        "site:provenance": {"must_understand": False, "tool": "some-other-writer"},
    }
    (tmp_path / "a.zarr").mkdir()
    (tmp_path / "a.zarr/zarr.json").write_text(json.dumps(doc))

    a = zk.open_array(str(tmp_path / "a.zarr"), mode="r+")
    a[:] = [1, 2, 3, 4]
    a.attrs["units"] = "m"
    stored = json.loads((tmp_path / "a.zarr/zarr.json").read_text())
    assert stored == {**doc, "attributes": {"units": "m"}}
    # the alias was understood: chunks are big-endian, keyed with the '.' separator
    assert (tmp_path / "a.zarr/c.1").read_bytes() == np.array([3, 4], ">i4").tobytes()
    assert zk.open_array(str(tmp_path / "a.zarr"))[:].tolist() == [1, 2, 3, 4]


def test_resize_changes_only_the_shape(tmp_path):
    a = zk.create_array(
        str(tmp_path / "r.zarr"),
        shape=(10,),
        chunks=(4,),
        dtype="uint8",
        attributes={"x": 1},
        dimension_names=["t"],
    )
    before = json.loads((tmp_path / "r.zarr/zarr.json").read_text())
    a.resize(17)
    after = json.loads((tmp_path / "r.zarr/zarr.json").read_text())
    assert after == {**before, "shape": [17]}
