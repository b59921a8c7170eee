"""A validated chain of codecs planned for one chunk shape (`ChunkPlan`): array->array*, one
array->bytes, bytes->bytes*. Encoding runs the chain forwards, decoding backwards; any failure
to decode is reported as a ChunkDecodeError naming the chunk and the codec.

A plan also says whether it can decode part of a chunk from byte ranges
(`can_decode_partial`) and re-encode a partly written chunk from its old encoded value
(`can_encode_partial`); it offers either only when every codec in it declares it (see
`codec.py`), so the engine asks the plan and never looks at the codecs themselves."""

from __future__ import annotations

import enum
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, NoReturn

import numpy as np

from . import buffers, config
from .abc.codec import (
    ArrayArrayCodec,
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
    ChunkSpec,
    Codec,
    CodecKind,
    RangeReads,
)
from .errors import ChunkDecodeError, CodecChainError, ValueCastError, ZarrkitError
from .indexing import Region


def split(
    codecs: Sequence[Codec],
) -> tuple[tuple[ArrayArrayCodec, ...], ArrayBytesCodec, tuple[BytesBytesCodec, ...]]:
    """Check the order of kinds and split the chain at its array->bytes codec. A codec's kind
    is the typed base it derives from (see `codec.py`)."""
    kinds = [_kind_of(c) for c in codecs]
    n_ab = kinds.count(CodecKind.ARRAY_BYTES)
    if n_ab != 1:
        raise CodecChainError(
            f"a codec chain needs exactly one array -> bytes codec, got {n_ab} "
            f"in {[c.to_json() for c in codecs]}",
            field="codecs",
        )
    i = kinds.index(CodecKind.ARRAY_BYTES)
    if any(k is not CodecKind.ARRAY_ARRAY for k in kinds[:i]):
        raise CodecChainError(
            "only array -> array codecs may come before the array -> bytes codec", field="codecs"
        )
    if any(k is not CodecKind.BYTES_BYTES for k in kinds[i + 1 :]):
        raise CodecChainError(
            "only bytes -> bytes codecs may come after the array -> bytes codec", field="codecs"
        )
    ab = codecs[i]
    assert isinstance(ab, ArrayBytesCodec)
    aa = tuple(c for c in codecs[:i] if isinstance(c, ArrayArrayCodec))
    bb = tuple(c for c in codecs[i + 1 :] if isinstance(c, BytesBytesCodec))
    return aa, ab, bb


def _kind_of(codec: Codec) -> CodecKind:
    """The kind of the one typed base a codec derives from."""
    kinds = [kind for base, kind in _KINDS if isinstance(codec, base)]
    if len(kinds) != 1:
        raise CodecChainError(
            f"codec {type(codec).__name__} must derive from exactly one of zarrkit.abc's "
            f"ArrayArrayCodec, ArrayBytesCodec and BytesBytesCodec, so that its kind is known",
            field="codecs",
        )
    return kinds[0]


_KINDS: tuple[tuple[type[Codec], CodecKind], ...] = (
    (ArrayArrayCodec, CodecKind.ARRAY_ARRAY),
    (ArrayBytesCodec, CodecKind.ARRAY_BYTES),
    (BytesBytesCodec, CodecKind.BYTES_BYTES),
)


def evolve(codecs: Sequence[Codec], spec: ChunkSpec) -> tuple[Codec, ...]:
    """Let each codec fill in defaults from the spec it will see (at array creation)."""
    out = []
    for codec in codecs:
        codec = codec.evolve(spec)
        out.append(codec)
        if isinstance(codec, ArrayArrayCodec):
            spec = codec.encoded_spec(spec)
    return tuple(out)


class DecodeInto(enum.Enum):
    """How a chunk plan decodes a chunk into a given array (`ChunkPlan.decode_into`)."""

    #: decoded into a new array, then copied
    COPY = "copy"
    #: the bytes->bytes codec nearest the array writes the chunk's elements into the array
    #: (the codec chooses how: for a tiny chunk a library's own decode plus a copy can be
    #: cheaper); only where the chunk's stored elements are its elements as they are
    BYTES_CODEC = "bytes-codec"
    #: the array->bytes codec places the chunk in the array itself (sharding: inner chunks
    #: land in their places in the output), with nothing before or after it in the chain
    ARRAY_CODEC = "array-codec"


@dataclass(frozen=True, slots=True, eq=False)
class ChunkPlan:
    """How chunks of one shape are encoded and decoded: a chain with the spec each codec
    sees, and the strategies its codecs' declared capabilities allow (see `codec.py`),
    chosen once per chunk shape by `plan_chunks`."""

    array_array: tuple[tuple[ArrayArrayCodec, ChunkSpec], ...]
    array_bytes: tuple[ArrayBytesCodec, ChunkSpec]
    bytes_bytes: tuple[BytesBytesCodec, ...]
    spec: ChunkSpec
    #: the array->bytes codec's encoded value is the chunk's elements as they are
    stores_elements: bool
    #: a chunk handed to `encode` is only read, and may be a read-only strided view (chains
    #: that store elements, and chains whose array codecs all say `reads_input_only`)
    takes_views: bool
    #: `encode` hands a chunk on as it is (elements stored, nothing after the array->bytes
    #: codec): what is stored for a view of the written array is that view, no new memory
    passes_views: bool
    #: how `decode_into` decodes into a given array, and whether that saves a copy (a
    #: strategy other than `DecodeInto.COPY`; a field, as the read path asks per chunk)
    decode_into_by: DecodeInto
    decodes_into: bool
    #: the codec behind `DecodeInto.BYTES_CODEC` (None: another strategy)
    bytes_into: BytesBytesDecodeInto | None
    #: the codec behind `DecodeInto.ARRAY_CODEC` (None: another strategy)
    array_into: ArrayBytesDecodeInto | None
    #: the bytes->bytes codec nearest the array when it can stop after a prefix, so that
    #: `decode_transient(selection=...)` decodes only the rows a selection reaches
    prefix_decoder: BytesBytesDecodePrefix | None
    #: the outermost bytes->bytes codec when it decodes a group of chunks in one call
    #: (`decode_many_into`), and the plan of what is left after it
    batch_decoder: BytesBytesDecodeBatch | None
    after_batch: ChunkPlan | None
    #: byte ranges of the stored value reach the array->bytes codec unchanged, and it and
    #: every array->array codec can work on a region (`decode_partial`)
    can_decode_partial: bool
    #: a partly covered chunk can be re-encoded from its old value without decoding all of
    #: it (`encode_partial`)
    can_encode_partial: bool
    #: the codecs behind a partial decode (`decode_partial`): the array->bytes codec, and
    #: per array->array codec in chain order (codec as its capability, codec, spec)
    partial_decoder: ArrayBytesPartialDecode | None
    region_maps: tuple[tuple[ArrayArrayPartialDecode, ArrayArrayCodec, ChunkSpec], ...]
    #: the codecs behind a partial re-encode (`encode_partial`)
    partial_encoder: ArrayBytesPartialEncode | None
    encoded_views: tuple[tuple[ArrayArrayPartialEncode, ChunkSpec], ...]
    #: per bytes->bytes codec (in chain order) the most bytes its decoded value may hold; see
    #: `decode_bounds`
    decoded_bounds: tuple[int, ...]
    #: the most bytes a stored value of this chain may hold (its outermost codec's input)
    max_stored_size: int
    #: (codec, bound) for decoding: the bytes->bytes codecs outermost first
    decode_steps: tuple[tuple[BytesBytesCodec, int], ...]
    #: the chunk's decoded bytes and element type, at hand for the per-chunk paths
    nbytes: int | None
    dtype: np.dtype
    #: the range of a narrow integer type (fewer bits than the numpy type it is held in) that
    #: the array -> bytes codec gets from array -> array codecs; None when nothing can leave it
    narrow_range: tuple[int, int] | None

    def encode(self, chunk: np.ndarray, key: str | None = None) -> Any:
        """The stored value of a chunk (`key` names it in errors). Raises ValueCastError when
        array -> array codecs take a narrow type's values out of its range."""
        if self.stores_elements:  # the elements as they are: no need to ask the array->bytes codec
            return self._encode_raw(chunk)
        for aa, aa_spec in self.array_array:
            chunk = aa.encode(chunk, aa_spec)
        if self.narrow_range is not None:
            self._check_range(chunk, self.narrow_range, key)
        ab, spec = self.array_bytes
        data = ab.encode(chunk, spec)
        if data is None:  # an array->bytes codec found nothing to store (a shard of fill)
            return None
        for bb in self.bytes_bytes:
            data = bb.encode(data, spec)
        return data

    def _check_range(self, chunk: np.ndarray, span: tuple[int, int], key: str | None) -> None:
        """Refuse what a narrow type cannot hold before its serializer cuts it to its bits
        (silently: a 24-bit type keeps 3 of 4 bytes), so nothing wrong is stored."""
        if not chunk.size:
            return
        low, high = int(chunk.min()), int(chunk.max())
        if span[0] <= low and high <= span[1]:
            return
        codecs = ", ".join(repr(c.written_name()) for c, _ in self.array_array)
        where = f"chunk {key!r}: " if key else ""
        raise ValueCastError(
            f"{where}the codecs {codecs} encode values from {low} to {high}, outside the range "
            f"{span[0]}..{span[1]} of data type {self.array_bytes[1].data_type.describe()}, "
            f"which the array -> bytes codec {self.array_bytes[0].written_name()!r} cannot "
            f"store; nothing was written. Choose codecs that keep the type's range, or a wider "
            f"data type"
        )

    def _encode_raw(self, chunk: np.ndarray) -> Any:
        """A chunk whose stored bytes are its elements, often a strided view of the written
        array: with nothing after the array->bytes codec it is handed on as it is (a store
        takes any buffer and writes it in C order), else the bytes->bytes codecs get it in C
        order, copied when need be into this thread's encode buffer rather than a fresh
        chunk-sized array (whose fresh pages would fault on every chunk)."""
        if not self.bytes_bytes:
            return chunk if not chunk.flags.c_contiguous else chunk.reshape(-1).view(np.uint8)
        buffer = None
        if chunk.flags.c_contiguous:
            flat = chunk.reshape(-1).view(np.uint8)
        else:
            buffer = _encode_buffer(chunk.nbytes)
            np.copyto(buffer.view(chunk.dtype).reshape(chunk.shape), chunk)
            flat = buffer
        data: Any = flat
        spec = self.array_bytes[1]
        for codec in self.bytes_bytes:
            data = codec.encode(data, spec)
        # a codec that passed (part of) its input on must not hand out the encode buffer; a
        # `bytes` (what compressors return) owns its memory, and is not asked: numpy's overlap
        # check releases the GIL, which on two threads is a hand-off per chunk
        if (
            buffer is not None
            and type(data) is not bytes
            and np.may_share_memory(np.asarray(memoryview(data)), buffer)
        ):
            data = bytes(memoryview(data))
        return data

    def decode(self, data: Any, key: str | None = None) -> np.ndarray:
        current = [self.array_bytes[0]]
        try:  # (not the _decoding context manager: this is the per-chunk hot path)
            data = self._decode_bytes(data, current)
            current[0] = self.array_bytes[0]
            if self.stores_elements:  # the elements as they are: no need to ask the codec
                chunk = self._raw_chunk(data, key)
            else:
                chunk = self.array_bytes[0].decode(data, self.array_bytes[1])
            if self.array_array:
                chunk = self._decode_arrays(chunk, current)
        except Exception as exc:
            _raise_decode_error(exc, key, current[0])
        return self._checked(chunk, key)

    def decode_into(self, data: Any, dest: np.ndarray, key: str | None = None) -> None:
        """Decode a chunk into `dest` (a writable array of the chunk's shape and dtype, e.g.
        its place in a read's output): when the chain allows, the last bytes->bytes codec
        writes straight into it (or into a per-thread buffer when `dest` is strided),
        so no chunk-sized buffer is allocated per chunk."""
        codec = self.bytes_into
        if codec is not None:  # DecodeInto.BYTES_CODEC
            # (a flag, not the exception a strided array's `.data.cast` raises: the strided
            # case is the common one, a chunk's place in a larger output)
            target, buffer = self._scratch(dest) if not dest.flags.c_contiguous else (dest, None)
            if buffer is None:
                try:
                    buffer = dest.data.cast("B")
                except (TypeError, ValueError):  # a dtype numpy gives no buffer format
                    target, buffer = self._scratch(dest)
            if len(self.bytes_bytes) == 1:  # (`_bytes_into` inlined: tiny chunks feel each call)
                try:
                    done = codec.decode_into(data, buffer, self.array_bytes[1])
                except Exception as exc:
                    _raise_decode_error(exc, key, self.bytes_bytes[0])
            else:
                done = self._bytes_into(data, buffer, key)
            if done:
                if target is not dest:
                    dest[...] = target
                return
        elif self.array_into is not None:
            try:
                if self.array_into.decode_into(data, dest, self.array_bytes[1]):
                    return
            except Exception as exc:
                _raise_decode_error(exc, key, self.array_bytes[0])
        dest[...] = self.decode(data, key)

    def _scratch(self, dest: np.ndarray) -> tuple[np.ndarray, memoryview]:
        """This thread's buffer for a chunk of this plan decoded before it is copied into
        `dest` (strided: a chunk's place in a larger output), as an array like `dest` and as
        bytes; kept per thread for the plan it last served, so that a read of many chunks
        builds these views once."""
        held = getattr(_scratch, "held", None)
        if held is None or held[0] is not self:
            raw = buffers.thread_buffer("decode-into", dest.nbytes)
            held = (self, raw.view(dest.dtype).reshape(dest.shape), memoryview(raw))
            _scratch.held = held
        return held[1], held[2]

    def decode_many_into(
        self, blobs: Sequence[Any], dests: Sequence[np.ndarray], keys: Sequence[str | None]
    ) -> None:
        """`decode_into` for each chunk, the outermost bytes->bytes codec decoding them all in
        one call when it can (`batch_decoder`); what it leaves, or all when it declines, goes the
        usual way, which reports any error per chunk."""
        outer = self.batch_decoder
        decoded = outer.decode_batch(blobs, self.array_bytes[1]) if outer is not None else None
        if outer is None or decoded is None:
            for blob, dest, key in zip(blobs, dests, keys):
                self.decode_into(blob, dest, key)
            return
        if len(decoded) != len(blobs):
            raise CodecChainError(
                f"codec {self.bytes_bytes[-1].written_name()!r}: decode_batch gave "
                f"{len(decoded)} values for {len(blobs)} chunks"
            )
        rest = self.after_batch
        assert rest is not None  # (planned with the batch decoder)
        copy = rest.stores_elements and not rest.bytes_bytes  # the decoded bytes are the chunk
        nbytes = self.nbytes
        for blob, value, dest, key in zip(blobs, decoded, dests, keys):
            if value is None:
                self.decode_into(blob, dest, key)
            elif copy and len(value) == nbytes and dest.flags.c_contiguous:
                try:
                    dest.data.cast("B")[:] = value
                except (TypeError, ValueError):  # a dtype numpy gives no buffer format
                    rest.decode_into(value, dest, key)
            else:
                rest.decode_into(value, dest, key)

    def decode_transient(
        self, data: Any, key: str | None = None, selection: tuple | None = None
    ) -> np.ndarray:
        """The decoded chunk, in this thread's decode buffer when the plan decodes in place:
        valid only until this thread's next decode, for a caller that copies part of it out
        at once (no chunk-sized allocation per chunk). Given the chunk `selection` the caller
        will copy, a plan that can (`prefix_decoder`) decodes only the C-order prefix holding it:
        the rest of the returned chunk is then undefined."""
        if self.bytes_into is None:
            if (
                self.stores_elements and not self.bytes_bytes
            ):  # the stored bytes are the chunk: view them
                return self._raw_chunk(data, key)
            return self.decode(data, key)
        nbytes = self.nbytes
        if nbytes is None:  # (never: a stored-elements chain's data type has a fixed size)
            return self.decode(data, key)
        dest = _decode_buffer(nbytes, self.dtype).reshape(self.spec.shape)
        if (
            selection is not None
            and self.prefix_decoder is not None
            and self._decode_prefix(data, dest, selection, key)
        ):
            return dest
        self.decode_into(data, dest, key)
        return dest

    def _decode_prefix(
        self, data: Any, dest: np.ndarray, selection: tuple, key: str | None
    ) -> bool:
        """Decode into `dest` the rows of the chunk up to the last one `selection` touches."""
        shape = self.spec.shape
        if not shape or not selection:
            return False
        rows = _rows_needed(selection[0], shape[0])
        if rows >= shape[0]:
            return False
        nbytes = rows * (dest.nbytes // shape[0])
        # (viewed as bytes first: numpy exports no buffer of datetime64 or timedelta64)
        as_bytes = memoryview(dest.reshape(-1).view(np.uint8))
        return self._bytes_into(data, as_bytes[:nbytes], key, prefix=True)

    def _bytes_into(
        self, data: Any, buffer: memoryview, key: str | None, prefix: bool = False
    ) -> bool:
        """The bytes->bytes codecs decoded in turn, the last (nearest the array) writing into
        `buffer`: the whole decoded value, or with `prefix` its first `len(buffer)` bytes.
        False when that codec declines (nothing written to `buffer`)."""
        first = self.bytes_bytes[0]
        current: list[Codec] = [first]
        into, prefixed = self.bytes_into, self.prefix_decoder
        try:
            for codec, bound in self.decode_steps[:-1]:
                current[0] = codec
                data = codec.decode_bounded(data, self.array_bytes[1], bound)
            current[0] = first
            if prefix and prefixed is not None:
                return prefixed.decode_prefix_into(data, buffer, self.array_bytes[1])
            if into is None:
                return False
            return into.decode_into(data, buffer, self.array_bytes[1])
        except Exception as exc:
            _raise_decode_error(exc, key, current[0])

    def _raw_chunk(self, data: Any, key: str | None) -> np.ndarray:
        spec = self.spec
        size = len(data) if type(data) is bytes else memoryview(data).nbytes
        if size != self.nbytes:
            raise ChunkDecodeError(
                f"expected {spec.nbytes} bytes for a chunk of shape "
                f"{spec.shape} {spec.dtype}, got {size} (truncated or "
                f"corrupt)",
                key=key,
            )
        return np.frombuffer(data, dtype=self.dtype).reshape(spec.shape)

    def _decode_bytes(self, data: Any, current: list) -> Any:
        bytes_spec = self.array_bytes[1]
        for codec, bound in self.decode_steps:
            current[0] = codec
            data = codec.decode_bounded(data, bytes_spec, bound)
        return data

    def _decode_arrays(self, chunk: np.ndarray, current: list) -> np.ndarray:
        for codec, spec in reversed(self.array_array):
            current[0] = codec
            chunk = codec.decode(chunk, spec)
        return chunk

    def _checked(self, chunk: np.ndarray, key: str | None) -> np.ndarray:
        if chunk.shape != self.spec.shape:
            raise ChunkDecodeError(
                f"decoded shape {chunk.shape} differs from the chunk shape {self.spec.shape}",
                key=key,
            )
        return chunk

    def _decode_partial_arrays(
        self, decoder: ArrayBytesPartialDecode, region: Region, current: list[Codec]
    ) -> RangeReads[np.ndarray | None]:
        """A partial decode through the array->array codecs: the region is mapped to each
        codec's encoded side on the way in, and each decodes its part told where it sits (the
        region on its decoded side) on the way out."""
        regions = []
        for partial, _, spec in self.region_maps:
            regions.append(region)
            region = partial.encoded_region(region, spec)
        box = yield from decoder.decode_partial(region, self.array_bytes[1])
        if box is None:
            return None
        for (partial, codec, spec), outer in zip(reversed(self.region_maps), reversed(regions)):
            current[0] = codec
            box = partial.decode_partial(box, outer, spec)
        return box

    def decode_partial(
        self, region: Region, key: str | None = None
    ) -> RangeReads[np.ndarray | None]:
        """The box `region.bounds()` of the chunk with (at least) `region` decoded, reading
        only the byte ranges the array->bytes codec asks for; None when the stored value does
        not exist. Only when `can_decode_partial`."""
        decoder = self.partial_decoder
        if decoder is None:
            raise CodecChainError("this codec chain cannot decode part of a chunk")
        codec, spec = self.array_bytes
        current: list[Codec] = [codec]
        try:  # (not the _decoding context manager: a window's read goes through here)
            if self.array_array:
                box = yield from self._decode_partial_arrays(decoder, region, current)
            else:
                box = yield from decoder.decode_partial(region, spec)
            if box is None:
                return None
        except Exception as exc:
            _raise_decode_error(exc, key, current[0])
        shape = tuple(hi - lo for lo, hi in region.bounds())
        if box.shape != shape:
            raise ChunkDecodeError(
                f"partial decode gave shape {box.shape}, expected the box {shape} of the region",
                key=key,
            )
        return box

    def encode_partial(
        self, old: Any, region: Region, update: Callable[[np.ndarray], None], key: str | None = None
    ) -> Any:
        """The new stored value of a chunk a write covers partly: the old value (None: absent)
        is decoded only as far as the array->bytes codec needs. None: the chunk is all fill.
        Only when `can_encode_partial`."""
        encoder = self.partial_encoder
        if encoder is None:
            raise CodecChainError("this codec chain cannot re-encode part of a chunk")
        ab, ab_spec = self.array_bytes
        for codec, spec in self.encoded_views:
            region = codec.encoded_region(region, spec)
            update = _through_view(update, codec, spec)
        with _decoding(key, ab) as current:
            if old is not None:
                old = self._decode_bytes(old, current)
            current[0] = ab
            data = encoder.encode_partial(old, region, update, ab_spec)
        if data is None:
            return None
        for bb in self.bytes_bytes:
            data = bb.encode(data, ab_spec)
        return data


def plan_chunks(
    array_array: tuple[tuple[ArrayArrayCodec, ChunkSpec], ...],
    array_bytes: tuple[ArrayBytesCodec, ChunkSpec],
    bytes_bytes: tuple[BytesBytesCodec, ...],
    spec: ChunkSpec,
) -> ChunkPlan:
    """The plan for chunks of `spec`: each strategy chosen from what the codecs declare."""
    aa = [c for c, _ in array_array]
    ab, ab_spec = array_bytes
    raw_dtype = ab.raw_dtype(ab_spec)
    # (`is not None` first: numpy takes `dtype == None` as comparing with float64)
    elements = not aa and raw_dtype is not None and raw_dtype == spec.dtype
    bytes_into: BytesBytesDecodeInto | None = None
    prefix: BytesBytesDecodePrefix | None = None
    if elements and bytes_bytes:
        first = bytes_bytes[0]
        if isinstance(first, BytesBytesDecodeInto):
            bytes_into = first
            if isinstance(first, BytesBytesDecodePrefix):
                prefix = first
    array_into = ab if not aa and not bytes_bytes and isinstance(ab, ArrayBytesDecodeInto) else None
    if bytes_into is not None:
        into = DecodeInto.BYTES_CODEC
    elif array_into is not None:
        into = DecodeInto.ARRAY_CODEC
    else:
        into = DecodeInto.COPY
    maps = tuple((c, c, sp) for c, sp in array_array if isinstance(c, ArrayArrayPartialDecode))
    views = tuple((c, sp) for c, sp in array_array if isinstance(c, ArrayArrayPartialEncode))
    decoder = (
        ab
        if isinstance(ab, ArrayBytesPartialDecode)
        and len(maps) == len(aa)
        and all(isinstance(c, BytesBytesPartialDecode) for c in bytes_bytes)
        else None
    )
    encoder = ab if isinstance(ab, ArrayBytesPartialEncode) and len(views) == len(aa) else None
    bounds, stored = decode_bounds(ab, ab_spec, bytes_bytes, elements)
    batcher: BytesBytesDecodeBatch | None = None
    if bytes_bytes:
        outer = bytes_bytes[-1]
        if isinstance(outer, BytesBytesDecodeBatch) and outer.batch_decodes(ab_spec):
            batcher = outer
    return ChunkPlan(
        array_array=array_array,
        array_bytes=array_bytes,
        bytes_bytes=bytes_bytes,
        spec=spec,
        stores_elements=elements,
        takes_views=elements or (ab.reads_input_only and all(c.reads_input_only for c in aa)),
        passes_views=elements and not bytes_bytes,
        decode_into_by=into,
        decodes_into=into is not DecodeInto.COPY,
        bytes_into=bytes_into,
        array_into=array_into,
        prefix_decoder=prefix,
        batch_decoder=batcher,
        after_batch=(
            plan_chunks(array_array, array_bytes, bytes_bytes[:-1], spec)
            if batcher is not None
            else None
        ),
        can_decode_partial=decoder is not None,
        can_encode_partial=encoder is not None,
        partial_decoder=decoder,
        region_maps=maps if decoder is not None else (),
        partial_encoder=encoder,
        encoded_views=views if encoder is not None else (),
        decoded_bounds=bounds,
        max_stored_size=stored,
        decode_steps=tuple(reversed(tuple(zip(bytes_bytes, bounds)))),
        nbytes=spec.nbytes,
        dtype=spec.dtype,
        narrow_range=_narrow_range(array_bytes[1]) if aa else None,
    )


def _rows_needed(item: Any, n: int) -> int:
    """How many leading positions of a dimension of length `n` a selection item reaches."""
    if isinstance(item, slice):
        start, stop, step = item.indices(n)
        if step > 0:
            return stop if stop > start else 0
        return start + 1 if start > stop else 0
    if isinstance(item, np.ndarray):
        return int(item.max()) + 1 if item.size else 0
    return int(item) + 1


def _decode_buffer(nbytes: int, dtype: np.dtype) -> np.ndarray:
    """A per-thread buffer of `nbytes` bytes viewed as `dtype`, reused from chunk to chunk (a
    fresh chunk-sized allocation costs page faults every time)."""
    return buffers.thread_buffer("decode", nbytes).view(dtype)


def _encode_buffer(nbytes: int) -> np.ndarray:
    """A per-thread uint8 buffer for putting a chunk in C order before its bytes->bytes codecs
    (apart from `_decode_buffer`, which reads use: valid until this thread's next encode)."""
    return buffers.thread_buffer("encode", nbytes)


def _through_view(
    update: Callable[[np.ndarray], None], codec: ArrayArrayPartialEncode, spec: ChunkSpec
) -> Callable[[np.ndarray], None]:
    """`update` for the chunk on the encoded side of an array->array codec."""
    return lambda encoded: update(codec.decoded_view(encoded, spec))


@contextmanager
def _decoding(key: str | None, first: Codec) -> Iterator[list]:
    """Report any failure inside as a ChunkDecodeError naming the chunk and the codec at work
    (`current[0]`, kept up to date by the caller)."""
    current = [first]
    try:
        yield current
    except Exception as exc:
        _raise_decode_error(exc, key, current[0])


def _raise_decode_error(exc: Exception, key: str | None, codec: Codec | None) -> NoReturn:
    """Raise what `_decode_error` makes of `exc`: itself, or a ChunkDecodeError from it."""
    error = _decode_error(exc, key, codec)
    if error is exc:
        raise exc
    raise error from exc


def _decode_error(exc: Exception, key: str | None, codec: Codec | None) -> Exception:
    """The error to raise for a failure while decoding: a ChunkDecodeError naming the chunk and
    the codec (a codec library's own error on corrupt input is wrapped); other zarrkit errors
    unchanged."""
    if isinstance(exc, ChunkDecodeError):
        if exc.key is None and key is not None:
            exc.key = key
            exc.args = (f"chunk {key!r}: {exc.args[0]}",)
        return exc
    if isinstance(exc, ZarrkitError):
        return exc
    name = codec.written_name() if codec is not None else "?"
    return ChunkDecodeError(
        f"codec {name!r} failed to decode it (corrupt or truncated): {type(exc).__name__}: {exc}",
        key=key,
    )


#: a codec that cannot bound its input (`BytesBytesCodec.max_encoded_size` None) is allowed this much
#: beyond twice its output, when that is more than `config.max_chunk_bytes`
_SLACK = 64 << 10

#: per thread: the plan whose decode scratch (`ChunkPlan._scratch`) it holds last
_scratch = threading.local()


def _narrow_range(spec: ChunkSpec) -> tuple[int, int] | None:
    """The `int_range` of the spec's data type when it is narrower than its numpy type's."""
    span = spec.data_type.int_range
    native = spec.dtype
    if span is None or native.kind not in "iu":
        return None
    info = np.iinfo(native)
    return span if (span[0], span[1]) != (int(info.min), int(info.max)) else None


def decode_bounds(
    ab: ArrayBytesCodec, spec: ChunkSpec, bytes_bytes: Sequence[BytesBytesCodec], raw: bool
) -> tuple[tuple[int, ...], int]:
    """The most bytes each bytes->bytes codec's decoded value may hold (in chain order), and
    the most a stored value may hold. Worked from the array outwards: the array->bytes codec
    takes exactly a chunk's bytes when the chunk's elements are stored as they are, else what
    it says (`ArrayBytesCodec.max_encoded_chunk_size`); each bytes->bytes codec may produce what the
    next one inwards accepts, and accepts what it says (`BytesBytesCodec.max_encoded_size`). Where a
    codec cannot say, `config.max_chunk_bytes` applies (or twice the size plus `_SLACK` when
    that is more), so every step has a bound."""
    cap = config.get().max_chunk_bytes
    size = spec.nbytes if raw else ab.max_encoded_chunk_size(spec)
    if size is None:
        size = cap
    bounds = []
    for codec in bytes_bytes:
        bounds.append(size)
        wider = codec.max_encoded_size(size)
        size = wider if wider is not None else max(cap, 2 * size + _SLACK)
    return tuple(bounds), size


class CodecChain:
    """The codecs of one array; `bind(shape)` gives the chain for chunks of that shape."""

    def __init__(self, codecs: Sequence[Codec], data_type: Any, fill_value: Any):
        self.codecs = tuple(codecs)
        self.data_type = data_type
        self.fill_value = fill_value
        self._aa, self._ab, self._bb = split(self.codecs)
        self._bound: dict[tuple[int, ...], ChunkPlan] = {}

    def bind(self, shape: tuple[int, ...]) -> ChunkPlan:
        bound = self._bound.get(shape)
        if bound is None:
            bound = self._bound[shape] = self._bind(
                ChunkSpec(shape, self.data_type, self.fill_value)
            )
        return bound

    def _bind(self, spec: ChunkSpec) -> ChunkPlan:
        first = spec
        stages = []
        for aa in self._aa:
            _check(aa, spec)
            stages.append((aa, spec))
            spec = aa.encoded_spec(spec)
        _check(self._ab, spec)
        for bb in self._bb:
            _check(bb, spec)
        return plan_chunks(tuple(stages), (self._ab, spec), self._bb, first)


def _check(codec: Codec, spec: ChunkSpec) -> None:
    """A codec's own checks of the data type and chunks it will see. Anything but a zarrkit
    error from them (a data type whose layout numpy cannot build) is reported as the codec
    refusing the type, so it shows when the array is created, not at its first write."""
    try:
        codec.check_data_type(spec.data_type)
        codec.validate(spec)
    except ZarrkitError:
        raise
    except Exception as exc:
        raise codec.refuse(spec.data_type, f"{type(exc).__name__}: {exc}") from exc
