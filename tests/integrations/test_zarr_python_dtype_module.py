"""zarr-python's `zarr.dtype` names (`zarrkit.dtype`) and data type reprs, the same calls made
on both libraries."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import zarrkit

zarr = pytest.importorskip("zarr")

pytestmark = pytest.mark.interop

LIBRARIES = pytest.mark.parametrize("zk", [zarr, zarrkit], ids=["zarr", "zarrkit"])


def test_a_data_type_from_numpy_answers_as_zarr_pythons_does() -> None:
    def script(zk: Any) -> tuple[Any, ...]:
        int8 = zk.dtype.Int8.from_native_dtype(np.dtype("int8"))
        return (
            int8.to_native_dtype(),
            int8.default_scalar(),
            int8.to_json(zarr_format=2),
            int8.to_json(zarr_format=3),
            int8.to_json_scalar(42, zarr_format=3),
            int8.from_json_scalar(42, zarr_format=3),
            repr(int8),
        )

    assert script(zarrkit) == script(zarr)


@pytest.mark.parametrize(
    "spec, zarr_format",
    [
        (np.dtype(">M8[10s]"), 2),
        (">M8[10s]", 2),
        ({"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 10}}, 3),
        ("<f4", 2),
        (np.dtype("u2"), 3),
    ],
)
def test_parse_dtype(spec: Any, zarr_format: int) -> None:
    theirs = zarr.dtype.parse_dtype(spec, zarr_format=zarr_format)
    ours = zarrkit.dtype.parse_dtype(spec, zarr_format=zarr_format)
    assert repr(ours) == repr(theirs)
    assert ours.to_json(zarr_format=zarr_format) == theirs.to_json(zarr_format=zarr_format)
    assert ours.to_native_dtype() == theirs.to_native_dtype()


@pytest.mark.parametrize(
    "dtype", ["i1", "u1", "bool", "<i4", "<u8", "<f2", "<c16", "M8[ms]", [("a", "f8"), ("b", "i8")]]
)
def test_data_types_print_as_zarr_pythons(dtype: Any) -> None:
    """(A v3 array of a big-endian numpy dtype differs: docs/zarr-python.md.)"""
    theirs = zarr.create_array({}, shape=(1,), dtype=dtype).metadata.data_type
    ours = zarrkit.create_array({}, shape=(1,), dtype=dtype).metadata.data_type
    assert repr(ours) == repr(theirs)


def test_difference_a_v3_data_type_has_no_byte_order() -> None:
    """zarr-python's v3 data type remembers the numpy dtype's byte order; zarrkit's v3 data type
    has none (the bytes codec has it), so it prints little."""
    theirs = zarr.create_array({}, shape=(1,), dtype=">u8")
    ours = zarrkit.create_array({}, shape=(1,), dtype=">u8")
    assert repr(theirs.metadata.data_type) == "UInt64(endianness='big')"
    assert repr(ours.metadata.data_type) == "UInt64(endianness='little')"
    assert ours.metadata.to_dict()["codecs"] == list(theirs.metadata.to_dict()["codecs"])


def test_a_zdtype_is_taken_as_dtype() -> None:
    made = zarrkit.dtype.DateTime64(endianness="little", scale_factor=10, unit="s")
    assert isinstance(made, zarrkit.dtype.DateTime64)
    a = zarrkit.create_array({}, shape=(2,), dtype=made)
    assert a.dtype == np.dtype("<M8[10s]")
    with pytest.raises(zarrkit.errors.ArgumentError, match="Int8 cannot hold numpy dtype int16"):
        zarrkit.dtype.Int8.from_native_dtype(np.dtype("int16"))
