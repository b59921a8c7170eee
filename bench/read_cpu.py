"""Where a whole-array read of compressed chunks spends its CPU: zarrkit beside zarrs-python and
a bare two-thread loop over the same chunk files, measured in counts that a busy machine
disturbs little.

    python bench/read_cpu.py write [--dir /tmp/zarrkit-read-cpu]
    python bench/read_cpu.py run [--reps 5] [--impls zarrkit,zarrs,bare] [--callgrind] [--reads N]

`write` stores the peers benchmark's W2/W4 arrays once with zarrkit (512 MiB of float32 in
256x256 chunks: zstd level 1, blosc lz4 level 5 with shuffle, gzip level 1; and zstd in
2048x2048 shards), through the harness's own data and codec JSON (`--harness`, default
`../shared/bench/peers_bench.py`). `run` reads each array whole, once per fresh process,
implementations interleaved, and reports for the read alone: CPU seconds split into user and
system (`getrusage`), minor page faults and context switches; with `--callgrind`, the user
instructions of one read of each (valgrind's callgrind, minus a run that only opens the array),
which no other load on the machine changes. Medians and the least of `--reps`. With
`--reads N` each process reads the array N times, each into a new output once the one before is
freed, and reports the reads after the first: their outputs get the pages the process has just
given back, where a first read's fresh pages may be ones the host has to back again (see
bench/README.md).

`zarrkit-before` runs an older build (`pip install --target DIR` of an older checkout, named by
`ZARRKIT_BEFORE=DIR`, as `zarrkit_before.py` does for the harness). `bare` is the floor: two
plain threads, each reading half of the chunk files and decoding them with the library
zarrkit uses (zstandard with a kept context, numcodecs' blosc on one thread, zlib or isal for
gzip) into the output.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
DEFAULT_HARNESS = HERE.parent.parent / "shared" / "bench" / "peers_bench.py"
STORES = {  # name: (harness codec, shards)
    "zstd": ("zstd", None),
    "blosc": ("blosc-lz4-shuffle", None),
    "gzip": ("gzip-1", None),
    "sharded-zstd": ("zstd", (2048, 2048)),
}
SHAPE, CHUNK = (16384, 8192), (256, 256)


def _harness(path: str) -> Any:
    spec = importlib.util.spec_from_file_location("peers_bench", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["peers_bench"] = module
    spec.loader.exec_module(module)
    return module


def write(args: argparse.Namespace) -> None:
    pb = _harness(args.harness)
    root = Path(args.dir)
    root.mkdir(parents=True, exist_ok=True)
    data = pb.make_field_2d(SHAPE)
    for name, (codec, shards) in STORES.items():
        adapter = pb.ZarrkitAdapter()
        adapter.create(str(root / f"{name}.zarr"), SHAPE, CHUNK, "float32", codec, shards)
        adapter.write(data)
        print(f"wrote {root / name}.zarr")


def _usage() -> tuple[float, float, int, int]:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime, r.ru_stime, r.ru_minflt, r.ru_nvcsw + r.ru_nivcsw


def _bare(root: Path, store: str) -> np.ndarray:
    """Two threads over the chunk files (or the shards' inner chunks), each decoding its half
    with the library zarrkit uses, into the output."""
    out = np.empty(SHAPE, np.float32)
    n = CHUNK[0]
    local = threading.local()
    if store in ("zstd", "sharded-zstd"):
        import zstandard

        def decode(b: Any) -> bytes:
            if not hasattr(local, "d"):
                local.d = zstandard.ZstdDecompressor()
            out: bytes = local.d.decompress(b)
            return out
    elif store == "blosc":
        from numcodecs import blosc

        blosc.use_threads = False

        def decode(b: Any) -> bytes:
            out: bytes = blosc.decompress(b)
            return out
    else:
        try:
            from isal import isal_zlib as gz
        except ImportError:
            import zlib as gz

        def decode(b: Any) -> bytes:
            out: bytes = gz.decompress(b, 31)
            return out

    def put(r0: int, c0: int, b: Any) -> None:
        out[r0 : r0 + n, c0 : c0 + n] = np.frombuffer(decode(b), np.float32).reshape(CHUNK)

    if store == "sharded-zstd":
        side, per = 2048, 2048 // n
        keys = [(i, j) for i in range(SHAPE[0] // side) for j in range(SHAPE[1] // side)]

        def work(part: list[tuple[int, int]]) -> None:
            for i, j in part:
                blob = (root / f"{store}.zarr" / "c" / str(i) / str(j)).read_bytes()
                at = len(blob) - 4 - per * per * 16
                index = np.frombuffer(blob, np.uint64, per * per * 2, at).reshape(per, per, 2)
                view = memoryview(blob)
                for a in range(per):
                    for c in range(per):
                        o, size = int(index[a, c, 0]), int(index[a, c, 1])
                        put(i * side + a * n, j * side + c * n, view[o : o + size])
    else:
        keys = [(i, j) for i in range(SHAPE[0] // n) for j in range(SHAPE[1] // n)]

        def work(part: list[tuple[int, int]]) -> None:
            for i, j in part:
                put(i * n, j * n, (root / f"{store}.zarr" / "c" / str(i) / str(j)).read_bytes())

    other = threading.Thread(target=work, args=(keys[1::2],))
    other.start()
    work(keys[0::2])
    other.join()
    return out


def probe(args: argparse.Namespace) -> None:
    """One read in this process, or with `--reads N` N of them, each into a new output once the
    one before is freed; prints the figures as JSON (with `--reads`, medians over the reads
    after the first)."""
    impl, root = args.impl, Path(args.dir)
    if impl == "bare":
        fn = lambda: _bare(root, args.store)  # noqa: E731
    else:
        pb = _harness(args.harness)
        if impl == "zarrkit-before":
            sys.path.insert(0, os.path.abspath(os.environ["ZARRKIT_BEFORE"]))
        adapter = {"zarrs": pb.ZarrsAdapter}.get(impl, pb.ZarrkitAdapter)()
        adapter.open(str(root / f"{args.store}.zarr"))
        fn = adapter.read_all
    rows = []
    for _ in range(args.reads):
        u0, s0, f0, c0 = _usage()
        t0 = time.perf_counter()
        out = None if args.open_only else fn()
        wall = time.perf_counter() - t0
        u1, s1, f1, c1 = _usage()
        del out
        rows.append(dict(wall=wall, user=u1 - u0, sys=s1 - s0, faults=f1 - f0, switches=c1 - c0))
    kept = rows[1:] or rows
    print(json.dumps({k: statistics.median(r[k] for r in kept) for k in rows[0]}))


def _child(args: argparse.Namespace, impl: str, store: str, *extra: str) -> list[str]:
    return [
        sys.executable,
        __file__,
        "probe",
        impl,
        store,
        "--dir",
        args.dir,
        "--harness",
        args.harness,
        "--reads",
        str(args.reads),
        *extra,
    ]


def _instructions(args: argparse.Namespace, impl: str, store: str) -> int:
    """callgrind's count of user instructions for one read (a run that only opens the array
    is subtracted)."""
    counts = []
    one = argparse.Namespace(**{**vars(args), "reads": 1})
    for extra in ((), ("--open-only",)):
        out = subprocess.run(
            ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
            + _child(one, impl, store, *extra),
            capture_output=True,
            text=True,
            check=True,
        )
        line = next(ln for ln in out.stderr.splitlines() if "Collected" in ln)
        counts.append(int(line.split()[-1]))
    return counts[0] - counts[1]


def run(args: argparse.Namespace) -> None:
    impls = args.impls.split(",")
    stores = args.stores.split(",")
    found: dict[tuple[str, str], list[dict]] = {}
    for _ in range(args.reps):
        for store in stores:
            for impl in impls:
                out = subprocess.run(
                    _child(args, impl, store), capture_output=True, text=True, check=True
                )
                found.setdefault((store, impl), []).append(json.loads(out.stdout))
    head = (
        "| array | implementation | wall s: median | CPU s: least / median | user s | system s "
        "| minor faults | switches |"
    )
    if args.callgrind:
        head += " user instructions |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for store in stores:
        for impl in impls:
            rows = found[(store, impl)]
            cpu = [r["user"] + r["sys"] for r in rows]

            def med(key: str, rows: list[dict] = rows) -> float:
                return statistics.median(r[key] for r in rows)

            line = (
                f"| {store} | {impl} | {med('wall'):.3f} | "
                f"{min(cpu):.2f} / {statistics.median(cpu):.2f} | "
                f"{med('user'):.2f} | {med('sys'):.2f} | {med('faults'):.0f} | "
                f"{med('switches'):.0f} |"
            )
            if args.callgrind:
                line += f" {_instructions(args, impl, store) / 1e9:.2f} G |"
            print(line, flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    for name in ("write", "run", "probe"):
        p = sub.add_parser(name)
        p.add_argument("--dir", default="/tmp/zarrkit-read-cpu")
        p.add_argument("--harness", default=str(DEFAULT_HARNESS))
        p.add_argument(
            "--reads",
            type=int,
            default=1,
            help="reads per process; from 2 on, the figures are of the reads after the first, "
            "whose output pages the process has just given back",
        )
        if name == "run":
            p.add_argument("--reps", type=int, default=5)
            p.add_argument("--impls", default="zarrkit,zarrs,bare")
            p.add_argument("--stores", default=",".join(STORES))
            p.add_argument("--callgrind", action="store_true")
        if name == "probe":
            p.add_argument("impl")
            p.add_argument("store")
            p.add_argument("--open-only", action="store_true")
    args = ap.parse_args()
    {"write": write, "run": run, "probe": probe}[args.command](args)


if __name__ == "__main__":
    main()
