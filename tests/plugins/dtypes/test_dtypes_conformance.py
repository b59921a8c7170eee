"""zarrkit's own new data types pass the conformance suite it ships for plugin authors."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from zarrkit_testing import DataTypeTests

from zarrkit.api import data_type_from_arg


def _suite(doc, values, fills=()):
    class Suite(DataTypeTests):
        fill_values = tuple(fills)

        @pytest.fixture
        def data_type(self):
            return data_type_from_arg(doc)

        @pytest.fixture
        def sample(self):
            return values

    return Suite


TestDateTime64 = _suite(
    {"name": "numpy.datetime64", "configuration": {"unit": "ms", "scale_factor": 5}},
    np.array(["NaT", "2024-01-01", "1970-01-01"], dtype="M8[5ms]"),
    ["NaT", 17],
)
TestString = _suite("string", np.array(["", "ä", "long " * 20], dtype=object), ["x"])
TestBytes = _suite("bytes", np.array([b"", b"\x00", b"abc"], dtype=object), ["AQI="])
TestUTF32 = _suite(
    {"name": "fixed_length_utf32", "configuration": {"length_bytes": 8}},
    np.array(["", "ab", "€"], dtype="U2"),
    ["ab"],
)
TestStruct = _suite(
    {
        "name": "struct",
        "configuration": {
            "fields": [{"name": "a", "data_type": "int32"}, {"name": "b", "data_type": "bfloat16"}]
        },
    },
    np.array([(1, 2.5), (-7, np.nan)], dtype=[("a", "i4"), ("b", ml_dtypes.bfloat16)]),
    [{"a": 3, "b": "NaN"}],
)
TestBFloat16 = _suite(
    "bfloat16",
    np.array([1, -np.inf, np.nan, 0.5], dtype=ml_dtypes.bfloat16),
    ["NaN", "0x7fc1", "-Infinity"],
)
TestInt4 = _suite("int4", np.array([-8, 7, 0], dtype=ml_dtypes.int4), [-8, 7])
TestRawBytes = _suite(
    {"name": "raw_bytes", "configuration": {"length_bytes": 3}},
    np.array([b"abc", b"\x00\x00\x01", b"\xff\xfe\xfd"], dtype="V3"),
    ["AQID"],
)
