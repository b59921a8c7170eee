"""The `v2` chunk key encoding: `1.2` (or `1/2`); a 0-d array's chunk is `0`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from zarrkit.abc import V3, ChunkKeyEncoding, check_known_fields, config_value, names


@dataclass(frozen=True)
class V2ChunkKeyEncoding(ChunkKeyEncoding):
    # v2 names no key encoding: its `dimension_separator` field is this encoding (configuration
    # {"separator": the field's value}), so this plugin claims that spelling; "v2" is read too
    names = names("v2", v2="dimension_separator", v2_aliases=["v2"])
    separator: str = "."

    @classmethod
    def from_json(
        cls, name: str, configuration: Mapping[str, Any], format: str = V3
    ) -> V2ChunkKeyEncoding:
        check_known_fields(configuration, {"separator"}, owner="v2 chunk key encoding")
        sep = config_value(
            configuration,
            "separator",
            str,
            owner="v2 chunk key encoding",
            default=".",
            choices=("/", "."),
        )
        return cls(sep)

    def configuration(self, format: str = V3) -> dict:
        return {"separator": self.separator}

    def encode(self, coords: Sequence[int]) -> str:
        return self.separator.join(map(str, coords)) if coords else "0"

    def decode(self, key: str) -> tuple[int, ...]:
        # "0" is both the 0-d chunk and the first chunk of a 1-d array; the key alone cannot
        # tell them apart, so it reads as the far more common 1-d one
        return tuple(int(p) for p in key.split(self.separator))
