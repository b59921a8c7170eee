"""Decompression bombs and lying size headers, stored as chunks of real arrays: each read ends in
a ChunkDecodeError naming the chunk, quickly, with peak memory near the chunk's size, because
every decoding step is bounded by what the chunk spec allows (`BytesBytesCodec.decode_bounded`).

Every bomb is first checked to be what it claims: decoded without a limit by the codec's
library (where that is affordable) it gives the bytes it says, so a test cannot pass on a
malformed frame that any decoder would refuse at once."""

from __future__ import annotations

import bz2
import gzip
import lzma
import struct
import time
import tracemalloc
import zlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from crc32c import crc32c

import zarrkit as zk
from zarrkit import config
from zarrkit.errors import ChunkDecodeError
from zarrkit.plugins.stores.local.local import LocalStore
from zarrkit.plugins.stores.memory import MemoryStore

BYTES = {"name": "bytes", "configuration": {"endian": "little"}}
ZSTD = {"name": "zstd", "configuration": {"level": 3, "checksum": False}}
GZIP = {"name": "gzip", "configuration": {"level": 5}}
CRC = {"name": "crc32c"}
BLOSC = {
    "name": "blosc",
    "configuration": {
        "cname": "lz4",
        "clevel": 5,
        "shuffle": "shuffle",
        "typesize": 8,
        "blocksize": 0,
    },
}


def numcodec(cid: str, **config: Any) -> dict:
    return {"name": f"numcodecs.{cid}", "configuration": config}


#: a chunk of 32x32 float64: 8 KiB decoded
SHAPE, CHUNKS, DTYPE = (64, 64), (32, 32), "float64"
CHUNK_BYTES = 32 * 32 * 8
#: what the bombs inflate to (the 2 GiB ones only declare it)
BOMB = 64 << 20
#: what a refused read may allocate at its peak, and how long it may take
PEAK_LIMIT = 8 << 20
SECONDS = 5.0


# -- bombs ------------------------------------------------------------------------------------
def zstd_rle_frame(total: int, *, declare: bool, checksum_flag: bool = False) -> bytes:
    """A zstd frame of RLE blocks (4 bytes per 128 KiB of zeros): 2 GiB in 64 KiB, as the
    issue's bomb. `declare`: the header states the content size."""
    descriptor = (0xC0 if declare else 0x00) | (0x04 if checksum_flag else 0)
    header = b"\x28\xb5\x2f\xfd" + bytes([descriptor, 17 - 10 << 3])  # 128 KiB window
    if declare:
        header += total.to_bytes(8, "little")
    block = 128 << 10
    full, rest = divmod(total, block)
    sizes = [block] * full + ([rest] if rest else [])
    out = bytearray(header)
    for i, size in enumerate(sizes):
        last = i == len(sizes) - 1
        out += ((size << 3) | (1 << 1) | int(last)).to_bytes(3, "little") + b"\x00"
    return bytes(out)


def zstd_one_block_declaring(declared: int, block: int = 2048) -> bytes:
    """One RLE block of `block` zeros in a frame whose header declares `declared` bytes: the
    shape of frame a batch decoder takes whole (and sizes by its header)."""
    header = b"\x28\xb5\x2f\xfd" + bytes([0xC0, 17 - 10 << 3]) + declared.to_bytes(8, "little")
    return header + ((block << 3) | (1 << 1) | 1).to_bytes(3, "little") + b"\x00"


def _zeros_stream(compressor: Any, total: int) -> bytes:
    step = np.zeros(1 << 20, np.uint8).tobytes()
    parts = [compressor.compress(step) for _ in range(total // len(step))]
    return b"".join(parts) + compressor.flush()


def gzip_bomb(total: int = BOMB) -> bytes:
    return _zeros_stream(zlib.compressobj(9, zlib.DEFLATED, 31), total)


def zlib_bomb(total: int = BOMB) -> bytes:
    return _zeros_stream(zlib.compressobj(9), total)


def bz2_bomb(total: int = BOMB) -> bytes:
    return _zeros_stream(bz2.BZ2Compressor(9), total)


def lzma_bomb(total: int = BOMB) -> bytes:
    return _zeros_stream(lzma.LZMACompressor(preset=1), total)


def lz4_bomb(total: int = BOMB) -> bytes:
    from numcodecs import LZ4

    return bytes(LZ4().encode(np.zeros(total, np.uint8)))


def blosc_bomb(total: int = BOMB) -> bytes:
    from numcodecs import Blosc

    return bytes(Blosc("lz4", 5, Blosc.SHUFFLE).encode(np.zeros(total // 8, np.float64)))


def blosc_header_lies() -> bytes:
    """An honest blosc chunk of this array's size whose header claims 2 GiB - 1 decoded."""
    from numcodecs import Blosc

    raw = bytearray(Blosc("lz4", 5, Blosc.SHUFFLE).encode(np.arange(CHUNK_BYTES // 8, dtype="f8")))
    raw[4:8] = (2**31 - 1).to_bytes(4, "little")
    return bytes(raw)


def lz4_header_lies() -> bytes:
    from numcodecs import LZ4

    raw = bytearray(LZ4().encode(np.arange(CHUNK_BYTES // 8, dtype="f8")))
    raw[:4] = (2**31 - 1).to_bytes(4, "little")
    return bytes(raw)


def pcodec_bomb(total: int = BOMB) -> bytes:
    from numcodecs import PCodec

    return bytes(PCodec(level=8).encode(np.zeros(total // 8, np.float64)))


def with_crc(blob: bytes) -> bytes:
    return blob + crc32c(blob).to_bytes(4, "little")


#: attack -> (codecs, the stored bytes, what an unbounded decode of them gives: None when that
#: is too costly to check here, e.g. the 2 GiB ones, which are checked at a small size below)
ATTACKS: dict[str, tuple[list[dict], Callable[[], bytes]]] = {
    "zstd declares 2 GiB": ([BYTES, ZSTD], lambda: zstd_rle_frame(2**31, declare=True)),
    "zstd declares 2**64-1": (
        [BYTES, ZSTD],
        lambda: (
            zstd_rle_frame(2**20, declare=True)[:6]
            + (2**64 - 1).to_bytes(8, "little")
            + zstd_rle_frame(2**20, declare=True)[14:]
        ),
    ),
    "zstd one block declaring 2 GiB": ([BYTES, ZSTD], lambda: zstd_one_block_declaring(2**31)),
    "zstd undeclared 64 MiB": ([BYTES, ZSTD], lambda: zstd_rle_frame(BOMB, declare=False)),
    "zstd right size then a second frame": (
        [BYTES, ZSTD],
        lambda: zstd_rle_frame(CHUNK_BYTES, declare=True) + zstd_rle_frame(BOMB, declare=False),
    ),
    "gzip bomb": ([BYTES, GZIP], gzip_bomb),
    "blosc bomb": ([BYTES, BLOSC], blosc_bomb),
    "blosc header lies": ([BYTES, BLOSC], blosc_header_lies),
    "crc32c-wrapped zstd bomb": (
        [BYTES, ZSTD, CRC],
        lambda: with_crc(zstd_rle_frame(2**31, declare=True)),
    ),
    "crc32c-wrapped undeclared zstd": (
        [BYTES, ZSTD, CRC],
        lambda: with_crc(zstd_rle_frame(BOMB, declare=False)),
    ),
    "gzip around a zstd bomb": (
        [BYTES, ZSTD, GZIP],
        lambda: gzip.compress(zstd_rle_frame(BOMB, declare=False)),
    ),
    "numcodecs.lz4 bomb": ([BYTES, numcodec("lz4")], lz4_bomb),
    "numcodecs.lz4 header lies": ([BYTES, numcodec("lz4")], lz4_header_lies),
    "numcodecs.bz2 bomb": ([BYTES, numcodec("bz2", level=1)], bz2_bomb),
    "numcodecs.lzma bomb": ([BYTES, numcodec("lzma", preset=1)], lzma_bomb),
    "numcodecs.zlib bomb": ([BYTES, numcodec("zlib", level=1)], zlib_bomb),
    "numcodecs.gzip bomb": ([BYTES, numcodec("gzip", level=1)], gzip_bomb),
    "numcodecs.zstd declares 2 GiB": (
        [BYTES, numcodec("zstd", level=1)],
        lambda: zstd_rle_frame(2**31, declare=True),
    ),
    "numcodecs.zstd undeclared": (
        [BYTES, numcodec("zstd", level=1)],
        lambda: zstd_rle_frame(BOMB, declare=False),
    ),
    "numcodecs.blosc header lies": (
        [BYTES, numcodec("blosc", cname="lz4", clevel=5, shuffle=1)],
        blosc_header_lies,
    ),
}

_BLOBS: dict[str, bytes] = {}


def blob_of(attack: str) -> bytes:
    if attack not in _BLOBS:
        _BLOBS[attack] = ATTACKS[attack][1]()
    return _BLOBS[attack]


@pytest.fixture(autouse=True)
def _bridge_serves_numcodecs_lz4():
    """The example package claims `numcodecs.lz4` too: these tests attack the bridge's."""
    with config.override(prefer={("codec", "numcodecs.lz4"): "zarrkit"}):
        yield


def make_store(kind: str, tmp_path: Any) -> Any:
    return MemoryStore() if kind == "memory" else LocalStore(tmp_path / "store", mode="w")


def array_with(store: Any, codecs: list[dict], blob: bytes, key: str = "c/1/0") -> Any:
    """An array 'a' with every chunk written, then the chunk at `key` replaced by `blob`."""
    a = zk.create_array(
        store, path="a", shape=SHAPE, chunks=CHUNKS, dtype=DTYPE, codecs=codecs, fill_value=0
    )
    a[...] = np.arange(np.prod(SHAPE), dtype=DTYPE).reshape(SHAPE)
    store.set(f"a/{key}", blob)
    return zk.open_array(store, path="a", mode="r")


def refused(read: Callable[[], Any], key: str) -> tuple[float, int]:
    """Run `read`, expecting a ChunkDecodeError naming `key`; (seconds, peak bytes allocated)."""
    tracemalloc.start()
    start = time.perf_counter()
    try:
        with pytest.raises(ChunkDecodeError) as info:
            read()
        seconds = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert info.value.key == key, info.value
    return seconds, peak


# -- the bombs are real -----------------------------------------------------------------------
def test_the_crafted_zstd_frames_are_valid() -> None:
    """The RLE frames decode, through zstd itself, to the zeros they claim (at a small size)."""
    import zstandard

    for declare in (True, False):
        frame = zstd_rle_frame(3 << 20 | 5, declare=declare)
        out = zstandard.ZstdDecompressor().stream_reader(frame).read()
        assert out == bytes(3 << 20 | 5)
    assert zstandard.ZstdDecompressor().decompress(zstd_one_block_declaring(2048)) == bytes(2048)
    assert zstandard.frame_content_size(zstd_rle_frame(2**31, declare=True)) == 2**31
    assert len(zstd_rle_frame(2**31, declare=True)) < 70_000


@pytest.mark.parametrize(
    "attack", [a for a in ATTACKS if "bomb" in a and "zstd" not in a and "2 GiB" not in a]
)
def test_the_compressor_bombs_inflate_as_claimed(attack: str) -> None:
    from numcodecs import LZ4, Blosc

    blob = blob_of(attack)
    assert len(blob) < BOMB // 100  # small when stored...
    decode = {
        "gzip bomb": gzip.decompress,
        "numcodecs.gzip bomb": gzip.decompress,
        "numcodecs.zlib bomb": zlib.decompress,
        "numcodecs.bz2 bomb": bz2.decompress,
        "numcodecs.lzma bomb": lzma.decompress,
        "blosc bomb": Blosc().decode,
        "numcodecs.lz4 bomb": LZ4().decode,
    }[attack]
    assert len(memoryview(decode(blob)).cast("B")) == BOMB  # ...large when decoded whole


# -- reading them -----------------------------------------------------------------------------
@pytest.mark.parametrize("where", ["memory", "local"])
@pytest.mark.parametrize("attack", list(ATTACKS))
def test_bomb_in_a_chunk_is_refused_quickly_and_small(
    attack: str, where: str, tmp_path: Any
) -> None:
    codecs, _ = ATTACKS[attack]
    a = array_with(make_store(where, tmp_path), codecs, blob_of(attack))
    for read in (lambda: a[...], lambda: a[40:50, 3:9], lambda: a[32, 0]):
        seconds, peak = refused(read, "a/c/1/0")
        assert seconds < SECONDS, f"{attack}: {seconds:.1f} s"
        assert peak < PEAK_LIMIT, f"{attack}: {peak / 2**20:.1f} MiB at the peak"
    # the chunks beside it still read
    np.testing.assert_array_equal(a[:32, :], np.arange(64 * 64, dtype=DTYPE).reshape(SHAPE)[:32])


@pytest.mark.parametrize(
    "attack",
    [
        "zstd declares 2 GiB",
        "zstd one block declaring 2 GiB",
        "zstd undeclared 64 MiB",
        "gzip bomb",
        "blosc header lies",
    ],
)
def test_bomb_inside_a_shards_inner_chunk(attack: str, tmp_path: Any) -> None:
    """An inner chunk of a shard holding a bomb (index checksum valid): refused naming the
    shard and the inner chunk, read whole, in windows and through a partial write."""
    codecs, _ = ATTACKS[attack]
    store = MemoryStore()
    a = zk.create_array(
        store,
        path="a",
        shape=SHAPE,
        chunks=(16, 16),
        shards=(32, 32),
        dtype=DTYPE,
        codecs=codecs,
        fill_value=0,
    )
    a[...] = np.arange(np.prod(SHAPE), dtype=DTYPE).reshape(SHAPE)
    raw = bytes(store.get("a/c/1/0"))
    index = np.frombuffer(raw[-(4 * 16 + 4) : -4], "<u8").reshape(2, 2, 2).copy()
    body = raw[: len(raw) - (4 * 16 + 4)]
    blob = blob_of(attack)
    index[0, 1] = (len(body), len(blob))
    table = index.tobytes()
    store.set("a/c/1/0", body + blob + table + crc32c(table).to_bytes(4, "little"))
    b = zk.open_array(store, path="a", mode="r+")
    for read in (lambda: b[...], lambda: b[32:40, 16:24], lambda: b[33, 17]):
        seconds, peak = refused(read, "a/c/1/0")
        assert seconds < SECONDS and peak < PEAK_LIMIT, (seconds, peak)
    with pytest.raises(ChunkDecodeError, match=r"inner chunk \(0, 1\)"):
        b[32:34, 16:18] = 1.0
    assert bytes(store.get("a/c/1/0"))[len(body) : len(body) + len(blob)] == blob


#: run in a process whose address space is limited to what it uses plus `HEADROOM`: pcodec
#: allocates in Rust, which tracemalloc does not see
LIMITED_READ = r"""
import resource, sys
import numpy as np
import zarrkit as zk
from zarrkit.errors import ChunkDecodeError
from zarrkit.plugins.stores.memory import MemoryStore

bomb = open(sys.argv[1], "rb").read()
store = MemoryStore()
a = zk.create_array(store, path="a", shape=(64, 64), chunks=(32, 32), dtype="float64",
                    codecs=[{"name": "numcodecs.pcodec", "configuration": {"level": 8}}],
                    fill_value=0)
a[...] = 1.0
a[...]  # (the thread pool and the libraries' memory, before the limit)
store.set("a/c/1/0", bomb)
size = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
resource.setrlimit(resource.RLIMIT_AS, (size + int(sys.argv[2]), resource.RLIM_INFINITY))
try:
    a[...]
except ChunkDecodeError as exc:
    print("refused:", exc)
"""
HEADROOM = 32 << 20


def test_pcodec_bomb_is_refused_without_its_allocation(tmp_path: Any) -> None:
    """numcodecs' pcodec allocates the value count its header declares (64 MiB here, from
    557 bytes); in a process that cannot allocate 32 MiB more, the read is still refused."""
    pytest.importorskip("pcodec")
    import subprocess
    import sys

    path = tmp_path / "bomb"
    path.write_bytes(pcodec_bomb())
    assert len(path.read_bytes()) < 4096
    done = subprocess.run(
        [sys.executable, "-c", LIMITED_READ, str(path), str(HEADROOM)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and "refused:" in done.stdout, done.stderr[-2000:]
    assert "'a/c/1/0'" in done.stdout and "pcodec" in done.stdout


def test_strings_are_bounded_by_the_configured_cap(tmp_path: Any) -> None:
    """Variable-length chunks have no size the spec fixes: `max_chunk_bytes` bounds them."""
    store = MemoryStore()
    a = zk.create_array(
        store,
        path="s",
        shape=(4,),
        chunks=(2,),
        dtype="string",
        codecs=[{"name": "vlen-utf8"}, ZSTD],
        fill_value="",
    )
    a[...] = ["a", "bb", "ccc", "x" * 100]
    count = 2
    payload = struct.pack("<I", count) + struct.pack("<I", 3) + b"abc"
    payload += struct.pack("<I", 2 << 20) + b"y" * (2 << 20)  # a 2 MiB string
    import zstandard

    store.set("s/c/1", zstandard.ZstdCompressor().compress(payload))
    with config.override(max_chunk_bytes=1 << 20):
        small = zk.open_array(store, path="s")
        _seconds, peak = refused(lambda: small[...], "s/c/1")
        assert peak < 4 << 20
        np.testing.assert_array_equal(small[:2], ["a", "bb"])
    with config.override(max_chunk_bytes=8 << 20):
        large = zk.open_array(store, path="s")
        assert large[3] == "y" * (2 << 20)
    assert config.get().max_chunk_bytes == 512 << 20  # the default


def test_a_codec_written_before_the_bound_still_works_and_is_checked() -> None:
    """A third-party bytes->bytes codec that knows only `decode(data, spec)` keeps decoding
    in a chain; a value it decodes to more than the chunk holds is still refused (after the
    fact: the base class's `decode_bounded` checks the size)."""
    from zarrkit.abc import BytesBytesCodec, ChunkSpec
    from zarrkit.abc.extension import names as spelled
    from zarrkit.api import data_type_from_arg
    from zarrkit.codec_chain import CodecChain
    from zarrkit.plugins.codecs.bytes import BytesCodec

    class OldZlib(BytesBytesCodec):
        names = spelled("test.old-zlib")

        def encode(self, data: Any, spec: ChunkSpec) -> bytes:
            return zlib.compress(data)

        def decode(self, data: Any, spec: ChunkSpec) -> bytes:
            return zlib.decompress(data)

    float64 = data_type_from_arg("float64")
    chain = CodecChain([BytesCodec("little"), OldZlib()], float64, 0.0).bind((32, 32))
    data = np.arange(1024, dtype="f8").reshape(32, 32)
    np.testing.assert_array_equal(chain.decode(chain.encode(data)), data)
    out = np.empty((32, 32))
    chain.decode_into(chain.encode(data), out)
    np.testing.assert_array_equal(out, data)
    with pytest.raises(ChunkDecodeError, match="test.old-zlib.*more than the 8192"):
        chain.decode(zlib.compress(bytes(1 << 20)), key="c/0")


# -- what is valid still reads ----------------------------------------------------------------
@pytest.mark.parametrize("make", ["no content size", "two frames", "streamed"])
def test_valid_zstd_frames_without_a_declared_size_still_read(make: str, tmp_path: Any) -> None:
    """Frames other writers produce (no content size, several frames, a streaming writer)
    decode through the bounded stream decoder, to the right values."""
    import zstandard

    store = MemoryStore()
    a = zk.create_array(
        store, path="a", shape=SHAPE, chunks=CHUNKS, dtype=DTYPE, codecs=[BYTES, ZSTD], fill_value=0
    )
    data = np.arange(np.prod(SHAPE), dtype=DTYPE).reshape(SHAPE)
    a[...] = data
    chunk = np.ascontiguousarray(data[32:, :32]).tobytes()
    if make == "no content size":
        blob = zstandard.ZstdCompressor(write_content_size=False).compress(chunk)
    elif make == "two frames":
        c = zstandard.ZstdCompressor()
        blob = c.compress(chunk[:1000]) + c.compress(chunk[1000:])
    else:
        c = zstandard.ZstdCompressor().compressobj()
        blob = c.compress(chunk) + c.flush()
    assert zstandard.frame_content_size(blob) in (-1, 1000) or make == "streamed"
    store.set("a/c/1/0", blob)
    b = zk.open_array(store, path="a")
    np.testing.assert_array_equal(b[...], data)
    np.testing.assert_array_equal(b[40:50, 3:9], data[40:50, 3:9])
    # a valid frame one byte too long for the chunk is refused, not cut
    store.set("a/c/1/0", zstandard.ZstdCompressor(write_content_size=False).compress(chunk + b"!"))
    refused(lambda: zk.open_array(store, path="a")[...], "a/c/1/0")


def test_truncated_frame_without_a_declared_size_is_an_error(tmp_path: Any) -> None:
    import zstandard

    store = MemoryStore()
    a = zk.create_array(
        store, path="a", shape=SHAPE, chunks=CHUNKS, dtype=DTYPE, codecs=[BYTES, ZSTD], fill_value=0
    )
    a[...] = 1.0
    rng = np.random.default_rng(0)
    chunk = rng.standard_normal(CHUNK_BYTES // 8).tobytes()
    blob = zstandard.ZstdCompressor(write_content_size=False).compress(chunk)
    for cut in (blob[: len(blob) // 2], blob[:-1], blob + b"junk"):
        store.set("a/c/1/0", cut)
        refused(lambda: zk.open_array(store, path="a")[...], "a/c/1/0")
