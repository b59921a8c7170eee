"""The example transformer against zarrkit's conformance suite, and as a user sees it."""

from __future__ import annotations

import numpy as np
import pytest
from zarrkit_example_checksum import ChecksumTransformer
from zarrkit_testing import StorageTransformerTests

import zarrkit as zk
from zarrkit.errors import ChunkDecodeError


class TestChecksum(StorageTransformerTests):
    bad_configurations = ({"algorithm": "md7"}, {"algorithm": 32}, {"level": 1})

    @pytest.fixture(params=["crc32", "adler32"])
    def transformer(self, request):
        return ChecksumTransformer(request.param)


def test_a_damaged_chunk_is_reported(tmp_path):
    a = zk.create_array(
        str(tmp_path),
        shape=(10,),
        chunks=(5,),
        dtype="uint8",
        storage_transformers=["example.checksum"],
    )
    a[...] = np.arange(10, dtype="uint8")
    chunk = tmp_path / "c" / "1"
    damaged = bytearray(chunk.read_bytes())
    damaged[0] ^= 0xFF
    chunk.write_bytes(bytes(damaged))
    np.testing.assert_array_equal(zk.open_array(str(tmp_path))[:5], np.arange(5))
    with pytest.raises(ChunkDecodeError, match="c/1"):
        zk.open_array(str(tmp_path))[...]
