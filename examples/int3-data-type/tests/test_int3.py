"""The example package's own tests: zarrkit's conformance suite plus what is special here."""

from __future__ import annotations

import numpy as np
import pytest
from zarrkit_example_int3 import Int3
from zarrkit_testing import DataTypeTests

import zarrkit
from zarrkit.errors import MetadataError, ValueCastError


class TestInt3(DataTypeTests):
    fill_values = (-4, 3, -1)

    @pytest.fixture
    def data_type(self):
        return Int3()

    @pytest.fixture
    def sample(self):
        return np.array([-4, -3, -2, -1, 0, 1, 2, 3], dtype=np.int8)


@pytest.mark.parametrize("codec,size", [({"name": "bytes"}, 8), ({"name": "packbits"}, 3)])
def test_stored_size_per_codec(tmp_path, codec, size):
    a = zarrkit.create_array(
        tmp_path, shape=(8,), dtype="example.int3", chunks=(8,), codecs=[codec], fill_value=1
    )
    a[...] = np.arange(-4, 4)
    assert (tmp_path / "c" / "0").stat().st_size == size
    assert zarrkit.open_array(tmp_path)[...].tolist() == list(range(-4, 4))


def test_out_of_range_is_refused(tmp_path):
    a = zarrkit.create_array(tmp_path, shape=(2,), dtype="example.int3", chunks=(2,))
    with pytest.raises(ValueCastError, match="-4..3"):
        a[...] = [3, 4]
    with pytest.raises(MetadataError, match="fill_value"):
        zarrkit.create_array(tmp_path / "b", shape=(2,), dtype="example.int3", fill_value=9)
