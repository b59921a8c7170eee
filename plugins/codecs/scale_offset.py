"""The `scale_offset` codec (array -> array): `(x - offset) * scale` on encode, `x / scale +
offset` on decode, in the arithmetic of the chunk's own data type (zarr-extensions).

`offset` and `scale` are JSON scalars in the data type's fill-value encoding, so they are read
only once the chunk spec is known. What the data type cannot hold is refused, never wrapped:
an integer result out of range on encode (ValueCastError), an integer that does not divide
exactly or leaves the range on decode (ChunkDecodeError). Usually followed by `cast_value`.

Each element is mapped on its own, so a window of a shard decodes only its part
(`ArrayArrayElementwise`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrkit.abc import (
    V3,
    ArrayArrayCodec,
    ArrayArrayElementwise,
    ChunkSpec,
    check_known_fields,
    names,
)
from zarrkit.errors import ChunkDecodeError, CodecChainError, MetadataError, ValueCastError

_JSON_SCALAR = (int, float, str)


@dataclass(frozen=True, eq=False)
class ScaleOffsetCodec(ArrayArrayCodec, ArrayArrayElementwise):
    names = names("scale_offset")
    releases_gil = True  # numpy arithmetic on whole arrays
    offset: Any = 0
    scale: Any = 1

    @classmethod
    def from_json(
        cls, name: str, configuration: Mapping[str, Any], format: str = V3
    ) -> ScaleOffsetCodec:
        check_known_fields(configuration, {"offset", "scale"}, owner="scale_offset codec")
        values = {}
        for key, default in (("offset", 0), ("scale", 1)):
            value = configuration.get(key, default)
            if isinstance(value, bool) or not isinstance(value, _JSON_SCALAR):
                raise MetadataError(
                    f"scale_offset codec: {key!r} must be a JSON number (or a "
                    f"fill-value string), got {value!r}",
                    field=f"configuration.{key}",
                )
            values[key] = value
        return cls(**values)

    def configuration(self, format: str = V3) -> dict:
        return {"offset": self.offset, "scale": self.scale}

    def _parameters(self, spec: ChunkSpec) -> tuple[Any, Any]:
        out = []
        for key in ("offset", "scale"):
            try:
                out.append(spec.data_type.fill_from_json(getattr(self, key)))
            except MetadataError as exc:
                raise CodecChainError(
                    f"scale_offset: {key} {getattr(self, key)!r} is not a value "
                    f"of {spec.data_type.describe()}: {exc.detail}",
                    field="codecs",
                ) from None
        return out[0], out[1]

    def validate(self, spec: ChunkSpec) -> None:
        if spec.dtype.kind not in "iuf":
            raise CodecChainError(
                f"scale_offset works on integers and floats, not {spec.data_type.describe()}",
                field="codecs",
            )
        if self._parameters(spec)[1] == 0:
            raise CodecChainError("scale_offset: scale must not be zero", field="codecs")

    def encoded_spec(self, spec: ChunkSpec) -> ChunkSpec:
        fill = np.asarray(spec.fill_value, dtype=spec.dtype)
        try:
            encoded = self.encode(fill, spec)
        except ValueCastError:
            encoded = fill  # a fill value outside the encodable range stays as it is
        return ChunkSpec(spec.shape, spec.data_type, spec.dtype.type(encoded[()]))

    def encode(self, data: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        offset, scale = self._parameters(spec)
        if data.dtype.kind == "f":
            with np.errstate(all="ignore"):
                scaled: np.ndarray = (data - offset) * scale
            return scaled
        wide = _wide(data.dtype)
        out = (data.astype(wide) - _as_int(offset)) * _as_int(scale)
        return _narrow(out, data.dtype, ValueCastError, "encoding")

    def decode(self, data: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        offset, scale = self._parameters(spec)
        if data.dtype.kind == "f":
            with np.errstate(all="ignore"):
                restored: np.ndarray = data / scale + offset
            return restored
        wide = data.astype(_wide(data.dtype))
        scale = _as_int(scale)
        quotient = wide // scale  # np.divmod has no loop for object arrays (64-bit types)
        if np.any(quotient * scale != wide):
            raise ChunkDecodeError(
                f"scale_offset: stored values are not multiples of the scale "
                f"{scale}; the result is not a {data.dtype}"
            )
        return _narrow(quotient + _as_int(offset), data.dtype, ChunkDecodeError, "decoding")


def _wide(dtype: np.dtype) -> Any:
    """int64 holds every intermediate of types up to 32 bits; 64-bit types need Python ints."""
    return np.int64 if dtype.itemsize < 8 else object


def _as_int(value: Any) -> Any:
    return int(value)


def _narrow(values: np.ndarray, dtype: np.dtype, error: type, doing: str) -> np.ndarray:
    info = np.iinfo(dtype)
    values = np.asarray(values)
    if values.size and (values.min() < info.min or values.max() > info.max):
        raise error(f"scale_offset: {doing} gives values outside {info.min}..{info.max} of {dtype}")
    return np.asarray(values).astype(dtype)
