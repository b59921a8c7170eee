"""JSON encodings of scalar fill values shared by the numeric data types (Zarr v3 rules).

Floats are numbers, "NaN", "Infinity", "-Infinity", or "0x..." — the raw bits as a big-endian
hex integer, which is how a NaN with a payload survives a round trip bit for bit.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from zarrkit.errors import MetadataError

_SPECIAL = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf,
            "+Infinity": math.inf}


def _uint_of(dtype: np.dtype) -> np.dtype:
    return np.dtype(f">u{dtype.itemsize}")


def float_from_json(value: Any, dtype: np.dtype, key: str = "fill_value") -> np.floating:
    if isinstance(value, bool):
        raise MetadataError(f"{value!r} is not a floating point value", key=key)
    if isinstance(value, (int, float)):
        with np.errstate(over="ignore"):
            out = np.array(value, dtype=dtype)
        if np.isinf(out) and math.isfinite(value):
            raise MetadataError(f"{value!r} is out of range for {dtype}", key=key)
        return out[()]
    if isinstance(value, str):
        if value in _SPECIAL:
            return dtype.type(_SPECIAL[value])
        if value.startswith("0x"):
            digits = value[2:]
            if len(digits) != 2 * dtype.itemsize:
                raise MetadataError(
                    f"hex fill value {value!r} needs {2 * dtype.itemsize} hex digits for {dtype}", key=key)
            try:
                raw = bytes.fromhex(digits)
            except ValueError:
                raise MetadataError(f"{value!r} is not a hex number", key=key) from None
            return np.frombuffer(raw, dtype=dtype.newbyteorder(">")).astype(dtype)[0]
    raise MetadataError(
        f"{value!r} is not a number, 'NaN', 'Infinity', '-Infinity' or a '0x' hex string", key=key)


def float_to_json(value: Any, dtype: np.dtype) -> Any:
    scalar = np.asarray(value, dtype=dtype)
    if np.isnan(scalar):
        canonical = np.array(np.nan, dtype=dtype).view(_uint_of(dtype).newbyteorder("="))
        bits = scalar.view(_uint_of(dtype).newbyteorder("="))
        if bits == canonical:
            return "NaN"
        return "0x" + scalar.astype(dtype.newbyteorder(">")).tobytes().hex()
    if np.isinf(scalar):
        return "Infinity" if scalar > 0 else "-Infinity"
    return float(scalar)


def int_from_json(value: Any, dtype: np.dtype, key: str = "fill_value") -> np.integer:
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise MetadataError(f"{value!r} is not an integer", key=key)
    info = np.iinfo(dtype)
    if not info.min <= value <= info.max:
        raise MetadataError(f"{value} is out of range for {dtype} ({info.min}..{info.max})", key=key)
    return dtype.type(value)


def complex_from_json(value: Any, dtype: np.dtype, key: str = "fill_value") -> np.complexfloating:
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise MetadataError(f"a complex fill value is a list [real, imaginary], got {value!r}", key=key)
    part = np.dtype(f"f{dtype.itemsize // 2}")
    real = float_from_json(value[0], part, key)
    imag = float_from_json(value[1], part, key)
    out = np.empty((), dtype=dtype)
    out.real = real
    out.imag = imag
    return out[()]


def complex_to_json(value: Any, dtype: np.dtype) -> list:
    scalar = np.asarray(value, dtype=dtype)
    part = np.dtype(f"f{dtype.itemsize // 2}")
    return [float_to_json(scalar.real, part), float_to_json(scalar.imag, part)]
