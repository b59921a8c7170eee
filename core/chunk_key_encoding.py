"""The chunk key encoding contract: chunk coordinates <-> the key of a chunk inside its node."""

from __future__ import annotations

from collections.abc import Sequence

from .extension import Extension


class ChunkKeyEncoding(Extension):
    def encode(self, coords: Sequence[int]) -> str:
        raise NotImplementedError

    def decode(self, key: str) -> tuple[int, ...]:
        raise NotImplementedError
