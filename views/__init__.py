"""Lazy views of zarrkit arrays (`zarrkit.LazyArray`, from `array.lazy`): selections that
compose without I/O and read, or write, as one selection on the base array; `read_many` reads
many views in one plan. Outside the kernel: the kernel's `Array.lazy` imports this package
when called."""

from __future__ import annotations

from .reading import read_many, read_many_async
from .view import LazyArray

__all__ = ["LazyArray", "read_many", "read_many_async"]
