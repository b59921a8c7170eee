"""The `zstd` codec (bytes -> bytes), through the `zstandard` package with contexts kept per
thread, and through numcodecs where zstandard is not installed; both release the GIL.

Why which library (bench/ measures both; the figures live in bench/README.md and in the
commits that chose):

- numcodecs makes and frees a zstd context on every call, which is most of the cost of small
  chunks; for big chunks the context's tables are fresh memory each time, faulted in page by
  page. A context kept per thread (zstandard) avoids both.
- Compressing a big chunk runs at the same speed in both.
- zstandard decompresses as fast or faster at every size. Below `_INTO_FROM` `decode_into`
  decodes and copies; from there up a stream reader of the kept context writes the frame into
  the given buffer (`_read_into`), which spares the copy and numcodecs' per-call context and
  its Python checks of the buffer, done with the GIL held.

A shard's tiny inner chunks are decoded a share at a time (`decode_batch`, zstandard's batch
decode): one call per thread's share releases the GIL once, where per-chunk calls on two
threads hand it back and forth on every chunk. For a group of separate chunk files the batch
saves nothing: the engine reads those on one thread and decodes them one by one.

Either way the frame declares its content size (`decode_into` relies on it) and carries a
checksum when configured.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numcodecs import zstd as _zstd

from zarrkit.abc import (
    V3,
    BytesBytesCodec,
    BytesBytesDecodeBatch,
    BytesBytesDecodeInto,
    BytesBytesDecodePrefix,
    ChunkSpec,
    Codec,
    as_bytes_view,
    check_known_fields,
    config_value,
    decoded_too_large,
    names,
)
from zarrkit.plugins.codecs.codec_ids import draft_uri

zstandard: Any
try:
    import zstandard
except ImportError:  # numcodecs alone still reads and writes the same frames
    zstandard = None

#: this thread's zstandard contexts: `decompressor`, and `compressors` by (level, checksum);
#: made on first use, as they must not be shared between threads (calls release the GIL)
_local = threading.local()


def _compressor(level: int, checksum: bool) -> Any:
    try:
        return _local.compressors[level, checksum]
    except AttributeError:
        _local.compressors = {}
    except KeyError:
        pass
    made = _local.compressors[level, checksum] = zstandard.ZstdCompressor(
        level=level, write_checksum=checksum, write_content_size=True
    )
    return made


def _decompressor() -> Any:
    try:
        return _local.decompressor
    except AttributeError:
        made = _local.decompressor = zstandard.ZstdDecompressor()
        return made


@dataclass(frozen=True, eq=False)
class ZstdCodec(
    BytesBytesCodec, BytesBytesDecodeInto, BytesBytesDecodePrefix, BytesBytesDecodeBatch
):
    names = names("zstd", v2="zstd", draft=draft_uri("zstd"))
    releases_gil = True
    level: int = 0
    checksum: bool = False

    @classmethod
    def from_json(cls, name: str, configuration: Mapping[str, Any], format: str = V3) -> ZstdCodec:
        check_known_fields(configuration, {"level", "checksum"}, owner="zstd codec")
        level = config_value(configuration, "level", int, owner="zstd codec", default=0)
        if not -131072 <= level <= 22:
            from zarrkit.errors import MetadataError

            raise MetadataError(
                f"zstd codec: level {level} is outside -131072..22", field="configuration.level"
            )
        checksum = config_value(configuration, "checksum", bool, owner="zstd codec", default=False)
        return cls(level, checksum)

    def configuration(self, format: str = V3) -> dict:
        return {"level": self.level, "checksum": self.checksum}

    def encode(self, data: Any, spec: ChunkSpec) -> bytes:
        out: bytes
        if zstandard is not None:
            out = _compressor(self.level, self.checksum).compress(data)
        else:
            out = _zstd.compress(data, self.level, self.checksum)
        return out

    def decode(self, data: Any, spec: ChunkSpec) -> bytes:
        return self.decode_bounded(data, spec, None)

    def decode_bounded(self, data: Any, spec: ChunkSpec, max_size: int | None) -> bytes:
        return decompress_bounded(data, max_size, self)

    def max_encoded_size(self, nbytes: int) -> int:
        # libzstd's ZSTD_COMPRESSBOUND is n + n/256 + a few bytes; twice its margin and 64 KiB
        # leave room for frames other writers make (several frames, skippable frames)
        return nbytes + (nbytes >> 7) + (64 << 10)

    def batch_decodes(self, spec: ChunkSpec) -> bool:
        # from `_INTO_FROM` a chunk decodes straight into the output (a batch would copy it)
        return _MULTI and spec.nbytes is not None and spec.nbytes < _INTO_FROM

    def decode_batch(self, items: Sequence[Any], spec: ChunkSpec) -> list[Any] | None:
        # zstandard's batch decode stops at the end of each item's first frame and does not
        # say where that was: only items that are one frame of one block, ending exactly at
        # the item's end and declaring their size, go into it (the others, and any batch it
        # refuses, e.g. for a corrupt frame or a bad checksum, are decoded one by one)
        if zstandard is None or len(items) < 2:
            return None
        try:
            joined = b"".join(items)
        except TypeError:
            return None
        lengths = np.fromiter(map(len, items), np.int64, len(items))
        if int(lengths.sum()) != len(joined):  # (an item that is not flat bytes)
            return None
        starts = np.cumsum(lengths) - lengths
        picked = np.flatnonzero(_whole_frames(np.frombuffer(joined, np.uint8), starts, lengths))
        if not picked.size:
            return None
        segments = np.stack((starts[picked], lengths[picked]), axis=1).astype(np.uint64)
        try:
            decoded = _decompressor().multi_decompress_to_buffer(
                zstandard.BufferWithSegments(joined, segments.tobytes())
            )
        except (zstandard.ZstdError, ValueError, NotImplementedError):
            return None
        out: list[Any] = [None] * len(items)
        for j, i in enumerate(picked.tolist()):
            out[i] = decoded[j]
        return out

    def decode_into(self, data: Any, out: memoryview, spec: ChunkSpec) -> bool:
        if len(out) < _INTO_FROM and zstandard is not None:
            # numcodecs' per-call context is most of a small chunk's cost; the kept zstandard
            # context and a copy cost less
            try:
                if zstandard.frame_content_size(data) != len(out):
                    return False  # (undeclared, or not this chunk's size: the bounded way)
                got = _decompressor().decompress(data, allow_extra_data=False)
            except zstandard.ZstdError:
                return False  # (the usual way: it decodes it or says what is wrong)
            if len(got) != len(out):
                return False
            out[:] = got
            return True
        if _content_size(data) != len(out):  # unknown or different: the usual way, which checks
            return False
        if zstandard is None:
            _zstd.decompress(data, out)
            return True
        return _read_into(data, out)

    def decode_prefix_into(self, data: Any, out: memoryview, spec: ChunkSpec) -> bool:
        # zstd decodes block by block (up to 128 KiB of output each), so stopping early saves
        # only when at least a whole block is left undecoded (in a 256 KiB chunk, a prefix of
        # at most half costs about half). A checksummed frame is decoded whole
        # so that its checksum is checked.
        if spec.nbytes is not None and len(out) > spec.nbytes - _BLOCK_BYTES:  # small chunks
            return False
        size = _content_size(data)
        if (
            zstandard is None
            or self.checksum
            or size is None
            or size != spec.nbytes
            or len(out) > size - _BLOCK_BYTES
        ):
            return False  # (a frame declaring another size than the chunk's goes the usual way)
        reader = _decompressor().stream_reader(data, read_across_frames=False)
        got = 0
        while got < len(out):
            n = reader.readinto(out[got:])
            if not n:
                raise ValueError(
                    f"zstd frame ended after {got} bytes, before the {len(out)} "
                    f"needed of its declared {size} (truncated or corrupt)"
                )
            got += n
        return True


#: decoded sizes from which a chunk decodes into the caller's buffer (below: a decode and a copy)
_INTO_FROM = 64 << 10

#: the most a zstd block decodes to
_BLOCK_BYTES = 128 << 10

_FCS_BYTES = (0, 2, 4, 8)
_DICT_ID_BYTES = (0, 1, 2, 4)

#: zstandard's batch decode (its C backend has it)
_MULTI = (
    zstandard is not None
    and getattr(zstandard, "backend", "") == "cext"
    and hasattr(zstandard, "BufferWithSegments")
)


def _read_into(data: Any, out: memoryview) -> bool:
    """A frame declaring `len(out)` bytes decoded into `out` by this thread's kept context
    (numcodecs makes a context per call and checks `out` in Python first, with the GIL held,
    which the engine's other thread waits for). False when the value holds anything after
    those bytes but the frame's end (a frame too long, more frames), or does not decode: the
    usual way then decodes it or says what is wrong."""
    try:
        reader = _decompressor().stream_reader(data, read_across_frames=True)
        got = reader.readinto(out)
        while 0 < got < len(out) and (more := reader.readinto(out[got:])):
            got += more
        # (reading on checks a checksum after the last block, and finds what follows it)
        return got == len(out) and not reader.read(1)
    except zstandard.ZstdError:
        return False


def decompress_bounded(data: Any, max_size: int | None, codec: Codec) -> bytes:
    """zstd frames decoded to at most `max_size` bytes (None: no limit): the size a frame
    declares is checked before anything is allocated for it; a frame without one (or several
    frames) is decoded as a stream that stops past `max_size`. `codec` is named in errors."""
    if zstandard is None:
        return _decode_numcodecs(data, max_size, codec)
    try:
        size = zstandard.frame_content_size(data)
    except zstandard.ZstdError:
        size = -1  # not a frame's start: the stream decoder says what is wrong
    if max_size is not None and size > max_size:
        raise decoded_too_large(codec, max_size, size)
    if size >= 0:
        try:  # one frame that declares its size, nothing after it: the common case
            out: bytes = _decompressor().decompress(data, allow_extra_data=False)
            return out
        except zstandard.ZstdError:
            pass  # several frames, or corrupt: the stream decoder decodes or raises
    return _stream_decode(data, max_size, codec)


def _decode_numcodecs(data: Any, max_size: int | None, codec: Codec) -> bytes:
    """Without zstandard: a declared size is checked first; a frame without one is decoded
    whole by numcodecs and checked after (numcodecs has no limit to give it)."""
    size = _content_size(data)
    if max_size is not None and size is not None and size > max_size:
        raise decoded_too_large(codec, max_size, size)
    out: bytes = _zstd.decompress(data)
    if max_size is not None and len(out) > max_size:
        raise decoded_too_large(codec, max_size, len(out))
    return out


#: bytes decoded per read of a frame that does not declare its size (`_stream_decode`)
_STREAM_STEP = 256 << 10


def _stream_decode(data: Any, max_size: int | None, codec: Codec) -> bytes:
    """Every frame of `data` decoded as a stream, read a step at a time so that no more than
    `max_size` bytes (plus one step) are ever decoded: a frame that does not declare its size
    cannot make it allocate more. A truncated frame or trailing garbage is an error (the
    stream reader itself stops quietly at the end of its input, so the frames' block
    structure is walked first)."""
    _check_frames(as_bytes_view(data))
    reader = _decompressor().stream_reader(data, read_across_frames=True)
    parts, got = [], 0
    while True:
        step = _STREAM_STEP if max_size is None else min(_STREAM_STEP, max_size + 1 - got)
        part = reader.read(max(step, 1))
        if not part:
            break
        parts.append(part)
        got += len(part)
        if max_size is not None and got > max_size:
            raise decoded_too_large(codec, max_size)
    return b"".join(parts)


_MAGIC = 0xFD2FB528
_SKIPPABLE = 0x184D2A50  # the last four bits are free


def _check_frames(view: memoryview) -> None:
    """Raise ValueError unless `view` is whole zstd frames (or skippable frames) back to back,
    each block as long as its header says and each frame ending in a last block (RFC 8878)."""
    at, end = 0, len(view)
    if not end:
        raise ValueError("zstd: the value is empty (no frame)")
    while at < end:
        if end - at < 8:
            raise ValueError(f"zstd: {end - at} bytes at {at} are too few for a frame (truncated)")
        magic = int.from_bytes(view[at : at + 4], "little")
        if magic & 0xFFFFFFF0 == _SKIPPABLE:
            at += 8 + int.from_bytes(view[at + 4 : at + 8], "little")
            continue
        if magic != _MAGIC:
            raise ValueError(f"zstd: no frame at byte {at} (corrupt or trailing data)")
        descriptor = view[at + 4]
        single_segment = (descriptor >> 5) & 1
        at += (
            5
            + (1 - single_segment)
            + _DICT_ID_BYTES[descriptor & 3]
            + (_FCS_BYTES[descriptor >> 6] or single_segment)
        )
        last = 0
        while not last:
            if at + 3 > end:
                raise ValueError("zstd: the frame is truncated (a block header is missing)")
            block = int.from_bytes(view[at : at + 3], "little")
            last, kind = block & 1, (block >> 1) & 3
            if kind == 3:
                raise ValueError(f"zstd: reserved block type at byte {at} (corrupt)")
            at += 3 + (1 if kind == 1 else block >> 3)
        at += 4 * ((descriptor >> 2) & 1)
    if at != end:
        raise ValueError("zstd: the last frame is truncated")


def _whole_frames(buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Which of the items at `starts` (`lengths` bytes each) in `buf` are one zstd frame that
    declares its content size and holds a single block ending, with the frame's checksum when
    it has one, exactly at the item's end (RFC 8878: header, block headers, checksum). Read
    for all items at once: per item in Python this would cost what the batch saves."""
    ok = lengths >= 9  # magic, descriptor, at least one size byte, a block header
    if not ok.any():
        return ok
    at = np.where(ok, starts, 0)
    descriptor = buf[at + 4].astype(np.int64)
    single_segment = (descriptor >> 5) & 1
    size_bytes = np.maximum(np.take(_FCS_BYTES, descriptor >> 6), single_segment)
    header = 6 - single_segment + np.take(_DICT_ID_BYTES, descriptor & 3) + size_bytes
    ok &= (size_bytes > 0) & (header + 3 <= lengths)
    if not ok.any():
        return ok
    # the content size (the header's last field) no more than one block decodes to: the batch
    # decoder allocates what a frame declares. A field of 1 or 2 bytes holds at most 65,791;
    # only wider ones (rare for the small chunks batched) are read
    wide = ok & (size_bytes > 2)
    if wide.any():
        ok[wide] &= _declared(buf, (at + header - size_bytes)[wide], size_bytes[wide])
    at = np.where(ok, at + header, 0)
    block = (
        buf[at].astype(np.int64)
        | (buf[at + 1].astype(np.int64) << 8)
        | (buf[at + 2].astype(np.int64) << 16)
    )
    content = np.where(((block >> 1) & 3) == 1, 1, block >> 3)  # an RLE block holds one byte
    checksum = 4 * ((descriptor >> 2) & 1)
    whole: np.ndarray = ok & ((block & 1) == 1) & (header + 3 + content + checksum == lengths)
    return whole


def _declared(buf: np.ndarray, at: np.ndarray, size_bytes: np.ndarray) -> np.ndarray:
    """Whether the content sizes of `size_bytes` bytes (4 or 8, little endian) at `at` in
    `buf` are at most a block's (an 8-byte field is written only for sizes beyond 4 GiB)."""
    four = (
        buf[at].astype(np.int64)
        | (buf[at + 1].astype(np.int64) << 8)
        | (buf[at + 2].astype(np.int64) << 16)
        | (buf[at + 3].astype(np.int64) << 24)
    )
    small: np.ndarray = (size_bytes == 4) & (four <= _BLOCK_BYTES)
    return small


def _content_size(data: Any) -> int | None:
    """The decompressed size a zstd frame header declares (None: not declared, or not a
    single plain frame start), read from the header alone."""
    view = memoryview(data)
    if view.nbytes < 6 or bytes(view[:4]) != b"\x28\xb5\x2f\xfd":
        return None
    descriptor = view[4]
    single_segment = (descriptor >> 5) & 1
    fcs = _FCS_BYTES[descriptor >> 6] or single_segment
    if not fcs:
        return None
    start = 5 + (0 if single_segment else 1) + _DICT_ID_BYTES[descriptor & 3]
    if view.nbytes < start + fcs:
        return None
    size = int.from_bytes(view[start : start + fcs], "little")
    return size + 256 if fcs == 2 else size
