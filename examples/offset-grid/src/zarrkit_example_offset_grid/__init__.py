"""`example.offset`: chunks of one shape, aligned to a tiling that starts `offset` elements
before the array, as a zarrkit chunk grid plugin.

Arrays cut from one large raster (a map tile grid, a mosaic) keep their chunks on the
raster's tile boundaries, so a chunk of one array covers exactly one tile of the raster. The
first chunk along each dimension is therefore short (`chunk_shape - offset` elements), the
others are whole; the last is padded, as in the regular grid. The grid is irregular: the
kernel asks it where each chunk starts and how large each one is.

    {"name": "example.offset",
     "configuration": {"chunk_shape": [256, 256], "offset": [100, 0]}}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrkit.abc import V3, ChunkGrid, check_known_fields, names
from zarrkit.errors import MetadataError


def _counts(value: Any, field: str) -> tuple[int, ...]:
    if not isinstance(value, list) or not all(
        isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in value
    ):
        raise MetadataError(
            f"example.offset: {field} must be a list of non-negative integers, got {value!r}",
            field=f"chunk_grid.configuration.{field}",
        )
    return tuple(value)


@dataclass(frozen=True)
class OffsetChunkGrid(ChunkGrid):
    names = names("example.offset")
    chunk_shape_: tuple[int, ...]
    offset: tuple[int, ...]

    @classmethod
    def from_json(
        cls, name: str, configuration: Mapping[str, Any], format: str = V3
    ) -> OffsetChunkGrid:
        check_known_fields(configuration, {"chunk_shape", "offset"}, owner="example.offset")
        shape = _counts(configuration.get("chunk_shape"), "chunk_shape")
        offset = _counts(configuration.get("offset", [0] * len(shape)), "offset")
        if len(offset) != len(shape) or not all(c > 0 for c in shape):
            raise MetadataError(
                f"example.offset: chunk_shape {list(shape)} must be positive and offset "
                f"{list(offset)} as long",
                field="chunk_grid.configuration",
            )
        if not all(o < c for o, c in zip(offset, shape)):
            raise MetadataError(
                f"example.offset: each offset must be less than its chunk size, got "
                f"{list(offset)} for {list(shape)}",
                field="chunk_grid.configuration.offset",
            )
        return cls(shape, offset)

    def configuration(self, format: str = V3) -> dict[str, Any]:
        return {"chunk_shape": list(self.chunk_shape_), "offset": list(self.offset)}

    def validate(self, array_shape: Sequence[int]) -> None:
        if len(array_shape) != len(self.chunk_shape_):
            raise MetadataError(
                f"example.offset: chunk_shape {list(self.chunk_shape_)} has "
                f"{len(self.chunk_shape_)} dimensions, the array {len(array_shape)}",
                field="chunk_grid",
            )

    def grid_shape(self, array_shape: Sequence[int]) -> tuple[int, ...]:
        return tuple(
            -(-(int(n) + o) // c) if n else 0
            for n, c, o in zip(array_shape, self.chunk_shape_, self.offset)
        )

    def chunk_index(self, dim: int, positions: np.ndarray) -> np.ndarray:
        return (positions + self.offset[dim]) // self.chunk_shape_[dim]

    def chunk_start(self, dim: int, index: np.ndarray) -> np.ndarray:
        starts: np.ndarray = np.maximum(index * self.chunk_shape_[dim] - self.offset[dim], 0)
        return starts

    def chunk_shape(self, coords: Sequence[int]) -> tuple[int, ...]:
        return tuple(
            c - o if i == 0 else c for i, c, o in zip(coords, self.chunk_shape_, self.offset)
        )
