"""Zarr v2 arrays that zarrkit, zarr-python 3 and zarr-python 2.18 must agree on: data types
(byte orders, strings, objects, datetimes, nested structured), compressors and filters by
numcodecs id, C/F order, both dimension separators, fill values (NaN, infinities, null).

Each case is JSON-able so it can be handed to zarr-python 2's subprocess as is."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from interop_data import sample

STRUCT = [["a", "<i4"], ["b", ">f8"], ["c", [["d", "|u1"], ["e", "<i2"]]]]

#: name -> case; "fill" is the Python value given to the writers, "kind" picks the data
CASES: dict[str, dict[str, Any]] = {
    "f8-blosc-nan": dict(
        dtype="<f8",
        shape=[20, 7],
        chunks=[6, 4],
        fill=math.nan,
        compressor={"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0},
    ),
    "f4-big-F-slash-inf": dict(
        dtype=">f4",
        shape=[9, 8],
        chunks=[4, 3],
        fill=math.inf,
        order="F",
        sep="/",
        compressor={"id": "zstd", "level": 3},
    ),
    "i2-big-gzip": dict(
        dtype=">i2", shape=[10], chunks=[3], fill=-5, compressor={"id": "gzip", "level": 1}
    ),
    "u8-max-uncompressed-slash": dict(
        dtype="<u8", shape=[5, 5], chunks=[2, 5], fill=2**64 - 1, compressor=None, sep="/"
    ),
    "i4-delta-filter": dict(
        dtype="<i4",
        shape=[30],
        chunks=[7],
        fill=0,
        filters=[{"id": "delta", "dtype": "<i4"}],
        compressor={"id": "zlib", "level": 1},
    ),
    "b1": dict(dtype="|b1", shape=[7], chunks=[3], fill=True),
    "i1-F-3d": dict(dtype="|i1", shape=[4, 5, 6], chunks=[3, 2, 4], fill=-1, order="F"),
    "c16-nan-inf": dict(dtype="<c16", shape=[6], chunks=[4], fill=[math.nan, math.inf]),
    "f2-neginf-F": dict(dtype="<f2", shape=[4, 4], chunks=[3, 3], fill=-math.inf, order="F"),
    "u2-big-blosc-bitshuffle": dict(
        dtype=">u2",
        shape=[40],
        chunks=[16],
        fill=3,
        compressor={"id": "blosc", "cname": "zstd", "clevel": 3, "shuffle": 2, "blocksize": 0},
    ),
    "unicode": dict(dtype="<U6", shape=[5], chunks=[2], fill="ab", kind="unicode"),
    "fixed-bytes": dict(dtype="|S4", shape=[5], chunks=[2], fill=b"xy", kind="bytes"),
    "vlen-utf8": dict(
        dtype="|O", shape=[6], chunks=[4], fill="", kind="str_obj", filters=[{"id": "vlen-utf8"}]
    ),
    "vlen-bytes": dict(
        dtype="|O",
        shape=[6],
        chunks=[4],
        fill=b"",
        kind="bytes_obj",
        filters=[{"id": "vlen-bytes"}],
    ),
    "datetime-ns": dict(dtype="<M8[ns]", shape=[5], chunks=[2], fill=None, kind="datetime"),
    "timedelta-s": dict(dtype="<m8[s]", shape=[5], chunks=[2], fill=None, kind="timedelta"),
    "structured-nested": dict(dtype=STRUCT, shape=[5], chunks=[2], fill=None, kind="structured"),
    "null-fill-i4": dict(dtype="<i4", shape=[6], chunks=[4], fill=None),
    "0-d": dict(dtype="<i8", shape=[], chunks=[], fill=3),
}
for _name, _case in CASES.items():
    _case.setdefault("name", _name)
    _case.setdefault("order", "C")
    _case.setdefault("sep", ".")
    _case.setdefault("filters", None)
    _case.setdefault("compressor", {"id": "zstd", "level": 1})
    _case.setdefault("kind", "numeric")


def numpy_dtype(case: dict) -> np.dtype:
    dt = case["dtype"]
    if isinstance(dt, list):
        return np.dtype(_fields(dt))
    return np.dtype(dt)


def _fields(fields: list) -> list[tuple]:
    return [(n, _fields(t) if isinstance(t, list) else t) for n, t in fields]


def data(case: dict) -> np.ndarray:
    """The values written: a type's extremes and specials, deterministic."""
    shape = tuple(case["shape"])
    n = int(np.prod(shape, dtype=np.int64))
    kind = case["kind"]
    if kind == "numeric":
        return sample(numpy_dtype(case).newbyteorder("="), shape, seed=len(case["name"]))
    if kind == "unicode":
        return np.array([f"é{i}"[:6] * (i % 3) for i in range(n)], dtype="<U6").reshape(shape)
    if kind == "bytes":
        return np.array([bytes([65 + i]) * (i % 5) for i in range(n)], dtype="|S4").reshape(shape)
    if kind == "str_obj":
        return np.array(["", "a", "ünïcødé", "x" * 40, "0", "é"][:n], dtype=object).reshape(shape)
    if kind == "bytes_obj":
        return np.array(
            [b"", b"\x00\xff", b"abc" * 9, b"z", b"\x01", b"q"][:n], dtype=object
        ).reshape(shape)
    if kind == "datetime":
        return np.array(
            ["2020-01-01T00:00:00.000000001", "NaT", "1970-01-01", "2262-04-11", "1677-09-22"][:n],
            dtype="<M8[ns]",
        ).reshape(shape)
    if kind == "timedelta":
        return np.array([0, -5, 86400, 2**40, -(2**40)][:n], dtype="<m8[s]").reshape(shape)
    if kind == "structured":
        out = np.zeros(shape, dtype=numpy_dtype(case))
        out["a"] = np.arange(n) - 2
        out["b"] = np.linspace(-1.5, 2**60, n)
        out["c"]["d"] = np.arange(n) * 50
        out["c"]["e"] = -np.arange(n) * 1000
        return out
    raise ValueError(kind)


def region(case: dict) -> Any:
    """Where the data is written: the first half along axis 0, so later chunks stay missing
    and read as the fill value."""
    shape = case["shape"]
    if not shape:
        return ()
    return (slice(0, max(1, shape[0] // 2)),)


def default_fill(case: dict) -> Any:
    """What a null fill value reads as (zarr-python 3: the type's default)."""
    dt = numpy_dtype(case)
    if case["kind"] == "str_obj":
        return ""
    if case["kind"] == "bytes_obj":
        return b""
    if dt.kind in "Mm":
        return np.array("NaT", dtype=dt)[()]
    return np.zeros((), dtype=dt)[()]


def fill_scalar(case: dict) -> Any:
    fill = case["fill"]
    if fill is None:
        return default_fill(case)
    if isinstance(fill, list):
        return complex(*fill)
    return fill


def expected(case: dict) -> np.ndarray:
    values = data(case)
    out = np.empty(values.shape, dtype=values.dtype)
    out[...] = fill_scalar(case)
    out[region(case)] = values[region(case)]
    return out


def assert_values(actual: Any, wanted: np.ndarray) -> None:
    """Same shape and values; floats and complex compared bit for bit (NaN, -0.0), strings and
    objects by value, structured field by field."""
    actual = np.asarray(actual)
    assert actual.shape == wanted.shape
    if wanted.dtype.names:
        assert actual.dtype.names == wanted.dtype.names
        for name in wanted.dtype.names:
            assert_values(actual[name], wanted[name])
        return
    if wanted.dtype.kind == "O" or actual.dtype.kind in "OT":
        assert list(actual.ravel().tolist()) == wanted.ravel().tolist()
        return
    if wanted.dtype.kind in "fc":
        assert actual.dtype.kind == wanted.dtype.kind
        native = wanted.dtype.newbyteorder("=")
        assert (
            np.ascontiguousarray(actual.astype(native)).tobytes()
            == np.ascontiguousarray(wanted.astype(native)).tobytes()
        )
        return
    np.testing.assert_array_equal(actual, wanted)
    assert actual.dtype.newbyteorder("=") == wanted.dtype.newbyteorder("=")


def chunk_keys(case: dict) -> set[str]:
    """The chunk keys a full write of `region` creates."""
    shape, chunks = case["shape"], case["chunks"]
    if not shape:
        return {"0"}
    rows = -(-max(1, shape[0] // 2) // chunks[0])
    grids = [range(rows)] + [range(-(-s // c)) for s, c in zip(shape[1:], chunks[1:])]
    out = {()}
    for g in grids:
        out = {k + (i,) for k in out for i in g}
    return {case["sep"].join(map(str, k)) for k in out}
