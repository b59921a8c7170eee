"""The example grid against zarrkit's conformance suite, and what is special about it."""

from __future__ import annotations

import numpy as np
import pytest
from zarrkit_example_offset_grid import OffsetChunkGrid
from zarrkit_testing import ChunkGridTests

import zarrkit


class TestOffsetGrid(ChunkGridTests):
    array_shapes = ((10, 7), (1, 1), (3, 12))
    bad_configurations = (
        {"chunk_shape": [4, 3], "offset": [4, 0]},  # offset as large as a chunk
        {"chunk_shape": [4, 3], "offset": [1]},
        {"chunk_shape": [0, 3], "offset": [0, 0]},
    )

    @pytest.fixture
    def grid(self):
        return OffsetChunkGrid((4, 3), (1, 2))


def test_chunks_sit_on_the_global_tiles(tmp_path):
    grid = {"name": "example.offset", "configuration": {"chunk_shape": [4], "offset": [3]}}
    a = zarrkit.create_array(tmp_path, shape=(10,), dtype="uint8", chunk_grid=grid, fill_value=255)
    a[...] = np.arange(10)
    # global tiles [0, 4), [4, 8), [8, 12) hold array positions [0, 1), [1, 5), [5, 9), [9, 10)
    assert sorted(p.name for p in (tmp_path / "c").iterdir()) == ["0", "1", "2", "3"]
    assert zarrkit.open_array(tmp_path)[...].tolist() == list(range(10))
