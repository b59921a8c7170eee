"""Text and byte-string data types.

- `string`: variable-length UTF-8 (stored by the `vlen-utf8` codec). Arrays read as numpy's
  `StringDType()` (numpy >= 2; no `na_object`, as zarr-python 3 reads them), or as object
  arrays of `str` with the setting `string_dtype="object"` (`ZARRKIT_STRING_DTYPE=object`)
  and always with numpy 1. The choice is made when an array is opened or created. Written
  values may be any array of text (`<U`, StringDType, object of str); anything else (numbers,
  None) is refused rather than turned into its text.
- `bytes`: variable-length byte strings (`vlen-bytes`), object arrays of `bytes`; zarr-python 3
  writes it as `variable_length_bytes`, read here as an alias.
- `fixed_length_utf32`: numpy's `<U<n>` (n code points, 4 bytes each, zero-padded).
- `null_terminated_bytes`: numpy's `|S<n>`, zarr-python 3's v3 name for it (v2 `|S<n>`).

In v2, `string` and `bytes` are both `|O`: the format tells them apart by the object codec
(the codec's `implied_data_type`). Resolving numpy `object` is ambiguous for the same reason.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from zarrkit.abc import V2, V3, DataType, check_known_fields, config_value, names, settings
from zarrkit.errors import MetadataError, ValueCastError

from .typestrings import endian_of, endian_of_native, no_configuration, prefix


def _b64decode(value: str) -> bytes:
    try:
        return base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise MetadataError(f"{value!r} is not a base64 string", field="fill_value") from None


def _b64encode(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


class _Variable(DataType):
    """Elements are Python objects of one class, stored by an object codec."""

    _element: ClassVar[type]
    _codec: ClassVar[str]

    @classmethod
    def from_json(cls, name: str, configuration: Mapping[str, Any], format: str = V3) -> DataType:
        no_configuration(name, configuration)
        return cls()

    @property
    def native(self) -> np.dtype:
        return np.dtype(object)

    @property
    def stored_size(self) -> int | None:
        return None

    @property
    def has_endianness(self) -> bool:
        return False

    @property
    def bit_layout(self) -> tuple[int, int, bool] | None:
        return None

    def default_serializer(self) -> Any:
        return {"name": self._codec}

    def chunk_equals_fill(self, chunk: np.ndarray, fill: Any) -> bool:
        if chunk.size == 0:
            return True
        flat = chunk.reshape(-1)
        return all(type(x) is type(fill) and x == fill for x in flat)

    def cast_scalar(self, value: Any) -> Any:
        converted = self._convert(value)
        if converted is None:
            raise ValueCastError(
                f"{value!r} cannot be stored as {self.describe()}: expected "
                f"{self._element.__name__}"
            )
        return converted

    def _convert(self, value: Any) -> Any:
        raise NotImplementedError

    def fill_from_user(self, value: Any) -> Any:
        try:
            return self.cast_scalar(value)
        except ValueCastError as exc:
            raise MetadataError(str(exc), field="fill_value") from None


#: numpy's variable-width string dtype (numpy >= 2), None before it
_STRING_DTYPE: np.dtype | None = (
    np.dtype(np.dtypes.StringDType()) if hasattr(np.dtypes, "StringDType") else None
)


def _strings_read_as() -> np.dtype:
    """The numpy dtype string arrays read as now (the `string_dtype` setting)."""
    if _STRING_DTYPE is None or settings().string_dtype == "object":
        return np.dtype(object)
    return _STRING_DTYPE


class VariableString(_Variable):
    names = names("string", v2="|O")
    numpy_keys = ("O", "T")
    _element = str
    _codec = "vlen-utf8"

    def __init__(self) -> None:
        self._native = _strings_read_as()

    @property
    def native(self) -> np.dtype:
        return self._native

    def cast_array(self, source: np.ndarray) -> np.ndarray:
        """Text of any numpy form; an object array only when every element is a `str` (numpy
        would write 5 as '5' and None as 'None')."""
        if source.dtype.kind == "O":
            for i, value in enumerate(source.reshape(-1)):
                if not isinstance(value, str):
                    raise ValueCastError(
                        f"element {i} of the values is {value!r}, not str: it cannot be "
                        f"stored as {self.describe()}"
                    )
        elif source.dtype.kind not in "UT":
            raise ValueCastError(
                f"values of dtype {source.dtype} cannot be stored as {self.describe()}: "
                f"expected text (str, numpy U or StringDType), not str"
            )
        return source.astype(self._native)

    def chunk_equals_fill(self, chunk: np.ndarray, fill: Any) -> bool:
        if chunk.dtype.kind == "T":  # every element is a str: numpy compares them at once
            return bool(np.all(chunk == fill))
        return super().chunk_equals_fill(chunk, fill)

    @classmethod
    def from_native(cls, dtype: np.dtype) -> DataType:
        return cls()

    def default_fill(self) -> Any:
        return ""

    def _convert(self, value: Any) -> str | None:
        return str(value) if isinstance(value, str) else None

    def fill_from_json(self, value: Any, format: str = V3) -> Any:
        if format == V2 and isinstance(value, (int, float)) and not isinstance(value, bool):
            # zarr-python 2 wrote 0 (its default for every dtype) for object arrays too;
            # zarr-python 3 reads a number as its text, and so does this
            return str(value)
        if not isinstance(value, str):
            raise MetadataError(
                f"the fill value of 'string' is a string, got {value!r}", field="fill_value"
            )
        return value

    def fill_to_json(self, value: Any, format: str = V3) -> Any:
        return str(value)


class VariableBytes(_Variable):
    names = names("bytes", aliases=["variable_length_bytes"], v2="|O")
    numpy_keys = ("O",)
    _element = bytes
    _codec = "vlen-bytes"

    def default_fill(self) -> Any:
        return b""

    def _convert(self, value: Any) -> bytes | None:
        return bytes(value) if isinstance(value, (bytes, bytearray, memoryview)) else None

    def fill_from_json(self, value: Any, format: str = V3) -> Any:
        if isinstance(value, str):
            return _b64decode(value)
        if format == V2 and value == 0 and type(value) in (int, float):
            # zarr-python 2's default fill for every dtype, object arrays included: it chose
            # nothing, so the type's own default (zarr-python 3 refuses it; 2 gave int 0s)
            return self.default_fill()
        if isinstance(value, list) and all(
            isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 255 for v in value
        ):
            return bytes(value)
        raise MetadataError(
            f"the fill value of 'bytes' is a base64 string or a list of byte values, got {value!r}",
            field="fill_value",
        )

    def fill_to_json(self, value: Any, format: str = V3) -> Any:
        return _b64encode(bytes(value))


class FixedLengthUTF32(DataType):
    names = names("fixed_length_utf32", v2_pattern=r"[<>]U[0-9]+")
    numpy_keys = ("U",)

    def __init__(self, length: int):
        given: object = length  # from JSON or a user: checked, not trusted
        if isinstance(given, bool) or not isinstance(given, int) or given < 1:
            raise MetadataError(
                f"fixed_length_utf32 holds at least one code point, got {length!r}",
                field="configuration.length_bytes",
            )
        self.length = length

    @classmethod
    def from_json(cls, name: str, configuration: Mapping[str, Any], format: str = V3) -> DataType:
        if format == V3:
            owner = "fixed_length_utf32"
            check_known_fields(configuration, {"length_bytes"}, owner=owner)
            length_bytes = config_value(configuration, "length_bytes", int, owner=owner)
            if length_bytes % 4:
                raise MetadataError(
                    f"{owner}: length_bytes must be a multiple of 4, got {length_bytes}",
                    field="configuration.length_bytes",
                )
            return cls(length_bytes // 4)
        no_configuration(name, configuration)
        return cls(int(name[2:])).with_endian(endian_of(name))

    @classmethod
    def from_native(cls, dtype: np.dtype) -> DataType:
        if dtype.itemsize == 0:  # numpy `str` without a length: zarr-python's reading too
            return VariableString()
        return cls(dtype.itemsize // 4).with_endian(endian_of_native(dtype))

    def configuration(self, format: str = V3) -> dict[str, Any]:
        return {"length_bytes": 4 * self.length} if format == V3 else {}

    def written_name(self, format: str = V3) -> str:
        if format == V3:
            return super().written_name(format)
        return f"{prefix(self.endian, True)}U{self.length}"

    @property
    def native(self) -> np.dtype:
        return np.dtype(f"U{self.length}")

    @property
    def has_endianness(self) -> bool:
        return True  # 4-byte code units: the bytes codec must say which order

    @property
    def bit_layout(self) -> tuple[int, int, bool] | None:
        return None

    def default_fill(self) -> Any:
        return np.str_("")

    def fill_from_json(self, value: Any, format: str = V3) -> Any:
        if not isinstance(value, str) or len(value) > self.length:
            raise MetadataError(
                f"the fill value of {self.describe()} is a string of at most "
                f"{self.length} code points, got {value!r}",
                field="fill_value",
            )
        return np.str_(value)

    def fill_to_json(self, value: Any, format: str = V3) -> Any:
        return str(value)

    def fill_from_user(self, value: Any) -> Any:
        return self.fill_from_json(value if not isinstance(value, np.str_) else str(value))


class NullTerminatedBytes(DataType):
    """numpy `|S<n>`: n bytes, trailing NULs dropped on read (numpy's own rule)."""

    names = names("null_terminated_bytes", v2_pattern=r"\|S[0-9]+")
    numpy_keys = ("S",)

    def __init__(self, length: int):
        given: object = length  # from JSON or a user: checked, not trusted
        if isinstance(given, bool) or not isinstance(given, int) or given < 1:
            raise MetadataError(
                f"null_terminated_bytes holds at least one byte, got {length!r}",
                field="configuration.length_bytes",
            )
        self.length = length

    @classmethod
    def from_json(cls, name: str, configuration: Mapping[str, Any], format: str = V3) -> DataType:
        if format == V3:
            owner = "null_terminated_bytes"
            check_known_fields(configuration, {"length_bytes"}, owner=owner)
            return cls(config_value(configuration, "length_bytes", int, owner=owner))
        no_configuration(name, configuration)
        return cls(int(name[2:]))

    @classmethod
    def from_native(cls, dtype: np.dtype) -> DataType:
        if dtype.itemsize == 0:
            return VariableBytes()
        return cls(dtype.itemsize)

    def configuration(self, format: str = V3) -> dict[str, Any]:
        return {"length_bytes": self.length} if format == V3 else {}

    def written_name(self, format: str = V3) -> str:
        return super().written_name(format) if format == V3 else f"|S{self.length}"

    @property
    def native(self) -> np.dtype:
        return np.dtype(f"S{self.length}")

    @property
    def bit_layout(self) -> tuple[int, int, bool] | None:
        return None

    def default_fill(self) -> Any:
        return np.bytes_(b"")

    def fill_from_json(self, value: Any, format: str = V3) -> Any:
        if not isinstance(value, str):
            raise MetadataError(
                f"the fill value of {self.describe()} is a base64 string, got {value!r}",
                field="fill_value",
            )
        raw = _b64decode(value)
        if len(raw) > self.length:
            raise MetadataError(
                f"fill value of {len(raw)} bytes is longer than {self.describe()}",
                field="fill_value",
            )
        return np.bytes_(raw)

    def fill_to_json(self, value: Any, format: str = V3) -> Any:
        return _b64encode(bytes(np.asarray(value, dtype=self.native)[()]))  # NULs stripped

    def fill_from_user(self, value: Any) -> Any:
        if isinstance(value, (bytes, bytearray)):
            if len(value) > self.length:
                raise MetadataError(
                    f"fill value of {len(value)} bytes is longer than {self.describe()}",
                    field="fill_value",
                )
            return np.bytes_(bytes(value))
        return super().fill_from_user(value)
