"""The chunk grid contract, per dimension and vectorised: the indexing engine asks a grid which
chunk holds each position and where each chunk starts, never looping in Python over elements."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from .extension import Extension

__all__ = ["ChunkGrid"]


class ChunkGrid(Extension):
    """How an array's shape is cut into chunks (the `chunk_grid` of its metadata): the base
    of a chunk grid plugin (docs/plugins/authoring-chunk-grids.md)."""

    def validate(self, array_shape: Sequence[int]) -> None:
        """Raise MetadataError if this grid cannot describe an array of this shape."""

    def grid_shape(self, array_shape: Sequence[int]) -> tuple[int, ...]:
        """Number of chunks along each dimension."""
        raise NotImplementedError

    def chunk_index(self, dim: int, positions: np.ndarray) -> np.ndarray:
        """Index of the chunk holding each element position along `dim`."""
        raise NotImplementedError

    def chunk_start(self, dim: int, index: np.ndarray) -> np.ndarray:
        """Offset of the first element of each chunk along `dim`."""
        raise NotImplementedError

    def chunk_shape(self, coords: Sequence[int]) -> tuple[int, ...]:
        """Shape of the stored (encoded) chunk at `coords`; edge chunks may be padded."""
        raise NotImplementedError

    @property
    def uniform_chunk_shape(self) -> tuple[int, ...] | None:
        """The chunk shape when every chunk has one, else None."""
        return None

    def chunk_shapes_used(self, array_shape: Sequence[int]) -> Iterable[tuple[int, ...]]:
        """The distinct stored chunk shapes of an array of `array_shape`, lazily: the kernel
        checks the codec chain against the first few when the array is opened or resized, so
        a chain that cannot encode some chunk (a shard edge not a multiple of the inner chunk)
        is refused before anything is written. The default knows only a uniform shape."""
        uniform = self.uniform_chunk_shape
        return () if uniform is None else (uniform,)

    def resized(self, new_shape: Sequence[int]) -> ChunkGrid:
        """The grid of the array after a resize (a regular grid stays as it is)."""
        return self
