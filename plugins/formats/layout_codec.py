"""The array -> bytes step of v2 and the 2020 draft: a memory layout plugin plus the byte order
the data type's name declares, presented to the codec chain as one array -> bytes codec so the
chunk engine treats every format alike."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from zarrkit.abc import (
    ArrayBytesCodec,
    ChunkSpec,
    Codec,
    CodecKind,
    ExtensionNames,
    MemoryLayout,
    V3Equivalent,
)
from zarrkit.errors import ChunkDecodeError
from zarrkit.helpers import get_registry


class LayoutCodec(ArrayBytesCodec, V3Equivalent):
    names = ExtensionNames({})  # not a registered extension: formats build it from `order` / layout

    def __init__(self, layout: MemoryLayout, endian: str | None):
        self.layout = layout
        self.endian = endian

    def _dtype(self, spec: ChunkSpec) -> np.dtype:
        return spec.data_type.encoded_dtype(self.endian or "little")

    def encode(self, data: Any, spec: ChunkSpec) -> Any:
        return self.layout.to_bytes(data, self._dtype(spec))

    def decode(self, data: Any, spec: ChunkSpec) -> np.ndarray:
        dtype = self._dtype(spec)
        expected = math.prod(spec.shape) * dtype.itemsize
        if len(memoryview(data).cast("B")) != expected:
            raise ChunkDecodeError(
                f"chunk holds {len(memoryview(data).cast('B'))} bytes, a "
                f"{spec.shape} chunk of {dtype} needs {expected}"
            )
        chunk = self.layout.from_bytes(data, spec.shape, dtype)
        return chunk if chunk.dtype == spec.dtype else chunk.astype(spec.dtype)

    def encoded_size(self, nbytes: int) -> int | None:
        return nbytes

    def v3_codecs(self, ndim: int) -> list[dict[str, Any]] | None:
        return self.layout.v3_codecs(ndim, self.endian)

    def to_json(self, format: str = "v3") -> Any:
        """A description for messages and reprs; formats write `order` / the layout themselves."""
        names = type(self.layout).names
        fmt = format if names.written(format) else next(iter(names.formats()), format)
        return {"memory_layout": self.layout.to_json(fmt), "endian": self.endian}

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is LayoutCodec
            and self.endian == other.endian
            and self.layout == other.layout
        )

    def __hash__(self) -> int:
        return hash((type(self.layout), self.endian))


def as_layout(codecs: Sequence[Codec], ndim: int, format: str) -> tuple[LayoutCodec, int] | None:
    """Find a memory layout (with a name in `format`) equivalent to the leading array -> array
    codecs plus the array -> bytes codec of a v3-style chain, so a chain like `bytes` or
    `transpose` + `bytes` can be written as v2 `order` / the draft's `chunk_memory_layout`.

    Returns the layout codec and how many leading codecs it replaces, or None. The comparison is
    on JSON only, through each layout plugin's `v3_codecs`: the kernel names no codec here."""

    prefix = []
    for codec in codecs:
        prefix.append(codec)
        if codec.kind is CodecKind.ARRAY_BYTES:
            break
    else:
        return None
    if any(isinstance(c, LayoutCodec) for c in prefix):
        first = prefix[0]
        return (first, 1) if len(prefix) == 1 and isinstance(first, LayoutCodec) else None
    wanted = [c.to_json() for c in prefix]
    for _provider, cls, _error in get_registry("memory_layout").load_all():
        if cls is None:
            continue
        layout_cls = cast("type[MemoryLayout]", cls)  # what the memory_layout registry holds
        if layout_cls.names.written(format) is None:
            continue
        layout = layout_cls()
        for endian in ("little", "big", None):
            candidate = layout.v3_codecs(ndim, endian)
            if candidate is not None and _same_codecs(candidate, wanted):
                return LayoutCodec(layout, endian), len(prefix)
    return None


def _same_codecs(a: list[dict], b: list[Any]) -> bool:
    """JSON codec lists equal up to the bare-name / empty-configuration spellings."""

    def norm(c: Any) -> tuple:
        if isinstance(c, str):
            return (c, {})
        return (c.get("name"), c.get("configuration") or {})

    return len(a) == len(b) and all(norm(x) == norm(y) for x, y in zip(a, b))
