"""JSON encodings of scalar fill values shared by the numeric data types, per Zarr format.

Floats, when read, are numbers, "NaN", "Infinity", "-Infinity", "+Infinity", "0x..." (the
raw bits as a big-endian hex integer) or "0b..." (the bits in binary, 2020 draft). When
written:

- v3: a number, "NaN" (the canonical NaN), "Infinity"/"-Infinity", or "0x..." for a NaN
  with a payload, so its bits survive a round trip;
- v2: a number, "NaN", "Infinity"/"-Infinity" (v2 cannot keep a NaN payload);
- 2020 draft: like v3, with "+Infinity" as the draft spells it.

The bits are read through an unsigned integer view, so the same code serves numpy's floats and
ml_dtypes' (bfloat16, float8_*, ...), which numpy cannot byte-swap by casting.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from zarrkit.abc import V2, V3, V3_DRAFT_2020
from zarrkit.errors import MetadataError

_SPECIAL = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf, "+Infinity": math.inf}


def _bits_of(scalar: Any, dtype: np.dtype) -> int:
    return int(np.asarray(scalar, dtype=dtype).reshape(1).view(f"u{dtype.itemsize}")[0])


def _from_bits(bits: int, dtype: np.dtype) -> Any:
    return np.array([bits], dtype=f"u{dtype.itemsize}").view(dtype)[0]


def float_from_json(
    value: Any,
    dtype: np.dtype,
    key: str = "fill_value",
    format: str = V3,
    finite_max: float | None = None,
) -> Any:
    if isinstance(value, bool):
        raise MetadataError(f"{value!r} is not a floating point value", field=key)
    if isinstance(value, (int, float)):
        with np.errstate(over="ignore", invalid="ignore"):
            out = np.array(value, dtype=dtype)
        finite = math.isfinite(value)
        too_big = finite_max is not None and finite and abs(value) > finite_max
        if finite and (np.isinf(out) or np.isnan(out) or too_big):
            raise MetadataError(f"{value!r} is out of range for {dtype}", field=key)
        return out[()]
    if isinstance(value, str):
        if value in _SPECIAL:
            out = np.array(_SPECIAL[value], dtype=dtype)
            if not (np.isnan(out) if value == "NaN" else np.isinf(out)):
                raise MetadataError(f"{dtype} has no {value}", field=key)
            return out[()]
        if value.startswith(("0x", "0b")):
            base, per_byte = (16, 2) if value[1] == "x" else (2, 8)
            digits = value[2:]
            if len(digits) != per_byte * dtype.itemsize:
                kind = "hex" if base == 16 else "binary"
                raise MetadataError(
                    f"{value!r} needs {per_byte * dtype.itemsize} {kind} digits for {dtype}",
                    field=key,
                )
            try:
                bits = int(digits, base)
            except ValueError:
                raise MetadataError(
                    f"{value!r} is not a {'hex' if base == 16 else 'binary'} number", field=key
                ) from None
            return _from_bits(bits, dtype)
    raise MetadataError(
        f"{value!r} is not a number, 'NaN', 'Infinity', '-Infinity' or a '0x' hex string", field=key
    )


def float_to_json(value: Any, dtype: np.dtype, format: str = V3) -> Any:
    scalar = np.asarray(value, dtype=dtype)
    if np.isnan(scalar):
        if format == V2:
            return "NaN"
        canonical = np.array(np.nan, dtype=dtype)
        if _bits_of(scalar, dtype) == _bits_of(canonical, dtype):
            return "NaN"
        return "0x" + format_hex(_bits_of(scalar, dtype), dtype.itemsize)
    if np.isinf(scalar):
        if scalar > 0:
            return "+Infinity" if format == V3_DRAFT_2020 else "Infinity"
        return "-Infinity"
    return float(scalar)


def format_hex(bits: int, size: int) -> str:
    return f"{bits:0{2 * size}x}"


def int_from_json(
    value: Any, dtype: np.dtype, key: str = "fill_value", int_range: tuple[int, int] | None = None
) -> Any:
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise MetadataError(f"{value!r} is not an integer", field=key)
    if int_range is None:
        info = np.iinfo(dtype)
        int_range = int(info.min), int(info.max)
    low, high = int_range
    if not low <= value <= high:
        raise MetadataError(f"{value} is out of range for {dtype} ({low}..{high})", field=key)
    return np.array(value).astype(dtype)[()]


def complex_from_json(
    value: Any,
    dtype: np.dtype,
    key: str = "fill_value",
    format: str = V3,
    part: np.dtype | None = None,
) -> Any:
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise MetadataError(
            f"a complex fill value is a list [real, imaginary], got {value!r}", field=key
        )
    part = part if part is not None else np.dtype(f"f{dtype.itemsize // 2}")
    real = float_from_json(value[0], part, key, format)
    imag = float_from_json(value[1], part, key, format)
    pair = np.empty(2, dtype=part)
    pair[0], pair[1] = real, imag  # same dtype: the bits (NaN payloads) are copied as they are
    return pair.view(dtype)[0]


def complex_to_json(value: Any, dtype: np.dtype, format: str = V3) -> list:
    scalar = np.asarray(value, dtype=dtype)
    part = np.dtype(f"f{dtype.itemsize // 2}")
    # through views, so a NaN payload in either part is kept
    pair = scalar.reshape(1).view(part)
    return [float_to_json(pair[0], part, format), float_to_json(pair[1], part, format)]
