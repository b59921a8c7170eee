"""The codec contract: a common base, one typed base per kind, and declared capabilities.

Codecs are synchronous and pure; the chunk engine decides where they run. A codec declares
whether it releases the GIL (numcodecs' compressors do) so the engine knows threads will help.

A codec derives from the base of its kind, which carries only the methods valid for that kind:

- `ArrayArrayCodec`: an array to an array (transpose, a filter); may change the chunk spec;
- `ArrayBytesCodec`: an array to bytes (the serialiser; exactly one per chain);
- `BytesBytesCodec`: bytes to bytes (compressors, checksums), always decoded with a bound.

Anything more a codec can do it declares by also deriving from a capability class, whose
methods are then abstract (a codec that declares one and lacks its method cannot be built).
The codec chain reads the declarations once per chunk shape (`ChunkPlan`); nothing is inferred
from which methods a class happens to override.

Partial access (sharding is one user, not a special case):

- `ArrayBytesPartialDecode`: decode a `Region` of a chunk from byte ranges of its encoded value
  (`decode_partial`, a generator of range requests, see `RangeReads`);
- `ArrayBytesPartialEncode`: re-encode a chunk from its old encoded value when a write covers
  only part of it (`encode_partial`);
- `ArrayArrayPartialDecode`: map a region to the encoded side (`encoded_region`) and decode
  only that part, told where it sits in the chunk (`decode_partial`); `ArrayArrayElementwise`
  is both for a codec whose every output element depends on its own input element alone;
- `ArrayArrayPartialEncode`: that, and a writable decoded view of an encoded chunk
  (`decoded_view`);
- `BytesBytesPartialDecode`: byte i of the input is byte i of the output, so byte ranges pass
  through unchanged.

The chain offers partial decoding (encoding) only when every codec in it declares it.

Decoding without a copy: `ArrayBytesDecodeInto` and `BytesBytesDecodeInto` (`decode_into`),
`BytesBytesDecodePrefix` (`decode_prefix_into`), `BytesBytesDecodeBatch` (`decode_batch`).
A codec with no v3 name that v3 codecs can stand for (v2's memory layout) is `V3Equivalent`.

What codecs are handed and return besides: `ChunkSpec`, `Region` (from `zarrkit.indexing`),
`RangeReads` and `CacheableRange`; helpers: `as_bytes_view`, `decoded_too_large` (the error
for a decompression bomb), `shift_range` and `lockstep` (nesting partial decodes). A codec that
runs codecs of its own (sharding's inner chunks) binds them with `zarrkit.helpers.CodecChain`.
"""

from __future__ import annotations

import enum
import math
from abc import ABC, ABCMeta, abstractmethod
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar, TypeVar

import numpy as np

from ..errors import ChunkDecodeError, CodecChainError
from ..indexing import Region
from .data_type import DataType
from .extension import V2, V3, V3_DRAFT_2020, Extension, named_config
from .store import ByteRange, Range, SuffixRange

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
    "ChunkSpec",
    "Codec",
    "CodecKind",
    "RangeReads",
    "Region",
    "V3Equivalent",
    "as_bytes_view",
    "decoded_too_large",
    "lockstep",
    "shift_range",
]

T = TypeVar("T")


@dataclass(frozen=True)
class CacheableRange:
    """A range a partial decode asks for whose answer stays right for as long as the stored
    value is not rewritten (a shard's index, which every read of that shard needs first): the
    engine may answer it from a cache kept by the array handle, which its own writes clear."""

    range: Range


#: A partial decode runs as a generator, so the engine can gather the byte ranges that many
#: chunks need into one store request. It yields a list of ranges of its encoded value
#: (`ByteRange` / `SuffixRange`, or either wrapped in `CacheableRange`), is sent the list of answers
#: (bytes; None when the value does not exist) and returns its result.
RangeReads = Generator[list["Range | CacheableRange"], list[Any], T]
"""A partial decoder's plan: it yields the byte ranges it needs, is sent their bytes, and
returns its result (so many decoders' reads go to the store together)."""


class CodecKind(enum.Enum):
    """What a codec turns into what: the three places of a codec chain."""

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
        size = self.data_type.stored_size
        if size is None:
            return None
        return math.prod(self.shape) * size

    def with_shape(self, shape: tuple[int, ...]) -> ChunkSpec:
        return replace(self, shape=tuple(shape))


def shift_range(
    rng: Range | CacheableRange, offset: int, length: int
) -> ByteRange | CacheableRange:
    """A range of a value that sits at `offset` (with `length` bytes) inside a larger one, as a
    range of the larger value; nested partial decoders use it to pass requests outwards."""
    if isinstance(rng, CacheableRange):  # inside a value that lasts, a lasting part lasts as well
        return CacheableRange(_shift(rng.range, offset, length))
    return _shift(rng, offset, length)


def _shift(rng: Range, offset: int, length: int) -> ByteRange:
    if isinstance(rng, SuffixRange):
        n = min(rng.length, length)
        return ByteRange(offset + length - n, n)
    start = min(rng.offset, length)
    n = length - start if rng.length is None else min(rng.length, length - start)
    return ByteRange(offset + start, n)


def lockstep(reads: Sequence[RangeReads[Any]]) -> RangeReads[list[Any]]:
    """Run several partial decodes together, yielding their requests as one list per round, so
    a codec that needs many sub-decodes (a shard's inner chunks) still makes one request."""
    results: list[Any] = [None] * len(reads)
    pending: list[tuple[int, list[Range | CacheableRange]]] = []
    for i, gen in enumerate(reads):
        _advance(gen, None, i, results, pending)
    while pending:
        answers = yield [r for _, ranges in pending for r in ranges]
        current, pending, at = pending, [], 0
        for i, ranges in current:
            _advance(reads[i], answers[at : at + len(ranges)], i, results, pending)
            at += len(ranges)
    return results


def _advance(
    gen: RangeReads[Any],
    answer: Any,
    i: int,
    results: list[Any],
    pending: list[tuple[int, list[Range | CacheableRange]]],
) -> None:
    try:
        pending.append((i, gen.send(answer)))
    except StopIteration as stop:
        results[i] = stop.value


class Codec(Extension, metaclass=ABCMeta):
    """What every codec shares, whatever its kind. A codec derives from the base of its kind
    (`ArrayArrayCodec`, `ArrayBytesCodec`, `BytesBytesCodec`), never from this class alone."""

    kind: ClassVar[CodecKind]
    #: True when encode/decode release the GIL, so running chunks on threads scales.
    releases_gil: ClassVar[bool] = False
    #: The v3 name of the data type this codec implies (v2's object codecs: `|O` + vlen-utf8
    #: is "string"); formats whose dtype is ambiguous resolve it through this.
    implied_data_type: ClassVar[str | None] = None

    def evolve(self, spec: ChunkSpec) -> Codec:
        """Fill in what a user left out but the chunk spec determines (e.g. an endian).

        Called once when an array is created, never on read: what was read is used as is.
        """
        return self

    def check_data_type(self, data_type: DataType) -> None:
        """Raise `self.refuse(data_type, why)` if this codec cannot handle `data_type` at all
        (a serializer without a layout for it, a filter for numbers given text). The chain
        asks it, with the data type this codec sees, when an array is created and when it is
        opened, before `validate`: so a type a codec cannot take is refused then, not when a
        chunk is first written. The default accepts every type."""

    def refuse(self, data_type: DataType, why: str) -> CodecChainError:
        """The error for a data type this codec cannot handle, naming both."""
        return CodecChainError(
            f"codec {self.written_name()!r} cannot handle data type {data_type.describe()}: {why}",
            field="codecs",
        )

    def validate(self, spec: ChunkSpec) -> None:
        """Raise CodecChainError if this codec cannot encode chunks of `spec`; never rewrite.
        Asked when an array is created and opened, after `check_data_type`."""

    def to_json(self, format: str = V3) -> Any:
        """The codec as its format writes it.

        v3: `{"name", "configuration"}`. v2: numcodecs' flat dict, `{"id": name, **config}`
        (the form of `.zarray`'s `compressor` and `filters`). The 2020 draft: `{"codec": URI,
        "configuration": {...}}`. A codec only declares its names and `configuration(format)`.
        """
        name = self.written_name(format)
        configuration = self.configuration(format)
        if format == V2:
            return {"id": name, **configuration}
        if format == V3_DRAFT_2020:
            return {"codec": name, "configuration": dict(configuration)}
        return named_config(name, configuration)

    def __repr__(self) -> str:
        return f"<codec {self.to_json()!r}>"

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.to_json() == other.to_json()

    def __hash__(self) -> int:
        return hash((type(self), repr(self.to_json())))


class ArrayArrayCodec(Codec):
    """An array to an array of maybe another shape and data type (transpose, filters)."""

    kind: ClassVar[CodecKind] = CodecKind.ARRAY_ARRAY
    #: `encode` only reads its input and takes it in any memory layout, so a wholly written
    #: chunk can be handed over as a (strided, read-only) view of the written value instead
    #: of a copy
    reads_input_only: ClassVar[bool] = False

    def encoded_spec(self, spec: ChunkSpec) -> ChunkSpec:
        """The spec on this codec's encoded side."""
        return spec

    @abstractmethod
    def encode(self, data: np.ndarray, spec: ChunkSpec) -> np.ndarray: ...

    @abstractmethod
    def decode(self, data: np.ndarray, spec: ChunkSpec) -> np.ndarray: ...


class ArrayBytesCodec(Codec):
    """An array to bytes: the one serialiser of a chain."""

    kind: ClassVar[CodecKind] = CodecKind.ARRAY_BYTES
    #: as `ArrayArrayCodec.reads_input_only`
    reads_input_only: ClassVar[bool] = False

    @abstractmethod
    def encode(self, data: np.ndarray, spec: ChunkSpec) -> Any:
        """The encoded value (any buffer), or None when there is nothing to store (a shard
        of nothing but fill)."""

    @abstractmethod
    def decode(self, data: Any, spec: ChunkSpec) -> np.ndarray: ...

    def max_encoded_chunk_size(self, spec: ChunkSpec) -> int | None:
        """The most bytes the encoded value of a chunk of `spec` has (exact for a plain
        serialiser), which bounds the bytes->bytes codecs after it. None: no bound the codec
        can state (variable-length types): the chain then allows `config.max_chunk_bytes`."""
        return None

    def inner_chunk_shape(self, spec: ChunkSpec) -> tuple[int, ...] | None:
        """The shape of the smaller chunks this codec stores each chunk of the grid as
        (sharding's inner chunks), or None. With it, an array reports those as its `chunks`
        and the grid's as its `shards`, as zarr-python does."""
        return None

    def raw_dtype(self, spec: ChunkSpec) -> np.dtype | None:
        """The dtype when the encoded value is exactly the chunk's elements in C order (so
        bytes decoded into an array's memory are the decoded chunk), else None."""
        return None


class BytesBytesCodec(Codec):
    """Bytes to bytes (compressors, checksums). Decoded only through `decode_bounded`."""

    kind: ClassVar[CodecKind] = CodecKind.BYTES_BYTES

    @abstractmethod
    def encode(self, data: Any, spec: ChunkSpec) -> Any: ...

    @abstractmethod
    def decode(self, data: Any, spec: ChunkSpec) -> Any: ...

    def encoded_size(self, nbytes: int) -> int | None:
        """Size of the encoded form of `nbytes` input bytes, when it is fixed (checksums)."""
        return None

    def decode_bounded(self, data: Any, spec: ChunkSpec, max_size: int) -> Any:
        """`decode`, refusing with a ChunkDecodeError a value that would decode to more than
        `max_size` bytes. The chain decodes through this, never through `decode`, and works
        `max_size` out from the chunk spec (see `ChunkPlan`), so a stored value can make a
        decoder allocate no more than a chunk of its array can hold: a tiny frame that
        declares or inflates to gigabytes (a decompression bomb) is refused, not decompressed.

        A codec whose format declares its decoded size checks it before allocating; one that
        decodes a stream decodes at most `max_size + 1` bytes. This default decodes and then
        checks the size, so a codec that does not override it still refuses oversized values,
        but only after decoding them."""
        out = self.decode(data, spec)
        size = len(out) if type(out) is bytes else memoryview(out).nbytes
        if size > max_size:
            raise decoded_too_large(self, max_size, size)
        return out

    def max_encoded_size(self, nbytes: int) -> int | None:
        """The most bytes a valid encoded value of at most `nbytes` decoded bytes has (a
        compressor's worst-case expansion, a checksum's fixed overhead), so that a codec
        further out is bounded by what this one accepts. None: the codec cannot say (the chain
        then allows `config.max_chunk_bytes`, or twice the size and 64 KiB if more)."""
        return self.encoded_size(nbytes)


# -- capabilities: a codec declares one by deriving from it beside the base of its kind ------------
class ArrayArrayPartialDecode(ABC):
    """An array->array codec that takes part in partial decoding: it says which part of its
    encoded side a region needs, and decodes that part alone, told where it sits in the chunk
    (a position-dependent codec needs the place; a permutation or an element-wise codec only
    the part)."""

    @abstractmethod
    def encoded_region(self, region: Region, spec: ChunkSpec) -> Region:
        """The region on the encoded side holding what `region` needs."""

    @abstractmethod
    def decode_partial(self, data: np.ndarray, region: Region, spec: ChunkSpec) -> np.ndarray:
        """Decode part of a chunk: `data` is the box `encoded_region(region, spec).bounds()` of
        the encoded chunk; return the box `region.bounds()` of the decoded chunk. `region` is
        in the coordinates of the whole decoded chunk, which `spec` describes, so its bounds are
        the place of the box in the chunk. Only the elements of `data` at the positions of the
        encoded region (the product of its parts) are right, the others may hold any bits:
        they must not make decoding fail; the returned box needs only the region's positions
        right."""


class ArrayArrayElementwise(ArrayArrayPartialDecode):
    """An array->array codec that maps every element on its own (scale and offset, a cast,
    rounding): the shape stays, and any part of a chunk decodes by decoding just that part, so
    it takes part in partial decoding with nothing more to write. `decode` must accept an
    array of any shape (the spec it gets then has that shape)."""

    @abstractmethod
    def decode(self, data: np.ndarray, spec: ChunkSpec) -> np.ndarray: ...

    def encoded_region(self, region: Region, spec: ChunkSpec) -> Region:
        return region

    def decode_partial(self, data: np.ndarray, region: Region, spec: ChunkSpec) -> np.ndarray:
        if all(type(part) is slice for part in region.parts):  # a box: every element right
            return self.decode(data, spec.with_shape(data.shape))
        # sorted positions: decode the right elements only (the rest may be any bits, which a
        # checked decode, e.g. an integer division that must be exact, would refuse)
        where = np.ix_(
            *(
                np.arange(part.start - lo, part.stop - lo) if isinstance(part, slice) else part - lo
                for part, (lo, _) in zip(region.parts, region.bounds())
            )
        )
        picked = np.ascontiguousarray(data[where])
        out = np.empty(data.shape, dtype=spec.dtype)
        out[where] = self.decode(picked, spec.with_shape(picked.shape))
        return out


class ArrayArrayPartialEncode(ArrayArrayPartialDecode):
    """An array->array codec that takes part in partial encoding: it maps regions and gives a
    writable decoded view of an encoded chunk, through which a write's new values go."""

    @abstractmethod
    def decoded_view(self, encoded: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        """The decoded chunk as a writable view of `encoded` (writes go through)."""


class ArrayBytesPartialDecode(ABC):
    """An array->bytes codec that decodes part of a chunk from byte ranges of its value."""

    @abstractmethod
    def decode_partial(self, region: Region, spec: ChunkSpec) -> RangeReads[np.ndarray | None]:
        """Decode the part of a chunk in `region`, reading byte ranges of the encoded value.
        Returns the box `region.bounds()` of the chunk (its elements inside the region right,
        others unspecified), or None when the encoded value does not exist. Only the box,
        because a chunk-sized result costs a chunk of fresh memory per read."""


class ArrayBytesPartialEncode(ABC):
    """An array->bytes codec that re-encodes a partly written chunk from its old value."""

    @abstractmethod
    def encode_partial(
        self, old: Any, region: Region, update: Callable[[np.ndarray], None], spec: ChunkSpec
    ) -> Any:
        """The new encoded value after a write that touches only `region`, from the old
        encoded value (None when there is none). `update(chunk)` writes the new values into a
        full-shape chunk whose region holds the old values. Returns None when the whole chunk
        is now the fill value (so the key can be erased)."""


class ArrayBytesDecodeInto(ABC):
    """An array->bytes codec that decodes into a given array itself (sharding: inner chunks
    land in their places in a read's output)."""

    @abstractmethod
    def decode_into(self, data: Any, out: np.ndarray, spec: ChunkSpec) -> bool:
        """Decode into `out` (a writable array of the spec's shape and dtype, maybe strided)
        and return True, or return False (having written nothing) so the caller decodes the
        usual way."""


class BytesBytesPartialDecode:
    """A bytes->bytes codec whose byte i of input is byte i of output, so the byte ranges a
    partial decode asks for pass through it unchanged."""


class BytesBytesDecodeInto(ABC):
    """A bytes->bytes codec that decodes into a given buffer (saves an allocation and a copy
    per chunk when it is the codec nearest the array)."""

    @abstractmethod
    def decode_into(self, data: Any, out: memoryview, spec: ChunkSpec) -> bool:
        """Decode straight into `out` (writable C-contiguous bytes) and return True when
        `data` decodes to exactly `len(out)` bytes, else return False having written nothing.
        `len(out)` is the bound here (see `decode_bounded`): a value that declares another
        size is declined before anything is allocated for it. It is asked for chunks of every
        size: where the library decodes small values into a buffer slower than it makes new
        ones, decode and copy instead."""


class BytesBytesDecodePrefix(ABC):
    """A bytes->bytes codec that can decode only the first bytes of a value (a stream), so a
    read of the top rows of a C-order chunk skips decoding the rest. Used only beside
    `BytesBytesDecodeInto`, by the codec nearest the array."""

    @abstractmethod
    def decode_prefix_into(self, data: Any, out: memoryview, spec: ChunkSpec) -> bool:
        """Decode only the first `len(out)` bytes of the decoded value into `out` and return
        True, or return False (having written nothing). A checksum over the whole value cannot
        be checked on a prefix, so a codec that would check one declines."""


class BytesBytesDecodeBatch(ABC):
    """A bytes->bytes codec that decodes the stored values of many chunks in one call (one
    release of the GIL for many tiny inner chunks of a shard, where per-chunk calls hand the
    GIL back and forth on every chunk)."""

    def batch_decodes(self, spec: ChunkSpec) -> bool:
        """Whether `decode_batch` is worth asking for values of chunks of `spec` (asked once
        per chunk shape)."""
        return True

    @abstractmethod
    def decode_batch(self, items: Sequence[Any], spec: ChunkSpec) -> list[Any] | None:
        """Decode the stored values of many chunks of one spec in one call, or return None
        (nothing decoded) so the caller decodes them one by one. A list may hold None for an
        item the codec leaves to `decode`: one it cannot vouch for decoding whole and alone,
        so that every error is still reported by the usual path, per chunk. The bound of
        `decode_bounded` holds here too: an item whose header declares more than a chunk of
        `spec` holds is left (None) to `decode_bounded`, which refuses it."""


class V3Equivalent(ABC):
    """A codec with no name in v3 that v3 codecs can stand for: a format's own step, such as
    the memory layout and byte order of v2 and the 2020 draft. Converting to v3 writes those
    codecs in its place, and chains are compared through them."""

    @abstractmethod
    def v3_codecs(self, ndim: int) -> list[dict[str, Any]] | None:
        """The v3 codec JSON that encodes `ndim`-dimensional chunks exactly as this codec
        does, or None when v3 has no equivalent."""


def decoded_too_large(codec: Codec, max_size: int, size: int | None = None) -> Exception:
    """The error for a value that decodes (or says it decodes) to more than a chunk can hold;
    `size` None: found while decoding with a limit, so only "more than" is known."""
    got = f"more than {max_size}" if size is None else str(size)
    return ChunkDecodeError(
        f"codec {codec.written_name()!r}: the value decodes to {got} bytes, "
        f"more than the {max_size} a chunk of this array can hold (corrupt, "
        f"or a decompression bomb)"
    )


def as_bytes_view(data: Any) -> memoryview:
    """A flat, C-contiguous byte view of any buffer (bytes, bytearray, ndarray, memoryview),
    no copy unless the buffer is strided (then its bytes in C order)."""
    view = memoryview(data)
    if view.ndim != 1 or view.format != "B" or not view.c_contiguous:
        view = view.cast("B") if view.c_contiguous else memoryview(bytes(view))
    return view
