"""The example codec package (examples/lz4-codec), installed as a separate distribution by
`./dev`: resolution, precedence over the numcodecs bridge, data both ways with zarr-python,
and the package's own test suite."""

from __future__ import annotations

import importlib.metadata as md
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import zarrkit as zk
from zarrkit import config, registry
from zarrkit.abc.extension import V2

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "lz4-codec"
DIST = "zarrkit-example-lz4"


@pytest.fixture(scope="module")
def lz4_class():
    try:
        md.distribution(DIST)
    except md.PackageNotFoundError:
        pytest.fail(f"{DIST} is not installed; ./dev installs it (or pip install -e {EXAMPLE})")
    from zarrkit_example_lz4 import Lz4Codec

    return Lz4Codec


def test_its_name_resolves_to_the_installed_distribution(lz4_class):
    assert registry.lookup("codec", "example.lz4") is lz4_class
    assert registry.lookup("codec", "example.lz4", V2) is lz4_class
    providers = [p for p in registry.get_registry("codec").providers() if p.name == "example.lz4"]
    assert [p.distribution for p in providers] == [DIST]


@pytest.mark.parametrize("name, fmt", [("numcodecs.lz4", "v3"), ("lz4", V2)])
def test_alias_shared_with_the_bridge_goes_to_the_package_that_names_it(lz4_class, name, fmt):
    # the example names the codec (an alias); the numcodecs bridge only answers for every
    # numcodecs id (a pattern, and it declares itself generic): the package wins, and a
    # preference still chooses either
    assert registry.lookup("codec", name, fmt) is lz4_class
    with config.override(prefer={("codec", name): DIST}):
        assert registry.lookup("codec", name, fmt) is lz4_class
    with config.override(prefer={("codec", name): "zarrkit"}):
        from zarrkit.plugins.codecs.numcodecs_bridge import NumcodecsCodec

        assert registry.lookup("codec", name, fmt) is NumcodecsCodec
    # ids the package does not name stay the bridge's
    assert registry.lookup("codec", "zlib", V2).__module__.endswith("numcodecs_bridge")


@pytest.mark.interop
def test_zarr_python_v2_lz4_array_reads_with_the_package_installed(lz4_class, tmp_path):
    """Installing the package must not break data that read before it (issue 26): a v2 array
    written by zarr-python with numcodecs' LZ4 reads, through the package, value for value,
    and stays readable by zarr-python after zarrkit writes to it."""
    zarr = pytest.importorskip("zarr")
    import numcodecs

    data = np.arange(500, dtype="<i4").reshape(20, 25) * 7
    z = zarr.create_array(
        store=str(tmp_path),
        name="v2",
        shape=data.shape,
        chunks=(8, 10),
        dtype="<i4",
        zarr_format=2,
        compressors=numcodecs.LZ4(acceleration=2),
    )
    z[...] = data
    a = zk.open_array(str(tmp_path), path="v2", mode="r+")
    assert type(a.codecs[-1]) is lz4_class
    np.testing.assert_array_equal(a[...], data)
    a[:8, :10] = -1
    data[:8, :10] = -1
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path), path="v2")[...], data)


def test_zarrkit_prefer_environment_variable_chooses(lz4_class):
    code = (
        "from zarrkit import registry; print(registry.lookup('codec', 'numcodecs.lz4').__module__)"
    )
    env = {**os.environ, "ZARRKIT_PREFER": f"codec:numcodecs.lz4={DIST}"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "zarrkit_example_lz4"


@pytest.mark.interop
def test_zarr_python_numcodecs_lz4_data_reads_through_either_provider(lz4_class, tmp_path):
    zarr = pytest.importorskip("zarr")
    from zarr.codecs.numcodecs import LZ4

    data = (np.arange(6000, dtype="float32") % 13).reshape(60, 100)
    z = zarr.create_array(
        store=str(tmp_path),
        name="a",
        shape=data.shape,
        chunks=(25, 40),
        dtype="float32",
        compressors=[LZ4(acceleration=3)],
    )
    z[...] = data
    for dist, cls_name in ((DIST, "Lz4Codec"), ("zarrkit", "_BytesBytesNumcodec")):
        with config.override(prefer={("codec", "numcodecs.lz4"): dist}):
            a = zk.open_array(str(tmp_path), path="a")
            assert type(a.codecs[-1]).__name__ == cls_name
            np.testing.assert_array_equal(a[...], data)


def test_written_chunks_are_numcodecs_lz4_chunks(lz4_class, tmp_path):
    import numcodecs

    data = np.arange(1000, dtype="int16")
    a = zk.create_array(
        str(tmp_path),
        path="a",
        shape=(1000,),
        chunks=(1000,),
        dtype="int16",
        codecs=["bytes", {"name": "example.lz4", "configuration": {"acceleration": 2}}],
    )
    a[...] = data
    stored = (tmp_path / "a" / "c" / "0").read_bytes()
    decoded = np.frombuffer(numcodecs.LZ4().decode(stored), dtype="<i2")
    np.testing.assert_array_equal(decoded, data)


@pytest.mark.slow
def test_the_package_own_tests_pass(lz4_class):
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(EXAMPLE / "tests")],
        capture_output=True,
        text=True,
        cwd=EXAMPLE,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert " passed" in run.stdout
