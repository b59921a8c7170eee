"""Bounded decoding for the numcodecs compressors the bridge serves (`Codec.decode_bounded`).

numcodecs' own `decode` has no limit: `bz2`, `lzma`, `zlib` and `gzip` inflate a whole stream
and `lz4`, `zstd` and `blosc` allocate whatever their header declares. Here each decodes the
same format with the limit given: a declared size is checked before anything is allocated
(lz4, zstd, blosc), and a stream is inflated to at most one byte past the limit (zlib, gzip,
bz2, lzma), and pcodec decodes into a chunk-sized array. A codec not listed here is decoded
by numcodecs and its result checked after (checksums and shuffles cannot grow their input, so
for them it costs nothing); zfpy's header is checked against the chunk first (`zfp_streams`).
"""

from __future__ import annotations

import bz2
import lzma
import math
import zlib
from collections.abc import Callable
from typing import Any

import numpy as np

from zarrkit.abc import ChunkSpec, Codec, as_bytes_view, decoded_too_large
from zarrkit.errors import ChunkDecodeError
from zarrkit.plugins.codecs.zfp_streams import check_field, padded, read_header

#: the most memory an lzma/xz decoder may take for its dictionary beyond the decoded size (a
#: stream written at preset 9 needs 65 MiB; a header declaring more is refused)
_LZMA_MEMLIMIT = 128 << 20

#: numcodecs' zlib (zlib header) and gzip (gzip header) wrappers
_ZLIB_WBITS = 15
_GZIP_WBITS = 31


def _lz4(codec: Codec, impl: Any, data: Any, max_size: int) -> Any:
    """numcodecs' lz4: a little-endian int32 decoded size, then an LZ4 block."""
    view = as_bytes_view(data)
    if len(view) < 4:
        raise ChunkDecodeError(f"lz4: {len(view)} bytes is too short for the size header")
    size = int.from_bytes(view[:4], "little", signed=True)
    if size < 0:
        raise ChunkDecodeError(f"lz4: the header declares a negative size {size} (corrupt)")
    if size > max_size:
        raise decoded_too_large(codec, max_size, size)
    return impl.decode(view)


def _zstd(codec: Codec, impl: Any, data: Any, max_size: int) -> Any:
    from zarrkit.plugins.codecs.zstd import decompress_bounded

    return decompress_bounded(data, max_size, codec)


def _blosc(codec: Codec, impl: Any, data: Any, max_size: int) -> Any:
    from zarrkit.plugins.codecs.blosc import checked_frame

    return impl.decode(checked_frame(data, max_size, codec))


def _streams(make: Callable[[], Any], what: str, codec: Codec, data: Any, max_size: int) -> bytes:
    """Every stream in `data` (gzip members, bz2 and xz streams follow one another) inflated
    by a fresh decompressor from `make`, to at most `max_size + 1` bytes in all."""
    parts: list[bytes] = []
    got = 0
    rest: Any = as_bytes_view(data)
    while True:
        decompressor = make()
        part = decompressor.decompress(rest, max_size + 1 - got)
        parts.append(part)
        got += len(part)
        if got > max_size:
            raise decoded_too_large(codec, max_size)
        if not decompressor.eof:
            raise ChunkDecodeError(f"{what}: the stream is truncated")
        rest = decompressor.unused_data
        if not rest:
            return b"".join(parts)


def _zlib(codec: Codec, impl: Any, data: Any, max_size: int) -> bytes:
    # numcodecs' zlib decodes one stream (zlib.decompress ignores what follows it)
    decompressor = zlib.decompressobj(_ZLIB_WBITS)
    out = decompressor.decompress(as_bytes_view(data), max_size + 1)
    if len(out) > max_size:
        raise decoded_too_large(codec, max_size)
    if not decompressor.eof:
        raise ChunkDecodeError("zlib: the stream is truncated")
    return out


def _gzip(codec: Codec, impl: Any, data: Any, max_size: int) -> bytes:
    return _streams(lambda: zlib.decompressobj(_GZIP_WBITS), "gzip", codec, data, max_size)


def _bz2(codec: Codec, impl: Any, data: Any, max_size: int) -> bytes:
    return _streams(bz2.BZ2Decompressor, "bz2", codec, data, max_size)


def _lzma(codec: Codec, impl: Any, data: Any, max_size: int) -> bytes:
    fmt = getattr(impl, "format", lzma.FORMAT_AUTO)
    if fmt == lzma.FORMAT_RAW:  # (no memory limit can be given with raw filters)
        filters = getattr(impl, "filters", None)
        return _streams(
            lambda: lzma.LZMADecompressor(fmt, filters=filters), "lzma", codec, data, max_size
        )
    limit = max_size + _LZMA_MEMLIMIT
    return _streams(
        lambda: lzma.LZMADecompressor(fmt, memlimit=limit), "lzma", codec, data, max_size
    )


def pcodec_chunk(codec: Codec, data: Any, spec: ChunkSpec) -> np.ndarray:
    """numcodecs' pcodec (array -> bytes) decoded into a chunk of `spec` and no further: its
    header declares how many values follow, which numcodecs' decode allocates."""
    from pcodec import standalone

    out = np.empty(math.prod(spec.shape), dtype=spec.dtype)
    progress = standalone.simple_decompress_into(bytes(as_bytes_view(data)), out)
    if not progress.finished or progress.n_processed != out.size:
        more = "more" if not progress.finished else f"only {progress.n_processed}"
        raise ChunkDecodeError(
            f"{codec.written_name()}: the value holds {more} values, a chunk "
            f"of shape {spec.shape} holds {out.size} (corrupt)"
        )
    return out


def zfpy_chunk(codec: Codec, data: Any, spec: ChunkSpec) -> np.ndarray:
    """numcodecs' zfpy (array -> bytes) decoded only when its header declares the chunk's
    field, from the value padded so zfp cannot read past it (`zfp_streams`)."""
    value = bytes(as_bytes_view(data))
    field = read_header(value)
    check_field(field, spec.shape, spec.dtype)
    decoded: np.ndarray = codec.impl.decode(  # type: ignore[attr-defined]
        padded(value, field.sizes, field.dtype.itemsize)
    )
    return decoded


#: array -> bytes numcodecs ids decoded into a chunk of the spec, or checked against it before
#: decoding (the others are decoded by numcodecs and their element count checked after)
BOUNDED_CHUNKS: dict[str, Callable[[Codec, Any, ChunkSpec], np.ndarray]] = {
    "pcodec": pcodec_chunk,
    "zfpy": zfpy_chunk,
}

#: numcodecs id -> a decoder taking (the bridge codec, numcodecs' codec, data, max_size)
BOUNDED: dict[str, Callable[[Codec, Any, Any, int], Any]] = {
    "lz4": _lz4,
    "zstd": _zstd,
    "blosc": _blosc,
    "zlib": _zlib,
    "gzip": _gzip,
    "bz2": _bz2,
    "lzma": _lzma,
}


def max_encoded_size(nbytes: int) -> int:
    """The input of one of these compressors for at most `nbytes` decoded bytes (so a codec
    further out is bounded by what it accepts): stored-as-is blocks cost well under 1/64 of
    the data, and headers well under 64 KiB."""
    return nbytes + nbytes // 64 + (64 << 10)
