"""Data that zarr-python writes, read as zarr-python 3.4 reads it, and written so it reads it:
v2 object arrays whose fill value is zarr-python 2's default `0`, and zarr-python 3's
`raw_bytes` data type. Value for value, both directions."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import zarrkit as zk

zarr = pytest.importorskip("zarr")

pytestmark = pytest.mark.interop


def _zarr_read(path: Path) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(zarr.open_array(str(path), mode="r")[...])


def _v2_object_array(path: Path, object_codec: str) -> None:
    """An `.zarray` as zarr-python 2 writes it for an object array left at its default fill."""
    path.mkdir()
    doc = {
        "zarr_format": 2,
        "shape": [5],
        "chunks": [2],
        "dtype": "|O",
        "compressor": None,
        "fill_value": 0,
        "filters": [{"id": object_codec}],
        "order": "C",
    }
    (path / ".zarray").write_text(json.dumps(doc))


# -- v2 object arrays with fill_value 0 -------------------------------------------------------
def test_v2_strings_with_fill_0_read_as_zarr_python_reads_them(tmp_path):
    _v2_object_array(tmp_path / "a", "vlen-utf8")
    theirs = _zarr_read(tmp_path / "a")
    ours = zk.open_array(tmp_path / "a")[...]
    assert ours.tolist() == theirs.tolist() == ["0"] * 5  # zarr-python 3 reads 0 as its text


def test_v2_strings_with_fill_0_written_both_ways(tmp_path):
    _v2_object_array(tmp_path / "a", "vlen-utf8")
    zk.open_array(tmp_path / "a", mode="r+")[1:3] = ["x", "ä"]
    assert _zarr_read(tmp_path / "a").tolist() == ["0", "x", "ä", "0", "0"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        zarr.open_array(str(tmp_path / "a"), mode="r+")[4:] = ["yz"]
    assert zk.open_array(tmp_path / "a")[...].tolist() == ["0", "x", "ä", "0", "yz"]


def test_v2_bytes_with_fill_0_read_as_empty_values(tmp_path):
    # zarr-python 3.4 refuses this fill value; zarr-python 2 wrote it as "no fill chosen"
    _v2_object_array(tmp_path / "a", "vlen-bytes")
    a = zk.open_array(tmp_path / "a", mode="r+")
    assert a[...].tolist() == [b""] * 5
    a[:2] = np.array([b"ab", b"\x00"], dtype=object)
    assert zk.open_array(tmp_path / "a")[...].tolist() == [b"ab", b"\x00", b"", b"", b""]


# -- zarr-python 3's raw_bytes ----------------------------------------------------------------
RAW = np.array([b"abcd", b"\x00\x01\x02\x03", b"wxyz"], dtype="V4")


def test_raw_bytes_written_by_zarr_python_read_by_zarrkit(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = zarr.create_array(
            str(tmp_path / "a"), shape=(5,), dtype="V4", chunks=(2,), fill_value=b"\xff\x00\xff\x00"
        )
        z[:3] = RAW
    assert (
        json.loads((tmp_path / "a" / "zarr.json").read_text())["data_type"]["name"] == "raw_bytes"
    )
    a = zk.open_array(tmp_path / "a")
    assert a.metadata.data_type.to_json() == {
        "name": "raw_bytes",
        "configuration": {"length_bytes": 4},
    }
    assert a[...].tobytes() == _zarr_read(tmp_path / "a").tobytes()
    assert a[3:].tobytes() == b"\xff\x00\xff\x00" * 2


def test_raw_bytes_written_by_zarrkit_read_by_zarr_python(tmp_path):
    a = zk.create_array(
        tmp_path / "a",
        shape=(5,),
        dtype={"name": "raw_bytes", "configuration": {"length_bytes": 4}},
        chunks=(2,),
        fill_value=b"\x01\x02\x03\x04",
    )
    a[:3] = RAW
    doc = json.loads((tmp_path / "a" / "zarr.json").read_text())
    assert doc["fill_value"] == "AQIDBA=="  # base64, as zarr-python writes it
    assert _zarr_read(tmp_path / "a").tobytes() == RAW.tobytes() + b"\x01\x02\x03\x04" * 2
