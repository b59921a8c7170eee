"""The 2020 draft of Zarr v3 with zarr-python 2.18's experimental v3 mode, both ways.

zarr-python 2.18 runs in its own cached venv (the `zarr2` fixture). Each direction is one
subprocess call: zarr-python 2 writes a whole hierarchy (or reads everything zarrkit wrote) and
the tests compare value for value (NaN-aware), plus fill values, attributes, groups and the keys
on disk.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import zarrkit as zk

pytestmark = pytest.mark.interop

DRAFT = "v3-draft-2020"


def unb64(d: dict) -> np.ndarray:
    import base64

    dt = d["dtype"]
    dt = np.dtype([tuple(f) for f in dt] if isinstance(dt, list) else dt)
    return np.frombuffer(base64.b64decode(d["data"]), dtype=dt).reshape(d["shape"]).copy()


def same(actual: np.ndarray, expected: np.ndarray) -> None:
    # zarrkit hands out native byte order; the stored order is checked through the metadata
    assert actual.dtype.newbyteorder("=") == expected.dtype.newbyteorder("="), (
        actual.dtype,
        expected.dtype,
    )
    np.testing.assert_array_equal(actual, expected)


def files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


# -- zarr-python 2 writes, zarrkit reads ------------------------------------------------------
WRITE_SCRIPT = """
import numcodecs
from zarr._storage.v3 import DirectoryStoreV3
s = DirectoryStoreV3(ARGS["path"])
g = zarr.group(store=s, zarr_version=3)
g.attrs["title"] = "zarr-python 2"
rng = np.random.default_rng(1)
out = {}
def fill_of(a):
    return None if a.fill_value is None else b64(np.asarray(a.fill_value, dtype=a.dtype))
def put(name, data, region=Ellipsis, **kw):
    a = g.create_dataset(name, shape=data.shape, dtype=data.dtype, **kw)
    a[region] = data[region]
    out[name] = {"data": b64(a[...]), "fill": fill_of(a)}
    return a
put("f4_gzip", rng.random((5, 6)).astype("<f4"), chunks=(2, 3), compressor=numcodecs.GZip(3),
    fill_value=np.nan, region=np.s_[:3, :4])
put("i2_big_F_dot", rng.integers(-999, 999, (7, 5)).astype(">i2"), chunks=(3, 2),
    compressor=numcodecs.Zstd(1), order="F", dimension_separator=".", fill_value=-5,
    region=np.s_[1:6, :])
put("u1_blosc", rng.integers(0, 255, (10,)).astype("u1"), chunks=(4,), fill_value=7,
    region=np.s_[:5])
put("f8_inf", rng.random((9,)), chunks=(4,), fill_value=np.inf, region=np.s_[:4],
    compressor=numcodecs.Zstd(3))
put("f8_ninf", rng.random((9,)), chunks=(4,), fill_value=-np.inf, region=np.s_[4:8],
    compressor=None)
put("bool", rng.random((4, 4)) > 0.5, chunks=(3, 3), compressor=None)
put("c16", (rng.random(6) + 1j * rng.random(6)).astype("<c16"), chunks=(4,), compressor=None)
put("dt", np.arange(5).astype("<M8[s]"), chunks=(2,), compressor=numcodecs.GZip(1))
put("delta", np.arange(20, dtype="<i4") * 3, chunks=(6,), filters=[numcodecs.Delta(dtype="<i4")],
    compressor=None)
put("deep/implicit/arr", np.arange(12, dtype="<u4").reshape(3, 4), chunks=(2, 2),
    compressor=numcodecs.Zstd(1))
sc = put("scalar", np.array(3.5, dtype="<f8"))
g["f4_gzip"].attrs["units"] = "m"
sub = g.create_group("sub")
sub.attrs["kind"] = "explicit"
r = DirectoryStoreV3(ARGS["root_path"])
ra = zarr.create(shape=(6,), chunks=(4,), dtype="<i8", store=r, path="", zarr_version=3,
                 compressor=numcodecs.Zstd(2), fill_value=-1)
ra[:5] = np.arange(5)
out["__root__"] = {"data": b64(ra[...]), "fill": fill_of(ra)}
RESULT = out
"""


@pytest.fixture(scope="module")
def from_zarr2(zarr2, tmp_path_factory):
    root = tmp_path_factory.mktemp("draft_from_zarr2")
    path, root_path = root / "h.zr3", root / "root.zr3"
    result = zarr2.run(WRITE_SCRIPT, experimental_v3=True, path=str(path), root_path=str(root_path))
    return path, root_path, result


ARRAYS = [
    "f4_gzip",
    "i2_big_F_dot",
    "u1_blosc",
    "f8_inf",
    "f8_ninf",
    "bool",
    "c16",
    "dt",
    "delta",
    "deep/implicit/arr",
    "scalar",
]


@pytest.mark.parametrize("name", ARRAYS)
def test_zarrkit_reads_zarr2_arrays(from_zarr2, name):
    path, _, result = from_zarr2
    a = zk.open_array(str(path), path=name)
    expected = unb64(result[name]["data"])
    same(a[...], expected)
    assert a.metadata.format == DRAFT
    # the fill value zarr-python 2 reports is the one zarrkit read
    np.testing.assert_array_equal(np.asarray(a.fill_value), unb64(result[name]["fill"]))


def test_zarrkit_reads_zarr2_hierarchy(from_zarr2):
    path, _, _ = from_zarr2
    g = zk.open_group(str(path))
    assert dict(g.attrs) == {"title": "zarr-python 2"}
    assert g.keys() == sorted(
        [
            "bool",
            "c16",
            "deep",
            "delta",
            "dt",
            "f4_gzip",
            "f8_inf",
            "f8_ninf",
            "i2_big_F_dot",
            "scalar",
            "sub",
            "u1_blosc",
        ]
    )
    assert g["deep"].keys() == ["implicit"]  # implicit groups, no documents
    assert isinstance(g["deep/implicit"], zk.Group) and dict(g["deep/implicit"].attrs) == {}
    assert dict(g["sub"].attrs) == {"kind": "explicit"}
    assert dict(g["f4_gzip"].attrs) == {"units": "m"}
    # filters live in zarr-python's attributes, but they are codecs, not user attributes
    assert "filters" not in dict(g["delta"].attrs)
    assert g["i2_big_F_dot"].metadata.data_type.endian == "big"


def test_zarrkit_reads_zarr2_root_array(from_zarr2):
    _, root_path, result = from_zarr2
    assert "meta/root.array.json" in files(root_path)
    a = zk.open_array(str(root_path))
    same(a[...], unb64(result["__root__"]["data"]))
    assert a.fill_value == -1


def test_zarrkit_writes_into_zarr2_hierarchy(from_zarr2, zarr2):
    """Attributes and data changed by zarrkit are read back by zarr-python 2, and the filters
    stay where zarr-python 2 keeps them."""
    path, _, _ = from_zarr2
    a = zk.open_array(str(path), path="delta", mode="r+")
    a.attrs["note"] = "edited"
    a[:4] = [100, 90, 80, 70]
    got = zarr2.run(
        """
from zarr._storage.v3 import DirectoryStoreV3
a = zarr.Group(DirectoryStoreV3(ARGS["path"]), read_only=True)["delta"]
RESULT = {"data": b64(a[...]), "attrs": a.attrs.asdict()}
""",
        experimental_v3=True,
        path=str(path),
    )
    expected = np.arange(20, dtype="<i4") * 3
    expected[:4] = [100, 90, 80, 70]
    same(unb64(got["data"]), expected)
    assert got["attrs"]["note"] == "edited"
    assert got["attrs"]["filters"] == [{"id": "delta", "dtype": "<i4", "astype": "<i4"}]


# -- zarrkit writes, zarr-python 2 reads ------------------------------------------------------
def _cases():
    rng = np.random.default_rng(7)
    gz = {"codec": "https://purl.org/zarr/spec/codec/gzip/1.0", "configuration": {"level": 4}}
    zs = {"codec": "https://purl.org/zarr/spec/codec/zstd/1.0", "configuration": {"level": 2}}
    return {
        # name: (data, region written, create arguments)
        "f4_gzip_C": (
            rng.random((5, 6)).astype("<f4"),
            np.s_[:3, 2:],
            dict(chunks=(2, 4), compressor=gz, fill_value="NaN"),
        ),
        "i4_big_zstd_F_dot": (
            rng.integers(-9999, 9999, (6, 7)).astype(">i4"),
            np.s_[...],
            dict(chunks=(4, 3), compressor=zs, order="F", dimension_separator="."),
        ),
        "u2_blosc": (
            rng.integers(0, 60000, (11,)).astype("<u2"),
            np.s_[2:9],
            dict(chunks=(4,), fill_value=9),
        ),
        "f8_inf": (
            rng.random(7),
            np.s_[:3],
            dict(chunks=(2,), fill_value=float("inf"), compressor=None),
        ),
        "f8_ninf": (
            rng.random(7),
            np.s_[3:],
            dict(chunks=(2,), fill_value=-float("inf"), compressor=gz),
        ),
        "bool": (rng.random((3, 5)) > 0.5, np.s_[...], dict(chunks=(2, 2), compressor=None)),
        "i1": (
            rng.integers(-100, 100, (8,)).astype("i1"),
            np.s_[...],
            dict(chunks=(3,), compressor=gz),
        ),
        "c8": (
            (rng.random(5) + 1j * rng.random(5)).astype("<c8"),
            np.s_[...],
            dict(chunks=(2,), compressor=None),
        ),
        "filters": (
            np.arange(30, dtype="<i8"),
            np.s_[...],
            dict(chunks=(7,), filters=[{"id": "delta", "dtype": "<i8"}], compressor=zs),
        ),
        "a/b/implicit": (
            np.arange(6, dtype="<f2").reshape(2, 3),
            np.s_[...],
            dict(chunks=(1, 3), compressor=zs),
        ),
        "scalar": (np.array(-4, dtype="<i8"), np.s_[...], dict(compressor=None)),
    }


READ_SCRIPT = """
from zarr._storage.v3 import DirectoryStoreV3
g = zarr.Group(DirectoryStoreV3(ARGS["path"]), read_only=True)
out = {}
def fill_of(a):
    return None if a.fill_value is None else b64(np.asarray(a.fill_value, dtype=a.dtype))
for name in ARGS["names"]:
    try:
        a = g[name]
    except Exception as exc:  # reported per array, so one failure does not hide the others
        out[name] = {"error": repr(exc.__cause__ or exc)}
        continue
    out[name] = {"data": b64(a[...]), "fill": fill_of(a), "attrs": a.attrs.asdict(),
                 "order": a.order, "filters": [f.get_config() for f in (a.filters or [])],
                 "compressor": None if a.compressor is None else a.compressor.get_config()}
out["__groups__"] = {"root": sorted(g.keys()), "a": sorted(g["a"].keys()),
                     "root_attrs": g.attrs.asdict(), "x_attrs": g["x"].attrs.asdict()}
r = zarr.Array(DirectoryStoreV3(ARGS["root_path"]), path="", read_only=True)
out["__root__"] = {"data": b64(r[...]), "fill": fill_of(r)}
RESULT = out
"""


@pytest.fixture(scope="module")
def to_zarr2(zarr2, tmp_path_factory):
    root = tmp_path_factory.mktemp("draft_to_zarr2")
    path, root_path = root / "h.zr3", root / "root.zr3"
    cases = _cases()
    expected = {}
    for name, (data, region, kwargs) in cases.items():
        a = zk.create_array(
            str(path),
            path=name,
            shape=data.shape,
            dtype=data.dtype.str,
            zarr_format=DRAFT,
            attributes={"name": name},
            **kwargs,
        )
        a[region] = data[region]
        expected[name] = a[...]  # what zarrkit reads back, fill included
    g = zk.open_group(str(path), mode="r+")
    g.attrs["hierarchy"] = "zarrkit"
    g.create_group("x", attributes={"explicit": True})
    r = zk.create_array(
        str(root_path),
        shape=(5, 2),
        chunks=(2, 2),
        dtype="<u4",
        zarr_format=DRAFT,
        fill_value=3,
        compressor="zstd",
    )
    r[1:3] = 8
    expected["__root__"] = r[...]
    result = zarr2.run(
        READ_SCRIPT,
        experimental_v3=True,
        path=str(path),
        root_path=str(root_path),
        names=list(cases),
    )
    return path, root_path, cases, expected, result


@pytest.mark.parametrize("name", list(_cases()))
def test_zarr2_reads_zarrkit_arrays(to_zarr2, name):
    _, _, cases, expected, result = to_zarr2
    data, region, kwargs = cases[name]
    assert "error" not in result[name], result[name].get("error")
    got = unb64(result[name]["data"])
    same(got, expected[name])
    same(got[region], data[region])  # the written part is exactly the data
    attrs = dict(result[name]["attrs"])
    filters = attrs.pop("filters", None)  # zarr-python 2 shows its filters as attributes
    assert attrs == {"name": name}
    assert (filters is not None) == (name == "filters")
    assert result[name]["order"] == kwargs.get("order", "C")


def test_zarr2_sees_fill_values_and_codecs(to_zarr2):
    _, _, _, _, result = to_zarr2
    assert np.isnan(unb64(result["f4_gzip_C"]["fill"]))
    assert np.isposinf(unb64(result["f8_inf"]["fill"]))
    assert np.isneginf(unb64(result["f8_ninf"]["fill"]))
    assert result["f4_gzip_C"]["compressor"] == {"id": "gzip", "level": 4}
    assert result["i4_big_zstd_F_dot"]["compressor"]["id"] == "zstd"
    assert result["f8_inf"]["compressor"] is None
    assert result["filters"]["filters"] == [{"id": "delta", "dtype": "<i8", "astype": "<i8"}]


def test_zarr2_reads_default_blosc(to_zarr2):
    """zarrkit's default draft compressor is zarr-python 2's: numcodecs' Blosc()."""
    _, _, _, _, result = to_zarr2
    assert "error" not in result["u2_blosc"], result["u2_blosc"].get("error")
    assert result["u2_blosc"]["compressor"] == {
        "id": "blosc",
        "cname": "lz4",
        "clevel": 5,
        "shuffle": 1,
        "blocksize": 0,
    }
    assert unb64(result["u2_blosc"]["fill"]) == 9


def test_zarr2_reads_zarrkit_hierarchy(to_zarr2):
    path, _, _, _, result = to_zarr2
    groups = result["__groups__"]
    assert groups["root"] == sorted(
        [
            "f4_gzip_C",
            "i4_big_zstd_F_dot",
            "u2_blosc",
            "f8_inf",
            "f8_ninf",
            "bool",
            "i1",
            "c8",
            "filters",
            "a",
            "scalar",
            "x",
        ]
    )
    assert groups["a"] == ["b"]
    assert groups["root_attrs"] == {"hierarchy": "zarrkit"}
    assert groups["x_attrs"] == {"explicit": True}
    keys = files(path)
    # ancestors of a new node stay implicit, as zarr-python 2 leaves them
    assert "meta/root/a.group.json" not in keys and "meta/root/a/b.group.json" not in keys
    assert "meta/root/a/b/implicit.array.json" in keys
    assert "data/root/i4_big_zstd_F_dot/c1.2" in keys  # the grid's separator
    assert "data/root/f4_gzip_C/c0/1" in keys
    assert "data/root/scalar/c0" in keys  # a 0-d array's chunk, as zarr-python 2 names it
    entry = json.loads((path / "zarr.json").read_text())
    assert entry == {
        "zarr_format": "https://purl.org/zarr/spec/protocol/core/3.0",
        "metadata_encoding": "https://purl.org/zarr/spec/protocol/core/3.0",
        "metadata_key_suffix": ".json",
        "extensions": [],
    }


def test_zarr2_reads_zarrkit_root_array(to_zarr2):
    _, root_path, _, expected, result = to_zarr2
    assert {"zarr.json", "meta/root.array.json"} <= files(root_path)
    same(unb64(result["__root__"]["data"]), expected["__root__"])
    assert expected["__root__"][0, 0] == 3 and expected["__root__"][1, 0] == 8
