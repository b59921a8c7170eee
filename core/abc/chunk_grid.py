"""The chunk grid contract: which chunk holds each element position and where each chunk starts,
per dimension and vectorised."""

from __future__ import annotations

from ..chunk_grid import ChunkGrid

__all__ = ["ChunkGrid"]
