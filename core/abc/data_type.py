"""The data type contract: `DataType` (a Zarr data type over a numpy dtype: names, fill value
JSON, casting), and `data_type_from_native`, the registered data type of a numpy dtype (a
codec that makes arrays of another dtype, a struct's fields)."""

from __future__ import annotations

from ..data_type import DataType, data_type_from_native

__all__ = ["DataType", "data_type_from_native"]
