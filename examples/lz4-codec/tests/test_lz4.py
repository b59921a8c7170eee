"""The example codec against zarrkit's conformance suite, and against zarr-python."""

from __future__ import annotations

import json

import numpy as np
import pytest
from zarrkit_example_lz4 import Lz4Codec
from zarrkit_testing import CodecTests

import zarrkit as zk
from zarrkit import config


class TestLz4(CodecTests):
    @pytest.fixture(params=[1, 8])
    def codec(self, request):
        return Lz4Codec(acceleration=request.param)


def test_data_is_what_zarr_python_numcodecs_lz4_reads(tmp_path):
    zarr = pytest.importorskip("zarr")
    data = np.arange(5000, dtype="int32").reshape(50, 100) % 17
    a = zk.create_array(
        str(tmp_path),
        path="a",
        shape=data.shape,
        chunks=(20, 30),
        dtype="int32",
        codecs=[{"name": "bytes"}, {"name": "example.lz4", "configuration": {"acceleration": 1}}],
    )
    a[...] = data
    doc_path = tmp_path / "a" / "zarr.json"
    doc = json.loads(doc_path.read_text())
    assert doc["codecs"][-1] == {"name": "example.lz4", "configuration": {"acceleration": 1}}
    doc["codecs"][-1]["name"] = "numcodecs.lz4"  # the alias zarr-python knows
    doc_path.write_text(json.dumps(doc))
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path), path="a", mode="r")[...], data)
    # the numcodecs bridge claims numcodecs.lz4 too: say which provider reads it
    with config.override(prefer={("codec", "numcodecs.lz4"): "zarrkit-example-lz4"}):
        again = zk.open_array(str(tmp_path), path="a")
        assert isinstance(again.codecs[-1], Lz4Codec)
        np.testing.assert_array_equal(again[...], data)


def test_zarr_python_reads_and_writes_example_lz4_itself(tmp_path):
    """The package's `zarr.codecs` entry point: zarr-python uses the codec by its own name."""
    zarr = pytest.importorskip("zarr")
    data = np.arange(3000, dtype="uint16").reshape(30, 100) % 251
    lz4 = {"name": "example.lz4", "configuration": {"acceleration": 4}}
    z = zarr.create_array(
        str(tmp_path), name="z", shape=data.shape, chunks=(16, 64), dtype="uint16",
        compressors=[lz4],
    )  # fmt: skip
    z[...] = data
    back = zk.open_array(str(tmp_path), path="z", mode="r+")
    assert back.codecs[-1] == Lz4Codec(acceleration=4)
    np.testing.assert_array_equal(back[...], data)
    back[:5] = 7
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path), path="z")[:5], 7)
