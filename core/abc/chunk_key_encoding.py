"""The chunk key encoding contract: chunk coordinates <-> the key of a chunk inside its node."""

from __future__ import annotations

from ..chunk_key_encoding import ChunkKeyEncoding

__all__ = ["ChunkKeyEncoding"]
