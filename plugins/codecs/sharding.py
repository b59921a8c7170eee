"""The `sharding_indexed` codec (array -> bytes): a chunk (a "shard") holds a grid of inner
chunks, each encoded by its own codec chain, plus an index of where each inner chunk lies.

The index is an array of shape (*chunks_per_shard, 2) of uint64 (offset, nbytes), encoded by
`index_codecs`, at the start or the end of the shard. An inner chunk whose offset and nbytes
are both 2**64-1 is absent and reads as the fill value.

Partial access goes through the codec contract (`decode_partial` / `encode_partial`): a read
fetches the index (asked for as `CacheableRange`, so an array handle fetches it once per shard) and
then only the inner chunks its region needs; a write re-encodes only the
inner chunks it touches (decoding only the partly covered ones) and copies the encoded bytes
of every other inner chunk unchanged. An inner chain that can itself decode partially (nested
sharding) is read the same way, its byte ranges shifted into the shard.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from math import prod
from typing import Any

import numpy as np

from zarrkit.abc import (
    V3,
    ArrayArrayCodec,
    ArrayBytesCodec,
    ArrayBytesDecodeInto,
    ArrayBytesPartialDecode,
    ArrayBytesPartialEncode,
    ByteRange,
    CacheableRange,
    ChunkSpec,
    Codec,
    RangeReads,
    Region,
    SkippedExtension,
    SuffixRange,
    as_bytes_view,
    check_known_fields,
    config_value,
    hookimpl,
    lock,
    lockstep,
    names,
    reusable,
    run_batched,
    settings,
    shift_range,
)
from zarrkit.errors import ChunkDecodeError, CodecChainError, MetadataError, ShardShapeError
from zarrkit.helpers import (
    ChunkPlan,
    CodecChain,
    data_type_from_native,
    evolve_codecs,
    extension_from_json,
)

#: offset and nbytes of an absent inner chunk
EMPTY = 2**64 - 1
#: the end of an inner chunk's byte range can be no further than this (a file offset, a
#: Python buffer's length: both signed 64-bit)
_MAX_END = 2**63 - 1
#: inner chunks claiming more bytes than this, in a partial read of variable-length inner
#: chunks, are checked to lie within the shard before they are read (`_Layout.probe`)
_PROBE_FROM = 4 << 20
_LOCATIONS = ("start", "end")

#: decoded shard indexes a layout remembers (`_Layout.index_of`), and the largest remembered
#: (64 KiB: 4,096 inner chunks per shard)
_CACHED_INDEXES = 64
_CACHED_INDEX_BYTES = 64 << 10

#: decoded bytes of inner chunks from which a call shares their decoding with the pool: handing
#: work to a pool thread (its wake-up and the handover) costs more than decoding a few small
#: inner chunks, so a small window decodes on the calling thread
_SHARED_FROM_BYTES = 256 << 10

#: an inner chunk the region touches: coordinates, place in the region's box, part of it
#: needed (None: all), region within it for a nested partial decode (None: decode it whole)
Plan = tuple[tuple[int, ...], tuple[slice, ...], "tuple[slice, ...] | None", "Region | None"]


@dataclass(frozen=True, eq=False)
class ShardingCodec(
    ArrayBytesCodec, ArrayBytesPartialDecode, ArrayBytesPartialEncode, ArrayBytesDecodeInto
):
    names = names("sharding_indexed")
    releases_gil = True

    chunk_shape: tuple[int, ...]
    codecs: tuple[Codec, ...]
    index_codecs: tuple[Codec, ...]
    index_location: str = "end"
    _layouts: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def reads_input_only(self) -> bool:  # type: ignore[override]
        """A shard's inner chunks are sliced out of it and encoded by the inner chain, which
        only reads them when its array codecs do."""
        return all(
            c.reads_input_only
            for c in self.codecs
            if isinstance(c, (ArrayArrayCodec, ArrayBytesCodec))
        )

    # -- metadata ------------------------------------------------------------------------------
    @classmethod
    def from_json(
        cls, name: str, configuration: Mapping[str, Any], format: str = V3
    ) -> ShardingCodec:
        owner = "sharding_indexed codec"
        check_known_fields(
            configuration, {"chunk_shape", "codecs", "index_codecs", "index_location"}, owner=owner
        )
        shape = configuration.get("chunk_shape")
        if (
            not isinstance(shape, list)
            or not shape
            or not all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in shape)
        ):
            raise MetadataError(
                f"{owner}: 'chunk_shape' must be a list of positive integers, got {shape!r}",
                field="configuration.chunk_shape",
            )
        location = config_value(
            configuration, "index_location", str, owner=owner, choices=_LOCATIONS, default="end"
        )
        return cls(
            tuple(shape),
            _codec_list(configuration, "codecs", format),
            _codec_list(configuration, "index_codecs", format),
            location,
        )

    def configuration(self, format: str = V3) -> dict:
        return {
            "chunk_shape": list(self.chunk_shape),
            "codecs": [c.to_json(format) for c in self.codecs],
            "index_codecs": [c.to_json(format) for c in self.index_codecs],
            "index_location": self.index_location,
        }

    def evolve(self, spec: ChunkSpec) -> ShardingCodec:
        inner = evolve_codecs(self.codecs, spec.with_shape(self.chunk_shape))
        index = evolve_codecs(self.index_codecs, _index_spec(self._per_shard(spec.shape)))
        return ShardingCodec(self.chunk_shape, inner, index, self.index_location)

    def validate(self, spec: ChunkSpec) -> None:
        if len(spec.shape) != len(self.chunk_shape) or any(
            s % c for s, c in zip(spec.shape, self.chunk_shape)
        ):
            raise ShardShapeError(
                f"sharding_indexed: the shard shape {list(spec.shape)} is not "
                f"a multiple of the inner chunk_shape {list(self.chunk_shape)}",
                field="codecs",
            )
        self._layout(spec)

    def inner_chunk_shape(self, spec: ChunkSpec) -> tuple[int, ...]:
        return self.chunk_shape

    def max_encoded_chunk_size(self, spec: ChunkSpec) -> int:
        layout = self._layout(spec)
        return prod(layout.per_shard) * layout.inner.max_stored_size + layout.index_size

    # -- layout of one kind of shard ----------------------------------------------------------
    def _per_shard(self, shape: Sequence[int]) -> tuple[int, ...]:
        return tuple(s // c for s, c in zip(shape, self.chunk_shape))

    def _layout(self, spec: ChunkSpec) -> _Layout:
        found = self._layouts.get(id(spec))
        if found is None or found[0] is not spec:
            found = self._layouts[id(spec)] = (spec, _Layout.of(self, spec))
        return found[1]

    # -- whole shards ----------------------------------------------------------------------------
    def decode(self, data: Any, spec: ChunkSpec) -> np.ndarray:
        out = np.empty(spec.shape, dtype=spec.dtype)
        self.decode_into(data, out, spec)
        return out

    def decode_into(self, data: Any, out: np.ndarray, spec: ChunkSpec) -> bool:
        """Every inner chunk decoded straight into its place in `out` (a read's output when
        the engine hands the shard's place in it)."""
        layout = self._layout(spec)
        view = as_bytes_view(data)
        index = layout.read_index(view, len(view))
        if index is None:
            out[...] = spec.fill_value
            return True
        jobs = []
        for coords, box in layout.boxes():
            offset, nbytes = index[coords]
            if offset == EMPTY:
                out[box] = spec.fill_value
            else:
                jobs.append((view[offset : offset + nbytes], coords, out[box], None))
        layout.decode_all(jobs)
        return True

    def encode(self, data: np.ndarray, spec: ChunkSpec) -> Any:
        layout = self._layout(spec)
        skip_fill = not settings().write_empty_chunks
        encoded = (
            (
                coords,
                None if skip_fill and layout.is_fill(data[box]) else layout.inner.encode(data[box]),
            )
            for coords, box in layout.boxes()
        )
        return layout.written(encoded, capacity=data.nbytes + layout.index_size)

    # -- partial access ---------------------------------------------------------------------------
    def decode_partial(self, region: Region, spec: ChunkSpec) -> RangeReads[np.ndarray | None]:
        layout = self._layout(spec)
        index_bytes = (yield [CacheableRange(layout.index_range())])[0]
        if index_bytes is None:
            return None
        index = layout.index_of(index_bytes)
        origin = region.bounds()
        yield from layout.probe(index, layout.touched(region))
        out = np.empty(tuple(hi - lo for lo, hi in origin), dtype=spec.dtype)
        reads, places = [], []
        for coords, place, part, within in layout.plan(region, origin):
            dest = out[place]
            offset, nbytes = layout.entry(index, coords)
            if offset == EMPTY:
                dest[...] = spec.fill_value
                continue
            if within is not None:
                reads.append(_nested(layout.inner.decode_partial(within), offset, nbytes))
            else:
                reads.append(_whole(offset, nbytes, coords))
            places.append((coords, dest, part))
        results = yield from lockstep(reads)
        jobs = []
        for (coords, dest, part), result in zip(places, results):
            if result is None:
                dest[...] = spec.fill_value
            elif isinstance(result, np.ndarray):  # a nested partial decode's box
                dest[...] = result
            else:  # an inner chunk's bytes
                jobs.append((result, coords, dest, part))
        layout.decode_all(jobs)
        return out

    def encode_partial(
        self, old: Any, region: Region, update: Callable[[np.ndarray], None], spec: ChunkSpec
    ) -> Any:
        layout = self._layout(spec)
        view = memoryview(b"") if old is None else as_bytes_view(old)
        index = None if old is None else layout.read_index(view, len(view))
        buffer = np.empty(spec.shape, dtype=spec.dtype)
        touched = list(layout.touched(region))
        for coords, box in touched:  # old values where the write does not cover an inner chunk
            if region.covers(tuple((s.start, s.stop) for s in box)):
                continue
            offset, nbytes = (EMPTY, EMPTY) if index is None else index[coords]
            if offset == EMPTY:
                buffer[box] = spec.fill_value
            else:
                buffer[box] = layout.decode_inner(view[offset : offset + nbytes], coords)
        update(buffer)
        skip_fill = not settings().write_empty_chunks
        encoded: dict[tuple[int, ...], Any] = {}
        for coords, box in touched:
            inner = buffer[box]
            encoded[coords] = (
                None if skip_fill and layout.is_fill(inner) else layout.inner.encode(inner)
            )
        return layout.assemble(encoded, {} if index is None else _kept(index, view), index)


# -- helpers ----------------------------------------------------------------------------------------
def _codec_list(
    configuration: Mapping[str, Any], field_name: str, format: str
) -> tuple[Codec, ...]:
    items = configuration.get(field_name)
    if not isinstance(items, list) or not items:
        raise MetadataError(
            f"sharding_indexed codec: {field_name!r} must be a non-empty list of "
            f"codecs, got {items!r}",
            field=f"configuration.{field_name}",
        )
    out = []
    for i, item in enumerate(items):
        codec = extension_from_json("codec", item, format, key=f"configuration.{field_name}[{i}]")
        if isinstance(codec, SkippedExtension):
            raise MetadataError(
                f"sharding_indexed codec: the codec {codec.name!r} is not "
                f"understood; codecs inside a shard cannot be skipped",
                field=f"configuration.{field_name}[{i}]",
            )
        out.append(codec)
    return tuple(out)


def _outside(coords: tuple[int, ...], offset: int, nbytes: int, total: int | None) -> None:
    size = f"the shard's {total} bytes" if total is not None else "any shard"
    raise ChunkDecodeError(
        f"shard index: inner chunk {coords} at offset {offset} with {nbytes} "
        f"bytes lies outside {size} (corrupt index)"
    )


def _index_spec(per_shard: tuple[int, ...]) -> ChunkSpec:
    return ChunkSpec((*per_shard, 2), data_type_from_native(np.uint64), np.uint64(EMPTY))


def _kept(index: np.ndarray, view: memoryview) -> dict[tuple[int, ...], memoryview]:
    """Encoded bytes of every stored inner chunk of an old shard, by coordinates."""
    out = {}
    for flat in np.flatnonzero(index[..., 0].reshape(-1) != EMPTY).tolist():
        coords = np.unravel_index(flat, index.shape[:-1])
        offset, nbytes = (int(v) for v in index[coords])
        out[tuple(int(c) for c in coords)] = view[offset : offset + nbytes]
    return out


class _Appender:
    """Bytes appended to one numpy buffer, grown when needed. numpy asks the OS for huge pages
    for large arrays, where a `bytes` of a shard's size is faulted in 4 KiB at a time on every
    shard (glibc hands such memory back after each one, written from pool threads). Appending
    each inner chunk as soon as it is encoded also lets its encoded value be freed before the
    next is made, so malloc reuses that memory rather than faulting a whole shard's values in
    afresh on every shard."""

    def __init__(self, capacity: int, start: int = 0) -> None:
        # reused by this thread once the shard written from it is let go, so its pages are
        # already in memory for the next shard
        self.buffer = reusable("shard", max(capacity, start, 1))
        self.size = start

    def append(self, data: Any) -> tuple[int, int]:
        """Where `data` went: (offset, nbytes)."""
        view = np.frombuffer(as_bytes_view(data), dtype=np.uint8)
        at, end = self.size, self.size + view.size
        if end > self.buffer.size:
            grown = np.empty(max(end, self.buffer.size * 3 // 2), dtype=np.uint8)
            grown[:at] = self.buffer[:at]
            self.buffer = grown
        self.buffer[at:end] = view
        self.size = end
        return at, view.size

    def put(self, at: int, data: Any) -> None:
        view = np.frombuffer(as_bytes_view(data), dtype=np.uint8)
        self.buffer[at : at + view.size] = view

    def value(self) -> memoryview:
        return memoryview(self.buffer[: self.size]).toreadonly()


def _whole(offset: int, nbytes: int, coords: tuple[int, ...]) -> RangeReads[Any]:
    """An inner chunk's encoded bytes, checked to be all there."""
    data = (yield [ByteRange(offset, nbytes)])[0]
    if data is None or len(data) != nbytes:
        raise ChunkDecodeError(
            f"inner chunk {coords} at bytes {offset}..{offset + nbytes} lies "
            f"past the end of the shard (corrupt index or truncated shard)"
        )
    return memoryview(data)


def _nested(reads: RangeReads[Any], offset: int, nbytes: int) -> RangeReads[Any]:
    """A partial decode of an inner chunk, its byte ranges shifted to where it sits."""
    try:
        requests = next(reads)
        while True:
            answer = yield [shift_range(r, offset, nbytes) for r in requests]
            requests = reads.send(answer)
    except StopIteration as stop:
        return stop.value


@dataclass(frozen=True, eq=False)
class _Layout:
    """Everything fixed for one shard shape: the inner and index chains and the index size."""

    shape: tuple[int, ...]
    chunk_shape: tuple[int, ...]
    per_shard: tuple[int, ...]
    inner: ChunkPlan
    index_chain: ChunkPlan
    index_size: int
    at_start: bool
    spec: ChunkSpec
    #: decoded indexes by their encoded bytes (`index_of`)
    _indexes: dict = field(default_factory=dict, init=False, repr=False)
    _indexes_lock: Any = field(default_factory=lock, init=False, repr=False)

    @classmethod
    def of(cls, codec: ShardingCodec, spec: ChunkSpec) -> _Layout:
        per_shard = codec._per_shard(spec.shape)
        inner = CodecChain(codec.codecs, spec.data_type, spec.fill_value).bind(codec.chunk_shape)
        index_spec = _index_spec(per_shard)
        index_chain = CodecChain(
            codec.index_codecs, index_spec.data_type, index_spec.fill_value
        ).bind(index_spec.shape)
        size = index_spec.nbytes
        assert size is not None  # (uint64 entries)
        for bb in index_chain.bytes_bytes:
            fixed = bb.encoded_size(size)
            if fixed is None:
                raise CodecChainError(
                    f"sharding_indexed: index codec {bb.written_name()!r} does "
                    f"not give a fixed-size index",
                    field="codecs",
                )
            size = fixed
        return cls(
            tuple(spec.shape),
            codec.chunk_shape,
            per_shard,
            inner,
            index_chain,
            size,
            codec.index_location == "start",
            spec,
        )

    def boxes(self) -> Iterator[tuple[tuple[int, ...], tuple[slice, ...]]]:
        for coords in itertools.product(*(range(n) for n in self.per_shard)):
            yield coords, self.box(coords)

    def box(self, coords: Sequence[int]) -> tuple[slice, ...]:
        return tuple(slice(i * c, (i + 1) * c) for i, c in zip(coords, self.chunk_shape))

    def touched(self, region: Region) -> Iterator[tuple[tuple[int, ...], tuple[slice, ...]]]:
        """Inner chunks holding at least one position of the region (along every dimension)."""
        ids = []
        for part, c in zip(region.parts, self.chunk_shape):
            if isinstance(part, slice):
                ids.append(
                    range(part.start // c, -(-part.stop // c))
                    if part.stop > part.start
                    else range(0)
                )
            else:
                ids.append(np.unique(part // c).tolist())
        for coords in itertools.product(*ids):
            yield coords, self.box(coords)

    def plan(self, region: Region, origin: Sequence[tuple[int, int]]) -> list[Plan]:
        """Per inner chunk the region touches: its coordinates, its place in the region's box
        (`origin`), the part of it needed (None: all of it), and the region within it when
        the inner chain decodes that part itself (None: the inner chunk is decoded whole).
        A box of slices, the usual window, is worked out per dimension with integers alone
        (the general way's per-element index arrays dominate a small window's cost)."""
        slices = [p for p in region.parts if type(p) is slice]
        if self.inner.can_decode_partial or len(slices) != len(region.parts):
            return self._plan_general(region, origin)
        if any(p.stop <= p.start for p in slices):  # nothing selected
            return []
        axes = []
        for part, c, (lo, _) in zip(slices, self.chunk_shape, origin):
            along = []
            for k in range(part.start // c, -(-part.stop // c)):
                start, stop = max(part.start, k * c), min(part.stop, k * c + c)
                along.append(
                    (
                        k,
                        slice(start - lo, stop - lo),
                        slice(start - k * c, stop - k * c),
                        stop - start == c,
                    )
                )
            axes.append(along)
        plan: list[Plan] = []
        for combo in itertools.product(*axes):
            whole = all(item[3] for item in combo)
            plan.append(
                (
                    tuple(item[0] for item in combo),
                    tuple(item[1] for item in combo),
                    None if whole else tuple(item[2] for item in combo),
                    None,
                )
            )
        return plan

    def _plan_general(self, region: Region, origin: Sequence[tuple[int, int]]) -> list[Plan]:
        plan = []
        for coords, box in self.touched(region):
            bounds = tuple((s.start, s.stop) for s in box)
            within = region.within(bounds)
            part = tuple(slice(lo, hi) for lo, hi in within.bounds())
            place = tuple(
                slice(b.start + p.start - lo, b.start + p.stop - lo)
                for b, p, (lo, _) in zip(box, part, origin)
            )
            whole = all(p.start == 0 and p.stop == b.stop - b.start for p, b in zip(part, box))
            nested = self.inner.can_decode_partial and not region.covers(bounds)
            plan.append((coords, place, None if whole else part, within if nested else None))
        return plan

    # -- the index ------------------------------------------------------------------------------
    def index_range(self) -> ByteRange | SuffixRange:
        return ByteRange(0, self.index_size) if self.at_start else SuffixRange(self.index_size)

    def read_index(self, data: memoryview, total: int) -> np.ndarray | None:
        """The (offset, nbytes) table of a whole shard of `total` bytes, every entry checked;
        None when every inner chunk is absent."""
        if total < self.index_size:
            raise ChunkDecodeError(
                f"shard of {total} bytes is shorter than its "
                f"{self.index_size}-byte index (truncated)"
            )
        index = self.decode_index(
            data[: self.index_size] if self.at_start else data[total - self.index_size :]
        )
        if bool((index[..., 0] == EMPTY).all()) and bool((index[..., 1] == EMPTY).all()):
            return None
        self.check_index(index, total)
        return index

    def decode_index(self, data: Any) -> np.ndarray:
        """The index table from its encoded bytes (checksum checked by the index codecs)."""
        if len(data) != self.index_size:
            raise ChunkDecodeError(
                f"shard index: got {len(data)} bytes, expected {self.index_size} (truncated shard)"
            )
        try:
            return np.asarray(self.index_chain.decode(data), dtype=np.uint64)
        except ChunkDecodeError as exc:
            raise ChunkDecodeError(f"shard index: {exc}") from None

    def index_of(self, data: Any) -> np.ndarray:
        """`decode_index` for a partial read, remembered by the index's bytes: windows keep
        coming back to the same shards, and the same bytes decode to the same table (the
        checksum included), so a shard rewritten since is simply new bytes. Small indexes
        only; the tables handed out are read-only."""
        view = as_bytes_view(data)
        if len(view) > _CACHED_INDEX_BYTES:
            index = self.decode_index(view)
            self.check_index(index, None)
            return index
        key = view.tobytes()
        cached: np.ndarray | None = self._indexes.get(key)
        if cached is not None:
            return cached
        index = np.array(self.decode_index(view))  # (its own memory, not the read's)
        self.check_index(index, None)
        index.setflags(write=False)
        with self._indexes_lock:
            if len(self._indexes) >= _CACHED_INDEXES:
                self._indexes.pop(next(iter(self._indexes)))
            self._indexes[key] = index
        return index

    @staticmethod
    def entry(index: np.ndarray, coords: tuple[int, ...]) -> tuple[int, int]:
        """One entry of an index that `check_index` has passed."""
        offset, nbytes = index[coords].tolist()
        return offset, nbytes

    def probe(
        self, index: np.ndarray, touched: Iterable[tuple[tuple[int, ...], Any]]
    ) -> RangeReads[None]:
        """For a partial read, whose shard's length is not known: when an inner chunk to be
        read claims more than `_PROBE_FROM` bytes and the inner chain does not bound it near an
        inner chunk's size (variable-length types), first read the last byte it claims, so a
        store never sizes a buffer for bytes the shard does not hold (one small request more,
        only for such inner chunks)."""
        fixed = self.inner.spec.nbytes
        if fixed is not None and self.inner.max_stored_size <= 2 * fixed + _PROBE_FROM:
            return  # (`check_index` bounds every inner chunk near its decoded size)
        far = None
        for coords, _ in touched:
            offset, nbytes = index[coords].tolist()
            if (
                offset != EMPTY
                and nbytes > _PROBE_FROM
                and (far is None or offset + nbytes > far[1] + far[2])
            ):
                far = (coords, offset, nbytes)
        if far is None:
            return
        coords, offset, nbytes = far
        last = (yield [ByteRange(offset + nbytes - 1, 1)])[0]
        if last is None or len(last) != 1:
            _outside(coords, offset, nbytes, None)

    def check_index(self, index: np.ndarray, total: int | None) -> None:
        """Refuse (ChunkDecodeError naming the first bad inner chunk) an index with an entry
        that marks only one of offset and nbytes absent, whose byte range overflows or reaches
        past `total` (the shard's length; None when not known, as in a partial read), or that
        claims more bytes than the inner chain accepts for one inner chunk
        (`ChunkPlan.max_stored_size`). Every entry is checked before any is used, so no
        buffer is ever sized from a bad one. One pass over the table with numpy: a cache of
        decoded indexes calls it once per index it keeps."""
        offsets, sizes = index[..., 0], index[..., 1]
        empty = offsets == EMPTY
        half = (sizes == EMPTY) != empty
        if bool(half.any()):
            where = tuple(np.argwhere(half)[0].tolist())
            raise ChunkDecodeError(
                f"shard index: inner chunk {where} has only one of offset "
                f"and nbytes marked absent (corrupt index)"
            )
        end = np.uint64(_MAX_END if total is None else min(total, _MAX_END))
        limit = np.uint64(min(self.inner.max_stored_size, _MAX_END))
        bad = ~empty & ((sizes > limit) | (sizes > end) | (offsets > end - np.minimum(sizes, end)))
        if bool(bad.any()):
            where = tuple(np.argwhere(bad)[0].tolist())
            offset, nbytes = int(offsets[where]), int(sizes[where])
            if nbytes > int(limit):
                raise ChunkDecodeError(
                    f"shard index: inner chunk {where} claims {nbytes} bytes, "
                    f"more than the {int(limit)} an encoded inner chunk can "
                    f"hold (corrupt index)"
                )
            _outside(where, offset, nbytes, total)

    def decode_inner(self, data: Any, coords: tuple[int, ...]) -> np.ndarray:
        try:
            return self.inner.decode(data)
        except ChunkDecodeError as exc:
            raise ChunkDecodeError(f"inner chunk {coords}: {exc}") from exc

    def decode_all(self, jobs: Sequence[tuple[Any, tuple[int, ...], np.ndarray, Any]]) -> None:
        """Decode inner chunks (bytes, coordinates, destination, part) on the shared pool
        (inline when the pool is already busy with other shards, or when they are too little
        work to share): straight into the destination when it takes the whole inner chunk
        (part None), else through this thread's scratch buffer, of which only `part` is
        copied."""

        def work(share: Sequence[tuple[Any, tuple[int, ...], np.ndarray, Any]]) -> None:
            # whole inner chunks in one batch decode (tiny ones)
            if self.inner.batch_decoder is not None:
                whole = [job for job in share if job[3] is None]
                if len(whole) > 1 and self._decode_many(whole):
                    share = [job for job in share if job[3] is not None]
            for data, coords, dest, part in share:
                if part is None:
                    self.decode_inner_into(data, dest, coords)
                else:
                    dest[...] = self.decode_inner_scratch(data, coords, part)[part]

        if jobs:
            nbytes = self.inner.spec.nbytes  # (None: a type without a fixed size, strings)
            run_batched(
                work, jobs, parallel=nbytes is None or len(jobs) * nbytes >= _SHARED_FROM_BYTES
            )

    def _decode_many(self, jobs: Sequence[tuple[Any, tuple[int, ...], np.ndarray, Any]]) -> bool:
        """Whole inner chunks through the inner chain's batch decode; False when one of them
        fails, so that they are decoded one by one and the error names that inner chunk."""
        try:
            self.inner.decode_many_into(
                [job[0] for job in jobs], [job[2] for job in jobs], [None] * len(jobs)
            )
        except ChunkDecodeError:
            return False
        return True

    def decode_inner_scratch(
        self, data: Any, coords: tuple[int, ...], part: tuple[slice, ...]
    ) -> np.ndarray:
        try:
            return self.inner.decode_transient(data, selection=part)
        except ChunkDecodeError as exc:
            raise ChunkDecodeError(f"inner chunk {coords}: {exc}") from exc

    def decode_inner_into(self, data: Any, dest: np.ndarray, coords: tuple[int, ...]) -> None:
        try:
            self.inner.decode_into(data, dest)
        except ChunkDecodeError as exc:
            raise ChunkDecodeError(f"inner chunk {coords}: {exc}") from exc

    def is_fill(self, chunk: np.ndarray) -> bool:
        # a first look at one element spares the full check (a copy of a strided inner chunk)
        # for inner chunks holding data
        if (
            chunk.size
            and not chunk.dtype.hasobject
            and chunk[(slice(0, 1),) * chunk.ndim].tobytes() != self.first_fill
        ):
            return False
        return self.spec.data_type.chunk_equals_fill(chunk, self.spec.fill_value)

    @property
    def first_fill(self) -> bytes:
        return np.asarray(self.spec.fill_value, dtype=self.spec.dtype).reshape(1).tobytes()

    # -- writing --------------------------------------------------------------------------------
    def assemble(
        self,
        encoded: Mapping[tuple[int, ...], Any],
        kept: Mapping[tuple[int, ...], Any],
        old_index: np.ndarray | None,
    ) -> Any:
        """A shard from new inner chunks (`encoded`; None: now absent) and the old encoded
        bytes of the others (`kept`), inner chunks in C order; None when all are absent."""
        parts = (
            (coords, encoded[coords] if coords in encoded else kept[coords])
            for coords in sorted(set(encoded) | set(kept))
        )
        size = sum(
            memoryview(v).nbytes for v in (*encoded.values(), *kept.values()) if v is not None
        )
        return self.written(parts, capacity=size + self.index_size)

    def written(self, parts: Iterable[tuple[tuple[int, ...], Any]], capacity: int) -> Any:
        """A shard of the encoded inner chunks `parts` yields in C order (None: absent), each
        appended as it comes; None when all are absent. `capacity`: the expected size."""
        index = np.full((*self.per_shard, 2), EMPTY, dtype=np.uint64)
        out = _Appender(capacity, self.index_size if self.at_start else 0)
        stored = False
        for coords, data in parts:
            if data is not None:
                index[coords] = out.append(data)
                stored = True
        if not stored:
            return None
        index_bytes = self.index_chain.encode(index)
        if self.at_start:
            out.put(0, index_bytes)
        else:
            out.append(index_bytes)
        return out.value()


# -- `create_array(shards=...)` -------------------------------------------------------------------
#: the index codecs zarr-python writes for `shards=`
_INDEX_CODECS = ({"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"})
_SHARD_OPTIONS = frozenset({"index_location", "index_codecs"})


@hookimpl(trylast=True)  # (a site plugin answering the same hook comes first)
def zarrkit_shard_codecs(
    format: str,
    shard_shape: tuple[int | tuple[int, ...], ...],
    chunk_shape: tuple[int, ...],
    codecs: list,
    options: dict,
) -> list | None:
    """v3 stores shards as this codec (the 2020 draft had a storage transformer instead, which
    zarrkit does not write; v2 has none). The index as zarr-python writes it unless given."""
    if format != V3:
        return None
    unknown = sorted(set(options) - _SHARD_OPTIONS)
    if unknown:
        raise MetadataError(
            f"shards: unknown option(s) {unknown}; sharding_indexed takes {sorted(_SHARD_OPTIONS)}",
            field="shards",
        )
    return [
        {
            "name": "sharding_indexed",
            "configuration": {
                "chunk_shape": list(chunk_shape),
                "codecs": [c.to_json(V3) for c in codecs],
                "index_codecs": list(options.get("index_codecs", _INDEX_CODECS)),
                "index_location": options.get("index_location", "end"),
            },
        }
    ]
