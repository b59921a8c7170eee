"""The engine's fast paths inside codecs: gzip through ISA-L when installed (same format both
ways with zlib), and decoding straight into the output (zstd and blosc), which must fall back
to the checked path whenever the decoded size is not known up front or does not match."""

from __future__ import annotations

import gzip
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from numcodecs import zstd as numcodecs_zstd

import zarrkit as zk
from zarrkit import config
from zarrkit.abc.codec import ChunkSpec
from zarrkit.api import data_type_from_arg
from zarrkit.errors import ChunkDecodeError
from zarrkit.plugins.codecs import gzip as gzip_plugin
from zarrkit.plugins.codecs import zstd as zstd_plugin
from zarrkit.plugins.stores.memory import MemoryStore

BYTES = {"name": "bytes", "configuration": {"endian": "little"}}


def test_gzip_output_is_plain_gzip_whichever_library_encodes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    data = np.cumsum(np.random.default_rng(0).standard_normal((64, 64)), axis=1)
    codecs = [BYTES, {"name": "gzip", "configuration": {"level": 1}}]
    fast = zk.create_array(
        str(tmp_path / "fast"), shape=(64, 64), chunks=(32, 32), dtype="float64", codecs=codecs
    )
    fast[...] = data
    blob = (tmp_path / "fast" / "c" / "1" / "0").read_bytes()
    assert np.array_equal(np.frombuffer(gzip.decompress(blob)).reshape(32, 32), data[32:, :32])
    monkeypatch.setattr(gzip_plugin, "_fast", None)  # as without the isal package
    np.testing.assert_array_equal(zk.open_array(str(tmp_path / "fast"))[...], data)
    slow = zk.create_array(
        str(tmp_path / "slow"), shape=(64, 64), chunks=(32, 32), dtype="float64", codecs=codecs
    )
    slow[...] = data
    monkeypatch.undo()
    np.testing.assert_array_equal(zk.open_array(str(tmp_path / "slow"))[...], data)
    assert gzip_plugin._fast is not None, "the isal package (a dependency) is installed"


def test_gzip_truncated_stream_is_a_decode_error(tmp_path: Path) -> None:
    a = zk.create_array(
        str(tmp_path),
        shape=(100,),
        chunks=(100,),
        dtype="int32",
        codecs=[BYTES, {"name": "gzip", "configuration": {"level": 1}}],
    )
    a[...] = np.arange(100)
    path = tmp_path / "c" / "0"
    path.write_bytes(path.read_bytes()[:-12])
    with pytest.raises(ChunkDecodeError, match="'c/0'"):
        a[...]


def test_blosc_leaves_threads_to_the_engine_unless_the_user_chose(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # numcodecs' default lets blosc start its own threads for calls on the main thread, which
    # in a parallel read is the caller's share: beside the engine's workers, too many threads
    from numcodecs import blosc

    from zarrkit.plugins.codecs import blosc as blosc_plugin

    assert blosc.use_threads is False  # (importing the plugin set it)
    for chosen, kept in ((None, False), (True, True), (False, False)):
        monkeypatch.setattr(blosc, "use_threads", chosen)
        blosc_plugin._leave_threads_to_the_engine()
        assert blosc.use_threads is kept


BLOSC_LZ4 = {
    "name": "blosc",
    "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 4},
}


@pytest.mark.parametrize("shape", [(16, 16), (256, 256)], ids=["1KiB", "256KiB"])
def test_blosc_decodes_the_same_through_python_blosc_and_numcodecs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, shape: tuple[int, int]
) -> None:
    """python-blosc (a dependency) decodes chunks into the output; numcodecs does where it is
    not installed. The same values either way, and the same refusal of a truncated chunk."""
    import blosc as python_blosc

    from zarrkit.plugins.codecs import blosc as blosc_plugin

    assert blosc_plugin._decode_into is not None, "python-blosc (a dependency) is installed"
    # its per-process settings, as the engine needs them: one thread per call
    assert python_blosc.nthreads == 1
    data = np.cumsum(np.random.default_rng(3).random((2 * shape[0], shape[1]), np.float32), 1)
    a = zk.create_array(
        str(tmp_path), shape=data.shape, chunks=shape, dtype="float32", codecs=[BYTES, BLOSC_LZ4]
    )
    a[...] = data
    np.testing.assert_array_equal(a[...], data)
    monkeypatch.setattr(blosc_plugin, "_decode_into", None)  # as without python-blosc
    np.testing.assert_array_equal(zk.open_array(str(tmp_path))[...], data)
    monkeypatch.undo()
    path = tmp_path / "c" / "1" / "0"
    path.write_bytes(path.read_bytes()[:-1])
    with pytest.raises(ChunkDecodeError, match="'c/1/0'.*truncated"):
        a[...]


@pytest.mark.parametrize(
    "codec",
    [
        {"name": "zstd", "configuration": {"level": 1, "checksum": False}},
        {
            "name": "blosc",
            "configuration": {
                "cname": "lz4",
                "clevel": 5,
                "shuffle": "shuffle",
                "typesize": 4,
                "blocksize": 0,
            },
        },
    ],
)
def test_decoding_into_the_output_matches_and_checks_sizes(tmp_path: Path, codec: dict) -> None:
    shape, chunks = (300, 520), (256, 256)  # 256 KiB chunks: decoded in place; edges copied
    data = np.random.default_rng(1).random(shape, dtype=np.float32)
    a = zk.create_array(
        str(tmp_path), shape=shape, chunks=chunks, dtype="float32", codecs=[BYTES, codec]
    )
    a[...] = data
    np.testing.assert_array_equal(a[...], data)
    np.testing.assert_array_equal(a[:256, 256:512], data[:256, 256:512])  # one whole chunk
    np.testing.assert_array_equal(a[::-1, 7], data[::-1, 7])
    # a chunk holding another chunk's bytes (so a wrong decoded size): refused, not misread
    smaller = zk.create_array(
        str(tmp_path / "small"), shape=(10,), chunks=(10,), dtype="float32", codecs=[BYTES, codec]
    )
    smaller[...] = 1
    (tmp_path / "c" / "0" / "1").write_bytes((tmp_path / "small" / "c" / "0").read_bytes())
    with pytest.raises(ChunkDecodeError, match="'c/0/1'"):
        a[...]


def test_zstd_frames_without_a_content_size_decode_the_checked_way(tmp_path: Path) -> None:
    zstandard = pytest.importorskip("zstandard")
    a = zk.create_array(
        str(tmp_path),
        shape=(256, 256),
        chunks=(256, 256),
        dtype="float32",
        codecs=[BYTES, {"name": "zstd", "configuration": {"level": 1}}],
    )
    data = np.random.default_rng(2).random((256, 256), dtype=np.float32)
    streamed = zstandard.ZstdCompressor(write_content_size=False).compress(data.tobytes())
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "0").mkdir()
    (tmp_path / "c" / "0" / "0").write_bytes(streamed)
    np.testing.assert_array_equal(a[...], data)


def test_gzip_and_zlib_agree_on_every_level(tmp_path: Path) -> None:
    payload = np.arange(5000, dtype=np.int32).tobytes()
    for level in range(10):
        codec = gzip_plugin.GzipCodec(level)
        encoded = codec.encode(payload, None)
        assert zlib.decompress(encoded, 31) == payload
        assert bytes(codec.decode(encoded, None)) == payload


# -- zstd through zstandard (contexts per thread) or numcodecs (without zstandard) ---------------
ZSTD_SIZES = pytest.mark.parametrize("nbytes", [800, 256 << 10], ids=["800B", "256KiB"])


def walk(nbytes: int, seed: int = 0) -> bytes:
    return np.cumsum(
        np.random.default_rng(seed).standard_normal(nbytes // 4), dtype=np.float32
    ).tobytes()


@ZSTD_SIZES
@pytest.mark.parametrize("checksum", [False, True])
def test_zstd_frames_declare_their_size_and_checksum_whichever_library_encodes(
    tmp_path: Path, nbytes: int, checksum: bool
) -> None:
    zstandard = pytest.importorskip("zstandard")
    shape = (nbytes // 4,)
    data = np.frombuffer(walk(nbytes), dtype=np.float32)
    a = zk.create_array(
        str(tmp_path),
        shape=shape,
        chunks=shape,
        dtype="float32",
        codecs=[BYTES, {"name": "zstd", "configuration": {"level": 1, "checksum": checksum}}],
    )
    a[...] = data
    frame = (tmp_path / "c" / "0").read_bytes()
    header = zstandard.get_frame_parameters(frame)
    assert (header.content_size, header.has_checksum) == (nbytes, checksum)
    assert numcodecs_zstd.decompress(frame) == data.tobytes()
    if checksum:  # a flipped bit in the checksum is caught
        (tmp_path / "c" / "0").write_bytes(frame[:-1] + bytes([frame[-1] ^ 1]))
        with pytest.raises(ChunkDecodeError, match="'c/0'"):
            a[...]


def one_zstd_chunk(path: Path, nbytes: int) -> zk.Array:
    """A float32 array of one zstd chunk of `nbytes`, with nothing stored yet."""
    return zk.create_array(
        str(path),
        shape=(nbytes // 4,),
        chunks=(nbytes // 4,),
        dtype="float32",
        codecs=[BYTES, {"name": "zstd"}],
    )


@ZSTD_SIZES
def test_zstd_concatenated_frames_decode_as_one_chunk(tmp_path: Path, nbytes: int) -> None:
    """A chunk may hold several frames (zstd streams may; numcodecs reads them all)."""
    zstandard = pytest.importorskip("zstandard")
    a = one_zstd_chunk(tmp_path, nbytes)
    payload = walk(nbytes)
    cut = nbytes // 3
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "0").write_bytes(
        zstandard.ZstdCompressor().compress(payload[:cut])
        + zstandard.ZstdCompressor().compress(payload[cut:])
    )
    np.testing.assert_array_equal(a[...], np.frombuffer(payload, dtype=np.float32))


@ZSTD_SIZES
@pytest.mark.parametrize("after", [b"", b"junk"], ids=["frame", "junk"])
def test_zstd_a_whole_chunk_frame_with_more_after_it_is_refused(
    tmp_path: Path, nbytes: int, after: bytes
) -> None:
    """A first frame of exactly the chunk's size, followed by another frame or by bytes that
    are none, decodes to more than the chunk: an error, not the first frame alone."""
    zstandard = pytest.importorskip("zstandard")
    a = one_zstd_chunk(tmp_path, nbytes)
    more = after or zstandard.ZstdCompressor().compress(b"more")
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "0").write_bytes(zstandard.ZstdCompressor().compress(walk(nbytes)) + more)
    with pytest.raises(ChunkDecodeError, match="'c/0'"):
        a[...]


@ZSTD_SIZES
def test_zstd_without_the_zstandard_package_same_frames_both_ways(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, nbytes: int
) -> None:
    shape = (nbytes // 4,)
    data = np.frombuffer(walk(nbytes), dtype=np.float32)
    codecs = [BYTES, {"name": "zstd", "configuration": {"level": 3, "checksum": True}}]
    usual = zk.create_array(
        str(tmp_path / "usual"), shape=shape, chunks=shape, dtype="float32", codecs=codecs
    )
    usual[...] = data
    monkeypatch.setattr(zstd_plugin, "zstandard", None)  # as when it fails to import
    np.testing.assert_array_equal(zk.open_array(str(tmp_path / "usual"))[...], data)
    alone = zk.create_array(
        str(tmp_path / "alone"), shape=shape, chunks=shape, dtype="float32", codecs=codecs
    )
    alone[...] = data
    monkeypatch.undo()
    np.testing.assert_array_equal(zk.open_array(str(tmp_path / "alone"))[...], data)


# -- zstd: tiny chunks decoded in batches -----------------------------------------------------
def test_zstd_batch_decode_takes_only_values_that_are_one_whole_frame() -> None:
    """zstandard's batch decode stops after each value's first frame without saying where:
    values holding more than that one frame, or a frame it cannot size or check, are left
    (None) to the per-chunk decode, which reads them all or reports them; the rest come back
    decoded, in order."""
    zstandard = pytest.importorskip("zstandard")
    payload, other = walk(800, 1), walk(800, 2)
    plain = zstandard.ZstdCompressor(level=1, write_content_size=True)
    checked = zstandard.ZstdCompressor(level=1, write_content_size=True, write_checksum=True)
    unsized = zstandard.ZstdCompressor(level=1, write_content_size=False)
    half = plain.compress(payload[:400])
    items = {
        "one frame": plain.compress(payload),
        "with checksum": checked.compress(other),
        "two frames": half + plain.compress(payload[400:]),
        "a frame and garbage": plain.compress(payload) + b"tail",
        "no declared size": unsized.compress(payload),
        "an empty frame after": plain.compress(payload) + plain.compress(b""),
        "several blocks": plain.compress(walk(300 << 10, 3)),
        "truncated": plain.compress(payload)[:-3],
        "not zstd": b"\x00" * 40,
    }
    codec = zstd_plugin.ZstdCodec(1, False)
    spec = ChunkSpec((200,), data_type_from_arg("float32"), 0.0)
    got = dict(zip(items, codec.decode_batch(list(items.values()), spec)))
    assert bytes(got.pop("one frame")) == payload
    assert bytes(got.pop("with checksum")) == other
    assert got == dict.fromkeys(got)  # every other one left to the per-chunk decode
    # a checksum that does not match fails the batch: all go the per-chunk way
    bad = bytearray(checked.compress(other))
    bad[-1] ^= 1
    assert codec.decode_batch([plain.compress(payload), bytes(bad)], spec) is None


def test_tiny_zstd_inner_chunks_read_in_batches_whatever_each_one_holds(tmp_path: Path) -> None:
    """A shard of 1,000 200-byte inner chunks, written here by hand: some hold frames the
    batch decode must leave to the per-chunk decode (two frames, no declared size), some are
    absent. Every value comes back, on one thread and on two."""
    zstandard = pytest.importorskip("zstandard")
    n, per = 50, 1000
    data = np.cumsum(np.random.default_rng(4).standard_normal(3 * per * n)).astype(np.float32)
    a = zk.create_array(
        str(tmp_path),
        shape=data.shape,
        chunks=(per * n,),
        dtype="float32",
        fill_value=-1.0,
        codecs=[
            {
                "name": "sharding_indexed",
                "configuration": {
                    "chunk_shape": [n],
                    "codecs": [BYTES, {"name": "zstd"}],
                    "index_codecs": [BYTES],
                    "index_location": "end",
                },
            }
        ],
    )
    a[...] = data
    expected = data.copy()
    parts, index = [], np.full((per, 2), 2**64 - 1, dtype="<u8")
    at = 0
    for i in range(per):
        start = per * n + i * n
        raw = data[start : start + n].tobytes()
        if i % 101 == 5:  # absent: the fill value
            expected[start : start + n] = -1
            continue
        if i % 97 == 7:
            value = zstandard.ZstdCompressor().compress(
                raw[:80]
            ) + zstandard.ZstdCompressor().compress(raw[80:])
        elif i % 89 == 11:
            value = zstandard.ZstdCompressor(write_content_size=False).compress(raw)
        else:
            value = zstandard.ZstdCompressor(level=1).compress(raw)
        parts.append(value)
        index[i] = (at, len(value))
        at += len(value)
    (tmp_path / "c" / "1").write_bytes(b"".join(parts) + index.tobytes())
    for threads in (1, 2):
        with config.override(threads=threads):
            np.testing.assert_array_equal(zk.open_array(str(tmp_path))[...], expected)


@pytest.mark.parametrize("damage", ["checksum", "garbage after the frame", "truncated"])
@pytest.mark.parametrize("threads", [1, 2])
def test_a_bad_tiny_zstd_chunk_among_many_is_named(
    tmp_path: Path, damage: str, threads: int
) -> None:
    data = np.arange(2000 * 50, dtype=np.float32)
    a = zk.create_array(
        str(tmp_path),
        shape=data.shape,
        chunks=(50,),
        dtype="float32",
        codecs=[BYTES, {"name": "zstd", "configuration": {"checksum": True}}],
    )
    a[...] = data
    path = tmp_path / "c" / "1234"
    frame = path.read_bytes()
    path.write_bytes(
        {
            "checksum": frame[:-1] + bytes([frame[-1] ^ 1]),
            "garbage after the frame": frame + b"\x01\x02\x03",
            "truncated": frame[:-6],
        }[damage]
    )
    with config.override(threads=threads), pytest.raises(ChunkDecodeError, match="'c/1234'"):
        zk.open_array(str(tmp_path))[...]
    np.testing.assert_array_equal(zk.open_array(str(tmp_path))[: 1234 * 50], data[: 1234 * 50])


def test_big_zstd_chunks_are_not_batched() -> None:
    """From 64 KiB a chunk decodes straight into the output; a batch would add a copy."""
    codecs = [BYTES, {"name": "zstd"}]
    small = zk.create_array(
        MemoryStore(), shape=(1 << 20,), chunks=(1 << 10,), dtype="float32", codecs=codecs
    )
    big = zk.create_array(
        MemoryStore(), shape=(1 << 20,), chunks=(1 << 14,), dtype="float32", codecs=codecs
    )
    assert small._chain.bind((1 << 10,)).batch_decoder is not None
    assert big._chain.bind((1 << 14,)).batch_decoder is None


def test_zstd_from_many_threads_at_once() -> None:
    """zstandard's contexts are not thread-safe and release the GIL: each thread has its own,
    so chunks encoded and decoded at once from many threads, with several configurations,
    come back exact (shared contexts crash the process or garble frames)."""
    payloads = [walk(n, seed) for seed, n in enumerate([64, 800, 5000, 30000] * 4)]
    codecs = [
        zstd_plugin.ZstdCodec(level, checksum) for level in (1, 3) for checksum in (False, True)
    ]

    def round_trips(i: int) -> bool:
        codec, payload = codecs[i % len(codecs)], payloads[i % len(payloads)]
        return all(
            bytes(codec.decode(codec.encode(payload, None), None)) == payload for _ in range(50)
        )

    with ThreadPoolExecutor(8) as pool:
        assert all(pool.map(round_trips, range(32)))


@pytest.mark.parametrize("sharded", [False, True], ids=["chunks", "inner-chunks"])
def test_zstd_reads_of_top_rows_decode_only_a_prefix(tmp_path: Path, sharded: bool) -> None:
    """A selection within the top rows of a 256 KiB chunk stops decoding after the zstd block
    that holds them; so with the chunk's tail cut off, the top rows still read and the bottom
    rows are a decode error (the value as a whole is never taken for good)."""
    data = np.cumsum(np.random.default_rng(3).standard_normal((256, 512)), axis=1).astype("float32")
    inner = [BYTES, {"name": "zstd", "configuration": {"level": 1, "checksum": False}}]
    codecs = (
        inner
        if not sharded
        else [
            {
                "name": "sharding_indexed",
                "configuration": {
                    "chunk_shape": [256, 256],
                    "codecs": inner,
                    "index_codecs": [BYTES, {"name": "crc32c"}],
                    "index_location": "start",
                },
            }
        ]
    )
    a = zk.create_array(
        str(tmp_path),
        shape=(256, 512),
        chunks=(256, 256) if not sharded else (256, 512),
        dtype="float32",
        codecs=codecs,
    )
    a[...] = data
    for window in [
        (slice(0, 64), slice(10, 74)),
        (slice(90, 120), slice(200, 300)),
        (slice(100, 40, -3), [5, 300, 7]),
        (slice(200, 256), slice(0, 512)),
    ]:
        np.testing.assert_array_equal(
            a.oindex[window],
            data[
                np.ix_(
                    *(
                        np.arange(n)[w] if isinstance(w, slice) else w
                        for w, n in zip(window, data.shape)
                    )
                )
            ],
        )
    path = tmp_path / "c" / "0" / "0"
    raw = path.read_bytes()
    if not sharded:
        path.write_bytes(raw[:-2000])  # the frame's last block loses its end
        np.testing.assert_array_equal(a[0:64, 0:64], data[0:64, 0:64])
        with pytest.raises(ChunkDecodeError):
            a[200:256, 0:64]


def test_zstd_with_a_checksum_is_always_decoded_whole(tmp_path: Path) -> None:
    data = np.arange(256 * 256, dtype="float32").reshape(256, 256)
    codecs = [BYTES, {"name": "zstd", "configuration": {"level": 1, "checksum": True}}]
    a = zk.create_array(
        str(tmp_path), shape=(256, 256), chunks=(256, 256), dtype="float32", codecs=codecs
    )
    a[...] = data
    np.testing.assert_array_equal(a[0:10, 0:10], data[0:10, 0:10])
    path = tmp_path / "c" / "0" / "0"
    raw = bytearray(path.read_bytes())
    raw[-1] ^= 0xFF  # the checksum no longer matches
    path.write_bytes(bytes(raw))
    with pytest.raises(ChunkDecodeError):
        a[0:10, 0:10]
