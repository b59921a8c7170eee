"""The memory layout contract (v2 `order`, the 2020 draft's `chunk_memory_layout`): the order in
which a chunk's elements are laid out as bytes.

In v3 the same job is done by codecs (`transpose` + `bytes`); in v2 and the draft the layout and
the data type's byte order together are the array -> bytes step, so a layout plugin turns a chunk
into bytes and back. A layout that is not a plain numpy order (the draft allows extensions)
overrides `to_bytes` / `from_bytes`.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import numpy as np

from .extension import Extension

__all__ = ["MemoryLayout"]


class MemoryLayout(Extension):
    """How a chunk's elements are laid out in its bytes (the 2020 draft's
    `chunk_memory_layout`): the base of a memory layout plugin."""

    #: The numpy order ('C' or 'F') this layout corresponds to, if it is one.
    numpy_order: ClassVar[Literal["C", "F"] | None] = None

    def to_bytes(self, chunk: np.ndarray, dtype: np.dtype) -> Any:
        """The chunk's elements as `dtype` (which carries the byte order), in this layout."""
        return np.asarray(chunk, dtype=dtype).tobytes(order=self.numpy_order)

    def from_bytes(self, data: Any, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        """A chunk of `shape` read from bytes laid out by `to_bytes` (values still in `dtype`)."""
        count = int(np.prod(shape, dtype=np.int64))
        flat = np.frombuffer(data, dtype=dtype, count=count)
        return flat.reshape(shape, order=self.numpy_order)

    def v3_codecs(self, ndim: int, endian: str | None) -> list[dict[str, Any]] | None:
        """The v3 codec JSON (array -> array codecs and one array -> bytes codec) that lays
        chunks out exactly like this layout, or None when v3 has no equivalent. Used when
        converting between formats: equal layouts let encoded chunks be copied untouched."""
        return None
