"""The `gzip` codec (bytes -> bytes). zlib with a gzip wrapper, which releases the GIL."""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Any, Mapping

from zarrkit.codec import ChunkSpec, Codec, CodecKind
from zarrkit.extension import check_known_fields, config_value
from zarrkit.names import V3, names

_GZIP_WBITS = 31  # 16 + 15: gzip header and trailer


@dataclass(frozen=True, eq=False)
class GzipCodec(Codec):
    names = names("gzip")
    kind = CodecKind.BYTES_BYTES
    releases_gil = True
    level: int = 5

    @classmethod
    def from_json(cls, name: str, configuration: Mapping[str, Any], format: str = V3):
        check_known_fields(configuration, {"level"}, owner="gzip codec")
        return cls(config_value(configuration, "level", int, owner="gzip codec",
                                choices=tuple(range(10))))

    def configuration(self, format: str = V3) -> dict:
        return {"level": self.level}

    def encode(self, data: Any, spec: ChunkSpec) -> bytes:
        compressor = zlib.compressobj(self.level, zlib.DEFLATED, _GZIP_WBITS)
        return compressor.compress(data) + compressor.flush()

    def decode(self, data: Any, spec: ChunkSpec) -> bytes:
        decompressor = zlib.decompressobj(_GZIP_WBITS)
        out = decompressor.decompress(data)
        if not decompressor.eof:
            raise zlib.error("gzip stream is truncated")
        return out
