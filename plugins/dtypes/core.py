"""The core numeric data types of Zarr v3: bool, signed/unsigned integers, floats, complex.

Each is also spelled as numpy typestrings in v2 (`|b1`, `<i2`/`>i2`, `<f8`/`>f8`, `<c16`) and in
the 2020 draft (`bool`, `i1`, `u1`, `<i2`/`>i2`, ...); an instance built from a typestring
remembers its byte order and writes the same name back.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from zarrkit.abc import V3, DataType, names
from zarrkit.errors import MetadataError

from . import scalars_json as sj
from .typestrings import endian_of, endian_of_native, no_configuration, prefix

#: 2020 draft names of the one-byte types (the multi-byte ones are typestrings as in v2)
_DRAFT_ONE_BYTE = {"b1": "bool", "i1": "i1", "u1": "u1"}


class _Fixed(DataType):
    """A data type that is exactly one numpy dtype; subclasses only name it."""

    _numpy: ClassVar[str]
    _dtype: ClassVar[np.dtype]
    _code: ClassVar[str]
    #: a v3 name other than the numpy name; such a type has no v2/draft name nor numpy key
    _zarr_name: ClassVar[str | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "_numpy" in cls.__dict__:
            dtype = np.dtype(cls._numpy)
            cls._dtype = dtype
            cls._code = code = dtype.str[1:]
            if cls._zarr_name:
                cls.numpy_keys = ()
                cls.names = names(cls._zarr_name)
            elif dtype.itemsize == 1:
                cls.numpy_keys = (f"{dtype.kind}{dtype.itemsize}",)
                cls.names = names(cls._numpy, v2=f"|{code}", draft=_DRAFT_ONE_BYTE[code])
            else:
                cls.numpy_keys = (f"{dtype.kind}{dtype.itemsize}",)
                cls.names = names(
                    cls._numpy,
                    v2=f"<{code}",
                    v2_aliases=[f">{code}"],
                    draft=f"<{code}",
                    draft_aliases=[f">{code}"],
                )

    @classmethod
    def from_json(cls, name: str, configuration: Mapping[str, Any], format: str = V3) -> DataType:
        no_configuration(name, configuration)
        out = cls()
        return out if format == V3 else out.with_endian(endian_of(name))

    @classmethod
    def from_native(cls, dtype: np.dtype) -> DataType:
        return cls().with_endian(endian_of_native(dtype))

    def written_name(self, format: str = V3) -> str:
        if format == V3 or self._dtype.itemsize == 1:
            return super().written_name(format)
        return prefix(self.endian, True) + self._code

    @property
    def native(self) -> np.dtype:
        return self._dtype

    def __repr__(self) -> str:
        # zarr-python's: `Int32(endianness='little')`, `UInt8()` (v3 has no byte order: little)
        if self._dtype.itemsize == 1 or type(self).__name__ == "Bool":
            return f"{type(self).__name__}()"
        return f"{type(self).__name__}(endianness={self.endian or 'little'!r})"

    def fill_from_json(self, value: Any, format: str = V3) -> Any:
        raise NotImplementedError


class Bool(_Fixed):
    _numpy = "bool"

    def fill_from_json(self, value: Any, format: str = V3) -> Any:
        if not isinstance(value, bool):
            raise MetadataError(
                f"a bool fill value is true or false, got {value!r}", field="fill_value"
            )
        return np.bool_(value)

    def fill_to_json(self, value: Any, format: str = V3) -> Any:
        return bool(value)


class _Integer(_Fixed):
    def fill_from_json(self, value: Any, format: str = V3) -> Any:
        return sj.int_from_json(value, self._dtype)

    def fill_to_json(self, value: Any, format: str = V3) -> Any:
        return int(value)


class _Float(_Fixed):
    def fill_from_json(self, value: Any, format: str = V3) -> Any:
        return sj.float_from_json(value, self._dtype, format=format)

    def fill_to_json(self, value: Any, format: str = V3) -> Any:
        return sj.float_to_json(value, self._dtype, format)


class _Complex(_Fixed):
    def fill_from_json(self, value: Any, format: str = V3) -> Any:
        return sj.complex_from_json(value, self._dtype, format=format)

    def fill_to_json(self, value: Any, format: str = V3) -> Any:
        return sj.complex_to_json(value, self._dtype, format)

    def fill_from_user(self, value: Any) -> Any:
        if isinstance(value, (list, tuple)):
            return self.fill_from_json(list(value))
        return super().fill_from_user(value)


class Int8(_Integer):
    _numpy = "int8"


class Int16(_Integer):
    _numpy = "int16"


class Int32(_Integer):
    _numpy = "int32"


class Int64(_Integer):
    _numpy = "int64"


class UInt8(_Integer):
    _numpy = "uint8"


class UInt16(_Integer):
    _numpy = "uint16"


class UInt32(_Integer):
    _numpy = "uint32"


class UInt64(_Integer):
    _numpy = "uint64"


class Float16(_Float):
    _numpy = "float16"


class Float32(_Float):
    _numpy = "float32"


class Float64(_Float):
    _numpy = "float64"


class Complex64(_Complex):
    _numpy = "complex64"


class Complex128(_Complex):
    _numpy = "complex128"


class ComplexFloat32(_Complex):
    """`complex_float32` (zarr-extensions): complex64's values under another name. It claims
    no numpy key, so numpy complex64 still resolves to `complex64`."""

    _numpy = "complex64"
    _zarr_name = "complex_float32"


class ComplexFloat64(_Complex):
    """`complex_float64`: complex128's values under the zarr-extensions name."""

    _numpy = "complex128"
    _zarr_name = "complex_float64"
