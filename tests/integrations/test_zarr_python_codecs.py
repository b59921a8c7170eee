"""zarr-python's way of naming codecs (`zarr.codecs.BloscCodec(...)`, `GzipCodec(level=1)`,
`ShardingCodec(...)`, `zarr.codecs.numcodecs.Zlib(level=1)`, ...), run unchanged against `zarr`
and `zarrkit`: the same call must store the same `zarr.json` codecs and both libraries must read
the same values from what either wrote. zarr-python's own codec objects are taken by zarrkit
too (the zarr-python bridge plugin adapts them)."""

from __future__ import annotations

import json
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrkit
from zarrkit.errors import MetadataError

zarr = pytest.importorskip("zarr")

pytestmark = [pytest.mark.interop, pytest.mark.filterwarnings("ignore:::zarr")]

#: (argument, codec maker taking the `codecs` module) for every face of `zarrkit.codecs`
CASES: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "blosc": ("compressors", lambda c: c.BloscCodec(cname="zstd", clevel=3, shuffle="bitshuffle")),
    "blosc-tuned": ("compressors", lambda c: c.BloscCodec()),  # typesize, shuffle from the dtype
    "blosc-typesize": ("compressors", lambda c: c.BloscCodec(typesize=2, cname="lz4")),
    "gzip": ("compressors", lambda c: c.GzipCodec(level=1)),
    "zstd": ("compressors", lambda c: c.ZstdCodec(level=3, checksum=True)),
    "crc32c": ("compressors", lambda c: [c.ZstdCodec(), c.Crc32cCodec()]),
    "bytes-big": ("serializer", lambda c: c.BytesCodec(endian="big")),
    "bytes": ("serializer", lambda c: c.BytesCodec()),
    "transpose": ("filters", lambda c: [c.TransposeCodec(order=(1, 0))]),
    "codecs": ("codecs", lambda c: [c.BytesCodec(), c.GzipCodec()]),
    "sharding": (
        "serializer",
        lambda c: c.ShardingCodec(
            chunk_shape=(2, 2), codecs=[c.BytesCodec(), c.BloscCodec()], index_location="start"
        ),
    ),
    "numcodecs-zlib": ("compressors", lambda c: c.numcodecs.Zlib(level=1)),
    "numcodecs-shuffle": ("compressors", lambda c: [c.numcodecs.Shuffle(), c.ZstdCodec()]),
    "numcodecs-delta": ("filters", lambda c: [c.numcodecs.Delta(dtype="<i4")]),
    "numcodecs-quantize": ("filters", lambda c: [c.numcodecs.Quantize(digits=3)]),
}
DTYPES = ["int32", "uint8", "float64"]


def _codecs_of(folder: Path) -> Any:
    return json.loads((folder / "zarr.json").read_text())["codecs"]


def _data(dtype: str) -> np.ndarray:
    return (np.arange(16) % 7).astype(dtype).reshape(4, 4)


def _applies(case: str, dtype: str) -> bool:
    if case == "numcodecs-delta":
        return dtype == "int32"
    if case == "numcodecs-quantize":
        return dtype == "float64"
    return True


def _write(zk: Any, codecs_module: Any, case: str, dtype: str, folder: Path) -> Path:
    """An array written by `zk` in a folder (a dict of zarr-python's holds its Buffer
    objects, which is issue 42's item 7, not this test's subject)."""
    argument, make = CASES[case]
    codecs = {argument: make(codecs_module)}
    # (a sharding serializer's chunks are its shards; zarr-python's `codecs=` is `create`'s)
    chunks = (4, 4) if case == "sharding" else (2, 2)
    if argument == "codecs":
        a = zk.create(shape=(4, 4), chunks=chunks, dtype=dtype, store=str(folder), **codecs)
    else:
        a = zk.create_array(str(folder), shape=(4, 4), chunks=chunks, dtype=dtype, **codecs)
    a[...] = _data(dtype)
    return folder


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", sorted(CASES))
def test_same_call_same_codecs(case: str, dtype: str, tmp_path: Path) -> None:
    """`zarrkit.codecs.X(...)` stores what `zarr.codecs.X(...)` stores, and each library reads
    what the other wrote."""
    if not _applies(case, dtype):
        pytest.skip("the codec is for another data type")
    theirs = _write(zarr, zarr.codecs, case, dtype, tmp_path / "zarr")
    ours = _write(zarrkit, zarrkit.codecs, case, dtype, tmp_path / "zarrkit")
    assert _codecs_of(ours) == _codecs_of(theirs)
    expected = _data(dtype)
    if case == "numcodecs-quantize":
        expected = np.asarray(zarr.open_array(str(theirs), mode="r")[...])
    np.testing.assert_array_equal(zarr.open_array(str(ours), mode="r")[...], expected)
    np.testing.assert_array_equal(zarrkit.open_array(str(theirs), mode="r")[...], expected)
    np.testing.assert_array_equal(zarrkit.open_array(str(ours), mode="r")[...], expected)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", sorted(CASES))
def test_zarr_python_codec_objects_accepted(case: str, dtype: str, tmp_path: Path) -> None:
    """zarr-python's own codec objects given to zarrkit store what zarr-python stores for them:
    `compressors=zarr.codecs.GzipCodec(level=1)` raised `MetadataError` before."""
    if not _applies(case, dtype):
        pytest.skip("the codec is for another data type")
    theirs = _write(zarr, zarr.codecs, case, dtype, tmp_path / "zarr")
    ours = _write(zarrkit, zarr.codecs, case, dtype, tmp_path / "zarrkit")
    assert _codecs_of(ours) == _codecs_of(theirs)
    np.testing.assert_array_equal(
        zarrkit.open_array(str(ours), mode="r")[...], zarr.open_array(str(theirs), mode="r")[...]
    )


def test_faces_build_plugins_and_answer_isinstance() -> None:
    kc = zarrkit.codecs
    gzip = kc.GzipCodec(level=1)
    assert isinstance(gzip, kc.GzipCodec)
    assert not isinstance(gzip, kc.ZstdCodec)
    assert gzip == kc.GzipCodec(level=1) != kc.GzipCodec(level=2)
    zlib = kc.numcodecs.Zlib(level=1)
    assert isinstance(zlib, kc.numcodecs.Zlib)
    assert not isinstance(zlib, kc.numcodecs.Zstd)
    assert zlib.to_json() == {"name": "numcodecs.zlib", "configuration": {"level": 1}}
    assert kc.BytesCodec().to_json() == {
        "name": "bytes",
        "configuration": {"endian": sys.byteorder},
    }
    assert sorted(kc.numcodecs.__all__) == sorted(
        n for n in zarr.codecs.numcodecs.__all__ if not n.startswith("_")
    )
    missing = set(zarr.codecs.__all__) - set(kc.__all__) - {"SubchunkWriteOrder"}
    assert not missing


def test_enums_are_zarr_pythons_deprecated_strings() -> None:
    """In zarr-python 3.4 `BloscShuffle.bitshuffle` is the string, with a DeprecationWarning
    saying to pass the string; zarrkit says the same."""
    kc = zarrkit.codecs
    for ours, theirs, member in [
        (kc.BloscShuffle, zarr.codecs.BloscShuffle, "bitshuffle"),
        (kc.BloscCname, zarr.codecs.BloscCname, "lz4"),
        (kc.Endian, zarr.codecs.Endian, "big"),
        (kc.ShardingCodecIndexLocation, zarr.codecs.ShardingCodecIndexLocation, "start"),
    ]:
        with pytest.warns(DeprecationWarning, match=f"{ours.__name__}.{member} is deprecated"):
            value = getattr(ours, member)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert value == getattr(theirs, member) == member
    assert kc.BloscShuffle.from_int(2) == zarr.codecs.BloscShuffle.from_int(2) == "bitshuffle"
    with pytest.warns(DeprecationWarning, match="is deprecated; pass the string"):
        codec = kc.BloscCodec(shuffle=kc.BloscShuffle.shuffle, cname=kc.BloscCname.lz4)
    assert codec.to_json()["configuration"]["shuffle"] == "shuffle"


def test_refusals_name_the_field() -> None:
    """Bad values are refused by the plugin as it refuses them in a stored document (a
    MetadataError naming the field); zarr-python raises ValueError / TypeError."""
    with pytest.raises(MetadataError, match="level"):
        zarrkit.codecs.GzipCodec(level=12)
    with pytest.raises(MetadataError, match="cname"):
        zarrkit.codecs.BloscCodec(cname="nope")
    with pytest.raises(ValueError, match="subchunk_write_order"):
        zarrkit.codecs.ShardingCodec(chunk_shape=(2,), subchunk_write_order="spiral")


def test_codecs_module_after_bare_import(tmp_path: Path) -> None:
    """`import zarrkit` alone makes `zarrkit.codecs` reachable (lazily), and reaching it
    imports neither numpy nor zarr-python: only building a codec does (numpy)."""
    import subprocess

    script = (
        "import sys, zarrkit; zarrkit.codecs.numcodecs; "
        "print('numpy' in sys.modules, 'zarr' in sys.modules); "
        "print(zarrkit.codecs.GzipCodec(level=1))"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    assert out.stdout.split("\n")[:2] == ["False False", "GzipCodec(level=1)"]
