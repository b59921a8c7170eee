"""Interoperability with tensorstore's zarr3 driver: zarrkit writes and tensorstore reads, and
the reverse, value for value (NaN-aware and bit for bit), with the chunk files on disk checked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from interop_data import (
    BYTES_BE,
    BYTES_LE,
    CODEC_CHAINS,
    DTYPES,
    FILLS,
    SHAPES,
    T10,
    assert_same,
    chunk_files,
    expected_from,
    for_dtype,
    raw,
    sample,
    stored,
)

import zarrkit as zk

ts = pytest.importorskip("tensorstore")

pytestmark = pytest.mark.interop

DIRECTIONS = ["zarrkit->ts", "ts->zarrkit"]

DEFAULT_SLASH = {"name": "default", "configuration": {"separator": "/"}}


# -- helpers --------------------------------------------------------------------------------
def ts_spec(path: Path) -> dict:
    return {"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)}}


def ts_open(path: Path, **kwargs: Any) -> Any:
    return ts.open(ts_spec(path), **kwargs).result()


def write(
    direction: str,
    root: Path,
    name: str,
    *,
    shape,
    chunks,
    dtype,
    codecs,
    fill_json,
    chunk_key_encoding=DEFAULT_SLASH,
    dimension_names=None,
    attributes=None,
    data: np.ndarray | None = None,
    region: Any = Ellipsis,
) -> None:
    """Create an array with the writing side of `direction` and store `data[region]`."""
    if direction == "zarrkit->ts":
        a = zk.create_array(
            str(root),
            path=name,
            shape=shape,
            chunks=chunks,
            dtype=dtype,
            codecs=codecs,
            fill_value=fill_json,
            chunk_key_encoding=chunk_key_encoding,
            dimension_names=dimension_names,
            attributes=attributes,
        )
        if data is not None:
            a[region] = data[region]
        return
    metadata = {
        "shape": list(shape),
        "data_type": dtype,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
        "chunk_key_encoding": chunk_key_encoding,
        "fill_value": fill_json,
        "codecs": codecs,
    }
    if dimension_names is not None:
        metadata["dimension_names"] = list(dimension_names)
    if attributes is not None:
        metadata["attributes"] = attributes
    t = ts.open({**ts_spec(root / name), "metadata": metadata, "create": True}).result()
    if data is not None:
        t[region].write(data[region]).result()


def read(direction: str, root: Path, name: str) -> np.ndarray:
    if direction == "zarrkit->ts":
        return ts_open(root / name).read().result()
    return np.asarray(zk.open_array(str(root), path=name)[...])


def _key_encoding(doc: dict) -> tuple[str, str]:
    """(name, separator) with the spec's default separator filled in."""
    default = "/" if doc["name"] == "default" else "."
    return doc["name"], doc.get("configuration", {}).get("separator", default)


def _codecs(codecs: list[dict]) -> list[dict]:
    """Codecs without blosc's typesize when it does not shuffle (tensorstore leaves it out)."""
    out = []
    for codec in codecs:
        config = codec.get("configuration", {})
        if codec["name"] == "blosc" and config.get("shuffle") == "noshuffle":
            codec = {**codec, "configuration": {k: v for k, v in config.items() if k != "typesize"}}
        out.append(codec)
    return out


def check_metadata_agrees(direction: str, root: Path, name: str) -> None:
    """The reading side reports what the stored document says."""
    doc = stored(root, name)
    if direction == "zarrkit->ts":
        t = ts_open(root / name)
        meta = t.spec(retain_context=False).to_json()["metadata"]
        assert list(t.shape) == doc["shape"]
        assert t.dtype.numpy_dtype == np.dtype(doc["data_type"])
        assert meta["data_type"] == doc["data_type"]
        assert meta["chunk_grid"] == doc["chunk_grid"]
        assert _codecs(meta["codecs"]) == _codecs(doc["codecs"])
        assert _key_encoding(meta["chunk_key_encoding"]) == _key_encoding(doc["chunk_key_encoding"])
        assert meta.get("attributes", {}) == doc.get("attributes", {})
        assert meta.get("dimension_names") == doc.get("dimension_names")
        ours = zk.open_array(str(root), path=name).fill_value
        assert raw(np.asarray(t.fill_value)) == raw(np.asarray(ours))
    else:
        a = zk.open_array(str(root), path=name)
        meta = a.metadata
        assert list(a.shape) == doc["shape"]
        assert a.data_type.to_json() == doc["data_type"]
        assert list(a.chunks) == doc["chunk_grid"]["configuration"]["chunk_shape"]
        assert [c.to_json() for c in a.codecs] == doc["codecs"]
        assert _key_encoding(meta.chunk_key_encoding.to_json()) == _key_encoding(
            doc["chunk_key_encoding"]
        )
        assert meta.data_type.fill_to_json(a.fill_value) == doc["fill_value"]
        assert dict(a.attrs) == doc.get("attributes", {})
        names = a.dimension_names
        assert (list(names) if names is not None else None) == doc.get("dimension_names")


def default_codecs(dtype: str) -> list[dict]:
    return for_dtype([BYTES_LE], dtype)


# -- data types -----------------------------------------------------------------------------
@pytest.mark.parametrize("endian", ["little", "big"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("direction", DIRECTIONS)
def test_data_types(tmp_path: Path, direction: str, dtype: str, endian: str) -> None:
    data = sample(dtype, (10, 7), seed=DTYPES.index(dtype))
    codecs = for_dtype(
        [
            {"name": "bytes", "configuration": {"endian": endian}},
            {"name": "zstd", "configuration": {"level": 1, "checksum": False}},
        ],
        dtype,
    )
    fill = False if dtype == "bool" else ([0.0, 0.0] if dtype.startswith("complex") else 0)
    write(
        direction,
        tmp_path,
        "a",
        shape=(10, 7),
        chunks=(3, 4),
        dtype=dtype,
        codecs=codecs,
        fill_json=fill,
        data=data,
    )
    assert_same(read(direction, tmp_path, "a"), data)
    check_metadata_agrees(direction, tmp_path, "a")
    assert chunk_files(tmp_path / "a") == {f"c/{i}/{j}" for i in range(4) for j in range(2)}


# -- codecs ---------------------------------------------------------------------------------
@pytest.mark.parametrize("chain", list(CODEC_CHAINS))
@pytest.mark.parametrize("dtype", ["uint8", "float64"])
@pytest.mark.parametrize("direction", DIRECTIONS)
def test_codecs(tmp_path: Path, direction: str, dtype: str, chain: str) -> None:
    data = sample(dtype, (11, 9), seed=3)
    write(
        direction,
        tmp_path,
        "a",
        shape=(11, 9),
        chunks=(4, 5),
        dtype=dtype,
        codecs=for_dtype(CODEC_CHAINS[chain], dtype),
        fill_json=0,
        data=data,
    )
    assert_same(read(direction, tmp_path, "a"), data)
    check_metadata_agrees(direction, tmp_path, "a")


@pytest.mark.parametrize("direction", DIRECTIONS)
def test_transpose_3d(tmp_path: Path, direction: str) -> None:
    codecs = [
        {"name": "transpose", "configuration": {"order": [2, 0, 1]}},
        BYTES_BE,
        {"name": "gzip", "configuration": {"level": 1}},
        {"name": "crc32c"},
    ]
    data = sample("int32", (5, 6, 7), seed=4)
    write(
        direction,
        tmp_path,
        "a",
        shape=(5, 6, 7),
        chunks=(2, 4, 3),
        dtype="int32",
        codecs=codecs,
        fill_json=0,
        data=data,
    )
    assert_same(read(direction, tmp_path, "a"), data)
    check_metadata_agrees(direction, tmp_path, "a")


# -- shapes ---------------------------------------------------------------------------------


@pytest.mark.parametrize("case", list(SHAPES))
@pytest.mark.parametrize("direction", DIRECTIONS)
def test_shapes(tmp_path: Path, direction: str, case: str) -> None:
    shape, chunks = SHAPES[case]
    data = sample("int16", shape, seed=5)
    write(
        direction,
        tmp_path,
        "a",
        shape=shape,
        chunks=chunks,
        dtype="int16",
        codecs=[T10, BYTES_LE] if len(shape) == 2 else [BYTES_BE],
        fill_json=-1,
        data=data,
    )
    assert_same(read(direction, tmp_path, "a"), data)
    check_metadata_agrees(direction, tmp_path, "a")
    grid = [-(-s // c) for s, c in zip(shape, chunks)]
    assert chunk_files(tmp_path / "a") == {"/".join(["c", *map(str, i)]) for i in np.ndindex(*grid)}


@pytest.mark.parametrize("direction", DIRECTIONS)
def test_empty_array(tmp_path: Path, direction: str) -> None:
    write(
        direction,
        tmp_path,
        "a",
        shape=(3, 0),
        chunks=(2, 2),
        dtype="float32",
        codecs=[BYTES_LE],
        fill_json=1.0,
        data=np.zeros((3, 0), "float32"),
    )
    assert_same(read(direction, tmp_path, "a"), np.zeros((3, 0), "float32"))
    assert chunk_files(tmp_path / "a") == set()


# -- missing chunks -------------------------------------------------------------------------
@pytest.mark.parametrize("direction", DIRECTIONS)
def test_missing_chunks(tmp_path: Path, direction: str) -> None:
    shape, chunks, fill = (10, 10), (3, 3), 7
    data = sample("int32", shape, seed=6)
    data[data == fill] = fill + 1
    write(
        direction,
        tmp_path,
        "a",
        shape=shape,
        chunks=chunks,
        dtype="int32",
        codecs=[BYTES_LE, {"name": "crc32c"}],
        fill_json=fill,
    )
    expected = np.full(shape, fill, dtype="int32")
    for region in [np.s_[0:3, 0:3], np.s_[4:5, 7:9]]:
        if direction == "zarrkit->ts":
            zk.open_array(str(tmp_path), path="a", mode="r+")[region] = data[region]
        else:
            ts_open(tmp_path / "a")[region].write(data[region]).result()
        expected[region] = data[region]
    assert chunk_files(tmp_path / "a") == {"c/0/0", "c/1/2"}
    assert_same(read(direction, tmp_path, "a"), expected)


# -- fill values ----------------------------------------------------------------------------
@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("case,dtype,fill_json,fill", [pytest.param(*f, id=f[0]) for f in FILLS])
def test_fill_values(
    tmp_path: Path, direction: str, case: str, dtype: str, fill_json: Any, fill: np.generic
) -> None:
    shape, chunks = (5, 4), (2, 3)
    data = sample(dtype, shape, seed=7)
    region = np.s_[0:2, 0:3]
    write(
        direction,
        tmp_path,
        "a",
        shape=shape,
        chunks=chunks,
        dtype=dtype,
        codecs=default_codecs(dtype),
        fill_json=fill_json,
        data=data,
        region=region,
    )
    assert stored(tmp_path, "a")["fill_value"] == fill_json
    if direction == "zarrkit->ts":
        reported = ts_open(tmp_path / "a").fill_value
    else:
        reported = zk.open_array(str(tmp_path), path="a").fill_value
    assert raw(np.asarray(reported, dtype=dtype)) == raw(fill)
    assert_same(read(direction, tmp_path, "a"), expected_from(data, fill, region))
    assert chunk_files(tmp_path / "a") == {"c/0/0"}
    check_metadata_agrees(direction, tmp_path, "a")


# -- chunk key encodings ------------------------------------------------------------------------
KEY_ENCODINGS = {
    "default-slash": (DEFAULT_SLASH, {"c/0/0", "c/0/1", "c/1/1"}, "c"),
    "default-dot": (
        {"name": "default", "configuration": {"separator": "."}},
        {"c.0.0", "c.0.1", "c.1.1"},
        "c",
    ),
    "v2-dot": ({"name": "v2", "configuration": {"separator": "."}}, {"0.0", "0.1", "1.1"}, "0"),
    "v2-slash": ({"name": "v2", "configuration": {"separator": "/"}}, {"0/0", "0/1", "1/1"}, "0"),
}


@pytest.mark.parametrize("encoding", list(KEY_ENCODINGS))
@pytest.mark.parametrize("direction", DIRECTIONS)
def test_chunk_key_encodings(tmp_path: Path, direction: str, encoding: str) -> None:
    cke, files, key_0d = KEY_ENCODINGS[encoding]
    data = sample("uint32", (5, 5), seed=8)
    region = np.s_[0:3, :]
    write(
        direction,
        tmp_path,
        "a",
        shape=(5, 5),
        chunks=(3, 3),
        dtype="uint32",
        codecs=[BYTES_BE],
        fill_json=4,
        chunk_key_encoding=cke,
        data=data,
        region=region,
    )
    if direction == "zarrkit->ts":
        zk.open_array(str(tmp_path), path="a", mode="r+")[4, 4] = 1
    else:
        ts_open(tmp_path / "a")[4, 4].write(np.uint32(1)).result()
    expected = expected_from(data, 4, region)
    expected[4, 4] = 1
    assert chunk_files(tmp_path / "a") == files
    assert_same(read(direction, tmp_path, "a"), expected)
    check_metadata_agrees(direction, tmp_path, "a")
    # a 0-d array has a single chunk with the encoding's own key
    write(
        direction,
        tmp_path,
        "z",
        shape=(),
        chunks=(),
        dtype="float64",
        codecs=[BYTES_LE],
        fill_json="NaN",
        chunk_key_encoding=cke,
        data=np.array(-0.0),
    )
    assert chunk_files(tmp_path / "z") == {key_0d}
    assert_same(read(direction, tmp_path, "z"), np.array(-0.0))


# -- attributes and dimension names ----------------------------------------------------------
@pytest.mark.parametrize("direction", DIRECTIONS)
def test_attributes_and_dimension_names(tmp_path: Path, direction: str) -> None:
    attrs = {"nested": {"list": [1, None, "x", {"deep": [2.5]}]}, "flag": True}
    write(
        direction,
        tmp_path,
        "a",
        shape=(2, 3, 4),
        chunks=(2, 2, 2),
        dtype="int8",
        codecs=[{"name": "bytes"}],
        fill_json=0,
        dimension_names=["z", None, "x"],
        attributes=attrs,
    )
    doc = stored(tmp_path, "a")
    assert doc["attributes"] == attrs and doc["dimension_names"] == ["z", None, "x"]
    if direction == "zarrkit->ts":
        t = ts_open(tmp_path / "a")
        assert t.domain.labels == ("z", "", "x")
    check_metadata_agrees(direction, tmp_path, "a")


# -- raw bits -------------------------------------------------------------------------------
def test_raw_bits_refused_by_tensorstore(tmp_path: Path) -> None:
    """tensorstore 0.1.86 reads `r<N>` as its raw_bytes type with a base64 fill value, not the
    spec's list of byte values, so a zarrkit r16 array is not interoperable: tensorstore must
    refuse it cleanly, and zarrkit must still round-trip it. (Creating an r16 array with
    tensorstore aborts the process, so that direction is not exercised.)"""
    a = zk.create_array(
        str(tmp_path),
        path="a",
        shape=(3,),
        chunks=(2,),
        dtype="r16",
        fill_value=[1, 2],
        codecs=[{"name": "bytes"}],
    )
    a[0] = b"xy"
    assert raw(zk.open_array(str(tmp_path), path="a")[...]) == b"xy\x01\x02\x01\x02"
    with pytest.raises(ValueError, match="fill_value"):
        ts_open(tmp_path / "a")


# -- shared writes --------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["uint64", "float16", "complex64"])
def test_shared_writes(tmp_path: Path, dtype: str) -> None:
    """zarrkit and tensorstore write overlapping regions of one array; both read the result."""
    codecs = for_dtype(
        [
            T10,
            BYTES_BE,
            {
                "name": "blosc",
                "configuration": {
                    "cname": "zstd",
                    "clevel": 3,
                    "shuffle": "shuffle",
                    "typesize": 1,
                    "blocksize": 0,
                },
            },
            {"name": "crc32c"},
        ],
        dtype,
    )
    data = sample(dtype, (9, 8), seed=12)
    write(
        "zarrkit->ts",
        tmp_path,
        "a",
        shape=(9, 8),
        chunks=(4, 3),
        dtype=dtype,
        codecs=codecs,
        fill_json=[0.0, 0.0] if dtype == "complex64" else 0,
        data=data,
        region=np.s_[0:5, :],
    )
    ts_open(tmp_path / "a")[5:9, :].write(data[5:9, :]).result()
    zk.open_array(str(tmp_path), path="a", mode="r+")[2:7, 1:4] = data[2:7, 1:4]
    assert_same(zk.open_array(str(tmp_path), path="a")[...], data)
    assert_same(ts_open(tmp_path / "a").read().result(), data)
    assert json.loads((tmp_path / "a" / "zarr.json").read_text())["codecs"] == codecs
