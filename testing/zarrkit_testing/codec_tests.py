"""A conformance suite every codec should pass: subclass it in a test module.

    class TestMyCodec(CodecTests):
        dtypes = ("float32", "float64")        # the data types the codec claims
        tolerance = 0.01                       # lossy codecs: largest absolute error; else None

        @pytest.fixture
        def codec(self):
            return MyCodec(level=3)

Everything runs through the kernel's own codec chain (the codec plus the default array ->
bytes codec, from the `zarrkit_array_defaults` hook, when the chain needs one), so what is tested is what an array will do.
Optional overrides: `shapes`, `sample(dtype, shape)` (data for the round trip), `fill_value`,
`corrupt_detected` (False for a codec whose format cannot notice truncation, such as a raw
zfp stream), `registered` (False to skip the checks that the registry resolves the names),
`bomb_bytes` (what the decompression bomb of the bounded-decoding check inflates to),
`false_size`, `decode_slack` and `false_headers_unsafe` (what the false length headers of
`test_a_false_length_header_is_not_believed` claim, what a decoder may allocate beside the
chunk, and why the check cannot run on a codec: a visible skip), `narrow_dtypes` (the
narrow types every codec must round-trip exactly or refuse), `threads`, `thread_chunks` and
`thread_elements` (the thread-safety check: threads, the distinct chunks they share, and the
size of those chunks).
The class name does not start with "Test", so importing it does not run it on its own.
"""

from __future__ import annotations

import itertools
import sys
import threading
import tracemalloc
import types
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, ClassVar, Literal

import numpy as np
import pytest

from zarrkit import registry
from zarrkit.abc import (
    V2,
    V3,
    V3_DRAFT_2020,
    ArrayArrayCodec,
    ArrayArrayPartialDecode,
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
    DataType,
    Region,
    parse_named_config,
)
from zarrkit.errors import ChunkDecodeError, ZarrkitError
from zarrkit.helpers import ChunkPlan, CodecChain, evolve_codecs

from .narrow import Int24, narrow_sample

#: the kind each capability belongs to (`zarrkit.abc.codec`)
_CAPABILITY_KINDS: tuple[tuple[type, type[Codec]], ...] = (
    (ArrayArrayPartialDecode, ArrayArrayCodec),
    (ArrayBytesPartialDecode, ArrayBytesCodec),
    (ArrayBytesPartialEncode, ArrayBytesCodec),
    (ArrayBytesDecodeInto, ArrayBytesCodec),
    (BytesBytesPartialDecode, BytesBytesCodec),
    (BytesBytesDecodeInto, BytesBytesCodec),
    (BytesBytesDecodePrefix, BytesBytesCodec),
    (BytesBytesDecodeBatch, BytesBytesCodec),
)
_BASES: tuple[tuple[type[Codec], CodecKind], ...] = (
    (ArrayArrayCodec, CodecKind.ARRAY_ARRAY),
    (ArrayBytesCodec, CodecKind.ARRAY_BYTES),
    (BytesBytesCodec, CodecKind.BYTES_BYTES),
)


_SHARE_NOTHING = (
    "zarrkit calls one codec instance from many threads at once (its chunk threads, "
    "ZARRKIT_THREADS), so encode and decode must share nothing mutable between calls (no "
    "scratch buffer or library context on the instance or in a module global: make it per "
    "call, or per thread with threading.local) and must never return a buffer they reuse."
)


def json_of(codec: Codec, fmt: str) -> tuple[str, dict]:
    """(name, configuration) of a codec as its format writes it."""
    doc = codec.to_json(fmt)
    if fmt == V2:
        assert isinstance(doc, dict) and "id" in doc, f"v2 JSON must be numcodecs' dict: {doc!r}"
        config = dict(doc)
        return config.pop("id"), config
    if fmt == V3_DRAFT_2020:
        assert set(doc) <= {"codec", "configuration"}, f"draft JSON is codec/configuration: {doc!r}"
        return doc["codec"], dict(doc.get("configuration") or {})
    name, config, _ = parse_named_config(doc, key="codecs")
    return name, config


class CodecTests:
    """Behaviour every codec owes the chain and its users."""

    dtypes: ClassVar[tuple[str, ...]] = ("uint8", "int16", "int32", "float32", "float64")
    shapes: ClassVar[tuple[tuple[int, ...], ...]] = ((1,), (37,), (6, 7), (2, 3, 5))
    tolerance: ClassVar[float | None] = None
    fill_value: ClassVar[Any] = 0
    corrupt_detected: ClassVar[bool] = True
    registered: ClassVar[bool] = True
    #: what the bomb of `test_decoding_is_bounded_by_the_chunk` decodes to
    bomb_bytes: ClassVar[int] = 8 << 20
    #: what the false length headers of `test_a_false_length_header_is_not_believed` claim:
    #: far past the chunk's bound, yet an allocation this machine survives
    false_size: ClassVar[int] = 64 << 20
    #: what a decoder may allocate beyond the chunk and the stored value (its state: a
    #: dictionary, a context), in the same check; keep it well below `false_size`
    decode_slack: ClassVar[int] = 1 << 20
    #: why the false-length-header check cannot run on this codec (it is then a visible
    #: skip with this reason); None runs it
    false_headers_unsafe: ClassVar[str | None] = None
    #: types of fewer bits than the numpy type they are held in, or of odd sizes: every codec
    #: round-trips them exactly or refuses them (`check_data_type`, or a zarrkit error on write)
    narrow_dtypes: ClassVar[tuple[str | DataType, ...]] = ("bool", "int8", "r24", Int24())
    #: `test_one_instance_on_many_threads`: threads at once, the distinct chunks they share,
    #: and the fewest elements of those chunks (the largest of `shapes`, grown in its first
    #: dimension)
    threads: ClassVar[int] = 8
    thread_chunks: ClassVar[int] = 24
    thread_elements: ClassVar[int] = 1024

    # -- helpers a subclass may override --------------------------------------------------
    def sample(self, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
        """Smooth-ish data with some repetition, so compressors and filters have work to do."""
        rng = np.random.default_rng(sum(shape) + len(dtype))
        n = int(np.prod(shape, dtype=np.int64))
        dt = np.dtype(dtype)
        flat: np.ndarray
        if dt.kind == "b":
            flat = rng.random(n) < 0.3
        elif dt.kind in "iu":
            info = np.iinfo(dt)
            lo, hi = max(info.min, -1000), min(info.max, 1000)
            flat = np.cumsum(rng.integers(-3, 4, n)) % (hi - lo) + lo
        else:
            flat = np.cumsum(rng.standard_normal(n)) * 10
        return np.asarray(flat).astype(dt).reshape(shape)

    def _small_case(self) -> tuple[str, tuple[int, ...]]:
        """The data type and (largest declared) chunk shape of the checks that need one case."""
        return self.dtypes[-1], max(self.shapes, key=lambda shape: int(np.prod(shape)))

    def _distinct_chunks(self, dtype: str, shape: tuple[int, ...], n: int) -> list[np.ndarray]:
        """`n` chunks with the sample's values in different orders (values the codec takes)."""
        flat = self.sample(dtype, shape).reshape(-1)
        rng = np.random.default_rng(n)
        chunks = [flat.reshape(shape)]
        chunks += [flat[rng.permutation(flat.size)].reshape(shape) for _ in range(n - 1)]
        return chunks

    def chain_for(
        self, codec: Codec, data_type: Any, shape: tuple[int, ...], fill_value: Any = None
    ) -> ChunkPlan:
        """The codec in the smallest valid chain, evolved as array creation would, bound
        (with `fill_value`, already of the type, or else the class's `fill_value` cast)."""
        bytes_codec = _default_serializer(data_type, shape)
        codecs: list[Codec]
        if isinstance(codec, ArrayArrayCodec):
            codecs = [codec, bytes_codec]
        elif isinstance(codec, ArrayBytesCodec):
            codecs = [codec]
        else:
            codecs = [bytes_codec, codec]
        fill = data_type.cast_scalar(self.fill_value) if fill_value is None else fill_value
        spec = ChunkSpec(shape, data_type, fill)
        codecs = list(evolve_codecs(codecs, spec))
        return CodecChain(codecs, data_type, spec.fill_value).bind(shape)

    # -- the contract ------------------------------------------------------------------------
    def test_kind_and_gil_hint(self, codec: Codec) -> None:
        """A codec derives from exactly one of the three typed bases, and says the kind of
        that base."""
        kinds = [kind for base, kind in _BASES if isinstance(codec, base)]
        assert len(kinds) == 1, (
            f"{type(codec).__name__} must derive from exactly one of ArrayArrayCodec, "
            f"ArrayBytesCodec and BytesBytesCodec (zarrkit.abc)"
        )
        assert codec.kind is kinds[0]
        assert isinstance(codec.releases_gil, bool)

    def test_capabilities_belong_to_its_kind(self, codec: Codec) -> None:
        """A capability is declared beside the base of the kind it is for: a bytes->bytes
        codec declaring an array->bytes capability would never be asked for it."""
        for capability, base in _CAPABILITY_KINDS:
            if isinstance(codec, capability):
                assert isinstance(codec, base), (
                    f"{type(codec).__name__} declares {capability.__name__}, which is for "
                    f"{base.__name__}s"
                )

    def test_names_per_format(self, codec: Codec) -> None:
        formats = type(codec).names.formats()
        assert V3 in formats, "a codec must have a v3 name"
        for fmt in formats:
            name = codec.written_name(fmt)
            assert name
            if self.registered:
                cls = registry.lookup("codec", name, fmt)
                assert isinstance(codec, cls), (
                    f"{name!r} ({fmt}) resolves to {cls}, not {type(codec)}"
                )

    def test_json_round_trip(self, codec: Codec) -> None:
        for fmt in type(codec).names.formats():
            name, config = json_of(codec, fmt)
            again = type(codec).from_json(name, config, fmt)
            # what a format writes reads back as itself (a format may hold less than v3 does,
            # e.g. numcodecs' blosc has no typesize, so only the v3 form must be the same codec)
            assert again.to_json(fmt) == codec.to_json(fmt), f"{fmt}: {again!r}"
            if fmt == V3:
                assert again == codec, f"{codec.to_json(fmt)!r} reads back as {again!r}"

    def test_round_trip(self, codec: Codec) -> None:
        from zarrkit.api import data_type_from_arg

        for shape, dtype in itertools.product(self.shapes, self.dtypes):
            data = self.sample(dtype, shape)
            bound = self.chain_for(codec, data_type_from_arg(dtype), shape)
            # a copy, as the chain hands one (whether encode may write to what it is given is
            # `test_inputs_are_left_unchanged`'s and `test_reads_input_only_is_true`'s to say)
            encoded = bound.encode(np.array(data))
            decoded = bound.decode(bytes(memoryview(encoded).cast("B")))
            assert decoded.shape == data.shape and decoded.dtype == data.dtype, dtype
            if self.tolerance is None:
                np.testing.assert_array_equal(decoded, data, err_msg=f"{dtype} {shape}")
            else:
                wide = "c16" if data.dtype.kind == "c" else "f8"
                np.testing.assert_allclose(
                    decoded.astype(wide),
                    data.astype(wide),
                    atol=self.tolerance,
                    rtol=0,
                    err_msg=f"{dtype} {shape}",
                )

    def test_narrow_types_round_trip_or_are_refused(self, codec: Codec) -> None:
        """Each of `narrow_dtypes` (booleans, int8, 24-bit raw bits, a signed 24-bit integer
        held in int32), with values at both ends of its range, either decodes to exactly
        what was encoded or is refused with a zarrkit error: by `check_data_type` when the
        chain is built (what array creation does), or when the chunk is written (the kernel
        refuses values an array -> array codec took out of a narrow type's range). Silently
        wrong values, or a raw exception, fail (a lossy codec, with a `tolerance`, only has
        to take or refuse each type: what it may lose is its configuration's to say)."""
        from zarrkit.api import data_type_from_arg

        name = type(codec).__name__
        shape = max(self.shapes, key=lambda s: int(np.prod(s)))
        for arg in self.narrow_dtypes:
            data_type = arg if isinstance(arg, DataType) else data_type_from_arg(arg)
            what = f"{name} on {data_type.describe()} chunks of shape {shape}"
            try:
                bound = self.chain_for(codec, data_type, shape, data_type.default_fill())
            except ZarrkitError:  # (a CodecChainError or MetadataError, as creation gives)
                continue  # refused when the array is created: what a codec should do
            data = narrow_sample(data_type, shape)
            try:
                encoded = bound.encode(np.array(data), key="c/0")
            except ZarrkitError:
                continue  # refused when written, nothing stored
            except Exception as exc:
                pytest.fail(
                    f"{what}: encode raised {exc!r}. Refuse a type the codec cannot take in "
                    f"`check_data_type` (raise `self.refuse(data_type, why)`), so that array "
                    f"creation says so",
                    pytrace=False,
                )
            if encoded is None:
                continue  # (a shard of only fill)
            decoded = bound.decode(memoryview(encoded).tobytes(), key="c/0")
            if self.tolerance is not None:
                continue  # (a lossy codec may clamp or round by its configuration: its
                #  own samples and tolerance judge it; here only that it takes the type)
            if not _same(decoded, data):
                wrong = (
                    int(np.count_nonzero(decoded != data)) if decoded.shape == data.shape else -1
                )
                pytest.fail(
                    f"{what}: decoding gives other values than were encoded ({wrong} of "
                    f"{data.size} elements differ), silently. A codec must keep every value "
                    f"of a type it takes (narrow types too: arithmetic in the numpy type they "
                    f"are held in wraps or leaves their range), or refuse the type in "
                    f"`check_data_type`",
                    pytrace=False,
                )

    def test_part_of_a_chunk_decodes_as_the_whole_does(self, codec: Codec) -> None:
        """An array->array codec declaring partial decoding decodes a box of its encoded
        chunk, told where it sits, to what decoding the whole chunk gives there; elements
        outside the region (which a partial read leaves unread) hold random bits and must
        neither fail the decode nor change the region's values."""
        from zarrkit.api import data_type_from_arg

        if not isinstance(codec, ArrayArrayPartialDecode):
            pytest.skip("the codec does not declare ArrayArrayPartialDecode")
        rng = np.random.default_rng(11)
        for shape, dtype in itertools.product(self.shapes, self.dtypes):
            if min(shape) < 3:
                continue
            data = self.sample(dtype, shape)
            bound = self.chain_for(codec, data_type_from_arg(dtype), shape)
            evolved, spec = bound.array_array[0]
            assert isinstance(evolved, ArrayArrayPartialDecode)
            encoded = evolved.encode(data, spec)
            whole = evolved.decode(encoded, spec)
            # the middle of the chunk; along the first dimension two positions apart
            region = Region(
                (np.array([0, shape[0] - 1], dtype=np.int64),)
                + tuple(slice(1, n - 1) for n in shape[1:])
            )
            inner = evolved.encoded_region(region, spec)
            box = np.array(encoded[tuple(slice(lo, hi) for lo, hi in inner.bounds())])
            wanted = _positions(inner)
            noise = np.frombuffer(rng.bytes(box.nbytes), dtype=box.dtype).reshape(box.shape)
            kept = box[wanted]
            box[...] = noise
            box[wanted] = kept
            out = evolved.decode_partial(box, region, spec)
            expected_shape = tuple(hi - lo for lo, hi in region.bounds())
            assert out.shape == expected_shape, f"{dtype} {shape}: {out.shape}"
            np.testing.assert_array_equal(
                out[_positions(region)],
                whole[np.ix_(*_absolute(region))],
                err_msg=f"{dtype} {shape}",
            )

    def test_one_instance_on_many_threads(self, codec: Codec) -> None:
        """zarrkit encodes and decodes an array's chunks on a pool of threads, all through the
        one codec instance its metadata made: `threads` threads encode and decode
        `thread_chunks` different chunks at once, and every result must be what the same call
        gives alone. Results are held until every thread is done, so a codec that hands out a
        buffer it reuses is caught as surely as one whose calls share scratch state."""
        from zarrkit.api import data_type_from_arg

        dtype, shape = self._small_case()
        # the first dimension grown to thread_elements: numpy leaves the GIL to other
        # threads only on arrays of some hundreds of elements, and so do codec libraries
        if shape:
            rest = int(np.prod(shape[1:]))
            shape = (max(shape[0], -(-self.thread_elements // max(rest, 1))), *shape[1:])
        bound = self.chain_for(codec, data_type_from_arg(dtype), shape)
        chunks = self._distinct_chunks(dtype, shape, self.thread_chunks)
        # one call at a time, each result copied at once: what every call must give
        stored = [memoryview(bound.encode(chunk)).tobytes() for chunk in chunks]
        expected = [np.array(bound.decode(value), copy=True) for value in stored]

        def both(k: int) -> tuple[Any, np.ndarray]:
            return bound.encode(chunks[k]), bound.decode(stored[k])

        results, errors = _on_threads(self.threads, len(chunks), both)
        bad_decodes = sorted(k for k, (_, got) in results.items() if not _same(got, expected[k]))
        bad_encodes = sorted(
            k
            for k, (encoded, _) in results.items()
            if not _same(bound.decode(memoryview(encoded).tobytes()), expected[k])
        )
        name = type(codec).__name__
        if not (bad_decodes or bad_encodes or errors):
            # threads interleave only where the GIL is let go, which may not happen within
            # the short time a shared scratch buffer is in use: so what a call leaves on the
            # codecs, and in the modules that define them, is compared with what a call on
            # another chunk leaves (the same every run, whatever the scheduler did)
            both(1)
            left = _state(_codecs_of(bound))
            both(0)
            changed = sorted(k for k, v in _state(_codecs_of(bound)).items() if left.get(k) != v)
            assert not changed, (
                f"{name} is not thread-safe: it keeps what a call works on in the codec or "
                f"its module ({', '.join(changed[:4])} changed from one chunk's encode and "
                f"decode to another's). {_SHARE_NOTHING}"
            )
            return
        what = []
        if bad_encodes:
            what.append(f"encode gave wrong values for {len(bad_encodes)} ({bad_encodes[:6]})")
        if bad_decodes:
            what.append(f"decode gave wrong values for {len(bad_decodes)} ({bad_decodes[:6]})")
        if errors:
            k, exc = min(errors.items())
            what.append(f"{len(errors)} raised (chunk {k}: {exc!r})")
        pytest.fail(
            f"{name} is not thread-safe: {self.threads} threads encoding and decoding "
            f"{len(chunks)} different {dtype} chunks of shape {shape} through one instance at "
            f"once, {'; '.join(what)}, though every chunk is right when done alone. "
            f"{_SHARE_NOTHING}",
            pytrace=False,
        )

    def test_inputs_are_left_unchanged(self, codec: Codec) -> None:
        """`decode` (and `decode_bounded`, `decode_into`) only read what they are given: the
        chain hands them the stored value as the store returned it, which may be the store's
        or a cache's own buffer, or, through a plain serialiser, a view of an array the user
        wrote. A bytes -> bytes codec's `encode` only reads too: it is handed the chunk's
        bytes as they are, often the user's own array. Every input here is writable, so a
        write goes through and is seen."""
        from zarrkit.api import data_type_from_arg

        dtype, shape = self._small_case()
        bound = self.chain_for(codec, data_type_from_arg(dtype), shape)
        step, spec = _step_of(bound)
        data = self.sample(dtype, shape)
        given: np.ndarray
        if isinstance(step, BytesBytesCodec):
            serialiser, ab_spec = bound.array_bytes
            given = _writable_bytes(serialiser.encode(data, ab_spec))
            before = given.copy()
            encoded = step.encode(given, spec)
            _check_unchanged(
                before,
                given,
                f"{type(step).__name__}.encode wrote to its input",
                "a bytes -> bytes codec is handed the chunk's bytes as they are, often a view "
                "of the very array the user wrote (no copy is made), so encode must only read "
                "them; write what it makes to new memory",
            )
        else:
            encoded = step.encode(np.array(data), spec)
        decoders: list[tuple[str, Callable[[np.ndarray], Any]]] = [
            ("decode", lambda value: step.decode(value, spec))
        ]
        if isinstance(step, ArrayArrayCodec):
            stored = np.array(encoded)  # (a writable copy of what the codec encoded to)
        else:
            stored = _writable_bytes(encoded)
        if isinstance(step, BytesBytesCodec):
            size = len(before)
            decoders.append(
                ("decode_bounded", lambda value: step.decode_bounded(value, spec, size))
            )
            if isinstance(step, BytesBytesDecodeInto):
                out = memoryview(np.empty(size, np.uint8))
                decoders.append(("decode_into", lambda value: step.decode_into(value, out, spec)))
        elif isinstance(step, ArrayBytesDecodeInto):
            dest = np.empty(spec.shape, spec.dtype)
            decoders.append(("decode_into", lambda value: step.decode_into(value, dest, spec)))
        for method, decode in decoders:
            value = stored.copy()
            decode(value)
            _check_unchanged(
                stored,
                value,
                f"{type(step).__name__}.{method} wrote to its input",
                "decode must only read what it is given: the chain hands it the stored value "
                "itself, which can be a store's or a cache's buffer or a view of an array the "
                "user wrote, so a write there changes what other reads see; decode into new "
                "memory instead",
            )

    def test_reads_input_only_is_true(self, codec: Codec) -> None:
        """A codec that declares `reads_input_only` is handed each wholly written chunk as a
        view of the user's array (any memory layout, maybe read-only) instead of a copy: its
        `encode` must not write to it, and must encode a strided or read-only view exactly
        as it encodes a C-ordered copy."""
        if not isinstance(codec, (ArrayArrayCodec, ArrayBytesCodec)) or not codec.reads_input_only:
            return
        from zarrkit.api import data_type_from_arg

        dtype, shape = self._small_case()
        bound = self.chain_for(codec, data_type_from_arg(dtype), shape)
        step, spec = _step_of(bound)
        data = self.sample(dtype, shape)
        name = type(step).__name__
        declared = (
            f"{name} declares reads_input_only = True, so the chain hands its encode the "
            f"user's own array (a view of the written value, in any memory layout, maybe "
            f"read-only) instead of a copy"
        )
        # a strided view into a larger array, as a chunk of a written value is
        whole = np.zeros(tuple(2 * n for n in shape), dtype=data.dtype)
        view = whole[tuple(slice(None, None, 2) for _ in shape)]
        view[...] = data
        before = whole.copy()
        try:
            strided = step.encode(view, spec)
        except Exception as exc:
            pytest.fail(f"{declared}; but encode fails on a strided view: {exc!r}", pytrace=False)
        _check_unchanged(
            before,
            whole,
            f"{declared}; but its encode wrote to its input, which would change the user's data",
            "only read the input, or drop reads_input_only (the chain then hands encode a copy)",
        )
        view.flags.writeable = False
        try:
            step.encode(view, spec)
        except Exception as exc:
            pytest.fail(
                f"{declared}; but encode fails on a read-only view: {exc!r}. Only read the "
                f"input, or drop reads_input_only (the chain then hands encode a copy)",
                pytrace=False,
            )
        plain = step.encode(np.array(data), spec)
        if plain is None or strided is None:  # (nothing to store: a shard of only fill)
            assert strided is plain, f"{declared}; but a strided view encodes differently"
            return
        if isinstance(step, ArrayArrayCodec):
            got, want = step.decode(np.array(strided), spec), step.decode(np.array(plain), spec)
        else:
            got = step.decode(memoryview(strided).tobytes(), spec)
            want = step.decode(memoryview(plain).tobytes(), spec)
        assert _same(got, want), (
            f"{declared}; but a strided view encodes to something else than the same values "
            f"in C order do: take the input in any layout (np.ascontiguousarray) or drop "
            f"reads_input_only"
        )

    def test_corrupt_input_is_a_chunk_decode_error(self, codec: Codec) -> None:
        from zarrkit.api import data_type_from_arg

        shape = self.shapes[-1]
        dtype = self.dtypes[-1]
        bound = self.chain_for(codec, data_type_from_arg(dtype), shape)
        encoded = bytes(memoryview(bound.encode(self.sample(dtype, shape))).cast("B"))
        with pytest.raises(ChunkDecodeError):
            bound.decode(b"", key="c/0")
        if self.corrupt_detected:
            with pytest.raises(ChunkDecodeError) as info:
                bound.decode(encoded[: len(encoded) // 2], key="c/0")
            assert "c/0" in str(info.value)

    def test_decoding_is_bounded_by_the_chunk(self, codec: Codec) -> None:
        """bytes->bytes: a stored value that decodes to far more than a chunk holds (a bomb:
        `bomb_bytes` of zeros, encoded by the codec itself) is refused with a ChunkDecodeError
        naming the chunk, and without allocating what it decodes to (`BytesBytesCodec.decode_bounded`):
        through `decode` and through `decode_into` alike. A value of exactly the chunk's size
        still decodes. (Memory is what Python's allocators hand out, as tracemalloc sees it:
        bytes, numpy arrays, and what compression modules allocate through Python.) A codec
        that does not shrink zeros has no bomb to feed: the memory check is then skipped, with
        the reason shown, and `test_a_false_length_header_is_not_believed` bounds it."""
        if not isinstance(codec, BytesBytesCodec):
            pytest.skip(f"{type(codec).__name__} is not a bytes -> bytes codec (no bomb)")
        from zarrkit.api import data_type_from_arg

        data_type = data_type_from_arg("uint8")
        big = self.chain_for(codec, data_type, (self.bomb_bytes,))
        encoded = bytes(memoryview(big.encode(np.zeros(self.bomb_bytes, np.uint8))).cast("B"))
        small = self.chain_for(codec, data_type, (1024,))
        exact = self.chain_for(codec, data_type, (self.bomb_bytes,))
        np.testing.assert_array_equal(exact.decode(encoded), 0)
        peaks = []
        for decode in (
            lambda: small.decode(encoded, key="c/0"),
            lambda: small.decode_into(encoded, np.empty(1024, np.uint8), key="c/0"),
        ):
            with _peak_memory() as peak:
                with pytest.raises(ChunkDecodeError) as info:
                    decode()
            assert info.value.key == "c/0"
            peaks.append(peak[0])
        if len(encoded) > self.bomb_bytes // 8:
            pytest.skip(
                f"{type(codec).__name__} encodes {self.bomb_bytes} zero bytes to "
                f"{len(encoded)} bytes (not 8 times smaller), so its value is no bomb and the "
                f"memory of refusing it says nothing; the false length header check bounds it"
            )
        assert max(peaks) < self.bomb_bytes // 4, (
            f"decoding a {len(encoded)}-byte value that inflates to {self.bomb_bytes} bytes "
            f"allocated {max(peaks)} bytes before refusing it: bound the decode "
            f"(`BytesBytesCodec.decode_bounded`)"
        )

    def test_a_false_length_header_is_not_believed(self, codec: Codec) -> None:
        """A stored value whose header lies: every 4- and 8-byte field among its first and
        last 16 bytes, in turn, set to claim `false_size` bytes (either byte order). Each such
        value decodes to a chunk or is refused with a ChunkDecodeError, and decoding it
        allocates no more than the chunk's bytes and the value's, plus `decode_slack`: a codec
        checks what a header claims against the bound it is given (`decode_bounded`'s
        `max_size`, the chunk's spec) before it allocates, never after."""
        if not isinstance(codec, (BytesBytesCodec, ArrayBytesCodec)):
            pytest.skip(f"{type(codec).__name__} is an array -> array codec: it reads no bytes")
        if self.false_headers_unsafe is not None:
            pytest.skip(self.false_headers_unsafe)
        from zarrkit.api import data_type_from_arg

        name = type(codec).__name__
        shape: tuple[int, ...]
        if isinstance(codec, BytesBytesCodec):
            dtype, shape = "uint8", (1024,)
        else:
            dtype, shape = self._small_case()
        bound = self.chain_for(codec, data_type_from_arg(dtype), shape)
        stored = bound.encode(self.sample(dtype, shape))
        if stored is None:
            pytest.skip(f"{name} stores nothing for a chunk of sample values")
        value = memoryview(stored).tobytes()
        lies = list(_false_headers(value, self.false_size))
        if not lies:
            pytest.skip(f"{name} stores a chunk in {len(value)} bytes: no room for a header")
        chunk_bytes = bound.spec.nbytes or int(np.prod(shape)) * 64
        allowed = 2 * chunk_bytes + 4 * len(value) + self.decode_slack
        for where, lie in lies:
            with _peak_memory() as peak:
                try:
                    bound.decode(lie, key="c/0")
                except ChunkDecodeError:
                    pass
            assert peak[0] <= allowed, (
                f"{name}: a {len(lie)}-byte stored value whose {where} claims "
                f"{self.false_size} bytes made decoding a chunk of {chunk_bytes} bytes "
                f"allocate {peak[0]} bytes (allowed: {allowed}). A length from the stored "
                f"value is checked against the chunk's bound before anything is allocated "
                f"for it (`BytesBytesCodec.decode_bounded` is given `max_size`): otherwise "
                f"twelve stored bytes can ask for gigabytes"
            )

    def test_byte_ranges_pass_through(self, codec: Codec) -> None:
        """A bytes->bytes codec declaring `BytesBytesPartialDecode` promises that byte i of
        its stored value is byte i of what it decodes to: a partial read (a window of a
        sharded array, whose inner chunks it encodes) fetches byte ranges of the stored
        value and hands them on undecoded. So every range of the decoded bytes must be the
        same range of the stored value; a codec with a header, or one that transforms the
        bytes, must not declare it."""
        if not isinstance(codec, BytesBytesCodec) or not isinstance(codec, BytesBytesPartialDecode):
            pytest.skip(f"{type(codec).__name__} does not declare BytesBytesPartialDecode")
        from zarrkit.api import data_type_from_arg

        data_type = data_type_from_arg("uint8")
        spec = ChunkSpec((1000,), data_type, data_type.cast_scalar(0))
        payload = np.random.default_rng(5).integers(0, 256, 1000, dtype=np.uint8)
        stored = memoryview(codec.encode(payload, spec)).tobytes()
        whole = memoryview(codec.decode(stored, spec)).tobytes()
        assert whole == payload.tobytes(), "the value does not decode to what was encoded"
        for lo, hi in ((0, 1000), (0, 10), (10, 20), (500, 777), (990, 1000)):
            if stored[lo:hi] != whole[lo:hi]:
                pytest.fail(
                    f"{type(codec).__name__} declares BytesBytesPartialDecode, but bytes "
                    f"{lo}..{hi} of its stored value are not bytes {lo}..{hi} of what it "
                    f"decodes to: a partial read would return the stored bytes as data. "
                    f"Declare it only when the codec leaves the bytes where they are (a "
                    f"checksum after them is fine)",
                    pytrace=False,
                )

    def test_encoded_size_is_true(self, codec: Codec) -> None:
        if not isinstance(codec, BytesBytesCodec):
            return
        from zarrkit.api import data_type_from_arg

        data_type = data_type_from_arg("uint8")
        spec = ChunkSpec((100,), data_type, data_type.cast_scalar(0))
        payload = np.arange(100, dtype="u1")
        size = codec.encoded_size(100)
        if size is not None:
            assert len(memoryview(codec.encode(payload, spec)).cast("B")) == size


def _false_headers(value: bytes, size: int) -> Iterator[tuple[str, bytes]]:
    """`value` with each 4- and 8-byte field among its first and last 16 bytes set to `size`
    (little and big endian), each named by where the lie is."""
    seen: set[bytes] = set()
    starts = sorted(
        set(range(min(16, len(value)))) | set(range(max(0, len(value) - 16), len(value)))
    )
    orders: tuple[Literal["little", "big"], ...] = ("little", "big")
    for width, order, at in itertools.product((8, 4), orders, starts):
        if at + width > len(value) or size >= 1 << (8 * width):
            continue
        lie = value[:at] + size.to_bytes(width, order) + value[at + width :]
        if lie != value and lie not in seen:
            seen.add(lie)
            yield f"{width}-byte {order}-endian field at byte {at}", lie


@contextmanager
def _peak_memory() -> Iterator[list[int]]:
    """The most memory Python's allocators held above the start during the block (tracemalloc;
    the one-element list is filled when the block ends). Works when tracing is already on."""
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    found = [0]
    try:
        yield found
    finally:
        found[0] = tracemalloc.get_traced_memory()[1] - base
        if not was_tracing:
            tracemalloc.stop()


def _absolute(region: Region) -> list[np.ndarray]:
    """A region's positions per dimension, in the chunk's coordinates."""
    return [
        np.arange(part.start, part.stop) if isinstance(part, slice) else part
        for part in region.parts
    ]


def _positions(region: Region) -> tuple[np.ndarray, ...]:
    """An index of a region's positions in its box (`region.bounds()`)."""
    return np.ix_(*(p - lo for p, (lo, _) in zip(_absolute(region), region.bounds())))


_Step = ArrayArrayCodec | ArrayBytesCodec | BytesBytesCodec


def _step_of(bound: ChunkPlan) -> tuple[_Step, ChunkSpec]:
    """The codec `chain_for` built the chain around (the one not from the defaults), and the
    spec it sees."""
    if bound.array_array:
        return bound.array_array[0]
    if bound.bytes_bytes:
        return bound.bytes_bytes[0], bound.array_bytes[1]
    return bound.array_bytes


def _codecs_of(bound: ChunkPlan) -> list[Codec]:
    return [c for c, _ in bound.array_array] + [bound.array_bytes[0], *bound.bytes_bytes]


def _state(codecs: list[Codec]) -> dict[str, Any]:
    """What the codecs hold, as {attribute path: contents} (buffers and arrays by their bytes,
    containers opened, other objects by their attributes, a few levels deep)."""
    found: dict[str, Any] = {}
    seen: set[int] = set()

    def walk(path: str, value: Any, depth: int) -> None:
        if isinstance(value, (str, bytes, int, float, complex, bool, type(None))):
            found[path] = value
        elif isinstance(value, np.ndarray):
            found[path] = (value.dtype.str, value.shape, value.tobytes())
        elif isinstance(value, (bytearray, memoryview)):
            found[path] = memoryview(value).tobytes()
        elif (
            depth > 4
            or id(value) in seen
            or isinstance(value, (type, threading.local, types.ModuleType))
        ):
            found[path] = type(value).__name__
        else:
            seen.add(id(value))
            if isinstance(value, dict):
                items = [(f"[{k!r}]", v) for k, v in value.items()]
            elif isinstance(value, (list, tuple)):
                items = [(f"[{i}]", v) for i, v in enumerate(value)]
            else:
                names = [*getattr(value, "__dict__", {}), *getattr(type(value), "__slots__", ())]
                items = [(f".{n}", getattr(value, n)) for n in names if hasattr(value, n)]
            found[path] = type(value).__name__
            for suffix, item in items:
                walk(path + suffix, item, depth + 1)

    for codec in codecs:
        walk(type(codec).__name__, codec, 0)
    for module in _modules_of(codecs):
        for attr, value in vars(module).items():
            if isinstance(value, (types.ModuleType, type, threading.local)) or callable(value):
                continue  # (code, and per-thread state, which is what a codec should use)
            walk(f"{module.__name__}.{attr}", value, 1)
    return found


def _modules_of(codecs: list[Codec]) -> list[types.ModuleType]:
    """The modules defining the codecs' classes (their bases too), the kernel's left out:
    where a module-level scratch buffer or library context would be."""
    names = {
        cls.__module__
        for codec in codecs
        for cls in type(codec).__mro__
        if cls.__module__ not in ("builtins", "abc")
        and not (cls.__module__.startswith("zarrkit.") and ".plugins." not in cls.__module__)
    }
    return [sys.modules[n] for n in sorted(names) if n in sys.modules]


def _writable_bytes(value: Any) -> np.ndarray:
    """A writable uint8 copy of a bytes-like value (so a decoder's write to it goes through)."""
    return np.frombuffer(memoryview(value).tobytes(), np.uint8).copy()


def _check_unchanged(before: np.ndarray, after: np.ndarray, what: str, advice: str) -> None:
    if _same(before, after):
        return
    if _by_value(before.dtype):
        changed, total, unit = int(np.count_nonzero(before != after)), before.size, "elements"
    else:
        flat_before = np.ascontiguousarray(before).reshape(-1).view(np.uint8)
        flat_after = np.ascontiguousarray(after).reshape(-1).view(np.uint8)
        changed, total, unit = (
            int(np.count_nonzero(flat_before != flat_after)),
            before.nbytes,
            "bytes",
        )
    pytest.fail(f"{what} ({changed} of {total} {unit} changed): {advice}.", pytrace=False)


def _by_value(dtype: np.dtype) -> bool:
    """Whether arrays of `dtype` hold references (objects, numpy's strings), not their values."""
    return dtype.hasobject or dtype.kind == "T"


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal in shape, data type and every bit (NaNs included); object arrays by value."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if _by_value(a.dtype):
        return bool(a.tolist() == b.tolist())
    return bool(np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes())


def _on_threads(
    threads: int, n: int, call: Callable[[int], Any]
) -> tuple[dict[int, Any], dict[int, BaseException]]:
    """`call(k)` for k in range(n), shared among `threads` threads that start together and
    switch as often as the interpreter allows, so calls that share state interleave. Results
    and errors by k."""
    start = threading.Barrier(threads)
    results: dict[int, Any] = {}
    errors: dict[int, BaseException] = {}

    def share(first: int) -> None:
        start.wait(timeout=60)  # (a hang guard only)
        for k in range(first, n, threads):
            try:
                results[k] = call(k)
            except Exception as exc:
                errors[k] = exc

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        with ThreadPoolExecutor(threads) as pool:
            for done in [pool.submit(share, i) for i in range(threads)]:
                done.result()
    finally:
        sys.setswitchinterval(interval)
    return results, errors


def _default_serializer(data_type: Any, shape: tuple[int, ...]) -> ArrayBytesCodec:
    """The array -> bytes codec a new array gets by default (the `zarrkit_array_defaults`
    hook's answer), so the suite itself names no codec."""
    from zarrkit import hooks
    from zarrkit.negotiation import extension_from_arg

    for doc in hooks.array_defaults(V3, data_type, shape).get("codecs", []):
        codec = extension_from_arg("codec", doc, V3, key="codecs")
        if isinstance(codec, ArrayBytesCodec):
            return codec
    raise LookupError("no zarrkit_array_defaults answer names an array -> bytes codec")
