"""The example key encoding against zarrkit's conformance suite, and what it is for."""

from __future__ import annotations

import numpy as np
import pytest
from zarrkit_example_padded_keys import PaddedChunkKeyEncoding
from zarrkit_testing import ChunkKeyEncodingTests

import zarrkit


@pytest.mark.parametrize("separator", ["/", "."])
class TestPaddedKeys(ChunkKeyEncodingTests):
    bad_configurations = ({"width": 0}, {"width": "4"}, {"separator": "-"})

    @pytest.fixture
    def key_encoding(self, separator):
        return PaddedChunkKeyEncoding(width=3, separator=separator)


def test_listing_order_is_chunk_order(tmp_path):
    encoding = {"name": "example.padded", "configuration": {"width": 2, "separator": "."}}
    a = zarrkit.create_array(
        tmp_path, shape=(12,), chunks=(1,), dtype="uint8", chunk_key_encoding=encoding
    )
    a[...] = np.arange(1, 13)
    listed = sorted(p.name for p in tmp_path.iterdir() if p.name != "zarr.json")
    assert listed == [f"c.{i:02d}" for i in range(12)]
    assert zarrkit.open_array(tmp_path)[...].tolist() == list(range(1, 13))
