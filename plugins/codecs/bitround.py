"""The `bitround` codec (array -> array): round the mantissa of floats to `keepbits` bits.

Lossy, so that a compressor after it finds more repeated bits. Decoding is the identity: the
rounded values are ordinary floats. Written as `numcodecs.bitround`, the name zarr-python 3.4
reads and writes (zarr-extensions registers `bitround` and calls that name deprecated, but
zarr-python does not know `bitround` yet); `bitround` is read as an alias. The rounding is
numcodecs' (round half to even on the kept bits), so both write identical bytes.

Floats and complex numbers (each part rounded) are supported; zarr-extensions also defines
integer rounding, which numcodecs lacks and zarrkit does not implement yet.
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
from zarrkit.errors import CodecChainError, MetadataError
from zarrkit.plugins.codecs.codec_ids import draft_uri

#: mantissa bits per float width (bytes)
MANTISSA_BITS = {2: 10, 4: 23, 8: 52}


@dataclass(frozen=True, eq=False)
class BitRoundCodec(ArrayArrayCodec, ArrayArrayElementwise):
    names = names(
        "numcodecs.bitround", aliases=("bitround",), v2="bitround", draft=draft_uri("bitround")
    )
    releases_gil = True  # numpy's integer ufuncs on whole arrays run without the GIL
    keepbits: int

    @classmethod
    def from_json(
        cls, name: str, configuration: Mapping[str, Any], format: str = V3
    ) -> BitRoundCodec:
        check_known_fields(configuration, {"keepbits"}, owner="bitround codec")
        keepbits = config_value(configuration, "keepbits", int, owner="bitround codec")
        if keepbits < 0:
            raise MetadataError(
                f"bitround codec: 'keepbits' must be >= 0, got {keepbits}",
                field="configuration.keepbits",
            )
        return cls(keepbits)

    def configuration(self, format: str = V3) -> dict:
        return {"keepbits": self.keepbits}

    def validate(self, spec: ChunkSpec) -> None:
        dtype = spec.dtype
        if dtype.kind not in "fc" or _float_width(dtype) not in MANTISSA_BITS:
            raise CodecChainError(
                f"bitround rounds float16/32/64 and complex values, not "
                f"{spec.data_type.describe()}",
                field="codecs",
            )
        bits = MANTISSA_BITS[_float_width(dtype)]
        if self.keepbits > bits:
            raise CodecChainError(
                f"bitround: keepbits {self.keepbits} exceeds the {bits} mantissa "
                f"bits of {spec.data_type.describe()}",
                field="codecs",
            )

    def encode(self, data: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        width = _float_width(data.dtype)
        bits = MANTISSA_BITS[width]
        if self.keepbits == bits:
            return data
        ints = np.array(data, copy=True).view(f"i{width}")  # complex: both parts, as ints
        maskbits = bits - self.keepbits
        mask = np.array(-1, dtype=ints.dtype) >> maskbits << maskbits
        half_quantum = (1 << (maskbits - 1)) - 1
        ints += ((ints >> maskbits) & 1) + ints.dtype.type(half_quantum)
        ints &= mask
        return ints.view(data.dtype)

    def decode(self, data: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        return data


def _float_width(dtype: np.dtype) -> int:
    return dtype.itemsize // 2 if dtype.kind == "c" else dtype.itemsize
