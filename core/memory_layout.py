"""The memory layout contract (v2 `order`, the 2020 draft's `chunk_memory_layout`): the order in
which a chunk's elements are laid out as bytes."""

from __future__ import annotations

from typing import ClassVar

from .extension import Extension


class MemoryLayout(Extension):
    #: The numpy order ('C' or 'F') this layout corresponds to.
    numpy_order: ClassVar[str]
