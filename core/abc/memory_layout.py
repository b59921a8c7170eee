"""The memory layout contract (v2 `order`, the 2020 draft's `chunk_memory_layout`): the order of a
chunk's elements as bytes."""

from __future__ import annotations

from ..memory_layout import MemoryLayout

__all__ = ["MemoryLayout"]
