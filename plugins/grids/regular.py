"""The `regular` chunk grid: every chunk has the same shape; edge chunks are stored padded."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrkit.abc import V3, ChunkGrid, check_known_fields, names
from zarrkit.errors import MetadataError


@dataclass(frozen=True, eq=True)
class RegularChunkGrid(ChunkGrid):
    # v2 names no grid: its `chunks` field is this grid, so this plugin claims the v2 spelling
    # "chunks" (what the v2 format resolves) and reads "regular" there too
    names = names("regular", v2="chunks", v2_aliases=["regular"], draft="regular")
    chunk_shape_: tuple[int, ...]

    def __post_init__(self) -> None:
        given: tuple[object, ...] = self.chunk_shape_  # from JSON: checked, not trusted
        for n in given:
            if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
                raise MetadataError(
                    f"regular grid: chunk_shape must be positive integers, got {list(self.chunk_shape_)}",
                    field="chunk_grid.configuration.chunk_shape",
                )
        object.__setattr__(self, "chunk_shape_", tuple(int(n) for n in self.chunk_shape_))

    @classmethod
    def from_json(
        cls, name: str, configuration: Mapping[str, Any], format: str = V3
    ) -> RegularChunkGrid:
        check_known_fields(configuration, {"chunk_shape"}, owner="regular chunk grid")
        shape = configuration.get("chunk_shape")
        if not isinstance(shape, list):
            raise MetadataError(
                f"regular grid needs a list 'chunk_shape', got {shape!r}",
                field="chunk_grid.configuration.chunk_shape",
            )
        return cls(tuple(shape))

    def configuration(self, format: str = V3) -> dict:
        return {"chunk_shape": list(self.chunk_shape_)}

    def validate(self, array_shape: Sequence[int]) -> None:
        if len(array_shape) != len(self.chunk_shape_):
            raise MetadataError(
                f"chunk_shape {list(self.chunk_shape_)} has {len(self.chunk_shape_)} dimensions, "
                f"the array has {len(array_shape)}",
                field="chunk_grid",
            )

    def grid_shape(self, array_shape: Sequence[int]) -> tuple[int, ...]:
        return tuple(-(-int(s) // c) for s, c in zip(array_shape, self.chunk_shape_))

    def chunk_index(self, dim: int, positions: np.ndarray) -> np.ndarray:
        return positions // self.chunk_shape_[dim]

    def chunk_start(self, dim: int, index: np.ndarray) -> np.ndarray:
        return index * self.chunk_shape_[dim]

    def chunk_shape(self, coords: Sequence[int]) -> tuple[int, ...]:
        return self.chunk_shape_

    @property
    def uniform_chunk_shape(self) -> tuple[int, ...]:
        return self.chunk_shape_
