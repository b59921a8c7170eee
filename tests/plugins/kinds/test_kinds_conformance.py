"""Every first-party chunk grid, chunk key encoding and memory layout through the conformance
suites zarrkit ships for plugin authors (`zarrkit_testing`)."""

from __future__ import annotations

import pytest
from zarrkit_testing import ChunkGridTests, ChunkKeyEncodingTests, MemoryLayoutTests

from zarrkit.abc import V2, V3
from zarrkit.helpers import extension_from_json


def _regular(chunk_shape, shapes):
    class Suite(ChunkGridTests):
        array_shapes = shapes
        bad_configurations = ({"chunk_shape": [0] * len(chunk_shape)}, {"chunk_shape": "4"}, {})

        @pytest.fixture
        def grid(self):
            doc = {"name": "regular", "configuration": {"chunk_shape": list(chunk_shape)}}
            return extension_from_json("chunk_grid", doc, V3, key="chunk_grid")

    return Suite


TestRegularGrid1d = _regular((4,), ((10,), (4,), (1,)))
TestRegularGrid2d = _regular((3, 2), ((10, 7), (3, 2), (1, 1)))
TestRegularGrid3d = _regular((4, 1, 5), ((4, 5, 6), (9, 2, 11)))


class TestRectilinearGrid(ChunkGridTests):
    """Irregular edges in one dimension, a run-length run and a bare step in the others."""

    array_shapes = ((9, 6, 5), (7, 4, 3), (1, 1, 1))
    bad_configurations = (
        {"kind": "inline", "chunk_shapes": [[0, 3], 2, 5]},
        {"kind": "inline", "chunk_shapes": "4"},
        {"kind": "other", "chunk_shapes": [2, 2, 2]},
        {},
    )

    @pytest.fixture
    def grid(self):
        shapes = [[2, 3, 4], [[2, 3]], 5]
        doc = {"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": shapes}}
        return extension_from_json("chunk_grid", doc, V3, key="chunk_grid")


@pytest.mark.parametrize("separator", ["/", "."])
class TestDefaultKeyEncoding(ChunkKeyEncodingTests):
    bad_configurations = ({"separator": ":"}, {"separator": 1})

    @pytest.fixture
    def key_encoding(self, separator):
        doc = {"name": "default", "configuration": {"separator": separator}}
        return extension_from_json("chunk_key_encoding", doc, V3, key="k")


@pytest.mark.parametrize("separator", [".", "/"])
class TestV2KeyEncoding(ChunkKeyEncodingTests):
    bad_configurations = ({"separator": ""},)

    @pytest.fixture
    def key_encoding(self, separator):
        doc = {"name": "v2", "configuration": {"separator": separator}}
        return extension_from_json("chunk_key_encoding", doc, V3, key="k")


@pytest.mark.parametrize("order", ["C", "F"])
class TestOrderLayouts(MemoryLayoutTests):
    @pytest.fixture
    def layout(self, order):
        return extension_from_json("memory_layout", order, V2, key="order")
