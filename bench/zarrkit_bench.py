#!/usr/bin/env python3
"""zarrkit's own benchmark: the peers harness run, the issue's targets judged on its results,
and the engine's per-chunk overhead measured without a file system.

    python bench/zarrkit_bench.py run [--quick] [harness options...]   # harness + targets
    python bench/zarrkit_bench.py targets RESULTS.json                 # judge a finished run
    python bench/zarrkit_bench.py overhead                             # µs per chunk, memory store

`run` drives the shared harness (`../shared/bench/peers_bench.py`, or `--harness PATH`), which
runs zarrkit, zarr-python 3, zarrs-python and tensorstore on the same data, each operation in
its own process, interleaved, and measures this machine's limits in the same run. The targets
come from issue 3; every ratio is printed, met or not. Benchmarks are not timed tests.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEFAULT_HARNESS = HERE.parent.parent / "shared" / "bench" / "peers_bench.py"
BASELINE, RUST, TS, US = "zarr-python", "zarrs", "tensorstore", "zarrkit"
CODECS = ["none", "zstd", "blosc-lz4-shuffle", "gzip-1"]
#: libraries zarrkit's plugins use when present and the targets are measured with; without one,
#: the plugin falls back and the run measures the fallback (module: how to install it)
SPEED_EXTRAS = {"isal": "the gzip codec through ISA-L: pip install -e '.[fast-gzip]'"}


# -- run ----------------------------------------------------------------------------------------
def run(args: argparse.Namespace, rest: list[str]) -> int:
    missing = missing_extras()
    if missing and not args.without_extras:
        print("not running: this interpreter lacks what zarrkit is measured with (its plugins "
              "would fall back silently):\n" + "\n".join(f"  {m}: {why}" for m, why in missing)
              + "\n(--without-extras runs anyway)", file=sys.stderr)
        return 2
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    started = time.time()
    cmd = [sys.executable, str(args.harness), "run", "--out-dir", str(out_dir),
           "--impls", args.impls, *rest]
    print("+", " ".join(cmd), flush=True)
    code = subprocess.call(cmd)
    # (a run of the same day overwrites the day's file, so look at times, not names)
    new = sorted((p for p in out_dir.glob("peers-*.json") if os.path.getmtime(p) >= started),
                 key=os.path.getmtime)
    if not new:
        print("the harness wrote no results", file=sys.stderr)
        return code or 1
    print(targets_markdown(json.loads(new[-1].read_text()), new[-1].name))
    return code


def missing_extras() -> list[tuple[str, str]]:
    """The speed extras this interpreter cannot import. A venv set up with a plain
    `pip install -e .` once ran the whole benchmark with zlib's gzip: W1 gzip-1 at 94 MB/s
    instead of 336, and nothing said so."""
    import importlib.util
    return [(m, why) for m, why in SPEED_EXTRAS.items() if importlib.util.find_spec(m) is None]


# -- targets ------------------------------------------------------------------------------------
def _rows(result: dict) -> dict[tuple[str, str, str], dict]:
    return {(r["wl"], r["codec"], r["impl"]): r for r in result["summary"]}


def _per(result: dict, row: dict | None, what: str) -> float | None:
    """µs per chunk (W3) or per window (W4/W5) from a summary row."""
    if row is None or not row.get("median_s"):
        return None
    sizes = result["meta"]["sizes"]
    n = sizes["tiny_n"] // sizes["tiny_chunk"] if what == "chunk" else sizes["n_windows"]
    return row["median_s"] / n * 1e6


def _fmt(x: float | None, unit: str = "x") -> str:
    if x is None:
        return "n/a"
    return f"{x:.2f}{unit}" if unit == "x" else f"{x:.0f}{unit}" if x >= 100 else f"{x:.1f}{unit}"


def targets(result: dict) -> list[tuple[str, str, str, bool | None]]:
    """(target, measured, detail, met) for every target of issue 3 that this run measured."""
    rows = _rows(result)
    out: list[tuple[str, str, str, bool | None]] = []

    def speed(wl: str, codec: str, impl: str) -> float | None:
        us, them = rows.get((wl, codec, US)), rows.get((wl, codec, impl))
        if not us or not them or not us.get("median_s") or not them.get("median_s"):
            return None
        return them["median_s"] / us["median_s"]

    def add(name: str, ratio: float | None, need: float, detail: str = "") -> None:
        out.append((name, _fmt(ratio), detail, None if ratio is None else ratio >= need))

    workloads = sorted({(r["wl"], r["codec"]) for r in result["summary"] if r["impl"] == US})
    for wl, codec in workloads:
        add(f"{wl} {codec}: >= 2x zarr-python", speed(wl, codec, BASELINE), 2.0)
    for wl, codec in workloads:
        if wl in ("W1", "W2") or wl in ("W4-write", "W4-read"):
            add(f"{wl} {codec}: >= zarrs-python", speed(wl, codec, RUST), 1.0)
    for wl, codec in workloads:
        if wl in ("W4-windows", "W5-windows"):
            add(f"{wl} {codec}: >= tensorstore", speed(wl, codec, TS), 1.0)
    for codec in ("zstd", "none"):
        for wl, limit in (("W3-read", 15.0), ("W3-write", 60.0)):
            us = _per(result, rows.get((wl, codec, US)), "chunk")
            if us is not None:
                ts_us = _per(result, rows.get((wl, codec, TS)), "chunk")
                out.append((f"{wl} {codec}: <= {limit:.0f} µs/chunk", _fmt(us, " µs"),
                            f"tensorstore {_fmt(ts_us, ' µs')}", us <= limit))
    w2 = rows.get(("W2", "zstd", US))
    raw = result.get("limits", {}).get("codecs", {}).get("zstd", {}).get("decode_2t_MBps")
    if w2 and raw:
        share = w2["MBps"] / raw["median"]
        out.append(("W2 zstd: >= 60% of raw numcodecs 2-thread decode", f"{share:.0%}",
                    f"{w2['MBps']:.0f} of {raw['median']:.0f} MB/s", share >= 0.6))
    sizes = result["meta"]["sizes"]
    output_mib = sizes["big_shape"][0] * sizes["big_shape"][1] * 4 / 2**20
    peaks = [r["op_peak_extra_mib"] for (wl, _c, impl), r in rows.items()
             if wl == "W2" and impl == US and r.get("op_peak_extra_mib") is not None]
    if peaks:
        over = max(peaks) - output_mib
        out.append(("W2 full read: peak RSS <= output + 128 MiB", f"+{over:.0f} MiB",
                    f"worst codec, output {output_mib:.0f} MiB", over <= 128))
    return out


def targets_markdown(result: dict, name: str = "") -> str:
    lines = [f"Targets of issue 3 judged on {name or 'this run'} "
             f"({'quick' if result['meta'].get('quick') else 'full'} sizes, "
             f"reps={result['meta'].get('reps')}); x = how many times faster zarrkit is:", "",
             "| target | measured | detail | met |", "|---|---|---|---|"]
    for target, measured, detail, met in targets(result):
        lines.append(f"| {target} | {measured} | {detail} | "
                     f"{'yes' if met else 'no' if met is not None else 'n/a'} |")
    return "\n".join(lines)


# -- overhead -----------------------------------------------------------------------------------
def overhead(args: argparse.Namespace) -> int:
    """The engine's cost per chunk with no file system under it: 10,000 chunks of 200 float32
    in a memory store, written and read back, per codec and thread count."""
    import numpy as np

    import zarrkit as zk
    from zarrkit import config
    from zarrkit.plugins.stores.memory import MemoryStore

    n, chunk = args.chunks * 200, 200
    data = np.cumsum(np.random.default_rng(0).standard_normal(n)).astype("float32")
    chains = {"none": [{"name": "bytes", "configuration": {"endian": "little"}}],
              "zstd": [{"name": "bytes", "configuration": {"endian": "little"}},
                       {"name": "zstd", "configuration": {"level": 1, "checksum": False}}]}
    print("| codec | threads | write µs/chunk | read µs/chunk |\n|---|---|---|---|")
    for codec, codecs in chains.items():
        for threads in (1, 2):
            with config.override(threads=threads):
                a = zk.create_array(MemoryStore(), shape=(n,), chunks=(chunk,), dtype="float32",
                                    codecs=codecs)
                write = min(_timed(lambda: a.__setitem__(Ellipsis, data)) for _ in range(3))
                read = min(_timed(lambda: a[...]) for _ in range(3))
            print(f"| {codec} | {threads} | {write / args.chunks * 1e6:.1f} | "
                  f"{read / args.chunks * 1e6:.1f} |")
    return 0


def _timed(fn: Any) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run the peers harness, then judge the targets")
    r.add_argument("--harness", default=str(DEFAULT_HARNESS))
    r.add_argument("--out-dir", default=str(HERE / "results"))
    r.add_argument("--impls", default=f"{BASELINE},{RUST},{TS},{US}")
    r.add_argument("--without-extras", action="store_true",
                   help="run even when a speed extra (e.g. isal) is not installed")
    t = sub.add_parser("targets", help="judge the targets on a results JSON of the harness")
    t.add_argument("results")
    o = sub.add_parser("overhead", help="per-chunk cost of the engine on a memory store")
    o.add_argument("--chunks", type=int, default=10_000)
    args, rest = parser.parse_known_args(argv)
    if args.command == "run":
        return run(args, rest)
    if rest:
        parser.error(f"unrecognised arguments: {rest}")
    if args.command == "targets":
        print(targets_markdown(json.loads(Path(args.results).read_text()), Path(args.results).name))
        return 0
    return overhead(args)


if __name__ == "__main__":
    sys.exit(main())
