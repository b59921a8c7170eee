"""The `zstd` codec (bytes -> bytes), through numcodecs, which releases the GIL."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from numcodecs import Zstd

from zarrkit.codec import ChunkSpec, Codec, CodecKind
from zarrkit.extension import check_known_fields, config_value
from zarrkit.names import V3, names


@dataclass(frozen=True, eq=False)
class ZstdCodec(Codec):
    names = names("zstd")
    kind = CodecKind.BYTES_BYTES
    releases_gil = True
    level: int = 0
    checksum: bool = False
    _impl: Any = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_impl", Zstd(level=self.level, checksum=self.checksum))

    @classmethod
    def from_json(cls, name: str, configuration: Mapping[str, Any], format: str = V3):
        check_known_fields(configuration, {"level", "checksum"}, owner="zstd codec")
        level = config_value(configuration, "level", int, owner="zstd codec", default=0)
        if not -131072 <= level <= 22:
            from zarrkit.errors import MetadataError
            raise MetadataError(f"zstd codec: level {level} is outside -131072..22",
                                key="configuration.level")
        checksum = config_value(configuration, "checksum", bool, owner="zstd codec", default=False)
        return cls(level, checksum)

    def configuration(self, format: str = V3) -> dict:
        return {"level": self.level, "checksum": self.checksum}

    def encode(self, data: Any, spec: ChunkSpec) -> bytes:
        return self._impl.encode(data)

    def decode(self, data: Any, spec: ChunkSpec) -> bytes:
        return self._impl.decode(data)
