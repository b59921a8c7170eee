"""Zarr v2 interoperability with zarr-python 3, both ways, value for value: every case of
`v2_cases` written by one side and read by the other, then updated by the reader and read
back by the writer; groups, attributes and consolidated metadata likewise."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import numcodecs
import numpy as np
import pytest
from interop_data import chunk_files
from v2_cases import (
    CASES,
    assert_values,
    chunk_keys,
    data,
    expected,
    fill_scalar,
    numpy_dtype,
    region,
)

import zarrkit as zk

zarr = pytest.importorskip("zarr")

pytestmark = pytest.mark.interop


def zarray(root: Path, name: str) -> dict:
    return json.loads((root / name / ".zarray").read_text())


def zk_write(root: Path, case: dict) -> Any:
    dtype = {"str_obj": str, "bytes_obj": bytes}.get(case["kind"], numpy_dtype(case))
    kwargs = {} if case["filters"] is None else {"filters": case["filters"]}
    a = zk.create_array(
        str(root),
        path=case["name"],
        shape=case["shape"],
        chunks=case["chunks"],
        dtype=dtype,
        fill_value=case["fill"] if case["fill"] is None else fill_scalar(case),
        zarr_format=2,
        compressor=case["compressor"],
        order=case["order"],
        dimension_separator=case["sep"],
        **kwargs,
    )
    a[region(case)] = data(case)[region(case)]
    return a


def zarr_write(root: Path, case: dict) -> Any:
    from zarr.core.dtype import VariableLengthBytes

    dtype = {"str_obj": str, "bytes_obj": VariableLengthBytes()}.get(
        case["kind"], numpy_dtype(case)
    )
    filters = None if case["filters"] is None else [numcodecs.get_codec(f) for f in case["filters"]]
    compressor = None if case["compressor"] is None else numcodecs.get_codec(case["compressor"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = zarr.create_array(
            store=str(root),
            name=case["name"],
            shape=case["shape"],
            chunks=case["chunks"],
            dtype=dtype,
            fill_value=fill_scalar(case) if case["fill"] is not None else None,
            compressors=compressor,
            filters=filters,
            order=case["order"],
            zarr_format=2,
            chunk_key_encoding={"name": "v2", "separator": case["sep"]},
        )
        z[region(case)] = data(case)[region(case)]
    return z


def zarr_open(root: Path, name: str, mode: str = "r") -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return zarr.open_array(str(root), path=name, mode=mode, zarr_format=2)


def the_rest(case: dict) -> tuple:
    """The part `region` leaves out (empty for 0-d arrays: those are updated whole)."""
    shape = case["shape"]
    if not shape:
        return ()
    return (slice(max(1, shape[0] // 2), None),)


def updated(case: dict) -> np.ndarray:
    values = data(case)
    out = expected(case)
    out[the_rest(case)] = values[::-1][the_rest(case)] if values.ndim else values
    return out


@pytest.mark.parametrize("name", list(CASES))
def test_zarrkit_writes_zarr_python_reads(tmp_path: Path, name: str) -> None:
    case = CASES[name]
    zk_write(tmp_path, case)
    doc = zarray(tmp_path, name)
    z = zarr_open(tmp_path, name)
    assert_values(z[...], expected(case))
    meta = z.metadata
    assert list(z.shape) == doc["shape"] and list(meta.chunks) == doc["chunks"]
    assert meta.order == case["order"] == doc["order"]
    assert meta.dimension_separator == case["sep"] == doc["dimension_separator"]
    assert (meta.compressor is None) == (case["compressor"] is None)
    if case["compressor"] is not None:
        assert meta.compressor == numcodecs.get_codec(doc["compressor"])
        assert doc["compressor"]["id"] == case["compressor"]["id"]
    if case["filters"] is not None:
        assert [f.get_config()["id"] for f in meta.filters] == [f["id"] for f in case["filters"]]
    if case["kind"] not in ("str_obj", "bytes_obj"):
        assert z.dtype == numpy_dtype(case)
    # zarr-python re-encodes the fill value exactly as zarrkit wrote it
    assert json.loads(json.dumps(meta.to_dict()["fill_value"])) == doc["fill_value"]
    assert chunk_files(tmp_path / name) - {".zarray", ".zattrs"} <= chunk_keys(case)
    assert chunk_files(tmp_path / name) - {".zarray", ".zattrs"}
    # zarr-python writes the rest; zarrkit reads it back
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = zarr_open(tmp_path, name, "r+")
        z[the_rest(case)] = data(case)[::-1][the_rest(case)] if case["shape"] else data(case)
        theirs = z[...]
    # what zarr-python stored is what it reads back; zarrkit reads the same values
    assert_values(zk.open_array(str(tmp_path), path=name)[...], np.asarray(theirs))


@pytest.mark.parametrize("name", list(CASES))
def test_zarr_python_writes_zarrkit_reads(tmp_path: Path, name: str) -> None:
    case = CASES[name]
    z = zarr_write(tmp_path, case)
    before = zarray(tmp_path, name)
    a = zk.open_array(str(tmp_path), path=name)
    assert a.metadata.format == "v2"
    assert_values(a[...], expected(case))
    assert list(a.shape) == before["shape"] and list(a.chunks) == before["chunks"]
    if case["kind"] not in ("str_obj", "bytes_obj"):
        assert a.dtype.newbyteorder("=") == numpy_dtype(case).newbyteorder("=")
    # the fill value is the one zarr-python reports (bits, for NaN)
    their_fill = z.fill_value if z.fill_value is not None else fill_scalar(case)
    assert_values(np.asarray(a.fill_value, dtype=a.dtype), np.asarray(their_fill, dtype=a.dtype))
    # zarrkit writes the rest and an attribute; the .zarray stays as zarr-python wrote it
    b = zk.open_array(str(tmp_path), path=name, mode="r+")
    b[the_rest(case)] = data(case)[::-1][the_rest(case)] if case["shape"] else data(case)
    b.attrs["written_by"] = "zarrkit"
    assert zarray(tmp_path, name) == before
    again = zarr_open(tmp_path, name)
    assert_values(again[...], zk.open_array(str(tmp_path), path=name)[...])
    if case["kind"] not in ("numeric",) or numpy_dtype(case).kind not in "c":
        assert_values(again[...], updated(case))
    assert dict(again.attrs) == {"written_by": "zarrkit"}


def test_zarrkit_defaults_match_zarr_python(tmp_path: Path) -> None:
    """A v2 array created with nothing but shape and dtype gets the .zarray zarr-python 3 gives."""
    zk.create_array(
        str(tmp_path), path="ours", shape=(10, 4), chunks=(5, 2), dtype="<f4", zarr_format=2
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        zarr.create_array(
            store=str(tmp_path),
            name="theirs",
            shape=(10, 4),
            chunks=(5, 2),
            dtype="<f4",
            zarr_format=2,
        )
    ours, theirs = zarray(tmp_path, "ours"), zarray(tmp_path, "theirs")
    assert numcodecs.get_codec(ours.pop("compressor")) == numcodecs.get_codec(
        theirs.pop("compressor")
    )
    assert ours == theirs
    ours_s = zk.create_array(str(tmp_path), path="s", shape=(3,), dtype=str, zarr_format=2)
    assert zarray(tmp_path, "s")["filters"] == [{"id": "vlen-utf8"}]
    assert zarray(tmp_path, "s")["dtype"] == "|O"
    assert ours_s.fill_value == ""


def test_v3_chain_given_to_a_v2_array(tmp_path: Path) -> None:
    """`codecs=` in v3 form (transpose + big-endian bytes + gzip) is written as order F, '>'
    and a gzip compressor, which zarr-python reads as the same values."""
    a = zk.create_array(
        str(tmp_path),
        path="t",
        shape=(6, 5),
        chunks=(4, 2),
        dtype="uint16",
        zarr_format=2,
        codecs=[
            {"name": "transpose", "configuration": {"order": [1, 0]}},
            {"name": "bytes", "configuration": {"endian": "big"}},
            {"name": "gzip", "configuration": {"level": 2}},
        ],
    )
    values = np.arange(30, dtype="uint16").reshape(6, 5) * 999
    a[...] = values
    doc = zarray(tmp_path, "t")
    assert (doc["order"], doc["dtype"], doc["compressor"]) == (
        "F",
        ">u2",
        {"id": "gzip", "level": 2},
    )
    np.testing.assert_array_equal(zarr_open(tmp_path, "t")[...], values)


def test_groups_and_attributes_both_ways(tmp_path: Path) -> None:
    attrs = {"title": "ünïcode", "nested": {"list": [1, 2.5, None, True]}, "empty": {}}
    g = zk.create_group(str(tmp_path / "ours"), zarr_format=2, attributes=attrs)
    sub = g.create_group("sub", attributes={"level": 1})
    sub.create_array("deep", shape=(3,), dtype="<i2", attributes={"units": "m"})
    g.create_group("plain")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        zg = zarr.open_group(str(tmp_path / "ours"), mode="r")
        assert zg.metadata.zarr_format == 2
        assert dict(zg.attrs) == attrs
        assert sorted(zg.group_keys()) == ["plain", "sub"]
        assert dict(zg["sub"].attrs) == {"level": 1}
        assert dict(zg["sub/deep"].attrs) == {"units": "m"}
        assert dict(zg["plain"].attrs) == {}
        # zarr-python writes a hierarchy; zarrkit lists and reads it
        theirs = zarr.open_group(str(tmp_path / "theirs"), mode="w", zarr_format=2)
        theirs.attrs.update(attrs)
        t_sub = theirs.create_group("sub")
        t_sub.attrs["level"] = 2
        t_sub.create_array("x", shape=(2, 2), dtype="<f8", fill_value=1.5)
        theirs.create_array("y", shape=(4,), dtype="|u1")
    tg = zk.open_group(str(tmp_path / "theirs"))
    assert tg.metadata.format == "v2"
    assert dict(tg.attrs) == attrs
    assert tg.keys() == ["sub", "y"]
    assert tg.tree().splitlines() == [
        "/",
        "├── sub",
        "│   └── x (2, 2) float64",
        "└── y (4,) uint8",
    ]
    np.testing.assert_array_equal(tg["sub/x"][...], np.full((2, 2), 1.5))
    assert dict(tg["sub"].attrs) == {"level": 2}
    # creating inside a v2 group made by zarr-python makes v2 nodes
    made = zk.open_group(str(tmp_path / "theirs"), mode="r+").create_array(
        "z", shape=(2,), dtype="<i4"
    )
    assert made.metadata.format == "v2"
    assert (tmp_path / "theirs" / "z" / ".zarray").exists()


@pytest.mark.parametrize("fmt", [2, 3])
def test_consolidated_both_ways(tmp_path: Path, fmt: int) -> None:
    """zarrkit consolidates and zarr-python opens it consolidated (and the reverse): members,
    metadata and attributes come from the consolidated document."""
    ours, theirs = str(tmp_path / "ours"), str(tmp_path / "theirs")
    g = zk.create_group(ours, zarr_format=fmt, attributes={"root": True})
    g.create_array(
        "a", shape=(5,), chunks=(2,), dtype="<f8", fill_value=math_nan(), attributes={"k": "v"}
    )[:] = np.arange(5.0)
    s = g.create_group("s", attributes={"x": 1})
    s.create_array("b", shape=(2, 3), dtype="<i2")
    s.create_group("e")
    zk.consolidate_metadata(ours)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        zg = zarr.open_consolidated(ours, zarr_format=fmt)
        members = dict(zg.members(max_depth=None))
        assert sorted(members) == ["a", "s", "s/b", "s/e"]
        assert dict(members["a"].attrs) == {"k": "v"}
        assert dict(members["s"].attrs) == {"x": 1}
        assert members["s/b"].shape == (2, 3)
        np.testing.assert_array_equal(members["a"][:], np.arange(5.0))
        assert np.isnan(members["a"].fill_value)
        # and the reverse
        t = zarr.open_group(theirs, mode="w", zarr_format=fmt)
        t.attrs["root"] = "theirs"
        t.create_array("p", shape=(3,), dtype="<u4", attributes={"q": 1})
        t.create_group("g").create_array("h", shape=(1,), dtype="|b1")
        zarr.consolidate_metadata(theirs)
    c = zk.open_consolidated(theirs)
    assert c.keys() == ["g", "p"]
    assert c.tree().splitlines() == ["/", "├── g", "│   └── h (1,) bool", "└── p (3,) uint32"]
    assert dict(c["p"].attrs) == {"q": 1}
    assert dict(c.attrs) == {"root": "theirs"}


def math_nan() -> float:
    return float("nan")
