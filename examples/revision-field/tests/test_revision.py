"""The example field as its users meet it: a node carrying `example.revision` opens, every
rewrite of its document bumps the count, and a count that is not one is refused naming it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import zarrkit as zk
from zarrkit.errors import MetadataError

FIELD = "example.revision"


def _array_with_revision(root: Path, revision: object = 0) -> Path:
    a = zk.create_array(str(root), shape=(4,), chunks=(2,), dtype="u1")
    a[...] = np.arange(4, dtype="u1")
    doc_path = root / "zarr.json"
    doc = json.loads(doc_path.read_text())
    doc[FIELD] = {"must_understand": True, "revision": revision}
    doc_path.write_text(json.dumps(doc))
    return doc_path


def test_each_rewrite_bumps_the_count(tmp_path: Path) -> None:
    doc_path = _array_with_revision(tmp_path)
    a = zk.open_array(str(tmp_path), mode="r+")
    np.testing.assert_array_equal(a[...], np.arange(4))
    a.attrs["units"] = "m"
    assert json.loads(doc_path.read_text())[FIELD]["revision"] == 1
    a.resize((8,))
    assert json.loads(doc_path.read_text())[FIELD] == {"must_understand": True, "revision": 2}


def test_reading_leaves_the_count_alone(tmp_path: Path) -> None:
    doc_path = _array_with_revision(tmp_path, revision=5)
    zk.open_array(str(tmp_path), mode="r")[...]
    assert json.loads(doc_path.read_text())[FIELD]["revision"] == 5


@pytest.mark.parametrize("bad", [-1, "3", True, None])
def test_a_bad_count_is_refused_naming_the_field(tmp_path: Path, bad: object) -> None:
    _array_with_revision(tmp_path, revision=bad)
    with pytest.raises(MetadataError) as info:
        zk.open_array(str(tmp_path))
    assert info.value.field == f"{FIELD}.revision"
