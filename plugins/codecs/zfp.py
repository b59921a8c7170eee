"""The `zfp` codec (array -> bytes), as registered in zarr-extensions: a header-less zfp
stream of the chunk, the mode (a string) and its parameters in the configuration.

This is not `numcodecs.zfpy` (which writes zfp's header and takes an integer mode; the
numcodecs bridge provides that one). The zfp library comes through `zfpy`, an optional
dependency (`pip install 'zarrkit[zfp]'`); zfpy has no expert mode, so `"mode": "expert"` is
read but refused when a chunk is encoded or decoded.

Integers narrower than 32 bits are promoted to int32 and back as the spec's `zfp_promote_*` /
`zfp_demote_*` formulas say; float16 goes through float32; unsigned 32/64-bit integers are
shifted by half their range into the signed type of their width.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrkit.abc import V3, ArrayBytesCodec, ChunkSpec, check_known_fields, config_value, names
from zarrkit.errors import ChunkDecodeError, CodecChainError, MetadataError, UnknownExtensionError
from zarrkit.plugins.codecs.zfp_streams import padded

#: mode -> its parameters and their JSON types
MODES: dict[str, dict[str, Any]] = {
    "reversible": {},
    "fixed_accuracy": {"tolerance": (int, float)},
    "fixed_rate": {"rate": (int, float)},
    "fixed_precision": {"precision": int},
    "expert": {"minbits": int, "maxbits": int, "maxprec": int, "minexp": int},
}
#: the type zfp compresses each numpy dtype as
_CARRIER = {
    "f2": "f4",
    "f4": "f4",
    "f8": "f8",
    "i1": "i4",
    "i2": "i4",
    "i4": "i4",
    "i8": "i8",
    "u1": "i4",
    "u2": "i4",
    "u4": "i4",
    "u8": "i8",
}


@dataclass(frozen=True, eq=False)
class ZfpCodec(ArrayBytesCodec):
    names = names("zfp")
    releases_gil = False  # zfpy's compress/decompress hold the GIL
    mode: str
    parameters: tuple[tuple[str, Any], ...] = ()

    @classmethod
    def from_json(cls, name: str, configuration: Mapping[str, Any], format: str = V3) -> ZfpCodec:
        owner = "zfp codec"
        mode = config_value(configuration, "mode", str, owner=owner, choices=tuple(MODES))
        check_known_fields(configuration, {"mode", *MODES[mode]}, owner=owner)
        params = tuple(
            (key, config_value(configuration, key, types, owner=owner))
            for key, types in MODES[mode].items()
        )
        if mode == "fixed_precision" and params[0][1] < 1:
            raise MetadataError(
                "zfp codec: 'precision' must be >= 1", field="configuration.precision"
            )
        if mode in ("fixed_accuracy", "fixed_rate") and params[0][1] <= 0:
            raise MetadataError(
                f"zfp codec: {params[0][0]!r} must be > 0", field=f"configuration.{params[0][0]}"
            )
        return cls(mode, params)

    def configuration(self, format: str = V3) -> dict:
        return {"mode": self.mode, **dict(self.parameters)}

    def validate(self, spec: ChunkSpec) -> None:
        key = f"{spec.dtype.kind}{spec.dtype.itemsize}"
        if key not in _CARRIER:
            raise CodecChainError(
                f"zfp compresses integers and floats, not {spec.data_type.describe()}",
                field="codecs",
            )
        if len(_field_shape(spec.shape)) > 4:
            raise CodecChainError(
                f"zfp compresses chunks of up to 4 dimensions (after dropping "
                f"those of size 1), not {spec.shape}",
                field="codecs",
            )
        if self.mode == "expert":
            raise CodecChainError(
                "zfp codec: expert mode is not available through zfpy", field="codecs"
            )

    def max_encoded_chunk_size(self, spec: ChunkSpec) -> int:
        # zfp's worst case stays within a few per cent of the carrier's size (a block's
        # most bits); twice that and a margin bounds every mode
        carrier = np.dtype(_CARRIER.get(f"{spec.dtype.kind}{spec.dtype.itemsize}", "f8"))
        return 2 * math.prod(spec.shape) * carrier.itemsize + (4 << 10)

    def _kwargs(self) -> dict[str, Any]:
        return dict(self.parameters)

    def encode(self, data: np.ndarray, spec: ChunkSpec) -> bytes:
        zfpy = _zfpy()
        field = _promote(np.ascontiguousarray(data)).reshape(_field_shape(spec.shape))
        out: bytes = zfpy.compress_numpy(field, write_header=False, **self._kwargs())
        return out

    def decode(self, data: Any, spec: ChunkSpec) -> np.ndarray:
        zfpy = _zfpy()
        carrier = np.dtype(_CARRIER[f"{spec.dtype.kind}{spec.dtype.itemsize}"])
        if not len(memoryview(data)):
            raise ChunkDecodeError("zfp: the chunk is empty")
        sizes = _field_shape(spec.shape)
        field = zfpy._decompress(
            padded(bytes(data), sizes, carrier.itemsize),
            zfpy.dtype_to_ztype(carrier),
            list(sizes),
            **self._kwargs(),
        )
        return _demote(np.asarray(field), spec.dtype).reshape(spec.shape)


def _field_shape(shape: tuple[int, ...]) -> tuple[int, ...]:
    """zfp's field: the chunk without its size-1 dimensions (at least one dimension)."""
    if len(shape) <= 4 and shape:
        return tuple(shape)
    squeezed = tuple(n for n in shape if n != 1)
    return squeezed or (1,)


def _promote(data: np.ndarray) -> np.ndarray:
    dtype = data.dtype
    if dtype.kind == "f":
        return data.astype(np.float32) if dtype.itemsize == 2 else data
    bits = dtype.itemsize * 8
    out: np.ndarray
    if dtype.kind == "i":
        out = data if bits >= 32 else data.astype(np.int32) << (31 - bits)
    elif bits >= 32:  # shift by half the range into the signed type of this width
        signed = np.dtype(f"i{dtype.itemsize}")
        out = (data ^ dtype.type(1 << (bits - 1))).view(signed)
    else:
        out = (data.astype(np.int32) - (1 << (bits - 1))) << (31 - bits)
    return out


def _demote(field: np.ndarray, dtype: np.dtype) -> np.ndarray:
    if dtype.kind == "f":
        return field.astype(dtype)
    bits = dtype.itemsize * 8
    if dtype.kind == "i":
        if bits >= 32:
            return field.astype(dtype)
        lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        clipped: np.ndarray = np.clip(field >> (31 - bits), lo, hi).astype(dtype)
        return clipped
    out: np.ndarray
    if bits >= 32:
        out = field.astype(f"i{dtype.itemsize}").view(dtype) ^ dtype.type(1 << (bits - 1))
    else:
        out = np.clip((field >> (31 - bits)) + (1 << (bits - 1)), 0, (1 << bits) - 1).astype(dtype)
    return out


def _zfpy() -> Any:
    try:
        import zfpy
    except ImportError:
        raise UnknownExtensionError(
            "codec", "zfp", V3, hint="it needs the 'zfpy' package: pip install 'zarrkit[zfp]'"
        ) from None
    return zfpy
