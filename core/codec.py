"""The codec contract: three kinds, a chunk spec that flows through the chain, encode/decode.

Codecs are synchronous and pure; the chunk engine decides where they run. A codec declares
whether it releases the GIL (numcodecs' compressors do) so the engine knows threads will help.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np

from .data_type import DataType
from .extension import Extension


class CodecKind(enum.Enum):
    ARRAY_ARRAY = "array -> array"
    ARRAY_BYTES = "array -> bytes"
    BYTES_BYTES = "bytes -> bytes"


@dataclass(frozen=True)
class ChunkSpec:
    """What a codec sees of a chunk on its decoded side: shape, data type and fill value."""

    shape: tuple[int, ...]
    data_type: DataType
    fill_value: Any

    @property
    def dtype(self) -> np.dtype:
        return self.data_type.native

    @property
    def nbytes(self) -> int | None:
        size = self.data_type.item_size
        if size is None:
            return None
        return int(np.prod(self.shape, dtype=np.int64)) * size

    def with_shape(self, shape: tuple[int, ...]) -> "ChunkSpec":
        return replace(self, shape=tuple(shape))


class Codec(Extension):
    kind: ClassVar[CodecKind]
    #: True when encode/decode release the GIL, so running chunks on threads scales.
    releases_gil: ClassVar[bool] = False

    def evolve(self, spec: ChunkSpec) -> "Codec":
        """Fill in what a user left out but the chunk spec determines (e.g. an endian).

        Called once when an array is created, never on read: what was read is used as is.
        """
        return self

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        """The spec on this codec's encoded side (array->array codecs change it)."""
        return spec

    def validate(self, spec: ChunkSpec) -> None:
        """Raise CodecChainError if this codec cannot encode chunks of `spec`; never rewrite."""

    def encode(self, data: Any, spec: ChunkSpec) -> Any:
        raise NotImplementedError

    def decode(self, data: Any, spec: ChunkSpec) -> Any:
        raise NotImplementedError

    def encoded_size(self, nbytes: int) -> int | None:
        """Size of the encoded form of `nbytes` input bytes, when it is fixed (checksums)."""
        return None

    def __repr__(self) -> str:
        return f"<codec {self.to_json()!r}>"

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.to_json() == other.to_json()

    def __hash__(self) -> int:
        return hash((type(self), repr(self.to_json())))


def as_bytes_view(data: Any) -> memoryview:
    """A flat byte view of any buffer (bytes, bytearray, ndarray, memoryview), no copy."""
    view = memoryview(data)
    if view.ndim != 1 or view.format != "B":
        view = view.cast("B") if view.contiguous else memoryview(bytes(view))
    return view
