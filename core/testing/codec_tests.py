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
`bomb_bytes` (what the decompression bomb of the bounded-decoding check inflates to).
The class name does not start with "Test", so importing it does not run it on its own.
"""

from __future__ import annotations

import itertools
from typing import Any, ClassVar

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
    BoundChain,
    BytesBytesCodec,
    BytesBytesDecodeBatch,
    BytesBytesDecodeInto,
    BytesBytesDecodePrefix,
    BytesBytesPartialDecode,
    ChunkSpec,
    Codec,
    CodecChain,
    CodecKind,
    Region,
    evolve_codecs,
    parse_named_config,
)
from zarrkit.errors import ChunkDecodeError

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

    def chain_for(self, codec: Codec, data_type: Any, shape: tuple[int, ...]) -> BoundChain:
        """The codec in the smallest valid chain, evolved as array creation would, bound."""
        bytes_codec = _default_serializer(data_type, shape)
        codecs: list[Codec]
        if isinstance(codec, ArrayArrayCodec):
            codecs = [codec, bytes_codec]
        elif isinstance(codec, ArrayBytesCodec):
            codecs = [codec]
        else:
            codecs = [bytes_codec, codec]
        spec = ChunkSpec(shape, data_type, data_type.cast_scalar(self.fill_value))
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
            encoded = bound.encode(data)
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
        bytes, numpy arrays, and what compression modules allocate through Python.)"""
        if not isinstance(codec, BytesBytesCodec):
            return
        import tracemalloc

        from zarrkit.api import data_type_from_arg

        data_type = data_type_from_arg("uint8")
        big = self.chain_for(codec, data_type, (self.bomb_bytes,))
        encoded = bytes(memoryview(big.encode(np.zeros(self.bomb_bytes, np.uint8))).cast("B"))
        small = self.chain_for(codec, data_type, (1024,))
        exact = self.chain_for(codec, data_type, (self.bomb_bytes,))
        np.testing.assert_array_equal(exact.decode(encoded), 0)
        for decode in (
            lambda: small.decode(encoded, key="c/0"),
            lambda: small.decode_into(encoded, np.empty(1024, np.uint8), key="c/0"),
        ):
            tracemalloc.start()
            try:
                with pytest.raises(ChunkDecodeError) as info:
                    decode()
                peak = tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
            assert info.value.key == "c/0"
            if len(encoded) > self.bomb_bytes // 8:
                continue  # (no bomb: a codec that does not shrink zeros, e.g. a shuffle)
            assert peak < self.bomb_bytes // 4, (
                f"decoding a {len(encoded)}-byte value that inflates to {self.bomb_bytes} bytes "
                f"allocated {peak} bytes before refusing it: bound the decode "
                f"(`BytesBytesCodec.decode_bounded`)"
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


def _absolute(region: Region) -> list[np.ndarray]:
    """A region's positions per dimension, in the chunk's coordinates."""
    return [
        np.arange(part.start, part.stop) if isinstance(part, slice) else part
        for part in region.parts
    ]


def _positions(region: Region) -> tuple[np.ndarray, ...]:
    """An index of a region's positions in its box (`region.bounds()`)."""
    return np.ix_(*(p - lo for p, (lo, _) in zip(_absolute(region), region.bounds())))


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
