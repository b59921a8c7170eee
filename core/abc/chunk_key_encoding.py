"""The chunk key encoding contract: chunk coordinates <-> the key of a chunk inside its node."""

from __future__ import annotations

from collections.abc import Sequence

from .extension import Extension

__all__ = ["ChunkKeyEncoding"]


class ChunkKeyEncoding(Extension):
    """How a chunk's grid coordinates become its store key, and back: the base of a chunk key
    encoding plugin (docs/plugins/authoring-chunk-key-encodings.md)."""

    def encode(self, coords: Sequence[int]) -> str:
        raise NotImplementedError

    def decode(self, key: str) -> tuple[int, ...]:
        raise NotImplementedError
