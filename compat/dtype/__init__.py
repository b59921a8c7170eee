"""zarr-python 3's `zarr.dtype` names, so its code names data types unchanged:

    int8 = zarrkit.dtype.Int8.from_native_dtype(np.dtype("int8"))
    int8.to_json(zarr_format=3)                  # 'int8'
    zarrkit.dtype.parse_dtype(">M8[10s]", zarr_format=2)
    zarrkit.dtype.DateTime64(endianness="big", scale_factor=10, unit="s")

Each name is a face over zarrkit's data type plugin of that name: what it makes is a
`ZDType`, zarr-python's methods over the plugin's data type (its `data_type`), which prints as
zarr-python's does and is taken wherever zarrkit takes a data type (as `dtype=`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from zarrkit.abc.data_type import DataType
from zarrkit.api.creation.arguments import data_type_from_arg
from zarrkit.errors import ArgumentError
from zarrkit.helpers import data_type_from_native

__all__ = [
    "Bool",
    "Complex64",
    "Complex128",
    "DateTime64",
    "Float16",
    "Float32",
    "Float64",
    "Int8",
    "Int16",
    "Int32",
    "Int64",
    "TimeDelta64",
    "UInt8",
    "UInt16",
    "UInt32",
    "UInt64",
    "ZDType",
    "parse_dtype",
]


def _format(zarr_format: int) -> str:
    if zarr_format not in (2, 3):
        raise ArgumentError(f"zarr_format must be 2 or 3, got {zarr_format!r}")
    return "v3" if zarr_format == 3 else "v2"


class ZDType:
    """zarr-python's data type methods over a zarrkit data type (`data_type`)."""

    def __init__(self, data_type: DataType) -> None:
        self.data_type = data_type

    @classmethod
    def from_native_dtype(cls, dtype: Any) -> ZDType:
        """The data type of numpy dtype `dtype` (a `zarrkit.errors` error when none fits)."""
        found = data_type_from_native(np.dtype(dtype))
        if cls is not ZDType and type(found).__name__ != cls.__name__:
            raise ArgumentError(f"{cls.__name__} cannot hold numpy dtype {np.dtype(dtype)}")
        return ZDType(found)

    def to_native_dtype(self) -> np.dtype:
        """The numpy dtype, in the byte order the data type remembers (little when none)."""
        native = self.data_type.native
        return native.newbyteorder(">") if self.data_type.endian == "big" else native

    def default_scalar(self) -> Any:
        return self.data_type.default_fill()

    def to_json(self, zarr_format: int) -> Any:
        """The data type's metadata JSON; in v2, zarr-python's `{'name': ..., 'object_codec_id': ...}`."""
        json = self.data_type.to_json(_format(zarr_format))
        return json if zarr_format == 3 else {"name": json, "object_codec_id": None}

    def to_json_scalar(self, value: Any, *, zarr_format: int) -> Any:
        return self.data_type.fill_to_json(value, _format(zarr_format))

    def from_json_scalar(self, value: Any, *, zarr_format: int) -> Any:
        return self.data_type.fill_from_json(value, _format(zarr_format))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ZDType):
            return self.data_type == other.data_type
        return self.data_type == other

    def __hash__(self) -> int:
        return hash(self.data_type)

    def __repr__(self) -> str:
        return repr(self.data_type)


class _Face(type):
    """A zarr-python data type class: calling it makes the plugin's data type as a `ZDType`."""

    plugin: str

    def __call__(cls, *args: Any, endianness: str | None = None, **kwargs: Any) -> ZDType:
        made: DataType = data_type_from_arg({"name": cls.plugin, "configuration": kwargs})
        if args:
            raise ArgumentError(f"{cls.__name__} takes keyword arguments only")
        return ZDType(made.with_endian(endianness) if endianness else made)

    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, ZDType) and type(obj.data_type).__name__ == cls.__name__


def _face(name: str, plugin: str) -> type:
    return _Face(name, (ZDType,), {"plugin": plugin, "__doc__": f"zarr-python's `{name}`."})


Bool = _face("Bool", "bool")
Int8, Int16, Int32, Int64 = (_face(f"Int{b}", f"int{b}") for b in (8, 16, 32, 64))
UInt8, UInt16, UInt32, UInt64 = (_face(f"UInt{b}", f"uint{b}") for b in (8, 16, 32, 64))
Float16, Float32, Float64 = (_face(f"Float{b}", f"float{b}") for b in (16, 32, 64))
Complex64, Complex128 = (_face(f"Complex{b}", f"complex{b}") for b in (64, 128))
DateTime64 = _face("DateTime64", "numpy.datetime64")
TimeDelta64 = _face("TimeDelta64", "numpy.timedelta64")


def parse_dtype(dtype_spec: Any, *, zarr_format: int) -> ZDType:
    """The data type `dtype_spec` names: a numpy dtype or its string, a data type's JSON in
    `zarr_format` (2 or 3), or a data type already (returned as it is). Raises
    `zarrkit.errors.UnknownExtensionError` for a name no plugin has."""
    if isinstance(dtype_spec, ZDType):
        return dtype_spec
    fmt = _format(zarr_format)
    if isinstance(dtype_spec, (str, Mapping)):
        return ZDType(data_type_from_arg(dtype_spec, fmt))
    return ZDType(data_type_from_native(np.dtype(dtype_spec)))
