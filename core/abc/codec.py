"""Codec contracts: one typed base per kind, the capabilities a codec may declare, and what a
codec that holds other codecs (sharding) needs to run them.

The bases and capabilities are described in the kernel's `zarrkit.codec`, which defines them;
this module is the one place a plugin imports them from.

- Kinds: `ArrayArrayCodec`, `ArrayBytesCodec`, `BytesBytesCodec` (`Codec` is their common
  base, for type hints over any codec; `CodecKind` names the three).
- Capabilities, each declared by deriving from it beside the base of the kind:
  `ArrayArrayPartialDecode` (with `ArrayArrayElementwise`, its ready-made form for codecs that
  map each element on its own), `ArrayArrayPartialEncode`, `ArrayBytesPartialDecode`,
  `ArrayBytesPartialEncode`, `ArrayBytesDecodeInto`, `BytesBytesPartialDecode`,
  `BytesBytesDecodeInto`, `BytesBytesDecodePrefix`, `BytesBytesDecodeBatch`.
- What codecs are handed and return: `ChunkSpec`, `Region`, `RangeReads` (a partial decode's
  generator of byte-range requests), `CacheableRange` (a request whose answer may be cached).
- Helpers: `as_bytes_view`, `decoded_too_large` (the error for a decompression bomb),
  `shift_range` and `lockstep` (nesting partial decodes).
- Nested chains: `CodecChain` (a list of codecs for one data type and fill value; `bind(shape)`
  gives a `ChunkPlan` that encodes, decodes and decodes partially with the same checks as an
  array's own chain) and `evolve_codecs` (fill in defaults at array creation).
"""

from __future__ import annotations

from ..codec import (
    ArrayArrayCodec,
    ArrayArrayElementwise,
    ArrayArrayPartialDecode,
    ArrayArrayPartialEncode,
    ArrayBytesCodec,
    ArrayBytesDecodeInto,
    ArrayBytesPartialDecode,
    ArrayBytesPartialEncode,
    BytesBytesCodec,
    BytesBytesDecodeBatch,
    BytesBytesDecodeInto,
    BytesBytesDecodePrefix,
    BytesBytesPartialDecode,
    CacheableRange,
    ChunkSpec,
    Codec,
    CodecKind,
    RangeReads,
    as_bytes_view,
    decoded_too_large,
    lockstep,
    shift_range,
)
from ..codec_chain import ChunkPlan, CodecChain, DecodeInto
from ..codec_chain import evolve as evolve_codecs
from ..indexing import Region

__all__ = [
    "ArrayArrayCodec",
    "ArrayArrayElementwise",
    "ArrayArrayPartialDecode",
    "ArrayArrayPartialEncode",
    "ArrayBytesCodec",
    "ArrayBytesDecodeInto",
    "ArrayBytesPartialDecode",
    "ArrayBytesPartialEncode",
    "BytesBytesCodec",
    "BytesBytesDecodeBatch",
    "BytesBytesDecodeInto",
    "BytesBytesDecodePrefix",
    "BytesBytesPartialDecode",
    "CacheableRange",
    "ChunkPlan",
    "ChunkSpec",
    "Codec",
    "CodecChain",
    "CodecKind",
    "DecodeInto",
    "RangeReads",
    "Region",
    "as_bytes_view",
    "decoded_too_large",
    "evolve_codecs",
    "lockstep",
    "shift_range",
]
