"""The README's demo: a small hierarchy on the local filesystem, written, read back, described.

Run with `./dev demo [DIRECTORY]` (default: ./demo-data/demo.zarr).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np

import zarrkit as zk


def main(argv: list[str]) -> int:
    target = Path(argv[0] if argv else "demo-data/demo.zarr").resolve()
    if target.exists():
        shutil.rmtree(target)
    print(f"zarrkit {zk.__version__}: writing a Zarr v3 hierarchy to {target}")

    root = zk.open_group(str(target), mode="w")
    root.attrs["title"] = "zarrkit demo"
    climate = root.create_group("climate", attributes={"source": "synthetic"})
    y, x = np.mgrid[0:500, 0:800]
    temperature = (15 + 10 * np.sin(y / 80) * np.cos(x / 120)).astype("float32")
    t = climate.create_array(
        "temperature",
        shape=temperature.shape,
        chunks=(128, 128),
        dtype="float32",
        codecs=[
            {"name": "bytes", "configuration": {"endian": "little"}},
            {"name": "zstd", "configuration": {"level": 3, "checksum": False}},
        ],
        fill_value="NaN",
        dimension_names=("y", "x"),
        attributes={"units": "degC"},
    )
    t[:] = temperature
    counts = climate.create_array(
        "station_counts",
        shape=(800,),
        chunks=(100,),
        dtype="uint16",
        codecs=["bytes", {"name": "gzip", "configuration": {"level": 5}}],
    )
    counts[100:300] = np.arange(200, dtype="uint16")
    print(f"  wrote {t.name}: shape {t.shape}, chunks {t.chunks}, {t.nbytes / 2**20:.1f} MiB")
    print(f"  wrote {counts.name}: only chunks 1 and 2 hold data; the rest stay unwritten")

    reopened = zk.open_array(str(target), path="climate/temperature", mode="r")
    back = reopened[:]
    assert np.array_equal(back, temperature), "read-back differs from what was written"
    window = reopened[100:104, 200:800:150]
    print(f"  read back {reopened.name}: identical to what was written; a window:\n{window}")
    picked = reopened.vindex[[0, 250, 499], [0, 400, 799]]
    print(f"  three points by coordinates: {picked}")
    stations = zk.open_array(str(target), path="climate/station_counts")
    print(f"  station_counts[95:105] = {stations[95:105]} (missing chunks read as the fill value)")

    stored = sorted(p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file())
    size = sum((target / p).stat().st_size for p in stored)
    print(
        f"\nthe store holds {len(stored)} files, {size / 2**20:.2f} MiB "
        f"(compression ratio {t.nbytes / size:.1f}x); the hierarchy:"
    )
    print(zk.open_group(str(target)).tree())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
