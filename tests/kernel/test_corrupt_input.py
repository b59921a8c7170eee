"""Corrupt and invalid input: every case gets a specific zarrkit error that names the chunk key,
the metadata field or the extension, and nothing stored changes because of it."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrkit as zk
from zarrkit.errors import (
    ChunkDecodeError,
    CodecChainError,
    MetadataError,
    MustUnderstandError,
    NodeNameError,
    ReadOnlyError,
    UnknownExtensionError,
    ValueCastError,
    ZarrkitError,
)

BYTES_LE = {"name": "bytes", "configuration": {"endian": "little"}}


# -- helpers --------------------------------------------------------------------------------
def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under `root` with its contents."""
    out = {}
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            path = os.path.join(dirpath, name)
            with open(path, "rb") as f:
                out[os.path.relpath(path, root)] = f.read()
    return out


def make_array(
    root: Path,
    codecs: list[dict],
    *,
    dtype: str = "float64",
    shape=(8, 8),
    chunks=(4, 4),
    fill_value: Any = None,
    **kwargs: Any,
) -> np.ndarray:
    """An array 'a' in `root` with every chunk written; returns the data."""
    a = zk.create_array(
        str(root),
        path="a",
        shape=shape,
        chunks=chunks,
        dtype=dtype,
        codecs=codecs,
        fill_value=fill_value,
        **kwargs,
    )
    data = (np.arange(int(np.prod(shape))) + 1).reshape(shape).astype(dtype)
    a[...] = data
    return data


def chunk_path(root: Path, key: str = "c/1/0") -> Path:
    return root / "a" / key


def assert_chunk_error(root: Path, key: str, *, match: str | None = None) -> ChunkDecodeError:
    """Reading the chunk, and writing part of it, both fail naming the chunk; nothing changes."""
    before = snapshot(root)
    a = zk.open_array(str(root), path="a", mode="r+")
    with pytest.raises(ChunkDecodeError, match=match) as info:
        a[...]
    assert info.value.key == f"a/{key}"
    assert f"'a/{key}'" in str(info.value)
    # a partial write must read the chunk first: it fails the same way and writes nothing,
    # not even the chunks before it in the batch
    with pytest.raises(ChunkDecodeError) as info2:
        a[1:, 1:] = -1
    assert info2.value.key == f"a/{key}"
    assert snapshot(root) == before
    return info.value


# -- corrupt chunks -------------------------------------------------------------------------
COMPRESSED = {
    "zstd": [BYTES_LE, {"name": "zstd", "configuration": {"level": 3, "checksum": False}}],
    "zstd-checksum": [BYTES_LE, {"name": "zstd", "configuration": {"level": 3, "checksum": True}}],
    "gzip": [BYTES_LE, {"name": "gzip", "configuration": {"level": 5}}],
    "blosc-lz4": [
        BYTES_LE,
        {
            "name": "blosc",
            "configuration": {
                "cname": "lz4",
                "clevel": 5,
                "shuffle": "shuffle",
                "typesize": 8,
                "blocksize": 0,
            },
        },
    ],
    "blosc-zstd": [
        BYTES_LE,
        {
            "name": "blosc",
            "configuration": {
                "cname": "zstd",
                "clevel": 5,
                "shuffle": "bitshuffle",
                "typesize": 8,
                "blocksize": 0,
            },
        },
    ],
}

CUTS: dict[str, Callable[[bytes], bytes]] = {
    "half": lambda b: b[: len(b) // 2],
    "one-byte-short": lambda b: b[:-1],
    "header-only": lambda b: b[:8],
    "empty": lambda b: b"",
}


@pytest.mark.parametrize("cut", list(CUTS))
@pytest.mark.parametrize("codec", list(COMPRESSED))
def test_truncated_compressed_chunk(tmp_path: Path, codec: str, cut: str) -> None:
    data = make_array(tmp_path, COMPRESSED[codec])
    path = chunk_path(tmp_path)
    path.write_bytes(CUTS[cut](path.read_bytes()))
    err = assert_chunk_error(tmp_path, "c/1/0")
    name = codec.split("-")[0]
    assert name in str(err)  # the codec that failed
    # the other chunks are intact and still readable
    a = zk.open_array(str(tmp_path), path="a")
    np.testing.assert_array_equal(a[0:4, :], data[0:4, :])
    np.testing.assert_array_equal(a[4:8, 4:8], data[4:8, 4:8])


@pytest.mark.parametrize("position", ["first", "middle", "checksum"])
@pytest.mark.parametrize("inner", ["none", "gzip"])
def test_crc32c_mismatch(tmp_path: Path, inner: str, position: str) -> None:
    codecs = [BYTES_LE] + (
        [{"name": "gzip", "configuration": {"level": 1}}] if inner == "gzip" else []
    )
    make_array(tmp_path, codecs + [{"name": "crc32c"}])
    path = chunk_path(tmp_path)
    blob = bytearray(path.read_bytes())
    index = {"first": 0, "middle": len(blob) // 2, "checksum": len(blob) - 2}[position]
    blob[index] ^= 0x10
    path.write_bytes(bytes(blob))
    assert_chunk_error(tmp_path, "c/1/0", match="crc32c checksum mismatch")


@pytest.mark.parametrize("blob", [b"", b"abc"], ids=["empty", "3-bytes"])
def test_crc32c_too_short(tmp_path: Path, blob: bytes) -> None:
    make_array(tmp_path, [BYTES_LE, {"name": "crc32c"}])
    chunk_path(tmp_path).write_bytes(blob)
    assert_chunk_error(tmp_path, "c/1/0", match="crc32c")


def test_zstd_checksum_mismatch(tmp_path: Path) -> None:
    """A flipped bit in the last byte of a zstd frame (its checksum) is caught by zstd."""
    make_array(tmp_path, COMPRESSED["zstd-checksum"])
    path = chunk_path(tmp_path)
    blob = bytearray(path.read_bytes())
    blob[-1] ^= 0x01
    path.write_bytes(bytes(blob))
    assert_chunk_error(tmp_path, "c/1/0", match="zstd")


@pytest.mark.parametrize("change", ["short", "long", "empty"])
@pytest.mark.parametrize("chain", ["bytes", "transpose+bytes"])
def test_uncompressed_chunk_of_wrong_length(tmp_path: Path, chain: str, change: str) -> None:
    codecs = (
        [BYTES_LE]
        if chain == "bytes"
        else [{"name": "transpose", "configuration": {"order": [1, 0]}}, BYTES_LE]
    )
    make_array(tmp_path, codecs)
    path = chunk_path(tmp_path)
    blob = path.read_bytes()
    assert len(blob) == 4 * 4 * 8
    path.write_bytes({"short": blob[:-8], "long": blob + b"\0" * 8, "empty": b""}[change])
    assert_chunk_error(tmp_path, "c/1/0", match="expected 128 bytes")


def test_unpadded_edge_chunk(tmp_path: Path) -> None:
    """Edge chunks are stored at full chunk size; one holding only the in-bounds part is corrupt."""
    make_array(tmp_path, [BYTES_LE], shape=(6, 4), chunks=(4, 4))
    path = chunk_path(tmp_path)
    path.write_bytes(path.read_bytes()[: 2 * 4 * 8])
    assert_chunk_error(tmp_path, "c/1/0", match="expected 128 bytes")


@pytest.mark.parametrize(
    "encoding,key",
    [
        ({"name": "v2", "configuration": {"separator": "."}}, "1.0"),
        ({"name": "default", "configuration": {"separator": "."}}, "c.1.0"),
    ],
)
def test_corrupt_chunk_named_by_its_key_encoding(tmp_path: Path, encoding: dict, key: str) -> None:
    make_array(tmp_path, COMPRESSED["gzip"], chunk_key_encoding=encoding)
    path = chunk_path(tmp_path, key)
    path.write_bytes(path.read_bytes()[:-3])
    assert_chunk_error(tmp_path, key)


def test_corrupt_0d_chunk(tmp_path: Path) -> None:
    zk.create_array(str(tmp_path), path="a", shape=(), dtype="int32", codecs=COMPRESSED["zstd"])[
        ...
    ] = 5
    (tmp_path / "a" / "c").write_bytes(b"garbage!")
    before = snapshot(tmp_path)
    with pytest.raises(ChunkDecodeError, match="'a/c'"):
        zk.open_array(str(tmp_path), path="a")[...]
    assert snapshot(tmp_path) == before


# -- malformed metadata ---------------------------------------------------------------------
def _set(**fields: Any) -> Callable[[dict], None]:
    return lambda doc: doc.update(fields)


def _drop(field: str) -> Callable[[dict], None]:
    return lambda doc: doc.pop(field)


def _chunk_shape(value: Any) -> Callable[[dict], None]:
    return lambda doc: doc["chunk_grid"].update(configuration={"chunk_shape": value})


def _codecs(*codecs: Any) -> Callable[[dict], None]:
    return _set(codecs=list(codecs))


#: (id, edit of a valid int8 document (or raw bytes), error class, field key, text in message)
BAD_METADATA = [
    ("not-json", b"{not json", MetadataError, None, "not valid JSON"),
    ("not-utf8", b"\xff\xfe\xfd{", MetadataError, None, "not valid JSON"),
    ("empty-file", b"", MetadataError, None, "not valid JSON"),
    ("json-list", b"[1, 2]", MetadataError, None, "expected a JSON object, got list"),
    ("json-string", b'"zarr"', MetadataError, None, "expected a JSON object, got str"),
    ("json-null", b"null", MetadataError, None, "expected a JSON object"),
    ("zarr-format-2", _set(zarr_format=2), MetadataError, "zarr_format", "expected 3, got 2"),
    ("zarr-format-string", _set(zarr_format="3"), MetadataError, "zarr_format", "expected 3"),
    ("zarr-format-missing", _drop("zarr_format"), MetadataError, "zarr_format", "expected 3"),
    ("node-type-bogus", _set(node_type="dataset"), MetadataError, "node_type", "'dataset'"),
    *[
        (f"missing-{field}", _drop(field), MetadataError, field, "required field is missing")
        for field in (
            "shape",
            "data_type",
            "chunk_grid",
            "chunk_key_encoding",
            "fill_value",
            "codecs",
        )
    ],
    ("shape-negative", _set(shape=[8, -1]), MetadataError, "shape", "non-negative integers"),
    ("shape-float", _set(shape=[8, 8.0]), MetadataError, "shape", "non-negative integers"),
    ("shape-bool", _set(shape=[True, 8]), MetadataError, "shape", "non-negative integers"),
    ("shape-not-list", _set(shape=8), MetadataError, "shape", "non-negative integers"),
    (
        "fill-300-int8",
        _set(fill_value=300),
        MetadataError,
        "fill_value",
        "300 is out of range for int8",
    ),
    ("fill-minus-129-int8", _set(fill_value=-129), MetadataError, "fill_value", "out of range"),
    (
        "fill-string-int8",
        _set(fill_value="abc"),
        MetadataError,
        "fill_value",
        "'abc' is not an integer",
    ),
    (
        "fill-fraction-int8",
        _set(fill_value=1.5),
        MetadataError,
        "fill_value",
        "1.5 is not an integer",
    ),
    (
        "fill-null-int8",
        _set(fill_value=None),
        MetadataError,
        "fill_value",
        "None is not an integer",
    ),
    (
        "fill-bool-int8",
        _set(fill_value=True),
        MetadataError,
        "fill_value",
        "True is not an integer",
    ),
    (
        "fill-list-float32",
        _set(data_type="float32", fill_value=[1, 2]),
        MetadataError,
        "fill_value",
        "is not a number",
    ),
    (
        "fill-short-hex-float32",
        _set(data_type="float32", fill_value="0x7fc0"),
        MetadataError,
        "fill_value",
        "needs 8 hex digits",
    ),
    (
        "fill-bad-hex-float32",
        _set(data_type="float32", fill_value="0xzzzzzzzz"),
        MetadataError,
        "fill_value",
        "not a hex number",
    ),
    (
        "fill-nan-lowercase",
        _set(data_type="float64", fill_value="nan"),
        MetadataError,
        "fill_value",
        "'nan'",
    ),
    (
        "fill-overflow-float32",
        _set(data_type="float32", fill_value=1e40),
        MetadataError,
        "fill_value",
        "out of range for float32",
    ),
    (
        "fill-int-bool",
        _set(data_type="bool", fill_value=1),
        MetadataError,
        "fill_value",
        "true or false",
    ),
    (
        "fill-scalar-complex",
        _set(data_type="complex64", fill_value=1.0),
        MetadataError,
        "fill_value",
        "[real, imaginary]",
    ),
    (
        "fill-3-list-complex",
        _set(data_type="complex64", fill_value=[1.0, 2.0, 3.0]),
        MetadataError,
        "fill_value",
        "[real, imaginary]",
    ),
    (
        "dimension-names-short",
        _set(dimension_names=["y"]),
        MetadataError,
        "dimension_names",
        "list of 2 strings or nulls",
    ),
    (
        "dimension-names-long",
        _set(dimension_names=["z", "y", "x"]),
        MetadataError,
        "dimension_names",
        "list of 2",
    ),
    (
        "dimension-names-number",
        _set(dimension_names=["y", 1]),
        MetadataError,
        "dimension_names",
        "strings or nulls",
    ),
    (
        "dimension-names-string",
        _set(dimension_names="yx"),
        MetadataError,
        "dimension_names",
        "strings or nulls",
    ),
    (
        "chunk-shape-zero",
        _chunk_shape([0, 4]),
        MetadataError,
        "chunk_grid.configuration.chunk_shape",
        "positive integers",
    ),
    (
        "chunk-shape-negative",
        _chunk_shape([-4, 4]),
        MetadataError,
        "chunk_grid.configuration.chunk_shape",
        "positive integers",
    ),
    (
        "chunk-shape-float",
        _chunk_shape([4, 2.5]),
        MetadataError,
        "chunk_grid.configuration.chunk_shape",
        "positive integers",
    ),
    (
        "chunk-shape-not-list",
        _chunk_shape(4),
        MetadataError,
        "chunk_grid.configuration.chunk_shape",
        "needs a list",
    ),
    (
        "chunk-shape-wrong-ndim",
        _chunk_shape([4]),
        MetadataError,
        "chunk_grid",
        "has 1 dimensions, the array has 2",
    ),
    (
        "chunk-grid-extra-field",
        lambda d: d["chunk_grid"]["configuration"].update(x=1),
        MetadataError,
        "chunk_grid.configuration",
        "unknown configuration fields ['x']",
    ),
    (
        "chunk-grid-number",
        _set(chunk_grid=4),
        MetadataError,
        "chunk_grid",
        "expected an extension name or an object",
    ),
    (
        "key-separator",
        _set(chunk_key_encoding={"name": "default", "configuration": {"separator": "-"}}),
        MetadataError,
        "chunk_key_encoding.configuration.separator",
        "'-'",
    ),
    (
        "data-type-number",
        _set(data_type=8),
        MetadataError,
        "data_type",
        "expected an extension name or an object",
    ),
    (
        "data-type-no-name",
        _set(data_type={"configuration": {}}),
        MetadataError,
        "data_type",
        "lacks a string 'name'",
    ),
    ("attributes-list", _set(attributes=[1]), MetadataError, "attributes", "expected an object"),
    ("codecs-empty", _codecs(), MetadataError, "codecs", "non-empty list"),
    ("codecs-object", _set(codecs={"name": "bytes"}), MetadataError, "codecs", "non-empty list"),
    ("codec-number", _codecs(42), MetadataError, "codecs[0]", "expected an extension name"),
    (
        "codec-extra-key",
        _codecs({"name": "bytes", "foo": 1}),
        MetadataError,
        "codecs[0]",
        "unexpected fields ['foo']",
    ),
    (
        "codec-must-understand-string",
        _codecs({"name": "bytes", "must_understand": "no"}),
        MetadataError,
        "codecs[0]",
        "must be true or false",
    ),
    (
        "gzip-level",
        _codecs({"name": "bytes"}, {"name": "gzip", "configuration": {"level": 42}}),
        MetadataError,
        "codecs[1].configuration.level",
        "got 42",
    ),
    (
        "gzip-extra-field",
        _codecs({"name": "bytes"}, {"name": "gzip", "configuration": {"level": 1, "x": 0}}),
        MetadataError,
        "codecs[1].configuration",
        "unknown configuration fields ['x']",
    ),
    (
        "zstd-checksum-string",
        _codecs(
            {"name": "bytes"}, {"name": "zstd", "configuration": {"level": 1, "checksum": "yes"}}
        ),
        MetadataError,
        "codecs[1].configuration.checksum",
        "'yes'",
    ),
    (
        "blosc-cname",
        _codecs(
            {"name": "bytes"},
            {
                "name": "blosc",
                "configuration": {"cname": "nope", "clevel": 1, "shuffle": "noshuffle"},
            },
        ),
        MetadataError,
        "codecs[1].configuration.cname",
        "'nope'",
    ),
    (
        "blosc-shuffle-no-typesize",
        _codecs(
            {"name": "bytes"},
            {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 1, "shuffle": "shuffle"}},
        ),
        CodecChainError,
        "codecs",
        "typesize",
    ),
    (
        "bytes-endian",
        _codecs({"name": "bytes", "configuration": {"endian": "middle"}}),
        MetadataError,
        "codecs[0].configuration.endian",
        "'middle'",
    ),
    (
        "transpose-not-permutation",
        _codecs({"name": "transpose", "configuration": {"order": [0, 0]}}, {"name": "bytes"}),
        MetadataError,
        "codecs[0].configuration.order",
        "not a permutation",
    ),
    # chain errors: each codec is fine, their combination is not
    (
        "no-array-to-bytes",
        _codecs({"name": "gzip", "configuration": {"level": 1}}),
        CodecChainError,
        "codecs",
        "exactly one array -> bytes codec, got 0",
    ),
    (
        "two-array-to-bytes",
        _codecs({"name": "bytes"}, {"name": "bytes"}),
        CodecChainError,
        "codecs",
        "exactly one array -> bytes codec, got 2",
    ),
    (
        "array-codec-after-bytes",
        _codecs({"name": "bytes"}, {"name": "transpose", "configuration": {"order": [1, 0]}}),
        CodecChainError,
        "codecs",
        "only bytes -> bytes codecs may come after",
    ),
    (
        "transpose-wrong-ndim",
        _codecs({"name": "transpose", "configuration": {"order": [0, 1, 2]}}, {"name": "bytes"}),
        CodecChainError,
        "codecs",
        "transpose order [0, 1, 2] has 3 axes",
    ),
    (
        "bytes-needs-endian",
        lambda d: d.update(data_type="int16", fill_value=0, codecs=[{"name": "bytes"}]),
        CodecChainError,
        "codecs",
        "needs an 'endian'",
    ),
]


def _valid_document(tmp_path: Path) -> dict:
    make_array(tmp_path, [{"name": "bytes"}], dtype="int8", dimension_names=("y", "x"))
    return json.loads((tmp_path / "a" / "zarr.json").read_text())


def _write_bad(tmp_path: Path, edit: Any) -> None:
    doc = _valid_document(tmp_path)
    if isinstance(edit, bytes):
        raw = edit
    else:
        edit(doc)
        raw = json.dumps(doc).encode()
    (tmp_path / "a" / "zarr.json").write_bytes(raw)


@pytest.mark.parametrize(
    "edit,error,key,text", [pytest.param(*case[1:], id=case[0]) for case in BAD_METADATA]
)
def test_malformed_array_metadata(
    tmp_path: Path, edit: Any, error: type, key: str | None, text: str
) -> None:
    _write_bad(tmp_path, edit)
    before = snapshot(tmp_path)
    openers = [
        lambda: zk.open_array(str(tmp_path), path="a"),
        lambda: zk.open(str(tmp_path), path="a", mode="r+"),
        # mode 'a' must refuse the broken node rather than create a new one over it
        lambda: zk.open_array(str(tmp_path), path="a", mode="a", shape=(2,), dtype="int8"),
        lambda: zk.open_group(str(tmp_path))["a"],
        lambda: list(zk.open_group(str(tmp_path)).members()),
    ]
    for opener in openers:
        with pytest.raises(error) as info:
            opener()
        assert type(info.value) is error
        assert info.value.field == key
        if key is not None:
            assert f"field {key!r}" in str(info.value)
        assert text in str(info.value)
        if error is not CodecChainError:  # the document it came from, too
            assert "a/zarr.json" in str(info.value)
    # creating over it without overwrite is refused too, and nothing on disk changed
    with pytest.raises(ZarrkitError):
        zk.create_array(str(tmp_path), path="a", shape=(2,), dtype="int8")
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize(
    "edit,key",
    [
        (_set(zarr_format=2), "zarr_format"),
        (_set(attributes="x"), "attributes"),
        (_set(node_type=None), "node_type"),
    ],
)
def test_malformed_group_metadata(tmp_path: Path, edit: Callable[[dict], None], key: str) -> None:
    zk.create_group(str(tmp_path), path="g", attributes={"a": 1})
    doc = json.loads((tmp_path / "g" / "zarr.json").read_text())
    edit(doc)
    (tmp_path / "g" / "zarr.json").write_text(json.dumps(doc))
    before = snapshot(tmp_path)
    with pytest.raises(MetadataError) as info:
        zk.open_group(str(tmp_path), path="g")
    assert info.value.field == key and "g/zarr.json" in str(info.value)
    with pytest.raises(MetadataError):
        zk.open_group(str(tmp_path), path="g", mode="a")
    assert snapshot(tmp_path) == before


# -- unknown extensions -----------------------------------------------------------------------
UNKNOWN = {
    "codec": (
        _codecs({"name": "bytes"}, {"name": "x-delta", "configuration": {"k": 1}}),
        "x-delta",
    ),
    "data type": (_set(data_type="x-int7"), "x-int7"),
    "chunk grid": (
        _set(chunk_grid={"name": "x-rectilinear", "configuration": {"chunk_shapes": [[4]]}}),
        "x-rectilinear",
    ),
    "chunk key encoding": (_set(chunk_key_encoding={"name": "x-morton"}), "x-morton"),
    "storage transformer": (_set(storage_transformers=[{"name": "x-sharded"}]), "x-sharded"),
}


@pytest.mark.parametrize("kind", list(UNKNOWN))
def test_unknown_extension(tmp_path: Path, kind: str) -> None:
    edit, name = UNKNOWN[kind]
    _write_bad(tmp_path, edit)
    before = snapshot(tmp_path)
    with pytest.raises(UnknownExtensionError) as info:
        zk.open_array(str(tmp_path), path="a")
    err = info.value
    assert err.kind == kind.replace(" ", "_") and err.name == name
    assert f"the {kind} {name!r}" in str(err)
    assert "a/zarr.json" in str(err)
    assert snapshot(tmp_path) == before


def _marked_optional(kind: str) -> Callable[[dict], None]:
    field = {
        "data type": "data_type",
        "chunk grid": "chunk_grid",
        "chunk key encoding": "chunk_key_encoding",
    }[kind]
    edit, _name = UNKNOWN[kind]

    def apply(doc: dict) -> None:
        edit(doc)
        value = doc[field]
        doc[field] = {
            **({"name": value} if isinstance(value, str) else value),
            "must_understand": False,
        }

    return apply


@pytest.mark.parametrize("kind", ["data type", "chunk grid", "chunk key encoding"])
def test_unknown_core_extension_refused_even_if_optional(tmp_path: Path, kind: str) -> None:
    """A data type, chunk grid or key encoding cannot be skipped: without it nothing can be read."""
    _write_bad(tmp_path, _marked_optional(kind))
    before = snapshot(tmp_path)
    with pytest.raises(UnknownExtensionError) as info:
        zk.open_array(str(tmp_path), path="a")
    assert info.value.kind == kind.replace(" ", "_") and info.value.name == UNKNOWN[kind][1]
    assert snapshot(tmp_path) == before


# -- must_understand ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "value",
    [1, "x", [1], {"a": 1}, {"must_understand": True, "a": 1}, None],
    ids=["number", "string", "list", "object", "marked-true", "null"],
)
@pytest.mark.parametrize("node", ["array", "group"])
def test_unknown_field_must_be_understood(tmp_path: Path, node: str, value: Any) -> None:
    if node == "array":
        make_array(tmp_path, [{"name": "bytes"}], dtype="int8")
    else:
        zk.create_group(str(tmp_path), path="a")
    path = tmp_path / "a" / "zarr.json"
    doc = json.loads(path.read_text())
    doc["x_future"] = value
    path.write_text(json.dumps(doc))
    before = snapshot(tmp_path)
    with pytest.raises(MustUnderstandError) as info:
        zk.open(str(tmp_path), path="a", mode="r+")
    assert info.value.field == "x_future"
    assert "'x_future'" in str(info.value) and "must_understand" in str(info.value)
    assert snapshot(tmp_path) == before


OPTIONAL_FIELD = {"must_understand": False, "version": 2, "items": [1, {"a": None}]}


def test_optional_unknown_field_is_kept_by_array_rewrites(tmp_path: Path) -> None:
    data = make_array(tmp_path, [{"name": "bytes"}], dtype="int8")
    path = tmp_path / "a" / "zarr.json"
    doc = json.loads(path.read_text())
    doc["x_future"] = OPTIONAL_FIELD
    path.write_text(json.dumps(doc))
    a = zk.open_array(str(tmp_path), path="a", mode="r+")
    np.testing.assert_array_equal(a[...], data)
    assert not a.read_only
    a.attrs["k"] = "v"
    assert json.loads(path.read_text())["x_future"] == OPTIONAL_FIELD
    a.resize(8, 12)
    stored = json.loads(path.read_text())
    assert stored["x_future"] == OPTIONAL_FIELD
    assert stored["attributes"] == {"k": "v"} and stored["shape"] == [8, 12]
    a[0, 11] = 3
    b = zk.open_array(str(tmp_path), path="a")
    assert b[0, 11] == 3 and dict(b.attrs) == {"k": "v"}
    assert b.metadata.extra_fields["x_future"]["version"] == 2


def test_optional_unknown_field_is_kept_by_group_rewrites(tmp_path: Path) -> None:
    zk.create_group(str(tmp_path), path="g", attributes={"a": 1})
    path = tmp_path / "g" / "zarr.json"
    doc = json.loads(path.read_text())
    doc["x_future"] = OPTIONAL_FIELD
    path.write_text(json.dumps(doc))
    g = zk.open_group(str(tmp_path), path="g", mode="r+")
    g.attrs["b"] = [2]
    stored = json.loads(path.read_text())
    assert stored["x_future"] == OPTIONAL_FIELD
    assert stored["attributes"] == {"a": 1, "b": [2]}


def test_optional_unknown_codec_reads_and_refuses_writes(tmp_path: Path) -> None:
    """An annotation codec another implementation added (say a digest kept beside the data)
    does not change the chunk bytes, so skipping it on read is harmless; writing without it
    would leave its annotation stale, so the array is read-only."""
    codecs = [BYTES_LE, {"name": "gzip", "configuration": {"level": 1}}]
    data = make_array(tmp_path, codecs)
    path = tmp_path / "a" / "zarr.json"
    doc = json.loads(path.read_text())
    doc["codecs"] = [
        doc["codecs"][0],
        {"name": "x-digest", "configuration": {"algorithm": "sha256"}, "must_understand": False},
        doc["codecs"][1],
    ]
    path.write_text(json.dumps(doc))
    before = snapshot(tmp_path)

    for mode in ("r", "r+", "a"):
        a = zk.open_array(str(tmp_path), path="a", mode=mode)
        np.testing.assert_array_equal(a[...], data)
        np.testing.assert_array_equal(a[3:6, 2:7], data[3:6, 2:7])
        assert a.read_only
        assert [s.name for s in a.metadata.skipped] == ["x-digest"]
        writes: list[Callable[[], Any]] = [
            partial(a.__setitem__, (0, 0), 1.0),
            partial(a.__setitem__, Ellipsis, data),
            partial(a.attrs.__setitem__, "k", 1),
            partial(a.resize, 4, 4),
            partial(a.append, data[:1]),
        ]
        for write in writes:
            # mode 'r' is read-only by itself; otherwise the skipped codec is the reason
            with pytest.raises(ReadOnlyError, match="read-only" if mode == "r" else "x-digest"):
                write()
    assert snapshot(tmp_path) == before


def test_optional_unknown_array_to_bytes_codec_is_refused(tmp_path: Path) -> None:
    """Skipping the codec that serializes the array leaves no way to decode it: refused."""
    _write_bad(tmp_path, _codecs({"name": "x-packbits", "must_understand": False}))
    with pytest.raises(CodecChainError, match="array -> bytes"):
        zk.open_array(str(tmp_path), path="a")


# -- bad writes -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "selection,value_shape",
    [
        (np.s_[...], (8, 7)),
        (np.s_[...], (2, 8, 8)),
        (np.s_[0:2, 0:2], (3, 2)),
        (np.s_[0:5, :], (7,)),
        (np.s_[1], (9,)),
        (np.s_[0, 0], (2,)),
        (np.s_[2:7, 3:8], (5, 4)),
    ],
    ids=[
        "whole-short",
        "whole-extra-dim",
        "small",
        "rows-vs-short-row",
        "row",
        "scalar",
        "spanning",
    ],
)
def test_write_of_wrong_shape(tmp_path: Path, selection: Any, value_shape: tuple) -> None:
    data = make_array(tmp_path, COMPRESSED["zstd"])
    before = snapshot(tmp_path)
    a = zk.open_array(str(tmp_path), path="a", mode="r+")
    with pytest.raises(ValueCastError, match="shape"):
        a[selection] = np.full(value_shape, -1.0)
    assert snapshot(tmp_path) == before
    np.testing.assert_array_equal(a[...], data)


@pytest.mark.parametrize(
    "dtype,value",
    [
        ("int8", 300),
        ("int8", -129),
        ("int8", np.array([1, 2, 3, 300])),
        ("int8", [1, 2, 3, 300]),
        ("uint8", -1),
        ("uint8", np.array([0, 1, -1, 2], dtype="int16")),
        ("uint64", -1),
        ("int64", 2**70),
        ("int64", np.array([0, 2**64 - 1], dtype="uint64")),
        ("int32", 1.5),
        ("int32", np.float32(1.5)),
        ("int32", np.array([1.0, 2.0, 1.5])),
        ("int32", float("nan")),
        ("int32", float("inf")),
        ("bool", 2),
        ("float32", "abc"),
        ("float32", np.array(["1", "2", "x"])),
        ("float32", b"\x00\x01"),
        ("float32", None),
        ("float32", 1 + 2j),
        ("float32", 1e40),
        ("float16", 70000),
        ("float64", {"a": 1}),
        ("complex64", "x"),
        ("complex64", complex(1e300, 0)),
    ],
    ids=lambda v: repr(v)[:30],
)
@pytest.mark.filterwarnings("error")  # the refusal is the error, not a numpy cast warning
def test_unrepresentable_value_writes_nothing(tmp_path: Path, dtype: str, value: Any) -> None:
    """The value is cast (and checked) before any chunk is touched: even chunks whose part of
    the value is fine stay as they were."""
    shape, chunks = (4, 6), (2, 2)
    a = zk.create_array(
        str(tmp_path),
        path="a",
        shape=shape,
        chunks=chunks,
        dtype=dtype,
        codecs=[BYTES_LE] if np.dtype(dtype).itemsize > 1 else [{"name": "bytes"}],
    )
    data = np.ones(shape, dtype=dtype)
    a[...] = data
    before = snapshot(tmp_path)
    # the value spans six chunks of the last three columns; the bad element is the last one
    selection = np.s_[:, 2:] if np.ndim(value) == 0 else np.s_[:, 2:6]
    with pytest.raises(ValueCastError):
        a[selection] = value
    assert snapshot(tmp_path) == before
    np.testing.assert_array_equal(zk.open_array(str(tmp_path), path="a")[...], data)


def test_unrepresentable_value_refused_by_every_write_path(tmp_path: Path) -> None:
    a = zk.create_array(str(tmp_path), path="a", shape=(4, 4), chunks=(2, 2), dtype="int8")
    a[...] = 1
    before = snapshot(tmp_path)
    bad = np.array([5, 300])
    writes: list[Callable[[], Any]] = [
        lambda: a.set_basic_selection(np.s_[0, 0:2], bad),
        lambda: a.oindex.__setitem__((np.array([0, 3]), 1), bad),
        lambda: a.vindex.__setitem__((np.array([0, 3]), np.array([1, 2])), bad),
        lambda: a.append(np.array([[1, 2, 3, 300]])),
    ]
    for write in writes:
        with pytest.raises(ValueCastError):
            write()
    assert snapshot(tmp_path) == before
    assert zk.open_array(str(tmp_path), path="a").shape == (4, 4)


# -- node names -----------------------------------------------------------------------------
BAD_PATHS = ["..", ".", "g/..", "...", "g//b", "g/./b"]


@pytest.mark.parametrize("path", BAD_PATHS)
def test_invalid_paths(tmp_path: Path, path: str) -> None:
    zk.create_group(str(tmp_path), path="g")
    before = snapshot(tmp_path)
    attempts: list[Callable[[], Any]] = [
        lambda: zk.create_array(str(tmp_path), path=path, shape=(2,), dtype="int8"),
        lambda: zk.create_group(str(tmp_path), path=path),
        lambda: zk.open_array(str(tmp_path), path=path),
        lambda: zk.open_group(str(tmp_path), path=path, mode="a"),
        lambda: zk.open(str(tmp_path), path=path, mode="w", shape=(2,), dtype="int8"),
    ]
    for attempt in attempts:
        with pytest.raises(NodeNameError) as info:
            attempt()
        assert isinstance(info.value, ValueError)
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("name", ["", "..", ".", "a/../b"])
def test_invalid_member_names(tmp_path: Path, name: str) -> None:
    g = zk.create_group(str(tmp_path), path="g")
    before = snapshot(tmp_path)
    attempts: list[Callable[[], Any]] = [
        lambda: g.create_group(name),
        lambda: g.create_array(name, shape=(2,), dtype="int8"),
        lambda: g.require_group(name),
        lambda: g[name],
    ]
    for attempt in attempts:
        with pytest.raises(NodeNameError):
            attempt()
    assert snapshot(tmp_path) == before
