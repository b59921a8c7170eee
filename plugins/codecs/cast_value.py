"""The `cast_value` codec (array -> array): convert values to another data type, by value
(zarr-extensions), with a rounding mode, an out-of-range rule and an optional scalar map.

The conversion itself is `cast-value-rs`, the implementation zarr-python 3.4 uses, so both
write the same bytes; it is an optional dependency (`pip install 'zarrkit[cast-value]'`) and
is imported only when a chunk is converted, so reading metadata works without it.
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
    config_value,
    names,
)
from zarrkit.errors import (
    ChunkDecodeError,
    CodecChainError,
    MetadataError,
    UnknownExtensionError,
    ValueCastError,
)
from zarrkit.helpers import extension_from_json

ROUNDING = ("nearest-even", "towards-zero", "towards-positive", "towards-negative", "nearest-away")
OUT_OF_RANGE = ("error", "clamp", "wrap")
#: numpy kinds the codec is defined for (integers and floats)
_NUMERIC = "iuf"


@dataclass(frozen=True, eq=False)
class CastValueCodec(ArrayArrayCodec, ArrayArrayElementwise):
    names = names("cast_value")
    releases_gil = True  # cast-value-rs converts in Rust without holding the GIL
    data_type: Any  # the target DataType
    rounding: str = "nearest-even"
    out_of_range: str | None = None
    scalar_map: Mapping[str, Any] | None = None

    @classmethod
    def from_json(
        cls, name: str, configuration: Mapping[str, Any], format: str = V3
    ) -> CastValueCodec:
        owner = "cast_value codec"
        check_known_fields(
            configuration, {"data_type", "rounding", "out_of_range", "scalar_map"}, owner=owner
        )
        if "data_type" not in configuration:
            raise MetadataError(
                f"{owner}: configuration lacks required field 'data_type'",
                field="configuration.data_type",
            )
        try:
            target = extension_from_json(
                "data_type", configuration["data_type"], V3, key="configuration.data_type"
            )
        except MetadataError as exc:
            raise exc.locate("configuration.data_type") from None
        scalar_map = configuration.get("scalar_map")
        if scalar_map is not None and (
            not isinstance(scalar_map, Mapping) or set(scalar_map) - {"encode", "decode"}
        ):
            raise MetadataError(
                f"{owner}: 'scalar_map' must be an object with 'encode' and/or "
                f"'decode' lists, got {scalar_map!r}",
                field="configuration.scalar_map",
            )
        return cls(
            target,
            config_value(
                configuration,
                "rounding",
                str,
                owner=owner,
                choices=ROUNDING,
                default="nearest-even",
            ),
            config_value(
                configuration, "out_of_range", str, owner=owner, choices=OUT_OF_RANGE, default=None
            ),
            scalar_map,
        )

    def configuration(self, format: str = V3) -> dict:
        out: dict[str, Any] = {"data_type": self.data_type.to_json(V3)}
        if self.rounding != "nearest-even":
            out["rounding"] = self.rounding
        if self.out_of_range is not None:
            out["out_of_range"] = self.out_of_range
        if self.scalar_map is not None:
            out["scalar_map"] = dict(self.scalar_map)
        return out

    def validate(self, spec: ChunkSpec) -> None:
        for role, data_type in (("source", spec.data_type), ("target", self.data_type)):
            if data_type.native.kind not in _NUMERIC:
                raise CodecChainError(
                    f"cast_value converts integers and floats; its {role} is "
                    f"{data_type.describe()}",
                    field="codecs",
                )
        if self.out_of_range == "wrap" and self.data_type.native.kind == "f":
            raise CodecChainError(
                "cast_value: out_of_range 'wrap' needs an integer target", field="codecs"
            )

    def encoded_spec(self, spec: ChunkSpec) -> ChunkSpec:
        fill = np.asarray([spec.fill_value], dtype=spec.dtype)
        try:
            encoded = self._cast(fill, self.data_type.native, "encode")[0]
        except (ValueCastError, UnknownExtensionError):
            encoded = self.data_type.default_fill()
        return ChunkSpec(spec.shape, self.data_type, self.data_type.native.type(encoded))

    def encode(self, data: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        return self._cast(data, self.data_type.native, "encode")

    def decode(self, data: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        return self._cast(data, spec.dtype, "decode", ChunkDecodeError)

    def _cast(
        self, data: np.ndarray, target: np.dtype, direction: str, error: type = ValueCastError
    ) -> np.ndarray:
        cast_array = _backend()
        entries = None
        if self.scalar_map and self.scalar_map.get(direction):
            to_src = int if data.dtype.kind in "iu" else float
            to_tgt = int if target.kind in "iu" else float
            entries = {to_src(k): to_tgt(v) for k, v in self.scalar_map[direction]}
        try:
            out: np.ndarray = cast_array(
                np.ascontiguousarray(data),
                target_dtype=target,
                rounding_mode=self.rounding,
                out_of_range_mode=None if self.out_of_range == "error" else self.out_of_range,
                scalar_map_entries=entries,
            )
        except (ValueError, OverflowError, TypeError) as exc:
            raise error(f"cast_value: {direction} to {target} failed: {exc}") from None
        return out


def _backend() -> Any:
    try:
        from cast_value_rs import cast_array
    except ImportError:
        raise UnknownExtensionError(
            "codec",
            "cast_value",
            V3,
            hint="converting chunks needs the 'cast-value-rs' package: pip install "
            "'zarrkit[cast-value]'",
        ) from None
    return cast_array
