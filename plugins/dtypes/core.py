"""The core numeric data types of Zarr v3: bool, signed/unsigned integers, floats, complex."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from zarrkit.data_type import DataType
from zarrkit.errors import MetadataError
from zarrkit.names import V3, names

from . import scalars_json as sj


class _Fixed(DataType):
    """A data type that is exactly one numpy dtype; subclasses only name it."""

    _numpy: ClassVar[str]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "_numpy" in cls.__dict__:
            dtype = np.dtype(cls._numpy)
            cls._dtype = dtype
            cls.numpy_keys = (f"{dtype.kind}{dtype.itemsize}",)
            cls.names = names(cls._numpy)

    @property
    def native(self) -> np.dtype:
        return self._dtype

    def fill_from_json(self, value: Any, format: str = V3) -> Any:
        raise NotImplementedError


class Bool(_Fixed):
    _numpy = "bool"

    def fill_from_json(self, value: Any, format: str = V3) -> Any:
        if not isinstance(value, bool):
            raise MetadataError(f"a bool fill value is true or false, got {value!r}", key="fill_value")
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
        return sj.float_from_json(value, self._dtype)

    def fill_to_json(self, value: Any, format: str = V3) -> Any:
        return sj.float_to_json(value, self._dtype)


class _Complex(_Fixed):
    def fill_from_json(self, value: Any, format: str = V3) -> Any:
        return sj.complex_from_json(value, self._dtype)

    def fill_to_json(self, value: Any, format: str = V3) -> Any:
        return sj.complex_to_json(value, self._dtype)

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
