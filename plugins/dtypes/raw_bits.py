"""Raw bits `r<N>` (N a positive multiple of 8): opaque fixed-size values, numpy void `V<N/8>`.

One class serves the whole family through a name pattern; its fill value is a list of N/8
byte values. In v2 the family is numpy's void typestrings `|V<n>` (what zarr-python 3 writes
for raw bytes, fill value base64); the 2020 draft names it `r8`, `r16`, ... as v3 does.

`raw_bytes` is zarr-python 3's v3 name for the same values: `{"name": "raw_bytes",
"configuration": {"length_bytes": n}}`, fill value base64 of the n bytes. It is read and
written as zarr-python writes it (numpy `V<n>` still resolves to `r<8n>`, the registered name;
ask for `raw_bytes` by name to write it).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from zarrkit.abc import V2, V3, DataType, check_known_fields, config_value, names
from zarrkit.errors import MetadataError

_PATTERN = r"r([1-9][0-9]*)"
_V2_PATTERN = r"\|V([1-9][0-9]*)"


class RawBits(DataType):
    names = names(pattern=_PATTERN, draft_pattern=_PATTERN, v2_pattern=_V2_PATTERN)
    numpy_keys: ClassVar[tuple[str, ...]] = ("V",)

    def __init__(self, bits: int):
        if bits <= 0 or bits % 8:
            raise MetadataError(
                f"raw bits size must be a positive multiple of 8, got r{bits}", field="data_type"
            )
        self.bits = bits

    @classmethod
    def from_json(cls, name: str, configuration: Mapping[str, Any], format: str = V3) -> RawBits:
        match = re.fullmatch(_V2_PATTERN if format == V2 else _PATTERN, name)
        if match is None or configuration:
            raise MetadataError(f"{name!r} is not a raw bits data type", field="data_type")
        bits = int(match.group(1))
        return cls(8 * bits if format == V2 else bits)

    @classmethod
    def from_native(cls, dtype: np.dtype) -> RawBits:
        return cls(dtype.itemsize * 8)

    def written_name(self, format: str = V3) -> str:
        return f"|V{self.bits // 8}" if format == V2 else f"r{self.bits}"

    @property
    def native(self) -> np.dtype:
        return np.dtype(f"V{self.bits // 8}")

    def default_fill(self) -> Any:
        return np.zeros((), dtype=self.native)[()]

    def fill_from_json(self, value: Any, format: str = V3) -> Any:
        size = self.bits // 8
        if isinstance(value, str):  # base64, as v2 writes it
            try:
                raw = base64.b64decode(value.encode("ascii"), validate=True)
            except (binascii.Error, UnicodeEncodeError):
                raise MetadataError(f"{value!r} is not base64", field="fill_value") from None
            value = list(raw)
        if (
            not isinstance(value, list)
            or len(value) != size
            or not all(
                isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 255 for v in value
            )
        ):
            raise MetadataError(
                f"the fill value of r{self.bits} is a list of {size} byte values (0-255), got {value!r}",
                field="fill_value",
            )
        return np.frombuffer(bytes(value), dtype=self.native)[0]

    def fill_to_json(self, value: Any, format: str = V3) -> Any:
        raw = np.asarray(value, dtype=self.native).tobytes()
        return base64.b64encode(raw).decode("ascii") if format == V2 else list(raw)

    def fill_from_user(self, value: Any) -> Any:
        if isinstance(value, (bytes, bytearray)):
            return self.fill_from_json(list(value))
        if isinstance(value, np.void):
            return self.fill_from_json(list(value.tobytes()))
        if isinstance(value, int) and value == 0:
            return self.default_fill()
        return self.fill_from_json(value)

    def cast_scalar(self, value: Any) -> Any:
        return self.fill_from_user(value)


class RawBytes(RawBits):
    """zarr-python 3's `raw_bytes`: the bytes of `r<8n>` under its own name and fill JSON."""

    names = names("raw_bytes")
    numpy_keys = ()  # numpy V<n> stays `r<8n>`

    @classmethod
    def from_json(cls, name: str, configuration: Mapping[str, Any], format: str = V3) -> RawBytes:
        owner = "raw_bytes data type"
        check_known_fields(configuration, {"length_bytes"}, owner=owner)
        length = config_value(configuration, "length_bytes", int, owner=owner)
        if isinstance(length, bool) or length < 1:
            raise MetadataError(
                f"{owner}: length_bytes must be a positive integer, got {length!r}",
                field="configuration.length_bytes",
            )
        return cls(8 * length)

    @classmethod
    def from_native(cls, dtype: np.dtype) -> RawBytes:
        return cls(dtype.itemsize * 8)

    def written_name(self, format: str = V3) -> str:
        return "raw_bytes"

    def configuration(self, format: str = V3) -> dict[str, Any]:
        return {"length_bytes": self.bits // 8}

    def fill_to_json(self, value: Any, format: str = V3) -> Any:
        return base64.b64encode(np.asarray(value, dtype=self.native).tobytes()).decode("ascii")
