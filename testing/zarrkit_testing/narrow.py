"""Narrow data types for the suites' value generation: types whose values take fewer bits than
the numpy type they are held in, where a codec's arithmetic can leave the type's range.

`Int24` is a signed 24-bit integer held as int32 in memory and stored as 3 bytes (the data-type
guide's example). It declares its `int_range`, so the kernel refuses, before the array -> bytes
codec, a chunk whose values an array -> array codec took out of that range."""

from __future__ import annotations

from typing import Any

import numpy as np

from zarrkit.abc import V3, DataType, names
from zarrkit.errors import MetadataError

LOW, HIGH = -(1 << 23), (1 << 23) - 1


class Int24(DataType):
    """A signed 24-bit integer: int32 in memory, 3 bytes stored."""

    names = names("zarrkit_testing.int24")

    @property
    def native(self) -> np.dtype:
        return np.dtype("int32")

    @property
    def int_range(self) -> tuple[int, int]:
        return LOW, HIGH

    @property
    def bit_layout(self) -> tuple[int, int, bool]:
        return 24, 1, True

    def encoded_dtype(self, endian: str | None) -> np.dtype:
        return np.dtype("V3")

    def to_encoded(self, data: np.ndarray, endian: str | None) -> np.ndarray:
        raw = np.ascontiguousarray(data, dtype="<i4").reshape(-1).view(np.uint8).reshape(-1, 4)
        low = raw[:, :3] if endian != "big" else raw[:, 2::-1]
        return np.ascontiguousarray(low).reshape(-1).view("V3").reshape(data.shape)

    def from_encoded(self, stored: np.ndarray, endian: str | None) -> np.ndarray:
        raw = np.ascontiguousarray(stored).reshape(-1).view(np.uint8).reshape(-1, 3)
        if endian == "big":
            raw = raw[:, ::-1]
        wide = np.zeros((raw.shape[0], 4), dtype=np.uint8)
        wide[:, :3] = raw
        wide[:, 3] = np.where(raw[:, 2] & 0x80, 0xFF, 0)
        return wide.view("<i4").reshape(stored.shape).astype(self.native)

    def default_fill(self) -> Any:
        return np.int32(0)

    def fill_from_json(self, value: Any, format: str = V3) -> Any:
        if isinstance(value, bool) or not isinstance(value, int) or not LOW <= value <= HIGH:
            raise MetadataError(
                f"the fill value of zarrkit_testing.int24 is an integer in {LOW}..{HIGH}, "
                f"got {value!r}",
                field="fill_value",
            )
        return np.int32(value)

    def fill_to_json(self, value: Any, format: str = V3) -> Any:
        return int(value)


def narrow_sample(data_type: DataType, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """Values of a narrow type that reach both ends of its range (where arithmetic in the held
    numpy type overflows the type): booleans, the extremes of an integer range mixed with small
    numbers, random bytes for raw bits."""
    rng = np.random.default_rng(seed + sum(shape))
    n = int(np.prod(shape, dtype=np.int64))
    dt = data_type.native
    flat: np.ndarray
    if dt.kind == "b":
        flat = rng.random(n) < 0.5
    elif dt.kind in "iu":
        span = data_type.int_range or (int(np.iinfo(dt).min), int(np.iinfo(dt).max))
        lo, hi = span
        choices = np.array([lo, hi, lo + 1, hi - 1, 0, 1, -1 if lo < 0 else 2], dtype=np.int64)
        flat = rng.choice(choices, n).astype(dt)
    elif dt.kind == "V":
        flat = np.frombuffer(rng.bytes(n * dt.itemsize), dtype=dt)
    else:
        flat = rng.standard_normal(n).astype(dt)
    return np.asarray(flat).reshape(shape)
