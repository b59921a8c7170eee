"""A validated chain of codecs bound to a chunk spec: array->array*, one array->bytes,
bytes->bytes*. Encoding runs the chain forwards, decoding backwards; any failure to decode is
reported as a ChunkDecodeError naming the chunk and the codec."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .codec import ChunkSpec, Codec, CodecKind
from .errors import ChunkDecodeError, CodecChainError, ZarrkitError


def split(codecs: Sequence[Codec]) -> tuple[tuple[Codec, ...], Codec, tuple[Codec, ...]]:
    """Check the order of kinds and split the chain at its array->bytes codec."""
    kinds = [c.kind for c in codecs]
    n_ab = kinds.count(CodecKind.ARRAY_BYTES)
    if n_ab != 1:
        raise CodecChainError(f"a codec chain needs exactly one array -> bytes codec, got {n_ab} "
                              f"in {[c.to_json() for c in codecs]}", key="codecs")
    i = kinds.index(CodecKind.ARRAY_BYTES)
    if any(k is not CodecKind.ARRAY_ARRAY for k in kinds[:i]):
        raise CodecChainError("only array -> array codecs may come before the array -> bytes codec",
                              key="codecs")
    if any(k is not CodecKind.BYTES_BYTES for k in kinds[i + 1:]):
        raise CodecChainError("only bytes -> bytes codecs may come after the array -> bytes codec",
                              key="codecs")
    return tuple(codecs[:i]), codecs[i], tuple(codecs[i + 1:])


def evolve(codecs: Sequence[Codec], spec: ChunkSpec) -> tuple[Codec, ...]:
    """Let each codec fill in defaults from the spec it will see (at array creation)."""
    out = []
    for codec in codecs:
        codec = codec.evolve(spec)
        out.append(codec)
        if codec.kind is CodecKind.ARRAY_ARRAY:
            spec = codec.resolve(spec)
    return tuple(out)


@dataclass(frozen=True, eq=False)
class BoundChain:
    """A chain with the spec each codec sees, computed once per chunk shape."""

    array_array: tuple[tuple[Codec, ChunkSpec], ...]
    array_bytes: tuple[Codec, ChunkSpec]
    bytes_bytes: tuple[Codec, ...]
    spec: ChunkSpec

    def encode(self, chunk: np.ndarray) -> Any:
        for codec, spec in self.array_array:
            chunk = codec.encode(chunk, spec)
        codec, spec = self.array_bytes
        data = codec.encode(chunk, spec)
        for codec in self.bytes_bytes:
            data = codec.encode(data, spec)
        return data

    def decode(self, data: Any, key: str | None = None) -> np.ndarray:
        codec = None
        bytes_spec = self.array_bytes[1]
        try:
            for codec in reversed(self.bytes_bytes):
                data = codec.decode(data, bytes_spec)
            codec, spec = self.array_bytes
            chunk = codec.decode(data, spec)
            for codec, spec in reversed(self.array_array):
                chunk = codec.decode(chunk, spec)
        except ChunkDecodeError as exc:
            if exc.key is None and key is not None:
                exc.key = key
                exc.args = (f"chunk {key!r}: {exc.args[0]}",)
            raise
        except ZarrkitError:
            raise
        except Exception as exc:  # a codec library's own error on corrupt input
            name = codec.written_name() if codec is not None else "?"
            raise ChunkDecodeError(f"codec {name!r} failed to decode it (corrupt or truncated): "
                                   f"{type(exc).__name__}: {exc}", key=key) from exc
        if chunk.shape != self.spec.shape:
            raise ChunkDecodeError(f"decoded shape {chunk.shape} differs from the chunk shape "
                                   f"{self.spec.shape}", key=key)
        return chunk


class CodecChain:
    """The codecs of one array; `bind(shape)` gives the chain for chunks of that shape."""

    def __init__(self, codecs: Sequence[Codec], data_type: Any, fill_value: Any):
        self.codecs = tuple(codecs)
        self.data_type = data_type
        self.fill_value = fill_value
        self._aa, self._ab, self._bb = split(self.codecs)
        self._bound: dict[tuple[int, ...], BoundChain] = {}

    def bind(self, shape: tuple[int, ...]) -> BoundChain:
        bound = self._bound.get(shape)
        if bound is None:
            bound = self._bound[shape] = self._bind(ChunkSpec(shape, self.data_type, self.fill_value))
        return bound

    def _bind(self, spec: ChunkSpec) -> BoundChain:
        first = spec
        stages = []
        for codec in self._aa:
            codec.validate(spec)
            stages.append((codec, spec))
            spec = codec.resolve(spec)
        self._ab.validate(spec)
        for codec in self._bb:
            codec.validate(spec)
        return BoundChain(tuple(stages), (self._ab, spec), self._bb, first)
