"""Keeping the zfp library inside a stored value.

zfp decodes a stream without knowing where its buffer ends: it reads bits for as many blocks as
the field has, so a value shorter than its field needs (truncated, or a header claiming a
larger field) makes it read past the end of the buffer and crash the process. Both zfp codecs
(`zfp`, header-less, and numcodecs' `zfpy`, with zfp's header) therefore check what a header
claims against the chunk, and hand zfp the value padded with zero bits up to the most a
stream of that field can hold: what zfp reads past the stored bytes is then zeros of our own.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from zarrkit.errors import ChunkDecodeError

#: zfp's scalar types (`zfp_type`, 1-based in its header) as numpy dtypes
_ZFP_TYPES: dict[int, np.dtype] = {
    1: np.dtype("i4"),
    2: np.dtype("i8"),
    3: np.dtype("f4"),
    4: np.dtype("f8"),
}
#: bits per size in zfp's header, by the field's dimensionality (48 bits shared)
_SIZE_BITS = {1: 48, 2: 24, 3: 16, 4: 12}
#: zfp's header: 32 bits of magic and version, 52 of field, then the mode (12 or 64 bits)
_HEADER_BYTES = (32 + 52 + 64 + 7) // 8


@dataclass(frozen=True, slots=True)
class ZfpField:
    """The field a zfp header declares: its sizes (fastest first, as zfp orders them) and
    scalar type."""

    sizes: tuple[int, ...]
    dtype: np.dtype


def read_header(value: bytes) -> ZfpField:
    """The field declared by the zfp header at the start of `value` (zfp writes its bit
    stream least significant bit first, in 64-bit little-endian words). Raises
    ChunkDecodeError when there is no zfp header."""
    if len(value) < _HEADER_BYTES or value[:3] != b"zfp":
        raise ChunkDecodeError("zfpy: the value does not start with a zfp header (corrupt)")
    meta = (int.from_bytes(value[:16], "little") >> 32) & ((1 << 52) - 1)
    kind = (meta & 3) + 1
    dims = ((meta >> 2) & 3) + 1
    bits = _SIZE_BITS[dims]
    rest = meta >> 4
    sizes = tuple(((rest >> (bits * i)) & ((1 << bits) - 1)) + 1 for i in range(dims))
    return ZfpField(sizes, _ZFP_TYPES[kind])


def check_field(field: ZfpField, shape: Sequence[int], dtype: np.dtype) -> None:
    """Refuse a header whose field is not the chunk's: zfp would allocate the field it
    declares and read a stream that long from the value."""
    count, expected = math.prod(field.sizes), math.prod(shape)
    if count != expected or field.dtype != dtype:
        raise ChunkDecodeError(
            f"zfpy: the value's header declares {count} values of {field.dtype}, a chunk of "
            f"shape {tuple(shape)} holds {expected} of {dtype} (corrupt)"
        )


def padded(value: bytes, sizes: Sequence[int], itemsize: int) -> bytes:
    """`value` with zero bytes after it up to the most a zfp stream of a field of `sizes` can
    take: zfp codes blocks of 4 values per dimension, each value in at most its bits plus one
    group-test bit per bit plane, plus a block header."""
    blocks = math.prod(-(-n // 4) for n in sizes)
    block_bits = 4 ** len(sizes) * (2 * 8 * itemsize + 2) + 64
    most = _HEADER_BYTES + blocks * block_bits // 8 + 4096
    if len(value) >= most:
        return value
    return value + bytes(most - len(value))
