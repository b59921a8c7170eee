"""CPU time per MB of the Python bindings that can decode (and encode) the stored chunks of
zarrkit's `zstd`, `blosc` and `gzip` codecs, on the same chunks, one thread.

    python bench/codec_bindings.py [--chunks 64] [--reps 7] [--formats zstd,blosc,gzip]

The chunks are 256x256 float32 of the peers benchmark's field (a smooth map plus noise),
encoded once by the reference library of each format (numcodecs for zstd level 1 and
blosc lz4 level 5 with byte shuffle, zlib for gzip level 1). Every decode ends with the chunk
in a preallocated chunk-sized buffer, as the engine needs it: numcodecs (zstd, blosc), blosc
(`decompress_ptr`) and blosc2 (`dst=`) decode into it, the others decode and copy. zstandard
keeps one decompression and one compression context; blosc, blosc2 and numcodecs' blosc run
one thread per call. zlib, isal and zlib-ng decode through `decompressobj` with a limit of
one byte past the chunk, as the gzip codec does (bounded decoding); libdeflate reads the size
from the gzip trailer. Figures are CPU seconds of this thread
(`time.thread_time`) per MB of decoded data, the least of `--reps` passes: on a shared
machine the least is the figure least disturbed by the others. Bindings not installed are
listed as such. Encoders that write another format (blosc2's own frames) are not timed.
"""

from __future__ import annotations

import argparse
import importlib
import time
import zlib
from collections.abc import Callable
from typing import Any

import numpy as np

CHUNK = (256, 256)


def field(shape: tuple[int, int], seed: int = 12345) -> np.ndarray:
    """The peers benchmark's float32 field: smooth (~265..300) plus noise of sigma 0.05."""
    ny, nx = shape
    rng = np.random.default_rng(seed)
    x = np.linspace(0.0, 1.0, nx)[None, :]
    y = np.linspace(0.0, 1.0, ny)[:, None]
    f = (
        280.0
        + 12.0 * np.sin(2 * np.pi * 3 * x) * np.cos(2 * np.pi * 2 * y)
        + 6.0 * np.sin(2 * np.pi * (5 * x + 7 * y) + 1.0)
        + 3.0 * np.cos(2 * np.pi * 11 * x * y)
    )
    noise = rng.standard_normal(f.shape, dtype=np.float32) * np.float32(0.05)
    return f.astype(np.float32) + noise


def chunks(n: int) -> list[bytes]:
    side = int(np.ceil(np.sqrt(n)))
    data = field((side * CHUNK[0], side * CHUNK[1]))
    out = []
    for i in range(side):
        for j in range(side):
            box = data[i * 256 : (i + 1) * 256, j * 256 : (j + 1) * 256]
            out.append(np.ascontiguousarray(box).tobytes())
    return out[:n]


def _try(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def decoders(fmt: str) -> dict[str, Callable[[bytes, memoryview], None] | None]:
    """name -> decode(encoded, out) for one format (None: not installed)."""
    found: dict[str, Callable[[bytes, memoryview], None] | None] = {}
    if fmt == "zstd":
        nc = _try("numcodecs.zstd")
        found["numcodecs"] = (lambda b, o: nc.decompress(b, o)) if nc else None
        zs = _try("zstandard")
        if zs:
            d = zs.ZstdDecompressor()
            found["zstandard"] = lambda b, o: o.__setitem__(slice(None), d.decompress(b))
        else:
            found["zstandard"] = None
        pz = _try("pyzstd")
        found["pyzstd"] = (
            (lambda b, o: o.__setitem__(slice(None), pz.decompress(b))) if pz else None
        )
        bz = _try("backports.zstd")
        found["backports.zstd"] = (
            (lambda b, o: o.__setitem__(slice(None), bz.decompress(b))) if bz else None
        )
    elif fmt == "blosc":
        nb = _try("numcodecs.blosc")
        if nb:
            nb.use_threads = False
        found["numcodecs"] = (lambda b, o: nb.decompress(b, o)) if nb else None
        pb = _try("blosc")
        if pb:
            pb.set_nthreads(1)
            pb.set_releasegil(True)

            def pb_into(b: bytes, o: memoryview) -> None:
                pb.decompress_ptr(b, np.frombuffer(o, np.uint8).ctypes.data)

            found["blosc"] = pb_into
        else:
            found["blosc"] = None
        b2 = _try("blosc2")
        if b2:
            b2.set_nthreads(1)

            def b2_into(b: bytes, o: memoryview) -> None:
                b2.decompress(b, dst=np.frombuffer(o, np.uint8))

            found["blosc2"] = b2_into
        else:
            found["blosc2"] = None
    elif fmt == "gzip":

        def via(lib: Any) -> Callable[[bytes, memoryview], None]:
            def run(b: bytes, o: memoryview) -> None:
                o[:] = lib.decompressobj(31).decompress(b, len(o) + 1)

            return run

        found["zlib"] = via(zlib)
        isal = _try("isal.isal_zlib")
        found["isal"] = via(isal) if isal else None
        zng = _try("zlib_ng.zlib_ng")
        found["zlib-ng"] = via(zng) if zng else None
        dfl = _try("deflate")
        found["deflate"] = (
            (lambda b, o: o.__setitem__(slice(None), dfl.gzip_decompress(b))) if dfl else None
        )
    return found


def encoders(fmt: str) -> dict[str, Callable[[bytes], bytes] | None]:
    found: dict[str, Callable[[bytes], bytes] | None] = {}
    if fmt == "zstd":
        nc = _try("numcodecs.zstd")
        found["numcodecs"] = (lambda b: nc.compress(b, 1)) if nc else None
        zs = _try("zstandard")
        if zs:
            c = zs.ZstdCompressor(level=1, write_content_size=True)
            found["zstandard"] = c.compress
        else:
            found["zstandard"] = None
        pz = _try("pyzstd")
        found["pyzstd"] = (lambda b: pz.compress(b, 1)) if pz else None
        bz = _try("backports.zstd")
        found["backports.zstd"] = (lambda b: bz.compress(b, 1)) if bz else None
    elif fmt == "blosc":
        nb = _try("numcodecs.blosc")
        found["numcodecs"] = (lambda b: nb.compress(b, b"lz4", 5, 1, 0, typesize=4)) if nb else None
        pb = _try("blosc")
        found["blosc"] = (
            (lambda b: pb.compress(b, typesize=4, clevel=5, shuffle=pb.SHUFFLE, cname="lz4"))
            if pb
            else None
        )
    elif fmt == "gzip":

        def via(lib: Any) -> Callable[[bytes], bytes]:
            def run(b: bytes) -> bytes:
                c = lib.compressobj(1, lib.DEFLATED, 31)
                out: bytes = c.compress(b) + c.flush()
                return out

            return run

        found["zlib"] = via(zlib)
        isal = _try("isal.isal_zlib")
        found["isal"] = via(isal) if isal else None
        zng = _try("zlib_ng.zlib_ng")
        found["zlib-ng"] = via(zng) if zng else None
        dfl = _try("deflate")
        found["deflate"] = (lambda b: dfl.gzip_compress(b, 1)) if dfl else None
    return found


def reference(fmt: str, raw: list[bytes]) -> list[bytes]:
    if fmt == "zstd":
        from numcodecs import zstd

        return [zstd.compress(b, 1) for b in raw]
    if fmt == "blosc":
        from numcodecs import blosc

        blosc.use_threads = False
        return [blosc.compress(b, b"lz4", 5, 1, 0, typesize=4) for b in raw]
    return [via_zlib(b) for b in raw]


def via_zlib(b: bytes) -> bytes:
    c = zlib.compressobj(1, zlib.DEFLATED, 31)
    return c.compress(b) + c.flush()


def least(fn: Callable[[], None], reps: int) -> float:
    best = float("inf")
    for _ in range(reps):
        t = time.thread_time()
        fn()
        best = min(best, time.thread_time() - t)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--chunks", type=int, default=64)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--formats", default="zstd,blosc,gzip")
    args = ap.parse_args()
    raw = chunks(args.chunks)
    mb = sum(map(len, raw)) / 1e6
    out = memoryview(bytearray(len(raw[0])))
    print("| format | binding | decode CPU ms/MB | encode CPU ms/MB | encoded/raw |")
    print("|---|---|---|---|---|")
    for fmt in args.formats.split(","):
        enc = reference(fmt, raw)
        encs = encoders(fmt)
        for name, dec in decoders(fmt).items():
            if dec is None:
                print(f"| {fmt} | {name} | not installed | | |")
                continue
            for b in enc:  # every binding must decode the reference chunks exactly
                dec(b, out)
            assert bytes(out) == raw[-1], name
            d = least(lambda dec=dec, enc=enc: [dec(b, out) for b in enc], args.reps) / mb * 1e3
            e_fn = encs.get(name)
            if e_fn is not None:
                made = [e_fn(b) for b in raw]
                ratio = sum(map(len, made)) / (mb * 1e6)
                e = least(lambda e_fn=e_fn: [e_fn(b) for b in raw], args.reps) / mb * 1e3
                print(f"| {fmt} | {name} | {d:.3f} | {e:.3f} | {ratio:.3f} |")
            else:
                print(f"| {fmt} | {name} | {d:.3f} | (other format) | |")


if __name__ == "__main__":
    main()
