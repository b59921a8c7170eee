"""The `zstd` codec (bytes -> bytes), through numcodecs, which releases the GIL."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from numcodecs import Zstd
from numcodecs import zstd as _zstd

from zarrkit.codec import ChunkSpec, Codec, CodecKind
from zarrkit.extension import check_known_fields, config_value
from zarrkit.names import V3, names
from zarrkit.plugins.codecs.spellings import draft_uri


@dataclass(frozen=True, eq=False)
class ZstdCodec(Codec):
    names = names("zstd", v2="zstd", draft=draft_uri("zstd"))
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
        # numcodecs' module functions: a fraction of the per-call cost of the Codec methods,
        # which matters for small chunks
        return _zstd.compress(data, self.level, self.checksum)

    def decode(self, data: Any, spec: ChunkSpec) -> bytes:
        return _zstd.decompress(data)

    def decode_into(self, data: Any, out: memoryview, spec: ChunkSpec) -> bool:
        if _content_size(data) != len(out):  # unknown or different: the usual way, which checks
            return False
        _zstd.decompress(data, out)
        return True


_FCS_BYTES = (0, 2, 4, 8)
_DICT_ID_BYTES = (0, 1, 2, 4)


def _content_size(data: Any) -> int | None:
    """The decompressed size a zstd frame header declares (None: not declared, or not a
    single plain frame start), read from the header alone."""
    view = memoryview(data)
    if view.nbytes < 6 or bytes(view[:4]) != b"\x28\xb5\x2f\xfd":
        return None
    descriptor = view[4]
    single_segment = (descriptor >> 5) & 1
    fcs = _FCS_BYTES[descriptor >> 6] or single_segment
    if not fcs:
        return None
    start = 5 + (0 if single_segment else 1) + _DICT_ID_BYTES[descriptor & 3]
    if view.nbytes < start + fcs:
        return None
    size = int.from_bytes(view[start:start + fcs], "little")
    return size + 256 if fcs == 2 else size
