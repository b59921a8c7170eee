"""An LZ4 bytes -> bytes codec for zarrkit, as a third-party package would write it.

It reproduces the zarrs guide's example: written as `example.lz4`, read also as
`numcodecs.lz4` (v3) and `lz4` (v2), with numcodecs' `acceleration` configuration and
numcodecs' LZ4 chunk format, so zarr-python's `numcodecs.lz4` reads what it writes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from numcodecs import LZ4

from zarrkit.abc import (
    V3,
    BytesBytesCodec,
    ChunkSpec,
    as_bytes_view,
    check_known_fields,
    config_value,
    decoded_too_large,
    names,
)
from zarrkit.errors import ChunkDecodeError

_SIZE_HEADER = 4  # numcodecs' LZ4 stores the decoded size (uint32, little endian) first


@dataclass(frozen=True, eq=False)
class Lz4Codec(BytesBytesCodec):
    names = names("example.lz4", aliases=("numcodecs.lz4",), v2="example.lz4", v2_aliases=("lz4",))
    releases_gil = True  # numcodecs' LZ4 compresses inside `with nogil`
    acceleration: int = 1
    _impl: Any = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_impl", LZ4(acceleration=self.acceleration))

    @classmethod
    def from_json(cls, name: str, configuration: Mapping[str, Any], format: str = V3):
        check_known_fields(configuration, {"acceleration"}, owner="lz4 codec")
        # any int: the LZ4 library clamps the acceleration itself
        return cls(config_value(configuration, "acceleration", int, owner="lz4 codec", default=1))

    def configuration(self, format: str = V3) -> dict:
        return {"acceleration": self.acceleration}

    def encode(self, data: Any, spec: ChunkSpec) -> bytes:
        return self._impl.encode(as_bytes_view(data))

    def decode(self, data: Any, spec: ChunkSpec) -> bytes:
        view = as_bytes_view(data)
        if len(view) < _SIZE_HEADER:
            raise ChunkDecodeError(f"lz4: {len(view)} bytes is too short for the size header")
        return self._impl.decode(view)

    def decode_bounded(self, data: Any, spec: ChunkSpec, max_size: int) -> bytes:
        # numcodecs allocates the size the header declares: check it first, so a chunk whose
        # header claims gigabytes is refused before anything is allocated for it
        view = as_bytes_view(data)
        if len(view) >= _SIZE_HEADER:
            declared = int.from_bytes(view[:_SIZE_HEADER], "little")
            if declared > max_size:
                raise decoded_too_large(self, max_size, declared)
        return self.decode(view, spec)

    def max_encoded_size(self, nbytes: int) -> int:
        # LZ4's worst case (LZ4_COMPRESSBOUND) and the size header
        return nbytes + nbytes // 255 + 16 + _SIZE_HEADER
