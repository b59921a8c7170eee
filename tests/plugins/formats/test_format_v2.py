"""The Zarr v2 storage protocol in zarrkit alone: which keys a node has, how the arguments of
`create_array` become `.zarray`, what cannot be expressed in v2, and how bad metadata is
refused (naming the key and the field) without touching stored data."""

from __future__ import annotations

import json
from typing import Any

import numcodecs
import numpy as np
import pytest

import zarrkit as zk
from zarrkit.errors import MetadataError, NodeNotFoundError, UnknownExtensionError
from zarrkit.formats import get_format
from zarrkit.plugins.codecs.gzip import GzipCodec
from zarrkit.plugins.stores.memory import MemoryStore


def doc(store: Any, key: str) -> Any:
    return json.loads(store.get(key))


def put(store: Any, key: str, value: Any) -> None:
    store.set(key, value if isinstance(value, bytes) else json.dumps(value).encode())


def zarray(**fields: Any) -> dict:
    out = {
        "zarr_format": 2,
        "shape": [4],
        "chunks": [2],
        "dtype": "<i4",
        "fill_value": 0,
        "order": "C",
        "filters": None,
        "compressor": None,
    }
    out.update(fields)
    return out


# -- keys and documents -------------------------------------------------------------------------
def test_attributes_are_written_to_zattrs_only_when_there_are_some(store: Any) -> None:
    a = zk.create_array(store, path="a", shape=(3,), dtype="<i2", zarr_format=2)
    zk.create_group(store, path="g", zarr_format=2, attributes={"x": 1})
    assert sorted(store.list()) == [".zgroup", "a/.zarray", "g/.zattrs", "g/.zgroup"]
    assert doc(store, "g/.zgroup") == {"zarr_format": 2}
    assert doc(store, "g/.zattrs") == {"x": 1}
    a.attrs["units"] = "m"
    assert doc(store, "a/.zattrs") == {"units": "m"}
    assert "attributes" not in doc(store, "a/.zarray")
    del a.attrs["units"]
    assert store.get("a/.zattrs") is None
    assert dict(zk.open_array(store, path="a").attrs) == {}


def test_open_detects_v2_and_children_are_v2(store: Any) -> None:
    root = zk.create_group(store, zarr_format=2)
    sub = root.create_group("sub")
    arr = sub.create_array("arr", shape=(2, 2), dtype="<f8")
    assert (sub.metadata.format, arr.metadata.format) == ("v2", "v2")
    deep = zk.create_array(store, path="sub/x/y", shape=(1,), dtype="|u1", zarr_format=2)
    assert deep.metadata.format == "v2"
    assert doc(store, "sub/x/.zgroup") == {"zarr_format": 2}  # the missing parent, in v2
    g = zk.open_group(store)
    assert g.metadata.format == "v2"
    assert g.keys() == ["sub"]
    assert zk.open_group(store, path="sub").keys() == ["arr", "x"]
    assert isinstance(zk.open(store, path="sub/arr"), zk.Array)
    del zk.open_group(store, mode="r+")["sub"]
    assert sorted(store.list()) == [".zgroup"]


def test_chunk_keys_follow_dimension_separator(store: Any) -> None:
    dot = zk.create_array(
        store, path="dot", shape=(4, 4), chunks=(2, 2), dtype="<i4", zarr_format=2
    )
    slash = zk.create_array(
        store,
        path="slash",
        shape=(4, 4),
        chunks=(2, 2),
        dtype="<i4",
        zarr_format=2,
        dimension_separator="/",
    )
    scalar = zk.create_array(store, path="scalar", shape=(), dtype="<i4", zarr_format=2)
    dot[:] = slash[:] = np.arange(16).reshape(4, 4)
    scalar[()] = 5
    keys = set(store.list())
    assert {"dot/0.0", "dot/0.1", "dot/1.0", "dot/1.1"} <= keys
    assert {"slash/0/0", "slash/0/1", "slash/1/0", "slash/1/1"} <= keys
    assert "scalar/0" in keys
    assert doc(store, "slash/.zarray")["dimension_separator"] == "/"
    # chunk folders under '/' are not members
    assert zk.open_group(store).keys() == ["dot", "scalar", "slash"]
    assert zk.open_array(store, path="scalar")[()] == 5


def test_resize_keeps_chunks_and_the_rest_of_the_document(store: Any) -> None:
    put(
        store,
        "a/.zarray",
        zarray(shape=[4], chunks=[2], extra_field="kept", compressor={"id": "zlib", "level": 1}),
    )
    a = zk.open_array(store, path="a", mode="r+")
    a[:] = [1, 2, 3, 4]
    a.resize((7,))
    stored = doc(store, "a/.zarray")
    assert stored["shape"] == [7] and stored["chunks"] == [2]
    assert stored["extra_field"] == "kept"
    assert stored["compressor"] == {"id": "zlib", "level": 1}
    np.testing.assert_array_equal(zk.open_array(store, path="a")[:], [1, 2, 3, 4, 0, 0, 0])


# -- creation arguments ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "compressor",
    [
        {"id": "gzip", "level": 4},
        numcodecs.GZip(level=4),
        GzipCodec(4),
    ],
    ids=["dict", "numcodecs", "zarrkit"],
)
def test_compressor_in_every_form(store: Any, compressor: Any) -> None:
    a = zk.create_array(
        store, path="a", shape=(5,), dtype="<u4", zarr_format=2, compressor=compressor
    )
    a[:] = np.arange(5)
    assert doc(store, "a/.zarray")["compressor"] == {"id": "gzip", "level": 4}
    assert numcodecs.GZip(4).decode(store.get("a/0")) == np.arange(5, dtype="<u4").tobytes()


def test_filters_order_and_no_compressor(store: Any) -> None:
    a = zk.create_array(
        store,
        path="a",
        shape=(3, 4),
        chunks=(3, 4),
        dtype="<i8",
        zarr_format=2,
        compressor=None,
        filters=[numcodecs.Delta(dtype="<i8")],
        order="C",
    )
    values = np.arange(12).reshape(3, 4) * 7
    a[:] = values
    stored = doc(store, "a/.zarray")
    assert (stored["compressor"], stored["order"], stored["dtype"]) == (None, "C", "<i8")
    assert [(f["id"], f["dtype"]) for f in stored["filters"]] == [("delta", "<i8")]
    raw = numcodecs.Delta(dtype="<i8").decode(store.get("a/0.0"))
    np.testing.assert_array_equal(np.frombuffer(raw, "<i8").reshape(3, 4), values)
    np.testing.assert_array_equal(zk.open_array(store, path="a")[:], values)


@pytest.mark.parametrize("dtype, order", [(">i8", "C"), ("<i8", "F")])
def test_filters_with_big_endian_or_f_order_are_refused_not_misread(
    store: Any, dtype: str, order: str
) -> None:
    """zarr-python runs v2 filters on the chunk in stored byte and memory order; until zarrkit
    does, such arrays are refused with the reason instead of being read wrongly."""
    with pytest.raises(MetadataError) as info:
        zk.create_array(
            store,
            path="a",
            shape=(3, 4),
            dtype=dtype,
            zarr_format=2,
            order=order,
            filters=[numcodecs.Delta(dtype=dtype)],
        )
    assert info.value.field == "filters"
    assert list(store.list()) == []
    put(
        store,
        "b/.zarray",
        zarray(
            shape=[3, 4],
            chunks=[3, 4],
            dtype=dtype,
            order=order,
            filters=[{"id": "delta", "dtype": dtype}],
        ),
    )
    with pytest.raises(MetadataError, match="filters"):
        zk.open_array(store, path="b")


def test_byte_order_comes_from_the_dtype(store: Any) -> None:
    a = zk.create_array(store, path="a", shape=(2,), dtype=">f4", zarr_format=2, compressor=None)
    a[:] = [1.5, -2.0]
    assert doc(store, "a/.zarray")["dtype"] == ">f4"
    assert store.get("a/0") == np.array([1.5, -2.0], ">f4").tobytes()


def test_unknown_creation_argument_is_refused(store: Any) -> None:
    with pytest.raises(TypeError, match="shard_layout"):
        zk.create_array(store, shape=(2,), dtype="<i4", zarr_format=2, shard_layout="x")
    with pytest.raises(MetadataError, match="zarr format v2 arrays cannot have shards"):
        zk.create_array(store, shape=(2,), dtype="<i4", zarr_format=2, shards=(1,))
    with pytest.raises(TypeError, match="conflicts"):
        zk.create_array(store, shape=(2,), dtype="<i4", zarr_format=2, order="C", codecs=["bytes"])
    assert list(store.list()) == []


@pytest.mark.parametrize(
    "kwargs, field, reason",
    [
        (dict(dimension_names=["x"]), "dimension_names", "_ARRAY_DIMENSIONS"),
        (
            dict(
                codecs=[
                    "bytes",
                    {"name": "zstd"},
                    {
                        "name": "sharding_indexed",
                        "configuration": {
                            "chunk_shape": [1],
                            "codecs": ["bytes"],
                            "index_codecs": ["bytes"],
                        },
                    },
                ]
            ),
            "codecs",
            None,
        ),
        (
            dict(
                codecs=[
                    {"name": "transpose", "configuration": {"order": [0]}},
                    {"name": "transpose", "configuration": {"order": [0]}},
                    "bytes",
                ]
            ),
            "codecs",
            None,
        ),
    ],
    ids=["dimension-names", "sharding", "double-transpose"],
)
def test_what_v2_cannot_express_is_refused_before_writing(
    store: Any, kwargs: dict, field: str, reason: str | None
) -> None:
    with pytest.raises(MetadataError) as info:
        zk.create_array(store, path="a", shape=(4,), dtype="<i4", zarr_format=2, **kwargs)
    assert info.value.field is not None and info.value.field.startswith(field)
    if reason:
        assert reason in str(info.value)
    assert list(store.list()) == []


def test_array_document_from_canonical_pieces() -> None:
    """What a conversion hands the format: v3 pieces become the v2 fields."""
    v3 = zk.create_array(
        MemoryStore(),
        shape=(6, 4),
        chunks=(3, 2),
        dtype="int16",
        codecs=[
            {"name": "transpose", "configuration": {"order": [1, 0]}},
            {"name": "bytes", "configuration": {"endian": "big"}},
            {"name": "gzip", "configuration": {"level": 1}},
        ],
        chunk_key_encoding={"name": "v2", "configuration": {"separator": "/"}},
        fill_value=-3,
        attributes={"a": 1},
    )
    m = v3.metadata
    out = get_format("v2").array_document(
        shape=m.shape,
        data_type=m.data_type,
        chunk_grid=m.chunk_grid,
        chunk_key_encoding=m.chunk_key_encoding,
        fill_value=m.fill_value,
        codecs=m.codecs,
        attributes=m.attributes,
        dimension_names=None,
    )
    assert out == {
        "shape": [6, 4],
        "chunks": [3, 2],
        "dtype": ">i2",
        "fill_value": -3,
        "order": "F",
        "filters": None,
        "dimension_separator": "/",
        "compressor": {"id": "gzip", "level": 1},
        "zarr_format": 2,
        "attributes": {"a": 1},
    }


def test_v3_only_grid_and_key_encoding_are_refused_with_the_reason() -> None:
    v3 = zk.create_array(MemoryStore(), shape=(4,), chunks=(2,), dtype="int8").metadata
    pieces = dict(
        shape=v3.shape,
        data_type=v3.data_type,
        chunk_grid=v3.chunk_grid,
        chunk_key_encoding=v3.chunk_key_encoding,
        fill_value=v3.fill_value,
        codecs=v3.codecs,
        attributes={},
        dimension_names=None,
    )
    with pytest.raises(MetadataError) as info:
        get_format("v2").array_document(**pieces)  # the `default` encoding: keys "c/0"
    assert info.value.field == "chunk_key_encoding" and "dimension_separator" in str(info.value)
    with pytest.raises(MetadataError, match="storage transformers"):
        get_format("v2").array_document(**pieces, storage_transformers=[object()])


# -- reading what others wrote -----------------------------------------------------------------
def test_null_fill_value_reads_as_default_and_is_written_back(store: Any) -> None:
    put(store, "a/.zarray", zarray(fill_value=None))
    a = zk.open_array(store, path="a", mode="r+")
    assert a.fill_value == 0
    np.testing.assert_array_equal(a[:], [0, 0, 0, 0])
    a.attrs["x"] = 1
    assert doc(store, "a/.zarray")["fill_value"] is None


@pytest.mark.parametrize(
    "dtype, fill, expected",
    [
        ("<f8", "NaN", np.nan),
        ("<f4", "Infinity", np.inf),
        ("<f2", "-Infinity", -np.inf),
        (">f8", 1.25, 1.25),
        ("|S3", "YWI=", b"ab"),
        ("<U2", "hi", "hi"),
        ("|b1", False, False),
    ],
)
def test_fill_value_encodings(store: Any, dtype: str, fill: Any, expected: Any) -> None:
    put(store, "a/.zarray", zarray(dtype=dtype, fill_value=fill))
    a = zk.open_array(store, path="a")
    got = a[:]
    if isinstance(expected, float) and np.isnan(expected):
        assert np.isnan(got).all()
    else:
        assert (got == np.array(expected, dtype=got.dtype)).all()


def test_structured_and_object_dtypes_are_read(store: Any) -> None:
    fields = [["x", "<i2"], ["y", [["z", ">f4"]]]]
    put(store, "s/.zarray", zarray(dtype=fields, fill_value=None))
    s = zk.open_array(store, path="s", mode="r+")
    assert s.dtype.names == ("x", "y")
    value = np.zeros(4, dtype=[("x", "<i2"), ("y", [("z", ">f4")])])
    value["x"], value["y"]["z"] = [1, 2, 3, 4], [0.5, 1.5, 2.5, 3.5]
    s[:] = value
    assert store.get("s/0") == value[:2].tobytes()
    assert doc(store, "s/.zarray")["dtype"] == fields
    put(store, "o/.zarray", zarray(dtype="|O", fill_value="", filters=[{"id": "vlen-utf8"}]))
    o = zk.open_array(store, path="o", mode="r+")
    o[:] = ["a", "bb", "", "é"]
    assert list(zk.open_array(store, path="o")[:]) == ["a", "bb", "", "é"]


# -- corrupt input -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "raw, key_field",
    [
        (b"{not json", None),
        (b"[1, 2]", None),
        (zarray(shape=[4, 4]), "chunks"),
        (zarray(chunks=[0]), "chunks"),
        (zarray(shape=[-1]), "shape"),
        (zarray(dtype="<q9"), "dtype"),
        (zarray(dtype=7), "dtype"),
        (zarray(dtype="|O"), "dtype"),
        (zarray(order="K"), "order"),
        (zarray(zarr_format=3), "zarr_format"),
        (zarray(compressor={"level": 1}), "compressor"),
        (zarray(filters={"id": "delta"}), "filters"),
        (zarray(fill_value="a string"), "fill_value"),
        (zarray(dimension_separator="-"), "dimension_separator"),
        ({k: v for k, v in zarray().items() if k != "dtype"}, "dtype"),
    ],
    ids=[
        "not-json",
        "not-object",
        "shape-chunks-mismatch",
        "zero-chunk",
        "negative-shape",
        "bad-dtype-string",
        "dtype-not-string",
        "object-without-codec",
        "bad-order",
        "wrong-format",
        "compressor-without-id",
        "filters-not-list",
        "bad-fill",
        "bad-separator",
        "missing-dtype",
    ],
)
def test_malformed_zarray_names_key_and_field(store: Any, raw: Any, key_field: str | None) -> None:
    put(store, "a/.zarray", raw)
    put(store, "a/0", b"\x00" * 8)
    with pytest.raises(MetadataError) as info:
        zk.open_array(store, path="a")
    assert "a/.zarray" in str(info.value)
    if key_field:
        assert info.value.field.split(".")[0].split("[")[0] == key_field
    assert store.get("a/0") == b"\x00" * 8  # stored data stays as it was


def test_unknown_compressor_id_gives_install_hint(store: Any) -> None:
    put(store, "a/.zarray", zarray(compressor={"id": "no-such-codec", "level": 1}))
    with pytest.raises(UnknownExtensionError) as info:
        zk.open_array(store, path="a")
    assert info.value.field == "compressor"
    assert "no-such-codec" in str(info.value) and "install" in str(info.value)
    assert "a/.zarray" in str(info.value)


def test_malformed_zattrs_names_zattrs(store: Any) -> None:
    put(store, "a/.zarray", zarray())
    put(store, "a/.zattrs", b"[]")
    with pytest.raises(MetadataError, match=r"a/\.zattrs"):
        zk.open_array(store, path="a")


def test_missing_node_is_not_found(store: Any) -> None:
    put(store, "a/.zattrs", {"only": "attributes"})
    with pytest.raises(NodeNotFoundError):
        zk.open(store, path="a")


def test_null_fill_value_erases_chunks_of_default_values_as_zarr_python_3(tmp_path) -> None:
    """A `fill_value: null` array reads missing chunks as the type's default (zarr-python 3),
    so a chunk of defaults is erased as zarr-python 3 erases it (and as with a real fill
    value); `write_empty_chunks=True` stores it, for readers such as zarr-python 2 that read
    missing chunks of such arrays as undefined."""
    import json as _json

    import numpy as _np

    import zarrkit as _zk
    from zarrkit.plugins.stores.local.local import LocalStore

    for fill, write_empty, kept in ((None, None, False), (0, None, False), (None, True, True)):
        url = tmp_path / f"fill-{fill}-{write_empty}.zarr"
        url.mkdir()
        (url / ".zarray").write_text(
            _json.dumps(
                {
                    "zarr_format": 2,
                    "shape": [6],
                    "chunks": [3],
                    "dtype": "<i4",
                    "fill_value": fill,
                    "order": "C",
                    "compressor": None,
                    "filters": None,
                }
            )
        )
        config = None if write_empty is None else {"write_empty_chunks": write_empty}
        arr = _zk.open_array(str(url), mode="r+", config=config)
        arr[:] = _np.array([0, 0, 0, 1, 2, 3])
        store = LocalStore(url)
        assert store.exists("0") is kept and store.exists("1")
        _np.testing.assert_array_equal(_zk.open_array(str(url))[...], [0, 0, 0, 1, 2, 3])
        assert _json.loads((url / ".zarray").read_text())["fill_value"] == fill
