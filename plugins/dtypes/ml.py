"""The machine-learning number formats of zarr-extensions, backed by the `ml_dtypes` package.

`bfloat16`, the `float8_*`, `float6_*` and `float4_*` formats, and the sub-byte integers
`int2`, `int4`, `uint2`, `uint4`. numpy knows them only through ml_dtypes, an optional
dependency (zarrkit's `ml` extra): this module imports without it, and using one of these
types without it is a `MetadataError` that names the extra, so an array of such a type fails
to open with an error saying what to install rather than an ImportError.

The bytes codec stores each element in its own byte(s): bfloat16 as a 2-byte value in the
codec's byte order, every other type as one byte (sub-byte values in its low bits). The
`packbits` codec stores only the meaningful bits (`bit_layout`).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from zarrkit.abc import V3, DataType, names
from zarrkit.errors import MetadataError

from . import scalars_json as sj
from .typestrings import no_configuration

EXTRA = "ml"


def ml_dtypes(name: str = "this data type") -> Any:
    """The ml_dtypes module, or a MetadataError naming the extra that installs it."""
    try:
        return importlib.import_module("ml_dtypes")
    except ImportError:
        raise MetadataError(
            f"data type {name!r} needs the `ml_dtypes` package, which is not installed; "
            f"install zarrkit's `{EXTRA}` extra: pip install 'zarrkit[{EXTRA}]'",
            field="data_type",
        ) from None


class _MLType(DataType):
    _name: ClassVar[str]
    #: 'f' (a float format), 'i' or 'u' (an integer format)
    _kind: ClassVar[str]
    #: bits that carry the value
    _bits: ClassVar[int]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "_name" in cls.__dict__:
            cls.names = names(cls._name)
            cls.numpy_keys = (cls._name,)

    @classmethod
    def from_json(cls, name: str, configuration: Mapping[str, Any], format: str = V3) -> DataType:
        no_configuration(name, configuration)
        ml_dtypes(name)  # refuse now, at open, naming the extra
        return cls()

    @property
    def native(self) -> np.dtype:
        native: np.dtype = np.dtype(getattr(ml_dtypes(self._name), self._name))
        return native

    @property
    def stored_size(self) -> int:
        return max(1, self._bits // 8)

    @property
    def numeric_kind(self) -> str:
        return self._kind

    @property
    def finite_max(self) -> float | None:
        return float(ml_dtypes().finfo(self.native).max) if self._kind == "f" else None

    @property
    def int_range(self) -> tuple[int, int] | None:
        if self._kind == "f":
            return None
        info = ml_dtypes().iinfo(self.native)
        return int(info.min), int(info.max)

    @property
    def has_endianness(self) -> bool:
        return self._bits > 8

    def encoded_dtype(self, endian: str | None) -> np.dtype:
        if not self.has_endianness or endian is None:
            return self.native
        return np.dtype(("<" if endian == "little" else ">") + f"u{self.stored_size}")

    def to_encoded(self, data: np.ndarray, endian: str | None) -> np.ndarray:
        target = self.encoded_dtype(endian)
        if target == self.native:
            return data
        return np.ascontiguousarray(data).view(f"u{self.stored_size}").astype(target)

    def from_encoded(self, stored: np.ndarray, endian: str | None) -> np.ndarray:
        if stored.dtype == self.native:
            return stored
        return stored.astype(f"=u{self.stored_size}").view(self.native)

    @property
    def bit_layout(self) -> tuple[int, int, bool] | None:
        return self._bits, 1, self._kind == "i"

    def default_fill(self) -> Any:
        return np.zeros((), dtype=self.native)[()]

    def fill_from_json(self, value: Any, format: str = V3) -> Any:
        if self._kind == "f":
            return sj.float_from_json(value, self.native, format=format, finite_max=self.finite_max)
        return sj.int_from_json(value, self.native, int_range=self.int_range)

    def fill_to_json(self, value: Any, format: str = V3) -> Any:
        if self._kind == "f":
            return sj.float_to_json(value, self.native, format)
        return int(np.asarray(value, dtype=self.native).astype(np.int64))


def _ml_type(class_name: str, name: str, kind: str, bits: int) -> type:
    doc = (
        f"`{name}`: a {bits}-bit {'float' if kind == 'f' else 'integer'} format (ml_dtypes.{name})."
    )
    return type(
        class_name,
        (_MLType,),
        {"_name": name, "_kind": kind, "_bits": bits, "__doc__": doc, "__module__": __name__},
    )


BFloat16 = _ml_type("BFloat16", "bfloat16", "f", 16)
Float8E3M4 = _ml_type("Float8E3M4", "float8_e3m4", "f", 8)
Float8E4M3 = _ml_type("Float8E4M3", "float8_e4m3", "f", 8)
Float8E4M3FN = _ml_type("Float8E4M3FN", "float8_e4m3fn", "f", 8)
Float8E4M3B11FNUZ = _ml_type("Float8E4M3B11FNUZ", "float8_e4m3b11fnuz", "f", 8)
Float8E4M3FNUZ = _ml_type("Float8E4M3FNUZ", "float8_e4m3fnuz", "f", 8)
Float8E5M2 = _ml_type("Float8E5M2", "float8_e5m2", "f", 8)
Float8E5M2FNUZ = _ml_type("Float8E5M2FNUZ", "float8_e5m2fnuz", "f", 8)
Float8E8M0FNU = _ml_type("Float8E8M0FNU", "float8_e8m0fnu", "f", 8)
Float4E2M1FN = _ml_type("Float4E2M1FN", "float4_e2m1fn", "f", 4)
Float6E2M3FN = _ml_type("Float6E2M3FN", "float6_e2m3fn", "f", 6)
Float6E3M2FN = _ml_type("Float6E3M2FN", "float6_e3m2fn", "f", 6)
Int2 = _ml_type("Int2", "int2", "i", 2)
Int4 = _ml_type("Int4", "int4", "i", 4)
UInt2 = _ml_type("UInt2", "uint2", "u", 2)
UInt4 = _ml_type("UInt4", "uint4", "u", 4)
