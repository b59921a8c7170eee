"""Zarr v2 interoperability with zarr-python 2.18 (in its own venv, see tests/support/zarr2_env.py),
both ways: every case of `v2_cases`, a hierarchy with attributes, and consolidated metadata.

One subprocess does all of zarr-python 2's work: it reads what zarrkit wrote and writes its own
copies, which the tests then read with zarrkit."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from v2_cases import CASES, assert_values, data, expected, fill_scalar, numpy_dtype, region

import zarrkit as zk

pytestmark = pytest.mark.interop

_SCRIPT = r"""
import numcodecs
from numcodecs import VLenBytes, VLenUTF8

def dtype_of(case):
    dt = case["dtype"]
    def fields(fs):
        return [(n, fields(t) if isinstance(t, list) else t) for n, t in fs]
    return np.dtype(fields(dt)) if isinstance(dt, list) else np.dtype(dt)

def encode(case, values):
    kind = case["kind"]
    if kind == "str_obj":
        return [str(v) for v in values.ravel().tolist()]
    if kind == "bytes_obj":  # zarr 2 fills missing chunks with the JSON fill value: "" (str)
        return [base64.b64encode(v.encode() if isinstance(v, str) else v).decode()
                for v in values.ravel().tolist()]
    return base64.b64encode(np.ascontiguousarray(values).tobytes()).decode()

def decode(case, payload):
    shape = tuple(case["shape"])
    kind = case["kind"]
    if kind == "str_obj":
        return np.array(payload, dtype=object).reshape(shape)
    if kind == "bytes_obj":
        return np.array([base64.b64decode(v) for v in payload], dtype=object).reshape(shape)
    return np.frombuffer(base64.b64decode(payload), dtype=dtype_of(case)).reshape(shape).copy()

def fill_of(case):
    f = case["fill"]
    if f is None:
        return None
    if isinstance(f, list):
        return complex(*[float(x) for x in f])
    if case["kind"] == "bytes" or case["kind"] == "bytes_obj":
        return base64.b64decode(f)
    return f

out = {"read": {}, "hierarchy": None, "consolidated": None}
# 1. read what zarrkit wrote
for case in ARGS["cases"]:
    z = zarr.open_array(os.path.join(ARGS["ours"], case["name"]), mode="r")
    out["read"][case["name"]] = {"values": encode(case, z[...]), "order": z.order,
                                 "dtype": str(z.dtype), "compressor": z.compressor.get_config()
                                 if z.compressor else None}
g = zarr.open_group(ARGS["ours_tree"], mode="r")
out["hierarchy"] = {"attrs": dict(g.attrs), "groups": sorted(g.group_keys()),
                    "arrays": sorted(g.array_keys()), "sub_attrs": dict(g["sub"].attrs),
                    "deep": g["sub/deep"][...].tolist(), "deep_attrs": dict(g["sub/deep"].attrs)}
c = zarr.open_consolidated(ARGS["ours_tree"], mode="r")
out["consolidated"] = {"keys": sorted(c.keys()), "sub_keys": sorted(c["sub"].keys()),
                       "store_keys": sorted(k for k in c.store.keys() if k != ".zmetadata")}

# 2. write the same cases with zarr-python 2
for case in ARGS["cases"]:
    kind = case["kind"]
    dtype = object if kind in ("str_obj", "bytes_obj") else dtype_of(case)
    filters, extra, fill = None, {}, fill_of(case)
    if case["filters"]:
        filters = [numcodecs.get_codec(dict(f)) for f in case["filters"]]
    if kind in ("str_obj", "bytes_obj"):  # zarr 2 takes the object codec on its own
        extra["object_codec"], filters = filters[0], None
        fill = None if kind == "bytes_obj" else fill  # it cannot write a bytes fill value
    z = zarr.open_array(os.path.join(ARGS["theirs"], case["name"]), mode="w",
                        shape=tuple(case["shape"]), chunks=tuple(case["chunks"]) or True,
                        dtype=dtype, fill_value=fill, order=case["order"], **extra,
                        compressor=numcodecs.get_codec(dict(case["compressor"]))
                        if case["compressor"] else None,
                        filters=filters, dimension_separator=case["sep"])
    values = decode(case, ARGS["data"][case["name"]])
    if case["shape"]:
        n = max(1, case["shape"][0] // 2)
        z[:n] = values[:n]
    else:
        z[...] = values
root = zarr.open_group(ARGS["theirs_tree"], mode="w")
root.attrs.update({"made_by": "zarr 2", "n": [1, 2]})
s = root.create_group("s")
s.attrs["x"] = 1
s.create_dataset("d", shape=(3,), dtype="<i2", fill_value=9)
root.create_group("e")
zarr.consolidate_metadata(ARGS["theirs_tree"])
RESULT = out
"""


def _payload(case: dict, values: np.ndarray) -> Any:
    if case["kind"] == "str_obj":
        return [str(v) for v in values.ravel().tolist()]
    if case["kind"] == "bytes_obj":
        return [base64.b64encode(v).decode() for v in values.ravel().tolist()]
    return base64.b64encode(
        np.ascontiguousarray(values.astype(numpy_dtype(case))).tobytes()
    ).decode()


def _values(case: dict, payload: Any) -> np.ndarray:
    shape = tuple(case["shape"])
    if case["kind"] == "str_obj":
        return np.array(payload, dtype=object).reshape(shape)
    if case["kind"] == "bytes_obj":
        return np.array([base64.b64decode(v) for v in payload], dtype=object).reshape(shape)
    return np.frombuffer(base64.b64decode(payload), dtype=numpy_dtype(case)).reshape(shape)


def _json_case(case: dict) -> dict:
    out = dict(case)
    if isinstance(case["fill"], bytes):
        out["fill"] = base64.b64encode(case["fill"]).decode()
    return json.loads(json.dumps(out, allow_nan=True))


def _zk_write(root: Path, case: dict) -> None:
    dtype = {"str_obj": str, "bytes_obj": bytes}.get(case["kind"], numpy_dtype(case))
    kwargs = {} if case["filters"] is None else {"filters": case["filters"]}
    a = zk.create_array(
        str(root),
        path=case["name"],
        shape=case["shape"],
        chunks=case["chunks"],
        dtype=dtype,
        fill_value=None if case["fill"] is None else fill_scalar(case),
        zarr_format=2,
        compressor=case["compressor"],
        order=case["order"],
        dimension_separator=case["sep"],
        **kwargs,
    )
    a[region(case)] = data(case)[region(case)]


@pytest.fixture(scope="module")
def exchange(zarr2: Any, tmp_path_factory: pytest.TempPathFactory) -> dict:
    base = tmp_path_factory.mktemp("v2-zarr2")
    ours, theirs = base / "ours", base / "theirs"
    failures = {}
    for name, case in CASES.items():
        try:
            _zk_write(ours, case)
        except Exception as exc:  # reported by the test of that case
            failures[name] = exc
    tree = base / "ours_tree"
    g = zk.create_group(str(tree), zarr_format=2, attributes={"title": "zarrkit", "n": 3})
    sub = g.create_group("sub", attributes={"level": 1})
    sub.create_array("deep", shape=(4,), dtype="<i4", attributes={"u": "m"})[:] = [1, 2, 3, 4]
    g.create_group("plain")
    zk.consolidate_metadata(str(tree))
    written = [_json_case(c) for n, c in CASES.items() if n not in failures]
    result = zarr2.run(
        _SCRIPT,
        cases=written,
        ours=str(ours),
        ours_tree=str(tree),
        theirs=str(theirs),
        theirs_tree=str(base / "theirs_tree"),
        data={c["name"]: _payload(c, data(c)) for c in written},
    )
    return {
        "result": result,
        "failures": failures,
        "theirs": theirs,
        "theirs_tree": base / "theirs_tree",
    }


@pytest.mark.parametrize("name", list(CASES))
def test_zarrkit_writes_zarr2_reads(exchange: dict, name: str) -> None:
    case = CASES[name]
    if name in exchange["failures"]:
        raise exchange["failures"][name]
    read = exchange["result"]["read"][name]
    assert_values(_values(case, read["values"]), expected(case))
    assert read["order"] == case["order"]
    if case["compressor"]:
        assert read["compressor"]["id"] == case["compressor"]["id"]


@pytest.mark.parametrize("name", list(CASES))
def test_zarr2_writes_zarrkit_reads(exchange: dict, name: str) -> None:
    case = CASES[name]
    a = zk.open_array(str(exchange["theirs"]), path=name)
    assert a.metadata.format == "v2"
    assert_values(a[...], expected(case))
    doc = json.loads((exchange["theirs"] / name / ".zarray").read_text())
    assert doc["dimension_separator"] == case["sep"] and doc["order"] == case["order"]


def test_hierarchy_and_consolidated_both_ways(exchange: dict) -> None:
    result = exchange["result"]
    assert result["hierarchy"] == {
        "attrs": {"title": "zarrkit", "n": 3},
        "groups": ["plain", "sub"],
        "arrays": [],
        "sub_attrs": {"level": 1},
        "deep": [1, 2, 3, 4],
        "deep_attrs": {"u": "m"},
    }
    assert result["consolidated"]["keys"] == ["plain", "sub"]
    assert result["consolidated"]["sub_keys"] == ["deep"]
    # zarr-python 2 wrote and consolidated; zarrkit opens it through .zmetadata
    g = zk.open_consolidated(str(exchange["theirs_tree"]))
    assert dict(g.attrs) == {"made_by": "zarr 2", "n": [1, 2]}
    assert g.tree().splitlines() == ["/", "├── e", "└── s", "    └── d (3,) int16"]
    assert dict(g["s"].attrs) == {"x": 1}
    np.testing.assert_array_equal(g["s/d"][...], [9, 9, 9])
