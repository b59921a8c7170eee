"""Data, fill values and comparisons shared by the interoperability tests."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

#: every data type zarrkit ships that other implementations also know (not r<N>)
DTYPES = [
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
]

#: a NaN with a payload, per float width (big-endian hex, as in v3 fill values)
NAN_PAYLOAD = {2: "7e01", 4: "7fc00001", 8: "7ff8000000000001"}


# -- data and comparisons --------------------------------------------------------------------------------
def from_hex(hexstr: str, dtype: str) -> np.generic:
    dt = np.dtype(dtype)
    return np.frombuffer(bytes.fromhex(hexstr), dtype=dt.newbyteorder(">")).astype(dt)[0]


def sample(dtype: str, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """Data covering the range of a type: extremes, and for floats NaN/inf/-0.0/NaN payloads."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64))
    if dt.kind == "b":
        flat = rng.random(n) < 0.5
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        flat = rng.integers(info.min, info.max, size=n, endpoint=True, dtype=dt)
        flat[: min(n, 2)] = [info.min, info.max][: min(n, 2)]
    else:
        part = np.dtype(f"f{dt.itemsize // 2}") if dt.kind == "c" else dt
        payload = np.array(int(NAN_PAYLOAD[part.itemsize], 16), dtype=f"u{part.itemsize}")

        def floats() -> np.ndarray:
            values = (rng.standard_normal(n) * 1000).astype(part)
            specials = np.array([np.nan, np.inf, -np.inf, -0.0], dtype=part)
            k = min(n, len(specials))
            values[:k] = specials[:k]
            if n > k:  # a NaN with a payload, set through its bits
                values.view(payload.dtype)[k] = payload
            return values

        if dt.kind == "c":
            flat = np.empty(n, dtype=dt)
            flat.real = floats()
            flat.imag = floats()[::-1]
        else:
            flat = floats()
    return np.asarray(flat, dtype=dt).reshape(shape)


def raw(a: Any) -> bytes:
    return np.ascontiguousarray(np.asarray(a)).tobytes()


def assert_same(actual: Any, expected: Any) -> None:
    """Same shape, dtype, values (NaN == NaN) and bits (so -0.0 and NaN payloads count)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape
    assert actual.dtype == expected.dtype
    np.testing.assert_array_equal(actual, expected)
    assert raw(actual) == raw(expected)


def chunk_files(array_dir: Path) -> set[str]:
    """Every file under an array's folder except its metadata, as '/'-joined relative keys."""
    out = set()
    for dirpath, _dirs, files in os.walk(array_dir):
        for f in files:
            rel = os.path.relpath(os.path.join(dirpath, f), array_dir).replace(os.sep, "/")
            if rel != "zarr.json":
                out.add(rel)
    return out


def stored(root: Path, name: str) -> dict:
    return json.loads((root / name / "zarr.json").read_text())


def expected_from(data: np.ndarray, fill: Any, region: Any) -> np.ndarray:
    out = np.full(data.shape, fill, dtype=data.dtype)
    out[region] = data[region]
    return out


def blosc(cname: str, shuffle: str, typesize: int) -> dict:
    return {
        "name": "blosc",
        "configuration": {
            "cname": cname,
            "clevel": 5,
            "shuffle": shuffle,
            "typesize": typesize,
            "blocksize": 0,
        },
    }


BYTES_LE = {"name": "bytes", "configuration": {"endian": "little"}}
BYTES_BE = {"name": "bytes", "configuration": {"endian": "big"}}
T10 = {"name": "transpose", "configuration": {"order": [1, 0]}}

#: codec chains every implementation should agree on, by test id
CODEC_CHAINS: dict[str, list[dict]] = {
    "bytes-little": [BYTES_LE],
    "bytes-big": [BYTES_BE],
    "transpose": [T10, BYTES_LE],
    "gzip-1": [BYTES_LE, {"name": "gzip", "configuration": {"level": 1}}],
    "gzip-9": [BYTES_BE, {"name": "gzip", "configuration": {"level": 9}}],
    "zstd": [BYTES_LE, {"name": "zstd", "configuration": {"level": 3, "checksum": False}}],
    "zstd-checksum": [BYTES_LE, {"name": "zstd", "configuration": {"level": 3, "checksum": True}}],
    "zstd-negative-level": [
        BYTES_LE,
        {"name": "zstd", "configuration": {"level": -5, "checksum": False}},
    ],
    **{
        f"blosc-{cname}-{shuffle}": [BYTES_LE, blosc(cname, shuffle, 8)]
        for cname in ("lz4", "zstd")
        for shuffle in ("noshuffle", "shuffle", "bitshuffle")
    },
    "crc32c": [BYTES_LE, {"name": "crc32c"}],
    "transpose+bytes+zstd+crc32c": [
        T10,
        BYTES_BE,
        {"name": "zstd", "configuration": {"level": 5, "checksum": True}},
        {"name": "crc32c"},
    ],
    "transpose+bytes+blosc+gzip+crc32c": [
        T10,
        BYTES_LE,
        blosc("lz4", "bitshuffle", 8),
        {"name": "gzip", "configuration": {"level": 6}},
        {"name": "crc32c"},
    ],
    "transpose-twice+crc32c+crc32c": [T10, T10, BYTES_BE, {"name": "crc32c"}, {"name": "crc32c"}],
}


def for_dtype(codecs: list[dict], dtype: str) -> list[dict]:
    """A chain adapted to a data type: no endian for 1-byte types, blosc's typesize its size."""
    itemsize = np.dtype(dtype).itemsize
    out = []
    for codec in codecs:
        if codec["name"] == "bytes" and itemsize == 1:
            codec = {"name": "bytes"}
        elif codec["name"] == "blosc":
            codec = {
                "name": "blosc",
                "configuration": {**codec["configuration"], "typesize": itemsize},
            }
        out.append(codec)
    return out


def complex_scalar(re: Any, im: Any, dtype: str) -> np.generic:
    out = np.empty((), dtype=dtype)
    out.real, out.imag = re, im
    return out[()]


#: (id, dtype, fill value as JSON, the same as a numpy scalar built independently of zarrkit)
FILLS = [
    ("int8-0", "int8", 0, np.int8(0)),
    ("int8-min", "int8", -128, np.int8(-128)),
    ("int32-nonzero", "int32", -7, np.int32(-7)),
    ("uint64-max", "uint64", 2**64 - 1, np.uint64(2**64 - 1)),
    ("int64-min", "int64", -(2**63), np.int64(-(2**63))),
    ("float32-0", "float32", 0.0, np.float32(0.0)),
    ("float64-negzero", "float64", -0.0, np.float64(-0.0)),
    ("float32-1.5", "float32", 1.5, np.float32(1.5)),
    ("float64-pi", "float64", 3.141592653589793, np.float64(3.141592653589793)),
    ("float16-nonzero", "float16", -2.5, np.float16(-2.5)),
    ("float64-nan", "float64", "NaN", np.float64(np.nan)),
    ("float32-nan", "float32", "NaN", np.float32(np.nan)),
    ("float16-nan", "float16", "NaN", np.float16(np.nan)),
    ("float64-inf", "float64", "Infinity", np.float64(np.inf)),
    ("float32-neginf", "float32", "-Infinity", np.float32(-np.inf)),
    ("float16-inf", "float16", "Infinity", np.float16(np.inf)),
    ("float32-nan-payload", "float32", "0x7fc00001", from_hex("7fc00001", "float32")),
    (
        "float64-nan-payload",
        "float64",
        "0x7ff8000000000001",
        from_hex("7ff8000000000001", "float64"),
    ),
    ("float16-nan-payload", "float16", "0x7e01", from_hex("7e01", "float16")),
    ("complex64-re-im", "complex64", [1.5, -2.0], complex_scalar(1.5, -2.0, "complex64")),
    (
        "complex128-nan-inf",
        "complex128",
        ["NaN", "Infinity"],
        complex_scalar(np.nan, np.inf, "complex128"),
    ),
    (
        "complex128-neginf-0",
        "complex128",
        ["-Infinity", 0.0],
        complex_scalar(-np.inf, 0.0, "complex128"),
    ),
    ("bool-true", "bool", True, np.bool_(True)),
    ("bool-false", "bool", False, np.bool_(False)),
]


#: (shape, chunks) cases: edge chunks in 1-3 dimensions, chunks larger than the array, 0-d
SHAPES = {
    "2d-edges": ((10, 7), (3, 4)),
    "1d-edge": ((13,), (5,)),
    "3d-edges": ((5, 6, 7), (2, 3, 4)),
    "chunk-larger-than-array": ((3, 2), (10, 10)),
    "chunk-of-one": ((4, 3), (1, 1)),
    "0-d": ((), ()),
}
