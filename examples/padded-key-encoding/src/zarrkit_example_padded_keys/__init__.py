"""`example.padded`: chunk keys with zero-padded coordinates (`c/0003/0012`), as a zarrkit
chunk key encoding plugin.

Object stores and file browsers list keys in string order, where `c/10` comes before `c/2`.
Padding every coordinate to `width` digits makes that order the chunks' order, so a listing
(or a prefix scan of one row) walks the array as it lies. A coordinate too large for the
width is written with more digits: keys stay distinct and decodable, only the order of those
few breaks.

    {"name": "example.padded", "configuration": {"width": 4, "separator": "/"}}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from zarrkit.abc import V3, ChunkKeyEncoding, check_known_fields, config_value, names
from zarrkit.errors import MetadataError

OWNER = "example.padded chunk key encoding"


@dataclass(frozen=True)
class PaddedChunkKeyEncoding(ChunkKeyEncoding):
    names = names("example.padded")
    width: int = 4
    separator: str = "/"

    @classmethod
    def from_json(
        cls, name: str, configuration: Mapping[str, Any], format: str = V3
    ) -> PaddedChunkKeyEncoding:
        check_known_fields(configuration, {"width", "separator"}, owner=OWNER)
        width = config_value(configuration, "width", int, owner=OWNER, default=4)
        if not 1 <= width <= 20:
            raise MetadataError(
                f"{OWNER}: 'width' must be 1 to 20 digits, got {width}",
                field="configuration.width",
            )
        separator = config_value(
            configuration, "separator", str, owner=OWNER, default="/", choices=("/", ".")
        )
        return cls(width, separator)

    def configuration(self, format: str = V3) -> dict[str, Any]:
        return {"width": self.width, "separator": self.separator}

    def encode(self, coords: Sequence[int]) -> str:
        return self.separator.join(["c", *(f"{int(c):0{self.width}d}" for c in coords)])

    def decode(self, key: str) -> tuple[int, ...]:
        prefix, *parts = key.split(self.separator)
        if prefix != "c" or not all(p.isdigit() for p in parts):
            raise MetadataError(f"{key!r} is not a chunk key of {OWNER}", field="chunk_key")
        return tuple(int(p) for p in parts)
