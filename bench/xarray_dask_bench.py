#!/usr/bin/env python3
"""xarray + dask through zarrkit beside xarray's own zarr engine (zarr-python), same files, one run.

    python bench/xarray_dask_bench.py [--size-mib 1024] [--reps 3] [--chunks auto|stored]
        [--chunk-kib 2048|256]

Writes a dataset of four float32 variables (zstd; stored chunks of one time step, 1024 x 512 =
2 MiB by default, 256 x 256 = 256 KiB with `--chunk-kib 256`) once with zarr-python, then
opens it with `xr.open_dataset(..., engine=E, chunks=...)` and computes a reduction through dask
(`--chunks auto`, `xr.open_zarr`'s default: dask blocks of about 128 MiB along the stored
chunks; `stored`, `chunks={}`: one dask task per stored chunk, where dask's own per-task cost
dominates),
on the threaded scheduler and on a 2-process `LocalCluster`, `engine="zarrkit"` beside
`engine="zarr"`. Each measurement runs in a fresh process (so page cache aside, nothing is
shared), engines alternate within a rep, and the report gives medians, the ratio
zarr / zarrkit (above 1: zarrkit is faster), and peak resident memory: of the process on the
threaded scheduler, the largest worker's on the cluster.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ENGINES = ("zarr", "zarrkit")
SCHEDULERS = ("threads", "cluster")
VARIABLES = ("t", "u", "v", "q")


CHUNK_SHAPES = {2048: (1, 1024, 512), 256: (1, 256, 256)}


def make_dataset(path: Path, size_mib: int, chunk_kib: int) -> None:
    """One dataset of four variables, (time, y, x) float32, zstd level 1, in stored chunks of
    `chunk_kib` KiB: compressible like real fields (smooth plus quantised noise), not trivially
    so."""
    import numpy as np
    import xarray as xr
    from zarr.codecs import ZstdCodec

    side = 2048
    per_var = size_mib * 2**20 // len(VARIABLES)
    steps = max(1, per_var // (side * side * 4))
    rng = np.random.default_rng(0)
    yy, xx = np.meshgrid(np.linspace(0, 6, side), np.linspace(0, 6, side), indexing="ij")
    base = (np.sin(yy) * np.cos(xx)).astype("float32")
    data_vars = {}
    for k, name in enumerate(VARIABLES):
        field = np.empty((steps, side, side), dtype="float32")
        for s in range(steps):
            noise = rng.integers(0, 64, size=(side, side)).astype("float32") / 256
            field[s] = base * (k + 1) + s + noise
        data_vars[name] = (("time", "y", "x"), field)
    ds = xr.Dataset(
        data_vars, coords={"time": np.arange(steps), "y": np.arange(side), "x": np.arange(side)}
    )
    encoding = {
        name: {"chunks": CHUNK_SHAPES[chunk_kib], "compressors": [ZstdCodec(level=1)]}
        for name in VARIABLES
    }
    ds.to_zarr(path, mode="w", encoding=encoding, zarr_format=3, consolidated=True)


def measure(path: str, engine: str, scheduler: str, chunks: str) -> dict[str, float]:
    """One open + reduction, in this (fresh) process."""
    import resource

    import dask
    import xarray as xr

    cluster = client = None
    if scheduler == "cluster":
        from distributed import Client, LocalCluster

        cluster = LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        )
        client = Client(cluster)
    try:
        start = time.perf_counter()
        ds = xr.open_dataset(path, engine=engine, chunks={} if chunks == "stored" else chunks)
        result = ds.mean(dim=("y", "x"))
        if client is None:
            with dask.config.set(scheduler="threads"):
                values = result.compute()
        else:
            values = result.compute()
        seconds = time.perf_counter() - start
        checksum = float(sum(float(values[v].sum()) for v in VARIABLES))
        if client is None:
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        else:
            peaks = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
            peak = max(peaks.values()) / 1024
        return {"seconds": seconds, "peak_mib": peak, "checksum": checksum}
    finally:
        if client is not None:
            client.close()
            cluster.close()


def run_one(path: Path, engine: str, scheduler: str, chunks: str) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--chunks", chunks, "--measure", str(path), engine, scheduler],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mib", type=int, default=1024)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument(
        "--chunk-kib",
        type=int,
        choices=sorted(CHUNK_SHAPES),
        default=2048,
        help="size of a stored chunk: 2048 (1 x 1024 x 512) or 256 (1 x 256 x 256)",
    )
    parser.add_argument("--dir", default=None, help="where the dataset goes (default: a temp dir)")
    parser.add_argument(
        "--chunks",
        choices=("auto", "stored"),
        default="auto",
        help="dask blocks: xarray's 'auto', or one per stored chunk",
    )
    parser.add_argument(
        "--measure", nargs=3, metavar=("PATH", "ENGINE", "SCHEDULER"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(*args.measure, args.chunks)))
        return 0

    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        path = Path(tmp) / "bench.zarr"
        make_dataset(path, args.size_mib, args.chunk_kib)
        runs: dict[tuple[str, str], list[dict[str, float]]] = {
            (e, s): [] for e in ENGINES for s in SCHEDULERS
        }
        for rep in range(args.reps):
            for scheduler in SCHEDULERS:
                order = ENGINES if rep % 2 == 0 else ENGINES[::-1]
                for engine in order:
                    runs[engine, scheduler].append(run_one(path, engine, scheduler, args.chunks))
        print(
            f"dataset: {args.size_mib} MiB of float32 in {args.chunk_kib} KiB zstd chunks "
            f"{'x'.join(map(str, CHUNK_SHAPES[args.chunk_kib]))}, "
            f"{len(VARIABLES)} variables; dask chunks {args.chunks}; medians of {args.reps}\n"
        )
        print(
            "| scheduler | zarr (s) | zarrkit (s) | zarr / zarrkit | peak MiB zarr | "
            "peak MiB zarrkit | same result |"
        )
        print("|---|---|---|---|---|---|---|")
        for scheduler in SCHEDULERS:
            t = {e: statistics.median(r["seconds"] for r in runs[e, scheduler]) for e in ENGINES}
            m = {e: statistics.median(r["peak_mib"] for r in runs[e, scheduler]) for e in ENGINES}
            same = len({round(r["checksum"], 3) for e in ENGINES for r in runs[e, scheduler]}) == 1
            print(
                f"| {scheduler} | {t['zarr']:.2f} | {t['zarrkit']:.2f} | "
                f"{t['zarr'] / t['zarrkit']:.2f}x | {m['zarr']:.0f} | {m['zarrkit']:.0f} | "
                f"{'yes' if same else 'NO'} |"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
