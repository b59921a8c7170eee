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


# -- struct fields with a shape (v2) ----------------------------------------------------------
#: what zarr-python 2 (and tensorstore) write for numpy's subarray fields; zarr-python 3.4
#: refuses these in both formats, so the peer here is zarr-python 2.18
SHAPED = [["a", "<f4", [2, 3]], ["b", ">i2"], ["c", "|u1", [2]]]

_SHAPED_SCRIPT = r"""
def mk(descr):
    return np.dtype([tuple(f[:1]) + (f[1],) + ((tuple(f[2]),) if len(f) > 2 else ()) for f in descr])
dt = mk(ARGS["descr"])
values = np.frombuffer(base64.b64decode(ARGS["values"]), dtype=dt)
ours = zarr.open_array(ARGS["ours"], mode="r")
theirs = zarr.open_array(ARGS["theirs"], mode="w", shape=(5,), chunks=(2,), dtype=dt)
theirs[:4] = values
RESULT = {
    "dtype": json.loads(json.dumps(ours.dtype.descr)),
    "read": base64.b64encode(np.ascontiguousarray(ours[...]).astype(dt).tobytes()).decode(),
}
"""


def _shaped_values() -> np.ndarray:
    dt = np.dtype([("a", "<f4", (2, 3)), ("b", ">i2"), ("c", "|u1", (2,))])
    v = np.zeros(4, dtype=dt)
    v["a"] = np.arange(24, dtype=np.float32).reshape(4, 2, 3) - 7.5
    v["a"][1, 0, 0] = np.nan
    v["b"] = [1, -2, 300, -32768]
    v["c"] = [[1, 2], [3, 4], [255, 0], [7, 8]]
    return v


def test_struct_fields_with_a_shape_both_ways_with_zarr2(zarr2, tmp_path):
    import base64

    values = _shaped_values()
    ours = zk.create_array(
        tmp_path / "ours", shape=(5,), dtype=values.dtype, chunks=(2,), zarr_format=2
    )
    ours[:4] = values
    assert json.loads((tmp_path / "ours" / ".zarray").read_text())["dtype"] == SHAPED
    result = zarr2.run(
        _SHAPED_SCRIPT,
        descr=SHAPED,
        values=base64.b64encode(values.tobytes()).decode(),
        ours=str(tmp_path / "ours"),
        theirs=str(tmp_path / "theirs"),
    )
    assert result["dtype"] == [["a", "<f4", [2, 3]], ["b", ">i2"], ["c", "|u1", [2]]]
    fill = np.zeros(1, dtype=values.dtype)
    assert base64.b64decode(result["read"]) == values.tobytes() + fill.tobytes()
    theirs = zk.open_array(tmp_path / "theirs")
    assert theirs.dtype == np.dtype([("a", "<f4", (2, 3)), ("b", "=i2"), ("c", "|u1", (2,))])
    back = theirs[...]
    for name in ("a", "b", "c"):
        assert back[name][:4].tobytes() == values[name].astype(back[name].dtype).tobytes(), name
        assert not back[name][4].any(), name


def test_struct_fields_with_a_shape_are_refused_in_v3_saying_why(tmp_path):
    from zarrkit.errors import MetadataError

    with pytest.raises(MetadataError, match="no Zarr v3 form"):
        zk.create_array(tmp_path / "a", shape=(5,), dtype=_shaped_values().dtype, chunks=(2,))
    assert not (tmp_path / "a" / "zarr.json").exists()
