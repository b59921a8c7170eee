"""What indexing asks of a chunk grid. A protocol, so that indexing names nothing of the
kernel: the kernel's `ChunkGrid` (`zarrkit.abc`) answers it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np


class ChunkGrid(Protocol):
    """A chunk grid as indexing sees it: per dimension and vectorised, never per element."""

    def grid_shape(self, array_shape: Sequence[int]) -> tuple[int, ...]:
        """Number of chunks along each dimension."""
        ...

    def chunk_index(self, dim: int, positions: np.ndarray) -> np.ndarray:
        """Index of the chunk holding each element position along `dim`."""
        ...

    def chunk_start(self, dim: int, index: np.ndarray) -> np.ndarray:
        """Offset of the first element of each chunk along `dim`."""
        ...

    @property
    def uniform_chunk_shape(self) -> tuple[int, ...] | None:
        """The chunk shape when every chunk has one, else None."""
        ...
