"""The C and F memory layouts (v2 `order`, the 2020 draft's `chunk_memory_layout`)."""

from __future__ import annotations

from zarrkit.memory_layout import MemoryLayout
from zarrkit.names import names


class COrder(MemoryLayout):
    names = names(v2="C", draft="C")
    numpy_order = "C"


class FOrder(MemoryLayout):
    names = names(v2="F", draft="F")
    numpy_order = "F"
