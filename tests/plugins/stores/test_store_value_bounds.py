"""Hostile values end in a zarrkit error quickly, with memory near the chunk's size: zip members
that inflate to gigabytes (an honest size field and a lying one, deflate, bzip2 and lzma),
zip size fields that lie either way, and HTTP bodies without end (chunked, closed, or with a
Content-Length of 2 GiB) from a real server on 127.0.0.1, through the standard-library HTTP
store and fsspec's."""

from __future__ import annotations

import base64
import os
import struct
import time
import tracemalloc
import uuid
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hostile_servers import Endless, HostileServer
from store_servers import serving

import zarrkit as zk
from zarrkit.abc.store import DEFAULT_VALUE_LIMIT, ByteRange, limiting_values
from zarrkit.errors import StoreError, ValueTooLargeError
from zarrkit.plugins.stores.local.zip import ZipStore
from zarrkit.plugins.stores.remote.http import HttpStore
from zarrkit.store_opening import open_store

CHUNK = 4096  # bytes of one chunk of the arrays below (uint8)
GIB = 1 << 30


def _bounded(
    read: Callable[[], Any], *, seconds: float = 5.0, peak: int = 16 << 20
) -> pytest.ExceptionInfo[StoreError]:
    """Run `read`, which must fail with a StoreError, within `seconds` and `peak` bytes."""
    tracemalloc.start()
    start = time.monotonic()
    try:
        with pytest.raises(StoreError) as info:
            read()
        took = time.monotonic() - start
        _, high = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert took < seconds, f"took {took:.1f} s"
    assert high < peak, f"peak {high / 2**20:.1f} MiB"
    return info


# == zip ===========================================================================================
def _deflate_bomb(size: int) -> bytes:
    """A raw deflate stream of `size` zero bytes (a multiple of 1 MiB), built without
    compressing them all: after a full flush each 1 MiB block compresses to the same bytes."""
    block = bytes(1 << 20)
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = deflate.compress(block) + deflate.flush(zlib.Z_FULL_FLUSH)
    again = deflate.compress(block) + deflate.flush(zlib.Z_FULL_FLUSH)
    assert again == first
    return first * (size // len(block) - 1) + deflate.compress(block) + deflate.flush()


# one bzip2 block of 45,899,235 zero bytes (bzip2 -9 of zeros, byte-aligned as it happens)
_BZ2_BLOCK = bytes.fromhex("3141592653590e09e2df015f8e4000c0000008200030804d4642a025a90a8097")
_BZ2_BLOCK_SIZE = 45_899_235
_BZ2_BLOCK_CRC = 0x0E09E2DF


def _bzip2_bomb(blocks: int) -> bytes:
    """A bzip2 stream of `blocks` blocks of zeros: 47 blocks are 2.16 GB in 1.5 kB."""
    crc = 0
    for _ in range(blocks):
        crc = (((crc << 1) | (crc >> 31)) & 0xFFFFFFFF) ^ _BZ2_BLOCK_CRC
    return b"BZh9" + _BZ2_BLOCK * blocks + bytes.fromhex("177245385090") + crc.to_bytes(4, "big")


# 64 MiB of zeros as raw LZMA1 (dictionary 1 MiB), itself deflated to keep it short
_LZMA_64MIB = zlib.decompress(
    base64.b64decode(
        "eNpjYMj/+///4u3/3e08RIssEwN3TNJ4triN/ee7J3JNl/WPWtkwem+sO9nV5au/mPdm/bLHPcqCwQ8iJY6Wdj0q"
        "/7FtSj1P1oF7JZ4pj17GBG9iufHdhWd1PG+u28unh8s6tk8LX7PN92GmbP5v7w6BHKfTHfYxDP0X/NaraUwplLft"
        "V3lYMG+5cvwbjdOtF6fO6KrTmvhJvfS75AG2Gb4z/t5Yf3UC/xHV4B9fJ5oZsi7d8C7/YIGvO8/FiYKr1ibI7jq3"
        "UV0iJrLtZVpQxL6XZWsinzyNZuX4efzW2j+/g7RLzspFKzj9vBts+0MzhdO64bRWzv2t1h+O7NWLX8Vv553mNEGY"
        "77/A5B+FFZE/uM/+n6rhxr/yT82937MM9MIO9Ld+bm48kDpq9ajVo1aPWj1q9ajVo1aPWj1q9ajVo1aPWj1q9ajV"
        "o1aPWj1q9ajVo1aPWj1q9ajVo1aPWj1q9ajVo1aPWj1q9ajVo1aPWj1q9ajVo1YPZ6u3ukhddfv//yvzAQYAuaXZ"
        "NA=="
    )
)
_LZMA_PROPS = bytes.fromhex("5d00001000")  # LZMA1, lc=3 lp=0 pb=2, dictionary 1 MiB


def _lzma_member() -> bytes:
    return struct.pack("<BBH", 9, 4, len(_LZMA_PROPS)) + _LZMA_PROPS + _LZMA_64MIB


_METHODS = {"stored": 0, "deflate": 8, "bzip2": 12, "lzma": 14}


def _zip(members: list[tuple[str, str, bytes, int, int]]) -> bytes:
    """An archive of (name, method, stored bytes, CRC-32, declared size) members, written by
    hand so sizes and CRCs say whatever a test wants them to."""
    out = bytearray()
    central = bytearray()
    for name, method, payload, crc, size in members:
        raw = name.encode()
        offset = len(out)
        out += (
            struct.pack(
                "<4sHHHHHIIIHH",
                b"PK\x03\x04",
                20,
                0,
                _METHODS[method],
                0,
                0x21,
                crc,
                len(payload),
                size,
                len(raw),
                0,
            )
            + raw
            + payload
        )
        central += (
            struct.pack(
                "<4sHHHHHHIIIHHHHHII",
                b"PK\x01\x02",
                20,
                20,
                0,
                _METHODS[method],
                0,
                0x21,
                crc,
                len(payload),
                size,
                len(raw),
                0,
                0,
                0,
                0,
                0o644 << 16,
                offset,
            )
            + raw
        )
    count = len(members)
    return bytes(
        out
        + central
        + struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, count, count, len(central), len(out), 0)
    )


def _archive_with(tmp_path: Path, chunk: tuple[str, bytes, int, int]) -> Path:
    """A zip holding a uint8 array `a` of one 4 kB chunk whose member is `chunk` (method,
    stored bytes, CRC-32, declared size), everything else as zarrkit wrote it."""
    folder = tmp_path / f"{uuid.uuid4().hex}.zarr"
    zk.create_array(
        str(folder),
        path="a",
        shape=(CHUNK,),
        chunks=(CHUNK,),
        dtype="u1",
        codecs=[{"name": "bytes"}],
    )[:] = 7
    members = [
        (
            str(p.relative_to(folder)),
            "stored",
            p.read_bytes(),
            zlib.crc32(p.read_bytes()),
            p.stat().st_size,
        )
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name == "zarr.json"
    ]
    method, payload, crc, size = chunk
    members.append(("a/c/0", method, payload, crc, size))
    path = tmp_path / f"{uuid.uuid4().hex}.zip"
    path.write_bytes(_zip(members))
    return path


def _read_chunk(path: Path) -> Callable[[], Any]:
    return lambda: zk.open_array(f"zip://{path}", path="a")[...]


def test_the_hand_made_archive_reads_when_it_is_honest(tmp_path: Path) -> None:
    """The archives below differ from this one only in the chunk member."""
    good = bytes([7]) * CHUNK
    for method, payload in [("stored", good), ("deflate", zlib.compress(good)[2:-4])]:
        path = _archive_with(tmp_path, (method, payload, zlib.crc32(good), CHUNK))
        assert zk.open_array(f"zip://{path}", path="a")[...].tolist() == [7] * CHUNK


@pytest.mark.parametrize(
    "method, payload, declared",
    [
        ("deflate", lambda: _deflate_bomb(2 * GIB), 2 * GIB),
        ("bzip2", lambda: _bzip2_bomb(47), 47 * _BZ2_BLOCK_SIZE),
    ],
    ids=["deflate", "bzip2"],
)
def test_a_member_declaring_gigabytes_is_refused_before_inflating(
    tmp_path: Path, method: str, payload: Callable[[], bytes], declared: int
) -> None:
    path = _archive_with(tmp_path, (method, payload(), 0, declared))
    info = _bounded(_read_chunk(path))
    assert isinstance(info.value, ValueTooLargeError)
    assert info.value.key == "a/c/0" and f"declares {declared} bytes" in str(info.value)
    with pytest.raises(ValueTooLargeError):  # also when read directly, under the default limit
        ZipStore(path).get("a/c/0")


@pytest.mark.parametrize(
    "method, payload",
    [
        ("deflate", lambda: _deflate_bomb(2 * GIB)),
        ("bzip2", lambda: _bzip2_bomb(47)),
        ("lzma", _lzma_member),
    ],
    ids=["deflate-2GiB", "bzip2-2GB", "lzma-64MiB"],
)
def test_a_member_inflating_past_its_size_field_stops_there(
    tmp_path: Path, method: str, payload: Callable[[], bytes]
) -> None:
    """The index says 4 kB (what the chunk holds), the stream goes on for gigabytes."""
    path = _archive_with(tmp_path, (method, payload(), zlib.crc32(bytes(CHUNK)), CHUNK))
    info = _bounded(_read_chunk(path))
    assert isinstance(info.value, ValueTooLargeError)
    assert info.value.key == "a/c/0" and f"more than the {CHUNK} bytes" in str(info.value)
    with pytest.raises(ValueTooLargeError):
        ZipStore(path).get("a/c/0")


def test_a_member_inflating_short_of_its_size_field_is_an_error(tmp_path: Path) -> None:
    small = bytes(CHUNK)
    stream = zlib.compress(small)[2:-4]
    path = _archive_with(tmp_path, ("deflate", stream, zlib.crc32(small), 1 << 20))
    with pytest.raises(StoreError, match=f"inflates to {CHUNK} bytes, not the {1 << 20}"):
        ZipStore(path).get("a/c/0")


def test_a_stored_member_claiming_more_than_the_archive_is_an_error(tmp_path: Path) -> None:
    path = _archive_with(tmp_path, ("stored", bytes(CHUNK), 0, CHUNK))
    data = bytearray(path.read_bytes())
    central = data.rindex(b"PK\x01\x02")  # the chunk's entry is the last: sizes claim 2 GiB
    data[central + 20 : central + 28] = struct.pack("<II", 2 * GIB, 2 * GIB)
    path.write_bytes(bytes(data))
    with limiting_values(4 * GIB):  # a limit that would allow it: the archive's size refuses
        info = _bounded(lambda: ZipStore(path).get("a/c/0"))
    assert info.value.key == "a/c/0" and "past the end" in str(info.value)


# == HTTP bodies ===================================================================================
@pytest.fixture
def www(tmp_path: Path) -> Path:
    (tmp_path / "www").mkdir()
    return tmp_path / "www"


@pytest.fixture
def hostile(www: Path) -> Iterator[HostileServer]:
    with serving(HostileServer(www)) as running:
        yield running  # type: ignore[misc]


def _served_array(www: Path) -> str:
    name = uuid.uuid4().hex
    zk.create_array(str(www / name), path="a", shape=(4 * CHUNK,), chunks=(CHUNK,), dtype="u1")[
        :
    ] = 1
    return name


def _url(backend: str, url: str) -> str:
    """The URL that opens `url` through the standard-library store or fsspec's HTTP."""
    if backend == "fsspec":
        pytest.importorskip("aiohttp")
        return f"fsspec+{url}"
    return url


@pytest.mark.parametrize("backend", ["stdlib", "fsspec"])
@pytest.mark.parametrize("framing", ["chunked", "close", "declared"])
def test_an_endless_chunk_body_ends_in_a_store_error(
    www: Path, hostile: HostileServer, framing: str, backend: str
) -> None:
    name = _served_array(www)
    hostile.endless[f"/{name}/a/c/"] = Endless(framing)
    array = zk.open_array(_url(backend, f"{hostile.origin}/{name}"), path="a")
    info = _bounded(lambda: array[...])
    assert isinstance(info.value, ValueTooLargeError)
    assert info.value.key is not None and info.value.key.startswith("a/c/")
    if framing == "declared":  # refused from the header, before any of the body is read
        assert str(2 * GIB) in str(info.value)
    assert hostile.streamed < 256 << 20  # the client hung up, the server did not run dry


def test_a_range_of_an_endless_body_is_read_and_the_rest_left(
    www: Path, hostile: HostileServer
) -> None:
    """A server that ignores Range and sends a body without end: the asked bytes are kept,
    the connection dropped, and the next request works."""
    (www / "k").write_bytes(b"fine")
    hostile.endless["/endless"] = Endless("declared")
    store = HttpStore(hostile.origin)
    start = time.monotonic()
    assert store.get("endless", ByteRange(10, 20)) == bytes(20)
    assert store.get("k") == b"fine"
    assert time.monotonic() - start < 5


def _sockets_to(port: int) -> int:
    """How many of this process's sockets are the client's end of a connection to `port`
    (the server, in this process too, holds the other ends)."""
    to_port = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if int(fields[2].rpartition(":")[2], 16) == port:
            to_port.add(f"socket:[{fields[9]}]")
    count = 0
    for fd in Path("/proc/self/fd").iterdir():
        try:
            count += os.readlink(fd) in to_port
        except OSError:  # (closed while listed)
            pass
    return count


@pytest.mark.skipif(not Path("/proc/net/tcp").is_file(), reason="counts sockets in /proc")
@pytest.mark.parametrize("framing", ["chunked", "close", "declared"])
def test_a_refused_body_leaves_no_socket_open(
    www: Path, hostile: HostileServer, framing: str
) -> None:
    """The connection a body too long was refused on is closed then, not when the error and
    its traceback are let go: a caller that keeps its errors (a future, a log, dask) must not
    run out of file descriptors."""
    hostile.endless["/endless"] = Endless(framing)
    store = HttpStore(hostile.origin)
    kept = []
    for _ in range(5):
        with pytest.raises(ValueTooLargeError) as info, limiting_values(1 << 20):
            store.get_many([f"endless/{i}" for i in range(4)])
        kept.append(info.value)
    store.close()  # (its kept connections: none should be left to close)
    left = _sockets_to(hostile.server_address[1])
    assert left == 0, f"{left} sockets still open after 5 refused reads"


@pytest.mark.parametrize("backend", ["stdlib", "fsspec"])
def test_metadata_documents_are_bounded_too(
    www: Path, hostile: HostileServer, backend: str
) -> None:
    hostile.endless["/big/zarr.json"] = Endless("declared", 4 * GIB)
    info = _bounded(lambda: zk.open_array(_url(backend, f"{hostile.origin}/big")))
    assert isinstance(info.value, ValueTooLargeError)
    assert info.value.key == "zarr.json" and str(DEFAULT_VALUE_LIMIT) in str(info.value)
    hostile.endless["/chunked/"] = Endless("chunked")
    with limiting_values(1 << 20):  # a caller that expects less says so, and is held to it
        _bounded(lambda: open_store(_url(backend, hostile.origin)).get("chunked/zarr.json"))
