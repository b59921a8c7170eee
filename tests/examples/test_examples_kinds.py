"""The example chunk grid, chunk key encoding and memory layout packages (examples/offset-grid,
examples/padded-key-encoding, examples/serpentine-layout), installed as separate distributions
by `./dev`: found by entry point of their distribution, data written and read through each as
a user would, checked by `zarrkit plugins --check`, and the packages' own suites pass."""

from __future__ import annotations

import importlib.metadata as md
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import zarrkit
from zarrkit import registry

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
#: (folder, distribution, kind, name, module)
PACKAGES = [
    ("offset-grid", "zarrkit-example-offset-grid", "chunk_grid", "example.offset",
     "zarrkit_example_offset_grid"),
    ("padded-key-encoding", "zarrkit-example-padded-keys", "chunk_key_encoding",
     "example.padded", "zarrkit_example_padded_keys"),
    ("serpentine-layout", "zarrkit-example-serpentine", "memory_layout", "example.serpentine",
     "zarrkit_example_serpentine"),
]  # fmt: skip


@pytest.fixture(scope="module", autouse=True)
def installed() -> None:
    for folder, dist, *_ in PACKAGES:
        try:
            md.distribution(dist)
        except md.PackageNotFoundError:
            pytest.fail(
                f"{dist} is not installed; ./dev installs it (or pip install -e "
                f"{EXAMPLES / folder})"
            )


@pytest.mark.parametrize("folder, dist, kind, name, module", PACKAGES)
def test_found_by_entry_point_of_its_distribution(folder, dist, kind, name, module):
    (provider,) = registry.get_registry(kind).entries()[name]
    assert provider.distribution == dist
    fmt = "v3" if kind != "memory_layout" else "v2"
    assert registry.lookup(kind, name, fmt).__module__ == module


def test_offset_grid_array(tmp_path):
    grid = {"name": "example.offset", "configuration": {"chunk_shape": [4, 5], "offset": [1, 3]}}
    values = np.arange(9 * 11, dtype="int16").reshape(9, 11)
    a = zarrkit.create_array(tmp_path, shape=(9, 11), dtype="int16", chunk_grid=grid)
    a[...] = values
    assert json.loads((tmp_path / "zarr.json").read_text())["chunk_grid"] == grid
    b = zarrkit.open_array(tmp_path, mode="r+")
    np.testing.assert_array_equal(b[2:7, 1:9], values[2:7, 1:9])
    # first chunks are short (3 rows, 2 columns), the rest whole: chunk (1, 1) holds 4 x 5
    assert b.nchunks == 3 * 3
    b.append(values[:2], axis=0)
    np.testing.assert_array_equal(
        zarrkit.open_array(tmp_path)[...], np.vstack([values, values[:2]])
    )


def test_padded_keys_array(tmp_path):
    encoding = {"name": "example.padded", "configuration": {"width": 3, "separator": "/"}}
    a = zarrkit.create_array(
        tmp_path, shape=(4, 25), chunks=(2, 10), dtype="f4", chunk_key_encoding=encoding
    )
    a[...] = np.arange(100, dtype="f4").reshape(4, 25)
    assert (tmp_path / "c" / "001" / "002").is_file()
    assert zarrkit.open_array(tmp_path)[3, 24] == 99


@pytest.mark.parametrize("zarr_format", [2, "v3-draft-2020"])
def test_serpentine_layout_array(tmp_path, zarr_format):
    values = np.arange(30, dtype=">i4").reshape(5, 6)
    a = zarrkit.create_array(
        tmp_path,
        shape=(5, 6),
        chunks=(2, 6),
        dtype=">i4",
        zarr_format=zarr_format,
        order="example.serpentine",
    )
    a[...] = values
    b = zarrkit.open_array(tmp_path)
    np.testing.assert_array_equal(b[...], values)
    docs = [
        json.loads(p.read_text())
        for p in tmp_path.rglob("*")
        if p.name == ".zarray" or p.suffix == ".json"
    ]
    layouts = [d.get("order", d.get("chunk_memory_layout")) for d in docs]
    assert "example.serpentine" in layouts, docs


def test_plugins_check_passes(tmp_path):
    run = subprocess.run(
        [sys.executable, "-m", "zarrkit", "plugins", "--check", "--json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    rows = {(row["kind"], row["name"]): row for row in json.loads(run.stdout)}
    for _folder, dist, kind, name, _module in PACKAGES:
        row = rows[(kind, name)]
        assert row["distribution"] == dist and row["problems"] == [], row


@pytest.mark.slow
def test_the_packages_own_tests_pass():
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"]
        + [str(EXAMPLES / folder / "tests") for folder, *_ in PACKAGES],
        capture_output=True,
        text=True,
        cwd=EXAMPLES,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert " passed" in run.stdout
