"""Every shipped data type: JSON both ways per format, fill values, numpy resolution, storage."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from zarrkit import registry
from zarrkit.abc.extension import V2, V3, V3_DRAFT_2020
from zarrkit.api import create_array, data_type_from_arg, open_array
from zarrkit.errors import (
    ChunkDecodeError,
    CodecChainError,
    MetadataError,
    UnknownExtensionError,
    ValueCastError,
)
from zarrkit.negotiation import extension_from_json

DT64 = {"name": "numpy.datetime64", "configuration": {"unit": "ns", "scale_factor": 1}}
TD64 = {"name": "numpy.timedelta64", "configuration": {"unit": "s", "scale_factor": 10}}
STRUCT = {
    "name": "struct",
    "configuration": {
        "fields": [
            {"name": "x", "data_type": "float32"},
            {"name": "t", "data_type": DT64},
            {
                "name": "p",
                "data_type": {
                    "name": "struct",
                    "configuration": {
                        "fields": [
                            {"name": "a", "data_type": "int8"},
                            {"name": "b", "data_type": "uint16"},
                        ]
                    },
                },
            },
        ]
    },
}
UTF32 = {"name": "fixed_length_utf32", "configuration": {"length_bytes": 12}}
NTB = {"name": "null_terminated_bytes", "configuration": {"length_bytes": 4}}
ML = [
    "bfloat16",
    "float8_e3m4",
    "float8_e4m3",
    "float8_e4m3fn",
    "float8_e4m3b11fnuz",
    "float8_e4m3fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
    "float8_e8m0fnu",
    "float4_e2m1fn",
    "float6_e2m3fn",
    "float6_e3m2fn",
    "int2",
    "int4",
    "uint2",
    "uint4",
]
V3_TYPES = [
    "bool",
    "int8",
    "int16",
    "uint64",
    "float16",
    "float64",
    "complex64",
    "complex_float32",
    "complex_float64",
    "r24",
    DT64,
    TD64,
    "string",
    "bytes",
    UTF32,
    NTB,
    STRUCT,
    *ML,
]


def load(doc, fmt=V3):
    return extension_from_json("data_type", doc, fmt, key="data_type", where="test")


# -- JSON of the type ------------------------------------------------------------------------------
@pytest.mark.parametrize("doc", V3_TYPES, ids=str)
def test_v3_json_round_trip(doc):
    data_type = load(doc)
    assert data_type.to_json(V3) == doc
    assert load(data_type.to_json(V3)) == data_type
    assert data_type.endian is None


#: v2 typestrings as zarr-python 3 writes them, and what they are in v3
V2_NAMES = [
    ("|b1", "bool"),
    ("|i1", "int8"),
    ("<i2", "int16"),
    (">i2", "int16"),
    ("|u1", "uint8"),
    (">u8", "uint64"),
    ("<f2", "float16"),
    (">f8", "float64"),
    ("<c8", "complex64"),
    (">c16", "complex128"),
    ("|V3", "r24"),
    ("<M8[ns]", DT64),
    (">m8[10s]", TD64),
    ("<M8", {"name": "numpy.datetime64", "configuration": {"unit": "generic", "scale_factor": 1}}),
    ("<U3", UTF32),
    (">U3", UTF32),
    ("|S4", NTB),
]


@pytest.mark.parametrize("name,v3", V2_NAMES, ids=[n for n, _ in V2_NAMES])
def test_v2_names(name, v3):
    data_type = load(name, V2)
    assert data_type.to_json(V2) == name  # the byte order is remembered
    assert data_type.to_json(V3) == v3
    expected = {"<": "little", ">": "big"}.get(name[0]) if data_type.has_endianness else None
    assert data_type.endian == expected
    if expected:
        native = data_type.native
        assert data_type.encoded_dtype(data_type.endian) == native.newbyteorder(name[0])


@pytest.mark.parametrize(
    "name", ["bool", "i1", "u1", "<i2", ">i4", "<u8", ">f2", "<f8", "r8", "r16", "<M8[ms]"]
)
def test_draft_names(name):
    data_type = load(name, V3_DRAFT_2020)
    assert data_type.to_json(V3_DRAFT_2020) == name


@pytest.mark.interop
def test_zarr_python_2_typestrings_match_zarr_python_3():
    """The v2 names are what zarr-python 3 itself writes for each numpy dtype."""
    from zarr.core.dtype import get_data_type_from_native_dtype

    for native in [
        "b1",
        "i1",
        "<i2",
        ">i4",
        "u1",
        "<u8",
        "<f2",
        ">f8",
        "<c8",
        "M8[10s]",
        ">m8[ns]",
        "<U7",
        "S3",
        "V5",
    ]:
        ours = data_type_from_arg(np.dtype(native)).to_json(V2)
        theirs = get_data_type_from_native_dtype(np.dtype(native)).to_json(zarr_format=2)["name"]
        assert ours == theirs, native


def test_v2_object_names_and_struct_list():
    assert load("string").to_json(V2) == load("bytes").to_json(V2) == "|O"
    fields = [["a", "<i4"], ["b", [["c", ">f8"], ["d", "|u1"]]]]
    struct = registry.lookup("data_type", "structured", V2).from_json(
        "structured", {"fields": fields}, V2
    )
    assert struct.to_json(V2) == fields
    assert struct.encoded_dtype("little") == np.dtype(
        [("a", "<i4"), ("b", [("c", ">f8"), ("d", "u1")])]
    )
    # the object codecs tell the v2 format which type '|O' is
    assert registry.lookup("codec", "vlen-utf8", V2).implied_data_type == "string"
    assert registry.lookup("codec", "vlen-bytes", V2).implied_data_type == "bytes"


def test_legacy_structured_alias_is_read():
    legacy = {"name": "structured", "configuration": {"fields": [["x", "int16"], ["y", "float32"]]}}
    data_type = load(legacy)
    assert data_type.to_json(V3)["name"] == "struct"
    value = data_type.fill_from_json("AQAAAMA/", V3)  # base64 of the little-endian record
    assert value["x"] == 1 and value["y"] == 1.5


@pytest.mark.parametrize(
    "doc,message",
    [
        (
            {"name": "numpy.datetime64", "configuration": {"unit": "lightyear", "scale_factor": 1}},
            "unit",
        ),
        (
            {"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 0}},
            "scale_factor",
        ),
        ({"name": "numpy.datetime64", "configuration": {"unit": "s"}}, "scale_factor"),
        ({"name": "fixed_length_utf32", "configuration": {"length_bytes": 6}}, "multiple of 4"),
        ({"name": "struct", "configuration": {"fields": []}}, "at least one field"),
        (
            {"name": "struct", "configuration": {"fields": [{"name": "s", "data_type": "string"}]}},
            "variable-length",
        ),
        (
            {
                "name": "struct",
                "configuration": {
                    "fields": [
                        {"name": "a", "data_type": "int8"},
                        {"name": "a", "data_type": "int8"},
                    ]
                },
            },
            "unique",
        ),
        (
            {"name": "struct", "configuration": {"fields": [{"name": "a", "data_type": "nope"}]}},
            "nope",
        ),
        ({"name": "string", "configuration": {"x": 1}}, "configuration"),
    ],
)
def test_bad_type_json(doc, message):
    with pytest.raises(MetadataError, match=message) as info:
        load(doc)
    assert "data_type" in str(info.value)


def test_unshipped_complex_ml_type_has_a_hint():
    with pytest.raises(UnknownExtensionError, match="does not ship"):
        load("complex_bfloat16")


# -- numpy resolution ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "native,expected",
    [
        (
            "M8[10s]",
            {"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 10}},
        ),
        (
            "m8[us]",
            {"name": "numpy.timedelta64", "configuration": {"unit": "us", "scale_factor": 1}},
        ),
        ("U3", UTF32),
        ("S4", NTB),
        (str, "string"),
        (bytes, "bytes"),
        (np.dtypes.StringDType(), "string"),
        (ml_dtypes.bfloat16, "bfloat16"),
        (ml_dtypes.float8_e5m2, "float8_e5m2"),
        (ml_dtypes.int4, "int4"),
        ("V3", "r24"),
        ([("x", "f4"), ("t", "M8[ns]"), ("p", [("a", "i1"), ("b", "u2")])], STRUCT),
    ],
    ids=str,
)
def test_from_numpy(native, expected):
    assert data_type_from_arg(native).to_json(V3) == expected


def test_numpy_object_is_ambiguous_and_lists_candidates():
    with pytest.raises(MetadataError) as info:
        data_type_from_arg(object)
    assert "'string'" in str(info.value) and "'bytes'" in str(info.value)


# -- fill values -----------------------------------------------------------------------------------
FILLS = [
    (DT64, "NaT", V3, "NaT"),
    (DT64, -(2**63), V3, "NaT"),
    (DT64, "NaT", V2, -(2**63)),
    (DT64, 86400 * 10**9, V3, 86400 * 10**9),
    (TD64, -3, V2, -3),
    ("string", "héllo", V3, "héllo"),
    ("bytes", "AAEC", V3, "AAEC"),
    ("bytes", [0, 1, 2], V3, "AAEC"),
    (UTF32, "abc", V3, "abc"),
    (NTB, "YWI=", V3, "YWI="),
    (
        STRUCT,
        {"x": "NaN", "t": 5, "p": {"a": -1, "b": 7}},
        V3,
        {"x": "NaN", "t": 5, "p": {"a": -1, "b": 7}},
    ),
    (STRUCT, {"x": 1.5}, V3, {"x": 1.5, "t": "NaT", "p": {"a": 0, "b": 0}}),
    ("float32", "Infinity", V2, "Infinity"),
    ("float32", "Infinity", V3_DRAFT_2020, "+Infinity"),
    ("float32", "+Infinity", V3_DRAFT_2020, "+Infinity"),
    ("float32", "0x7fc00001", V2, "NaN"),
    ("float32", "0x7fc00001", V3_DRAFT_2020, "0x7fc00001"),
    ("float32", "0b" + "0" * 31 + "1", V3_DRAFT_2020, float(np.float32(1.4e-45))),
    ("complex64", ["NaN", "-Infinity"], V2, ["NaN", "-Infinity"]),
    ("bfloat16", "0x7fc0", V3, "NaN"),
    ("bfloat16", "0x7fc1", V3, "0x7fc1"),
    ("bfloat16", 1.5, V3, 1.5),
    ("float8_e4m3fn", "0x7f", V3, "NaN"),
    ("float4_e2m1fn", -6.0, V3, -6.0),
    ("int4", -8, V3, -8),
    ("uint2", 3, V3, 3),
    ("r16", [1, 2], V3, [1, 2]),
    ("r16", "AQI=", V2, "AQI="),
]


@pytest.mark.parametrize("doc,value,fmt,written", FILLS, ids=str)
def test_fill_value_json(doc, value, fmt, written):
    data_type = load(doc)
    decoded = data_type.fill_from_json(value, fmt)
    assert data_type.fill_to_json(decoded, fmt) == written
    again = data_type.fill_from_json(written, fmt)
    if data_type.native.hasobject:
        assert again == decoded
    elif fmt != V2 or "NaN" not in str(written):  # v2 cannot keep a NaN payload
        assert (
            np.asarray(again, dtype=data_type.native).tobytes()
            == np.asarray(decoded, dtype=data_type.native).tobytes()
        )


@pytest.mark.parametrize(
    "doc,value,message",
    [
        (DT64, 1.5, "64-bit integer"),
        (DT64, 2**63, "64-bit integer"),
        ("string", 5, "string"),
        ("bytes", "not base64!", "base64"),
        (UTF32, "abcd", "at most 3"),
        (NTB, "YWJjZGU=", "longer"),
        (STRUCT, {"zz": 1}, "zz"),
        (STRUCT, [1, 2], "object"),
        ("float4_e2m1fn", "NaN", "no NaN"),
        ("float4_e2m1fn", 100.0, "out of range"),
        ("float8_e8m0fnu", "Infinity", "no Infinity"),
        ("int4", 8, "out of range"),
        ("uint2", -1, "out of range"),
        ("bfloat16", "0x7f", "4 hex digits"),
    ],
)
def test_bad_fill_values(doc, value, message):
    with pytest.raises(MetadataError, match=message):
        load(doc).fill_from_json(value, V3)


FLOAT_TYPES = [
    "float16",
    "float32",
    "float64",
    "bfloat16",
    "float8_e4m3",
    "float8_e5m2",
    "float8_e4m3fn",
    "float8_e3m4",
]


@given(st.sampled_from(FLOAT_TYPES), st.integers(min_value=0), st.sampled_from([V3, V3_DRAFT_2020]))
def test_float_fill_bits_survive_json(name, bits, fmt):
    """Any bit pattern of a float type, NaN payloads included, survives a JSON round trip."""
    data_type = load(name)
    size = data_type.native.itemsize
    raw = np.array([bits % (1 << (8 * size))], dtype=f"u{size}")
    value = raw.view(data_type.native)[0]
    written = data_type.fill_to_json(value, fmt)
    back = data_type.fill_from_json(written, fmt)
    assert np.asarray(back, dtype=data_type.native).reshape(1).view(f"u{size}")[0] == raw[0]


@given(
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.sampled_from(["Y", "D", "s", "ns", "as", "generic"]),
    st.integers(1, 1000),
    st.sampled_from([V3, V2, V3_DRAFT_2020]),
)
def test_time_fill_round_trip(count, unit, scale, fmt):
    data_type = load(
        {"name": "numpy.timedelta64", "configuration": {"unit": unit, "scale_factor": scale}}
    )
    value = data_type.fill_from_json(count, fmt)
    back = data_type.fill_from_json(data_type.fill_to_json(value, fmt), fmt)
    assert np.asarray(back).view(np.int64) == count


#: field types for which any bytes are a valid value (so random records can be built)
field_types = st.sampled_from(
    [
        "int8",
        "uint16",
        "float32",
        "float64",
        "bfloat16",
        DT64,
        TD64,
        "r16",
        "complex64",
        "float8_e5m2",
    ]
)


@st.composite
def struct_docs(draw, depth=0):
    names = draw(
        st.lists(st.text("abcxyz", min_size=1, max_size=3), min_size=1, max_size=4, unique=True)
    )
    fields = []
    for name in names:
        if depth < 2 and draw(st.booleans()) and draw(st.booleans()):
            inner = draw(struct_docs(depth=depth + 1))
        else:
            inner = draw(field_types)
        fields.append({"name": name, "data_type": inner})
    return {"name": "struct", "configuration": {"fields": fields}}


@given(struct_docs(), st.binary(min_size=64, max_size=64), st.sampled_from([V3, V2]))
def test_struct_json_and_fill_round_trip(doc, seed_bytes, fmt):
    data_type = load(doc)
    assert load(data_type.to_json(V3)) == data_type
    if fmt == V2 and ("bfloat16" in str(doc) or "float8" in str(doc)):
        with pytest.raises(MetadataError, match="no name in zarr format v2"):
            data_type.to_json(V2)  # ml_dtypes types have no v2 typestring
        return
    if fmt == V2:
        assert (
            registry.lookup("data_type", "structured", V2)
            .from_json("structured", {"fields": data_type.to_json(V2)}, V2)
            .to_json(V3)
            == doc
        )
    size = data_type.stored_size
    raw = (seed_bytes * (size // 64 + 1))[:size]
    stored = np.frombuffer(raw, dtype=data_type.encoded_dtype("little"))
    value = data_type.from_encoded(stored, "little")[0]
    written = data_type.fill_to_json(value, fmt)
    back = data_type.fill_from_json(written, fmt)
    if fmt == V3:  # v3 keeps every bit (NaN payloads as hex); v2 writes any NaN as "NaN"
        assert (
            np.asarray(back, dtype=data_type.native).tobytes()
            == np.asarray(value, dtype=data_type.native).tobytes()
        )
    assert data_type.fill_to_json(back, fmt) == written


# -- storage through arrays ------------------------------------------------------------------------
ARRAYS = [
    ("string", np.array(["", "a", "héllo wörld", "x" * 300, "\x00nul"], dtype=object)),
    ("bytes", np.array([b"", b"\x00", b"\xff" * 70, b"abc", b"z"], dtype=object)),
    (
        DT64,
        np.array(["NaT", "2024-02-29T12:00", "1677-09-22", "2262-04-11", "1970"], dtype="M8[ns]"),
    ),
    (TD64, np.array([0, -10, 10**12, 50, -(2**62)], dtype="m8[10s]")),
    (UTF32, np.array(["", "a", "abc", "ü", "€€€"], dtype="U3")),
    (NTB, np.array([b"", b"a", b"abcd", b"\x01", b"zz"], dtype="S4")),
    (
        STRUCT,
        np.array(
            [
                (1.5, 7, (1, 2)),
                (np.nan, -1, (-128, 65535)),
                (0, 0, (0, 0)),
                (-0.0, 3, (5, 6)),
                (1e30, 0, (7, 8)),
            ],
            dtype=[("x", "f4"), ("t", "M8[ns]"), ("p", [("a", "i1"), ("b", "u2")])],
        ),
    ),
    ("bfloat16", np.array([0, 1.5, -np.inf, np.nan, 3e38], dtype=ml_dtypes.bfloat16)),
    ("int4", np.array([-8, 7, 0, -1, 3], dtype=ml_dtypes.int4)),
    ("float6_e3m2fn", np.array([0, 28, -0.0625, 1.25, 3], dtype=ml_dtypes.float6_e3m2fn)),
]


def same(a, b):
    if a.dtype == object or a.dtype.kind == "T":  # (strings read as numpy's StringDType)
        return list(a) == list(b)
    if a.dtype.name in ("int2", "int4", "uint2", "uint4"):  # the unused high bits may differ
        return np.array_equal(a.astype(np.int64), b.astype(np.int64))
    return np.asarray(a).tobytes() == np.asarray(b).tobytes()


@pytest.mark.parametrize("endian", ["little", "big"])
@pytest.mark.parametrize("doc,values", ARRAYS, ids=[str(d)[:40] for d, _ in ARRAYS])
def test_array_round_trip(tmp_path, doc, values, endian):
    data_type = load(doc)
    serializer = data_type.default_serializer() or {
        "name": "bytes",
        "configuration": {"endian": endian},
    }
    if not data_type.has_endianness and serializer["name"] == "bytes":
        serializer = {"name": "bytes"}
    a = create_array(
        tmp_path, shape=values.shape, dtype=doc, chunks=(2,), codecs=[serializer, {"name": "zstd"}]
    )
    a[...] = values
    b = open_array(tmp_path, mode="r+")
    assert same(b[...], values)
    assert same(b[1:4], values[1:4])
    # a chunk set back to the fill value is not stored
    b[0:2] = b.fill_value
    assert not (tmp_path / "c" / "0").exists()
    assert same(b[2:], values[2:])


def test_string_arrays_accept_any_text_and_refuse_the_rest(tmp_path):
    a = create_array(tmp_path, shape=(4,), dtype="string", chunks=(2,), fill_value="-")
    assert a.codecs[0].to_json()["name"] == "vlen-utf8"  # chosen by the data type
    a[0:2] = np.array(["ab", "c"], dtype="U2")
    a[2:4] = np.array(["d", "é"], dtype=np.dtypes.StringDType())
    assert list(a[...]) == ["ab", "c", "d", "é"]
    with pytest.raises((ValueCastError, MetadataError)):
        a[0] = 5
    with pytest.raises(ValueCastError, match="not str"):
        a[0:2] = np.array([1, "x"], dtype=object)
    assert list(a[...]) == ["ab", "c", "d", "é"]


def test_writes_refuse_values_a_type_cannot_hold(tmp_path):
    a = create_array(tmp_path / "i4", shape=(3,), dtype="int4", chunks=(3,))
    with pytest.raises(ValueCastError, match="out of range"):
        a[...] = np.array([1, 8, 0])
    b = create_array(tmp_path / "f4", shape=(3,), dtype="float4_e2m1fn", chunks=(3,))
    b[...] = np.array([0.5, 1.0, 6.0])  # exact
    with pytest.raises(ValueCastError, match="out of range"):
        b[...] = np.array([1.0, 100.0, 0])
    assert list(b[...].astype(float)) == [0.5, 1.0, 6.0]
    c = create_array(tmp_path / "u", shape=(2,), dtype="U2", chunks=(2,))
    with pytest.raises(ValueCastError):
        c[...] = np.array(["abc", "d"])


@pytest.mark.parametrize(
    "doc,values,bits",
    [
        ("int4", np.array([-8, 7, -1, 0, 3], dtype=ml_dtypes.int4), 4),
        ("uint2", np.array([0, 1, 2, 3, 1], dtype=ml_dtypes.uint2), 2),
        ("float6_e2m3fn", np.array([0, 7.5, -1.125, 0.125, 2], dtype=ml_dtypes.float6_e2m3fn), 6),
        ("bool", np.array([True, False, True, True, False]), 1),
        ("int16", np.array([-32768, 32767, 0, -1, 5], dtype="i2"), 16),
        ("complex64", np.array([1 + 2j, -1j, 0, np.nan, 3], dtype="c8"), 64),
    ],
)
@pytest.mark.parametrize("padding", ["none", "first_byte", "last_byte"])
def test_packbits(tmp_path, doc, values, bits, padding):
    codec = {"name": "packbits", "configuration": {"padding_encoding": padding}}
    a = create_array(tmp_path, shape=(5,), dtype=doc, chunks=(5,), codecs=[codec])
    a[...] = values
    stored = (tmp_path / "c" / "0").read_bytes()
    assert len(stored) == math.ceil(5 * bits / 8) + (padding != "none")
    assert same(open_array(tmp_path)[...], values)


def test_packbits_bit_order_and_bit_range(tmp_path):
    a = create_array(
        tmp_path / "a", shape=(3,), dtype="uint4", chunks=(3,), codecs=[{"name": "packbits"}]
    )
    a[...] = np.array([0x1, 0x2, 0xF], dtype=ml_dtypes.uint4)
    assert (tmp_path / "a" / "c" / "0").read_bytes() == bytes([0x21, 0x0F])  # LSB first
    b = create_array(
        tmp_path / "b",
        shape=(4,),
        dtype="int16",
        chunks=(4,),
        codecs=[{"name": "packbits", "configuration": {"first_bit": 2, "last_bit": 5}}],
    )
    b[...] = np.array([0b111100, -4, 0, 0b100], dtype="i2")  # -4: bits 2-5 are 1111
    assert list(b[...]) == [-4, -4, 0, 4]  # sign-extended from bit 5


def test_packbits_refuses_what_it_cannot_pack(tmp_path):
    with pytest.raises(CodecChainError, match="packbits"):
        create_array(tmp_path, shape=(2,), dtype="string", codecs=[{"name": "packbits"}])
    a = create_array(
        tmp_path / "t", shape=(5,), dtype="int4", chunks=(5,), codecs=[{"name": "packbits"}]
    )
    a[...] = np.arange(5).astype(ml_dtypes.int4)
    (tmp_path / "t" / "c" / "0").write_bytes(b"\x01")
    with pytest.raises(ChunkDecodeError, match="expected 3 bytes"):
        open_array(tmp_path / "t")[...]


def test_vlen_corrupt_chunk_is_a_clear_error(tmp_path):
    a = create_array(
        tmp_path, shape=(3,), dtype="string", chunks=(3,), codecs=[{"name": "vlen-utf8"}]
    )
    a[...] = np.array(["a", "b", "c"], dtype=object)
    chunk = tmp_path / "c" / "0"
    good = chunk.read_bytes()
    chunk.write_bytes(good[:-2])
    with pytest.raises(ChunkDecodeError):
        a[...]
    chunk.write_bytes(b"\x05\x00\x00\x00" + good[4:])
    with pytest.raises(ChunkDecodeError, match="5 elements"):
        a[...]
    with pytest.raises(CodecChainError, match="vlen-utf8"):
        create_array(tmp_path / "x", shape=(2,), dtype="int8", codecs=[{"name": "vlen-utf8"}])


@pytest.mark.parametrize("dtype", ["datetime64[s]", "timedelta64[ms]"])
@pytest.mark.parametrize("compressors", ["auto", None])
def test_dates_and_durations_read_back_in_part(dtype: str, compressors: object) -> None:
    """A selection of a chunk's first rows decodes only those rows (a compressor that decodes
    by prefix writes straight into the output), which numpy's buffer protocol refuses for
    datetime64 and timedelta64: the user guide's example (docs/guide/data-types.md) failed."""
    values = np.arange(100).astype(dtype)
    a = create_array("memory://", shape=(100,), chunks=(100,), dtype=dtype, compressors=compressors)
    a[:] = values
    np.testing.assert_array_equal(a[:3], values[:3])
    np.testing.assert_array_equal(a[:], values)
