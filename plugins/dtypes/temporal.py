"""`numpy.datetime64` and `numpy.timedelta64` (zarr-extensions): numpy's time types.

v3 names the type and configures `unit` and `scale_factor`; v2 and the 2020 draft write
numpy's typestring (`<M8[10s]`, `>m8[ns]`). Values are 64-bit integers counting `scale_factor`
units, with -2**63 meaning NaT. The fill value is an integer or "NaT" in v3 (NaT is written
"NaT"), and an integer in v2, as zarr-python writes it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from zarrkit.abc import V2, V3, DataType, check_known_fields, config_value, names
from zarrkit.errors import MetadataError, ValueCastError

from .typestrings import endian_of, endian_of_native, prefix

UNITS = ("Y", "M", "W", "D", "h", "m", "s", "ms", "us", "μs", "ns", "ps", "fs", "as", "generic")
NAT = -(2**63)
_MAX_SCALE = 2**31 - 1


def _typestring_pattern(code: str) -> str:
    return rf"[<>]{code}8(\[[0-9]*[A-Za-zμ]+\])?"


class _Temporal(DataType):
    _numpy_name: ClassVar[str]
    _code: ClassVar[str]

    def __init__(self, unit: str = "generic", scale_factor: int = 1):
        if unit not in UNITS:
            raise MetadataError(
                f"{self._zarr_name()}: unit must be one of {list(UNITS)}, got {unit!r}",
                field="configuration.unit",
            )
        given: object = scale_factor  # from JSON or a user: checked, not trusted
        if isinstance(given, bool) or not isinstance(given, int) or not 1 <= given <= _MAX_SCALE:
            raise MetadataError(
                f"{self._zarr_name()}: scale_factor must be an integer in "
                f"1..{_MAX_SCALE}, got {scale_factor!r}",
                field="configuration.scale_factor",
            )
        self.unit = unit
        self.scale_factor = scale_factor

    @classmethod
    def _zarr_name(cls) -> str:
        written = cls.names.written(V3)
        assert written is not None  # every temporal type has a v3 name (names() below)
        return written

    # -- JSON of the type --------------------------------------------------------------------
    @classmethod
    def from_json(cls, name: str, configuration: Mapping[str, Any], format: str = V3) -> DataType:
        if format == V3:
            owner = cls._zarr_name()
            check_known_fields(configuration, {"unit", "scale_factor"}, owner=owner)
            return cls(
                config_value(configuration, "unit", str, owner=owner),
                config_value(configuration, "scale_factor", int, owner=owner),
            )
        if configuration:
            raise MetadataError(f"{name!r} takes no configuration", field="configuration")
        try:
            dtype = np.dtype(name)
        except TypeError:
            raise MetadataError(
                f"{name!r} is not a numpy {cls._numpy_name} typestring", field="data_type"
            ) from None
        return cls.from_native(dtype).with_endian(endian_of(name))

    @classmethod
    def from_native(cls, dtype: np.dtype) -> DataType:
        unit, count = np.datetime_data(dtype)
        return cls(unit, int(count)).with_endian(endian_of_native(dtype))

    def configuration(self, format: str = V3) -> dict[str, Any]:
        return {"unit": self.unit, "scale_factor": self.scale_factor} if format == V3 else {}

    def __repr__(self) -> str:
        # zarr-python's: `DateTime64(endianness='big', scale_factor=10, unit='s')`
        return (
            f"{type(self).__name__}(endianness={self.endian or 'little'!r}, "
            f"scale_factor={self.scale_factor}, unit={self.unit!r})"
        )

    def written_name(self, format: str = V3) -> str:
        if format == V3:
            return super().written_name(format)
        unit = "us" if self.unit == "μs" else self.unit
        if unit == "generic":
            suffix = "" if self.scale_factor == 1 else f"[{self.scale_factor}generic]"
        else:
            suffix = f"[{'' if self.scale_factor == 1 else self.scale_factor}{unit}]"
        return f"{prefix(self.endian, True)}{self._code}8{suffix}"

    # -- numpy -------------------------------------------------------------------------------
    @property
    def native(self) -> np.dtype:
        if self.unit == "generic":
            return np.dtype(self._numpy_name)
        unit = "us" if self.unit == "μs" else self.unit
        return np.dtype(f"{self._numpy_name}[{self.scale_factor}{unit}]")

    @property
    def has_endianness(self) -> bool:
        return True

    @property
    def bit_layout(self) -> tuple[int, int, bool] | None:
        return None

    # -- fill values -------------------------------------------------------------------------
    def default_fill(self) -> Any:
        return self._from_int(NAT)

    def _from_int(self, count: int) -> Any:
        return np.array([count], dtype=np.int64).view(self.native)[0]

    def fill_from_json(self, value: Any, format: str = V3) -> Any:
        if value == "NaT":
            return self._from_int(NAT)
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or not (NAT <= value < 2**63):
            raise MetadataError(
                f"the fill value of {self.describe()} is a 64-bit integer or 'NaT', got {value!r}",
                field="fill_value",
            )
        return self._from_int(value)

    def fill_to_json(self, value: Any, format: str = V3) -> Any:
        count = int(np.asarray(value, dtype=self.native).reshape(1).view(np.int64)[0])
        if count == NAT and format != V2:
            return "NaT"
        return count

    def fill_from_user(self, value: Any) -> Any:
        if isinstance(value, str) and value != "NaT" and not re.fullmatch(r"-?\d+", value):
            return self.cast_scalar(value)  # an ISO date: '2024-01-01'
        if isinstance(value, int) and not isinstance(value, bool):
            return self.fill_from_json(value)
        return super().fill_from_user(value)

    def cast_scalar(self, value: Any) -> Any:
        if isinstance(value, str) or (isinstance(value, np.generic) and value.dtype.kind in "mM"):
            try:
                parsed = np.asarray(value)
                if parsed.dtype.kind in "OU":
                    parsed = np.asarray(value, dtype=self._numpy_name)
            except ValueError as exc:
                raise ValueCastError(f"{value!r} is not a {self._numpy_name}: {exc}") from None
            if parsed.dtype.kind != self._code:
                raise ValueCastError(f"{value!r} cannot be stored as {self.describe()}")
            return super().cast_scalar(parsed)
        return super().cast_scalar(value)


class DateTime64(_Temporal):
    names = names(
        "numpy.datetime64",
        v2_pattern=_typestring_pattern("M"),
        draft_pattern=_typestring_pattern("M"),
    )
    numpy_keys = ("M",)
    _numpy_name = "datetime64"
    _code = "M"


class TimeDelta64(_Temporal):
    names = names(
        "numpy.timedelta64",
        v2_pattern=_typestring_pattern("m"),
        draft_pattern=_typestring_pattern("m"),
    )
    numpy_keys = ("m",)
    _numpy_name = "timedelta64"
    _code = "m"
