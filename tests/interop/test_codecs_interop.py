"""The codecs of this release against zarr-python 3.4: it reads what zarrkit writes and
zarrkit reads what it writes, value for value (bit for bit: lossy codecs must agree on what
they lose), for bitround, scale_offset, cast_value and numcodecs.* through the bridge."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import zarrkit as zk

zarr = pytest.importorskip("zarr")
from zarr.abc.codec import ArrayArrayCodec, ArrayBytesCodec, BytesBytesCodec  # noqa: E402  (after the importorskip)
from zarr.registry import get_codec_class  # noqa: E402  (after the importorskip)

pytestmark = pytest.mark.interop


def floats(shape, dtype="float64"):
    rng = np.random.default_rng(7)
    return (np.cumsum(rng.standard_normal(int(np.prod(shape)))) * 10).astype(dtype).reshape(shape)


def ints(shape, dtype="int32"):
    return ((np.arange(int(np.prod(shape))) * 7919) % 1000 - 300).astype(dtype).reshape(shape)


def to_uint_range(shape, dtype="float32"):
    return ((np.arange(int(np.prod(shape))) % 200) * 0.5).astype(dtype).reshape(shape)


CASES = {
    "bitround": (
        "float32",
        floats,
        [
            {"name": "numcodecs.bitround", "configuration": {"keepbits": 5}},
            {"name": "bytes", "configuration": {"endian": "little"}},
        ],
    ),
    "scale_offset": (
        "int32",
        ints,
        [
            {"name": "scale_offset", "configuration": {"offset": -300, "scale": 3}},
            {"name": "bytes", "configuration": {"endian": "little"}},
        ],
    ),
    "scale_offset+cast_value": (
        "float32",
        to_uint_range,
        [
            {"name": "scale_offset", "configuration": {"offset": 0, "scale": 2}},
            {
                "name": "cast_value",
                "configuration": {
                    "data_type": "uint8",
                    "rounding": "nearest-even",
                    "out_of_range": "clamp",
                },
            },
            {"name": "bytes"},
        ],
    ),
    "numcodecs.delta+zlib": (
        "int32",
        ints,
        [
            {"name": "numcodecs.delta", "configuration": {"dtype": "int32"}},
            {"name": "bytes", "configuration": {"endian": "little"}},
            {"name": "numcodecs.zlib", "configuration": {"level": 3}},
        ],
    ),
    "numcodecs.fixedscaleoffset(astype)+crc32": (
        "float64",
        floats,
        [
            {
                "name": "numcodecs.fixedscaleoffset",
                "configuration": {"offset": 0, "scale": 10, "dtype": "<f8", "astype": "<i4"},
            },
            {"name": "bytes", "configuration": {"endian": "little"}},
            {"name": "numcodecs.crc32", "configuration": {}},
        ],
    ),
    "numcodecs.astype+bz2": (
        "float64",
        floats,
        [
            {
                "name": "numcodecs.astype",
                "configuration": {"encode_dtype": "float32", "decode_dtype": "float64"},
            },
            {"name": "bytes", "configuration": {"endian": "little"}},
            {"name": "numcodecs.bz2", "configuration": {"level": 5}},
        ],
    ),
    "numcodecs.quantize+shuffle+lzma": (
        "float64",
        floats,
        [
            {"name": "numcodecs.quantize", "configuration": {"digits": 2, "dtype": "float64"}},
            {"name": "bytes", "configuration": {"endian": "little"}},
            {"name": "numcodecs.shuffle", "configuration": {"elementsize": 8}},
            {"name": "numcodecs.lzma", "configuration": {}},
        ],
    ),
    "numcodecs.pcodec": (
        "int64",
        ints,
        [{"name": "numcodecs.pcodec", "configuration": {"level": 5}}],
    ),
    "numcodecs.zfpy": (
        "float64",
        floats,
        [{"name": "numcodecs.zfpy", "configuration": {"mode": 4, "tolerance": 0.01}}],
    ),
}
DIRECTIONS = ["zarrkit->zarr", "zarr->zarrkit"]


def zarr_kwargs(codecs):
    objs = [get_codec_class(c["name"]).from_dict(c) for c in codecs]
    return {
        "filters": tuple(o for o in objs if isinstance(o, ArrayArrayCodec)),
        "serializer": next(o for o in objs if isinstance(o, ArrayBytesCodec)),
        "compressors": tuple(o for o in objs if isinstance(o, BytesBytesCodec)),
    }


@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("case", list(CASES))
def test_both_ways(tmp_path, case, direction):
    dtype, make, codecs = CASES[case]
    if "pcodec" in case:
        pytest.importorskip("pcodec")
    if "zfpy" in case:
        pytest.importorskip("zfpy")
    shape, chunks = (30, 41), (16, 20)
    data = make(shape, dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if direction == "zarrkit->zarr":
            a = zk.create_array(
                str(tmp_path), path="a", shape=shape, chunks=chunks, dtype=dtype, codecs=codecs
            )
            a[...] = data
            got = zarr.open_array(str(tmp_path), path="a", mode="r")[...]
            mine = a[...]
        else:
            z = zarr.create_array(
                store=str(tmp_path),
                name="a",
                shape=shape,
                chunks=chunks,
                dtype=dtype,
                **zarr_kwargs(codecs),
            )
            z[...] = data
            got = zk.open_array(str(tmp_path), path="a")[...]
            mine = z[...]
    # the same values, bit for bit, on both sides (lossy codecs lose the same)
    assert got.dtype == mine.dtype
    np.testing.assert_array_equal(
        got.view(f"u{got.dtype.itemsize}"), mine.view(f"u{mine.dtype.itemsize}")
    )
    if direction == "zarrkit->zarr":  # a lossless chain gives the data back exactly
        stored = json.loads((tmp_path / "a" / "zarr.json").read_text())["codecs"]
        assert [c["name"] for c in stored] == [c["name"] for c in codecs]


def test_bitround_writes_the_bytes_numcodecs_writes(tmp_path):
    import numcodecs

    data = floats((1000,), "float32")
    a = zk.create_array(
        str(tmp_path),
        path="a",
        shape=(1000,),
        chunks=(1000,),
        dtype="float32",
        codecs=[{"name": "bitround", "configuration": {"keepbits": 3}}, "bytes"],
    )
    a[...] = data
    expected = np.asarray(numcodecs.BitRound(keepbits=3).encode(data)).view("float32")
    np.testing.assert_array_equal(a[...].view("u4"), expected.view("u4"))
    # read as the alias `bitround`, written under the name zarr-python knows
    doc = json.loads((tmp_path / "a" / "zarr.json").read_text())
    assert doc["codecs"][0]["name"] == "numcodecs.bitround"


def test_lossless_filters_give_the_data_back(tmp_path):
    data = ints((30, 41))
    a = zk.create_array(
        str(tmp_path),
        path="a",
        shape=data.shape,
        chunks=(16, 20),
        dtype="int32",
        codecs=CASES["numcodecs.delta+zlib"][2],
    )
    a[...] = data
    np.testing.assert_array_equal(zk.open_array(str(tmp_path), path="a")[...], data)
