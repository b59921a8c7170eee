"""Every first-party codec of this release, and the numcodecs bridge, through CodecTests."""

from __future__ import annotations

import numpy as np
import pytest
from zarrkit_testing import CodecTests

from zarrkit import registry
from zarrkit.abc.extension import V2, V3


def codec(name: str, configuration: dict | None = None, fmt: str = V3):
    return registry.lookup("codec", name, fmt).from_json(name, configuration or {}, fmt)


INTS_AND_FLOATS = ("uint8", "int16", "int32", "int64", "uint64", "float32", "float64")


class TestGzip(CodecTests):
    @pytest.fixture(params=[1, 9])
    def codec(self, request):
        return codec("gzip", {"level": request.param})


class TestZstd(CodecTests):
    @pytest.fixture(params=[{"level": 0, "checksum": False}, {"level": 5, "checksum": True}])
    def codec(self, request):
        return codec("zstd", request.param)


class TestBlosc(CodecTests):
    dtypes = INTS_AND_FLOATS

    @pytest.fixture(
        params=[
            {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 4, "blocksize": 0},
            {"cname": "zstd", "clevel": 3, "shuffle": "noshuffle", "blocksize": 0},
        ]
    )
    def codec(self, request):
        return codec("blosc", request.param)


class TestBloscFromV2(CodecTests):
    """numcodecs' form: shuffle as an int, -1 (auto) resolved per chunk element size."""

    dtypes = INTS_AND_FLOATS

    @pytest.fixture(params=[0, 1, 2])  # -1 (auto) has no v3 spelling: test_codecs_names.py
    def codec(self, request):
        return codec(
            "blosc", {"cname": "zstd", "clevel": 5, "shuffle": request.param, "blocksize": 0}, V2
        )


class TestCrc32c(CodecTests):
    @pytest.fixture
    def codec(self):
        return codec("crc32c")


class TestBitRound(CodecTests):
    dtypes = ("float16", "float32", "float64", "complex64")
    tolerance = 1.0  # sample values are below 1000; 6 kept bits lose at most 2**-7 of them

    def sample(self, dtype, shape):
        return (np.random.default_rng(1).random(shape) * 100).astype(dtype)

    @pytest.fixture
    def codec(self):
        return codec("numcodecs.bitround", {"keepbits": 6})


class TestScaleOffset(CodecTests):
    dtypes = ("int16", "int32", "int64", "uint8", "uint64", "float32", "float64")

    def sample(self, dtype, shape):
        return (np.arange(int(np.prod(shape))) % 25 + 5).astype(dtype).reshape(shape)

    @pytest.fixture(params=[{"offset": 5, "scale": 2}, {"offset": 0, "scale": 1}])
    def codec(self, request):
        return codec("scale_offset", request.param)


class TestCastValue(CodecTests):
    dtypes = ("float32", "float64", "int64")
    tolerance = 1.0  # rounding to integers (towards zero: up to 1)

    def sample(self, dtype, shape):
        return (np.random.default_rng(2).random(shape) * 200).astype(dtype)

    @pytest.fixture(
        params=[
            {"data_type": "uint8"},
            {"data_type": "int16", "rounding": "towards-zero", "out_of_range": "clamp"},
        ]
    )
    def codec(self, request):
        return codec("cast_value", request.param)


# zfpy decodes the sizes its header declares unchecked: a crafted stored value crashes the
# process (SIGSEGV in numcodecs.zfpy.ZFPY.decode), which no pytest check survives
class TestZfp(CodecTests):
    dtypes = ("int8", "uint16", "int32", "uint32", "int64", "float16", "float32", "float64")
    shapes = ((1,), (37,), (6, 7), (2, 3, 1, 5, 1))
    corrupt_detected = False  # a raw zfp stream has no length or checksum

    @pytest.fixture(params=[{"mode": "reversible"}])
    def codec(self, request):
        pytest.importorskip("zfpy")
        return codec("zfp", request.param)


class TestZfpLossy(CodecTests):
    dtypes = ("float32", "float64")
    corrupt_detected = False
    tolerance = 0.01

    @pytest.fixture(
        params=[
            {"mode": "fixed_accuracy", "tolerance": 0.001},
            {"mode": "fixed_precision", "precision": 24},
        ]
    )
    def codec(self, request):
        pytest.importorskip("zfpy")
        return codec("zfp", request.param)


# -- the numcodecs bridge -----------------------------------------------------------------
class TestNumcodecsCompressors(CodecTests):
    # lzma's decoder state is its dictionary (8 MiB at the default preset), allocated through
    # Python's allocator: a bomb well above it tells the decoded value from the state
    bomb_bytes = 48 << 20
    # (and it may take that dictionary whatever the chunk: bounded by its memlimit instead)
    decode_slack = 9 << 20

    @pytest.fixture(
        params=[
            "numcodecs.zlib",
            "numcodecs.bz2",
            "numcodecs.lzma",
            "numcodecs.crc32",
            "numcodecs.adler32",
            "numcodecs.fletcher32",
            "numcodecs.shuffle",
        ]
    )
    def codec(self, request):
        return codec(request.param)  # shuffle's elementsize: filled in from the data type

    def test_corrupt_input_is_a_chunk_decode_error(self, codec):
        if codec.codec_id == "shuffle":
            # a byte shuffle has no structure to check: any same-size input decodes; a
            # truncated one must still not come back as a chunk of the wrong size
            import zarrkit
            from zarrkit.errors import ChunkDecodeError

            a = zarrkit.create_array(
                "memory://", shape=(8,), dtype="int32", chunks=(8,), codecs=["bytes", codec]
            )
            a[:] = np.arange(8)
            a.store.set(a._chunk_key((0,)), a.store.get(a._chunk_key((0,)))[:-3])
            with pytest.raises(ChunkDecodeError):
                a[...]
            return
        super().test_corrupt_input_is_a_chunk_decode_error(codec)


class TestNumcodecsFilters(CodecTests):
    dtypes = ("int32", "int64", "float64")

    def sample(self, dtype, shape):
        return (np.arange(int(np.prod(shape))) % 50).astype(dtype).reshape(shape)

    @pytest.fixture(
        params=[
            ("numcodecs.delta", {}),
            ("numcodecs.quantize", {"digits": 3}),
            ("numcodecs.fixedscaleoffset", {"offset": 0, "scale": 1}),
        ]
    )
    def codec(self, request):
        name, config = request.param
        if name == "numcodecs.quantize":
            self.dtypes = ("float64",)
        return codec(name, config)


class TestNumcodecsPcodec(CodecTests):
    dtypes = ("int32", "int64", "uint16", "float32", "float64")

    @pytest.fixture
    def codec(self):
        pytest.importorskip("pcodec")
        return codec("numcodecs.pcodec", {"level": 8})


class TestNumcodecsZfpy(CodecTests):
    dtypes = ("float32", "float64")
    corrupt_detected = False  # zfp reads a truncated stream as zeros
    tolerance = 0.01

    @pytest.fixture
    def codec(self):
        pytest.importorskip("zfpy")
        return codec("numcodecs.zfpy", {"mode": 4, "tolerance": 0.001})


class TestBytes(CodecTests):
    dtypes = INTS_AND_FLOATS

    @pytest.fixture(params=["little", "big"])
    def codec(self, request):
        return codec("bytes", {"endian": request.param})


class TestTranspose(CodecTests):
    shapes = ((6, 7), (1, 5), (3, 4))

    @pytest.fixture
    def codec(self):
        return codec("transpose", {"order": [1, 0]})


class TestPackbits(CodecTests):
    dtypes = ("bool",)

    @pytest.fixture
    def codec(self):
        return codec("packbits")


class TestSharding(CodecTests):
    shapes = ((4,), (36,))

    @pytest.fixture(params=["end", "start"])
    def codec(self, request):
        little = {"name": "bytes", "configuration": {"endian": "little"}}
        zstd = {"name": "zstd", "configuration": {"level": 0, "checksum": False}}
        config = {
            "chunk_shape": [4],
            "codecs": [little, zstd],
            "index_codecs": [little, {"name": "crc32c"}],
            "index_location": request.param,
        }
        return codec("sharding_indexed", config)


class TestVlenUtf8(CodecTests):
    dtypes = ("string",)
    fill_value = ""

    def sample(self, dtype, shape):
        words = np.array(["", "a", "zarr", "ünïcode", "x" * 40], dtype=np.dtypes.StringDType())
        return words[np.arange(int(np.prod(shape))) % 5 * 3 % 5].reshape(shape)

    @pytest.fixture
    def codec(self):
        return codec("vlen-utf8")


class TestVlenBytes(CodecTests):
    dtypes = ("bytes",)
    fill_value = b""

    def sample(self, dtype, shape):
        words = np.array([b"", b"\x00", b"zarr", b"\xff" * 30], dtype=object)
        return words[np.arange(int(np.prod(shape))) % 4 * 3 % 4].reshape(shape)

    @pytest.fixture
    def codec(self):
        return codec("vlen-bytes")
