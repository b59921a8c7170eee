"""The example layout against zarrkit's conformance suite, and the bytes it writes."""

from __future__ import annotations

import numpy as np
import pytest
from zarrkit_example_serpentine import SerpentineLayout
from zarrkit_testing import MemoryLayoutTests

import zarrkit


class TestSerpentine(MemoryLayoutTests):
    @pytest.fixture
    def layout(self):
        return SerpentineLayout()


def test_stored_bytes_are_in_scan_order(tmp_path):
    a = zarrkit.create_array(
        tmp_path,
        shape=(3, 4),
        chunks=(3, 4),
        dtype="<u2",
        zarr_format=2,
        order="example.serpentine",
        compressors=None,
    )
    a[...] = np.arange(12).reshape(3, 4)
    stored = np.frombuffer((tmp_path / "0.0").read_bytes(), dtype="<u2")
    assert stored.tolist() == [0, 1, 2, 3, 7, 6, 5, 4, 8, 9, 10, 11]
    assert zarrkit.open_array(tmp_path)[...].tolist() == np.arange(12).reshape(3, 4).tolist()
