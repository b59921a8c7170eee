"""Small codecs written as an outside plugin author would, each with one defect of issue 47
that used to pass `CodecTests`: `test_codec_suite_defects.py` runs the suite on each, as its
author would, and asserts the failure. Every one round-trips right, one call at a time."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrkit.abc import (
    V3,
    ArrayArrayCodec,
    BytesBytesCodec,
    BytesBytesPartialDecode,
    ChunkSpec,
    DataType,
    as_bytes_view,
    names,
)
from zarrkit.errors import ChunkDecodeError

_HEADER = 8


@dataclass(frozen=True, eq=False)
class _Plain(BytesBytesCodec):
    """No configuration; the base of the defective bytes codecs."""

    names = names("test.defective")

    @classmethod
    def from_json(cls, name: str, configuration: Mapping[str, Any], format: str = V3) -> Any:
        return cls()

    def configuration(self, format: str = V3) -> dict:
        return {}


@dataclass(frozen=True, eq=False)
class TrustsItsHeader(_Plain):
    """An XOR codec with an 8-byte length header, whose decode allocates what the header says
    before looking at the payload, and whose `decode_bounded` ignores the bound: twelve stored
    bytes can ask for gigabytes."""

    def encode(self, data: Any, spec: ChunkSpec) -> Any:
        payload = np.invert(np.frombuffer(as_bytes_view(data), np.uint8))
        return len(payload).to_bytes(_HEADER, "little") + payload.tobytes()

    def decode(self, data: Any, spec: ChunkSpec) -> Any:
        view = as_bytes_view(data)
        if len(view) < _HEADER:
            raise ChunkDecodeError("shorter than its header")
        size = int.from_bytes(view[:_HEADER], "little")
        out = np.ones(size, np.uint8)  # allocated (and written) before the payload is checked
        payload = np.frombuffer(view[_HEADER:], np.uint8)
        if payload.size != size:
            raise ChunkDecodeError(f"header says {size} bytes, payload has {payload.size}")
        np.invert(payload, out=out)
        return out.tobytes()

    def decode_bounded(self, data: Any, spec: ChunkSpec, max_size: int) -> Any:
        out = self.decode(data, spec)  # the bound checked only after decoding
        if len(out) > max_size:
            raise ChunkDecodeError(f"decodes to {len(out)} bytes, more than {max_size}")
        return out


#: the scratch buffer every instance and every thread shares
_SCRATCH: dict[int, np.ndarray] = {}


@dataclass(frozen=True, eq=False)
class ModuleScratch(_Plain):
    """XOR through one module-level scratch buffer per size, the result copied out: right
    whenever calls come one at a time, wrong when two threads are in the scratch at once."""

    def _flip(self, data: Any) -> bytes:
        view = np.frombuffer(as_bytes_view(data), np.uint8)
        scratch = _SCRATCH.get(view.size)
        if scratch is None:
            scratch = _SCRATCH[view.size] = np.empty(view.size, np.uint8)
        np.copyto(scratch, view)
        np.invert(scratch, out=scratch)
        return scratch.tobytes()

    def encode(self, data: Any, spec: ChunkSpec) -> Any:
        return self._flip(data)

    def decode(self, data: Any, spec: ChunkSpec) -> Any:
        return self._flip(data)


@dataclass(frozen=True, eq=False)
class HeaderClaimsByteRanges(_Plain, BytesBytesPartialDecode):
    """Stores a 4-byte magic before the bytes, yet declares `BytesBytesPartialDecode` (byte i
    in is byte i out): a window of a sharded array reads the magic as data."""

    MAGIC = b"TEST"

    def encode(self, data: Any, spec: ChunkSpec) -> Any:
        return self.MAGIC + bytes(as_bytes_view(data))

    def decode(self, data: Any, spec: ChunkSpec) -> Any:
        view = as_bytes_view(data)
        if bytes(view[:4]) != self.MAGIC:
            raise ChunkDecodeError("no magic")
        return bytes(view[4:])


@dataclass(frozen=True, eq=False)
class Delta(ArrayArrayCodec):
    """Differences along the flattened chunk, in the chunk's own data type: on a narrow type
    (int24 held in int32) the differences leave the type's range."""

    names = names("test.delta")

    @classmethod
    def from_json(cls, name: str, configuration: Mapping[str, Any], format: str = V3) -> Any:
        return cls()

    def configuration(self, format: str = V3) -> dict:
        return {}

    def check_data_type(self, data_type: DataType) -> None:
        if data_type.native.kind not in "iu":
            raise self.refuse(data_type, "delta takes integers")

    def encode(self, data: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        flat = np.ascontiguousarray(data).reshape(-1)
        out = np.empty_like(flat)
        if flat.size:
            out[0] = flat[0]
            np.subtract(flat[1:], flat[:-1], out=out[1:])
        return out.reshape(data.shape)

    def decode(self, data: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        flat = np.ascontiguousarray(data).reshape(-1)
        return np.cumsum(flat, dtype=flat.dtype).reshape(data.shape)


@dataclass(frozen=True, eq=False)
class Doubling(ArrayArrayCodec):
    """Stores twice each value, in the chunk's own numpy type: exact while the doubled values
    fit (the int16, int32 and float samples), silently wrong where they wrap (int8)."""

    names = names("test.doubling")

    def check_data_type(self, data_type: DataType) -> None:
        if data_type.native.kind not in "iuf":
            raise self.refuse(data_type, "doubling takes numbers")

    @classmethod
    def from_json(cls, name: str, configuration: Mapping[str, Any], format: str = V3) -> Any:
        return cls()

    def configuration(self, format: str = V3) -> dict:
        return {}

    def encode(self, data: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        return np.multiply(data, 2, dtype=data.dtype, casting="unsafe")

    def decode(self, data: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        if data.dtype.kind == "f":
            return data / 2
        return np.floor_divide(data, 2, dtype=data.dtype, casting="unsafe")
