"""The `default` chunk key encoding: `c/1/2` (or `c.1.2`); a 0-d array's chunk is `c`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from zarrkit.abc import V3, ChunkKeyEncoding, check_known_fields, config_value, names


@dataclass(frozen=True)
class DefaultChunkKeyEncoding(ChunkKeyEncoding):
    names = names("default")
    separator: str = "/"

    @classmethod
    def from_json(
        cls, name: str, configuration: Mapping[str, Any], format: str = V3
    ) -> DefaultChunkKeyEncoding:
        check_known_fields(configuration, {"separator"}, owner="default chunk key encoding")
        sep = config_value(
            configuration,
            "separator",
            str,
            owner="default chunk key encoding",
            default="/",
            choices=("/", "."),
        )
        return cls(sep)

    def configuration(self, format: str = V3) -> dict:
        return {"separator": self.separator}

    def encode(self, coords: Sequence[int]) -> str:
        if len(coords) == 1:  # one key per chunk of a read: the common 1-D case, kept short
            return f"c{self.separator}{coords[0]}"
        return self.separator.join(["c", *map(str, coords)])

    def decode(self, key: str) -> tuple[int, ...]:
        parts = key.split(self.separator)
        if parts[0] != "c":
            raise ValueError(f"{key!r} is not a chunk key of the default encoding")
        return tuple(int(p) for p in parts[1:])
