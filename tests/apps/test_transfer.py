"""`zarrkit convert` / `zarrkit copy` and their Python functions: whole hierarchies between stores
and formats, planned before anything is written, resumable, verified."""

from __future__ import annotations

import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

import zarrkit
from zarrkit import transfer
from zarrkit.cli import main as cli_main
from zarrkit.errors import ContainsNodeError
from zarrkit.plugins.stores.local.local import LocalStore
from zarrkit.plugins.stores.memory import MemoryStore

FORMATS = ["v3", "v2", "v3-draft-2020"]

#: a chain v2 cannot express: sharding has no v2 name
SHARDED = [
    {
        "name": "sharding_indexed",
        "configuration": {
            "chunk_shape": [2],
            "codecs": ["bytes"],
            "index_codecs": ["bytes", "crc32c"],
            "index_location": "end",
        },
    }
]

#: (name, dtype, fill value, codecs per format given as create_array keyword arguments)
ARRAYS = [
    ("f8", "float64", np.nan, {"compressor": {"id": "zstd", "level": 1}}),
    ("i2_big", ">i2", -7, {"compressor": {"id": "gzip", "level": 1}}),
    (
        "u1",
        "uint8",
        3,
        {"compressor": {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}},
    ),
    ("b1", "bool", True, {"compressor": None}),
    ("f4_F", "float32", 0.5, {"compressor": {"id": "zstd", "level": 3}, "order": "F"}),
    ("i8", "int64", 0, {"compressor": {"id": "gzip", "level": 5}}),
    ("c16", "complex128", 0, {"compressor": {"id": "zstd", "level": 1}}),
]


def _values(name: str, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(max(info.min, -1000), min(info.max, 1000), shape).astype(dt)
    if dt.kind == "c":
        return (rng.normal(size=shape) + 1j * rng.normal(size=shape)).astype(dt)
    return rng.normal(size=shape).astype(dt)


def _v2_hierarchy(url: str) -> dict[str, np.ndarray]:
    """A v2 hierarchy with nested groups, attributes, many dtypes and codecs, partly written
    arrays (so some chunks are missing and read as the fill value)."""
    root = zarrkit.create_group(url, zarr_format=2, attributes={"title": "round trip", "n": 3})
    sub = root.create_group("inner", attributes={"nested": {"list": [1, 2.5, "x"]}})
    sub.create_group("empty")
    expected = {}
    for i, (name, dtype, fill, options) in enumerate(ARRAYS):
        parent = root if i % 2 else sub
        shape = (13, 9)
        arr = parent.create_array(
            name,
            shape=shape,
            dtype=dtype,
            chunks=(5, 4),
            fill_value=fill,
            attributes={"units": name},
            **options,
        )
        values = np.full(shape, fill, dtype=arr.dtype)
        data = _values(name, dtype, (10, 9))
        arr[:10] = data
        values[:10] = data
        expected[arr.path] = values
    return expected


def _check(url: str, expected: dict[str, np.ndarray], fmt: str) -> None:
    root = zarrkit.open_group(url)
    assert root.metadata.format == fmt
    assert dict(root.attrs) == {"title": "round trip", "n": 3}
    inner = root["inner"]
    assert dict(inner.attrs) == {"nested": {"list": [1, 2.5, "x"]}}
    assert "empty" in inner.group_keys()
    for path, values in expected.items():
        arr = zarrkit.open_array(url, path=path)
        assert arr.metadata.format == fmt
        assert dict(arr.attrs) == {"units": path.rsplit("/", 1)[-1]}
        got = arr[...]
        assert got.dtype == values.dtype
        np.testing.assert_array_equal(got, values)


def test_round_trip_v2_v3_draft_v2_keeps_everything(tmp_path: Path) -> None:
    urls = [str(tmp_path / f"{i}-{fmt}.zarr") for i, fmt in enumerate(["v2", "v3", "draft", "v2"])]
    expected = _v2_hierarchy(urls[0])
    _check(urls[0], expected, "v2")
    for src, dst, fmt in zip(urls, urls[1:], ["v3", "v3-draft-2020", "v2"]):
        report = transfer.convert(src, dst, to=fmt, verify=True)
        assert report.mismatches == []
        _check(dst, expected, fmt)


def test_equivalent_chains_copy_encoded_bytes_untouched(tmp_path: Path) -> None:
    src, dst = str(tmp_path / "v2.zarr"), str(tmp_path / "v3.zarr")
    arr = zarrkit.create_array(
        src,
        shape=(40, 40),
        dtype="<f4",
        chunks=(10, 10),
        zarr_format=2,
        compressor={"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0},
    )
    arr[:] = np.arange(1600, dtype="f4").reshape(40, 40)
    report = transfer.convert(src, dst, to="v3")
    assert report.chunks_copied == 16 and report.chunks_reencoded == 0
    a_src, a_dst = LocalStore(src), LocalStore(dst)
    new = zarrkit.open_array(dst)
    for i in range(4):
        for j in range(4):
            assert a_dst.get(new._chunk_key((i, j))) == a_src.get(arr._chunk_key((i, j)))
    np.testing.assert_array_equal(new[...], arr[...])


def test_sharding_cannot_go_to_v2(tmp_path: Path) -> None:
    src, dst = str(tmp_path / "v3.zarr"), str(tmp_path / "v2.zarr")
    arr = zarrkit.create_array(src, shape=(30,), dtype="int32", chunks=(10,), codecs=SHARDED)
    arr[:] = np.arange(30)
    with pytest.raises(transfer.TransferError, match="sharding_indexed"):
        transfer.convert(src, dst, to="v2")
    assert not Path(dst).exists() or not any(Path(dst).rglob("*"))


def test_unexpressible_node_fails_before_writing_anything(tmp_path: Path) -> None:
    src, dst = str(tmp_path / "v3.zarr"), str(tmp_path / "out.zarr")
    root = zarrkit.create_group(src)
    ok = root.create_array("a_fine", shape=(4,), dtype="int16", chunks=(2,))
    ok[:] = [1, 2, 3, 4]
    bad = root.create_array("z_sharded", shape=(4,), dtype="int16", chunks=(4,), codecs=SHARDED)
    bad[:] = [5, 6, 7, 8]
    with pytest.raises(transfer.TransferError) as info:
        transfer.convert(src, dst, to="v2")
    assert "z_sharded" in str(info.value) and "sharding_indexed" in str(info.value)
    assert not Path(dst).exists() or not any(Path(dst).rglob("*"))


def test_transpose_without_a_layout_twin_is_refused_for_v2(tmp_path: Path) -> None:
    """A v3 transpose that is neither C nor F order has no v2 `order`: refused up front."""
    src, dst = str(tmp_path / "v3.zarr"), str(tmp_path / "v2.zarr")
    arr = zarrkit.create_array(
        src,
        shape=(4, 5, 6),
        dtype="float32",
        chunks=(2, 5, 3),
        codecs=[{"name": "transpose", "configuration": {"order": [1, 0, 2]}}, "bytes"],
    )
    arr[:] = np.arange(120, dtype="f4").reshape(4, 5, 6)
    with pytest.raises(transfer.TransferError, match="transpose"):
        transfer.convert(src, dst, to="v2")


@pytest.mark.parametrize("to", FORMATS)
def test_new_codecs_reencode_every_chunk(tmp_path: Path, to: str) -> None:
    src, dst = str(tmp_path / "v2.zarr"), str(tmp_path / "out.zarr")
    arr = zarrkit.create_array(
        src,
        shape=(50, 20),
        dtype=">i4",
        chunks=(10, 10),
        zarr_format=2,
        compressor={"id": "zstd", "level": 1},
        fill_value=-1,
    )
    arr[:40] = np.arange(800).reshape(40, 20)
    report = transfer.convert(
        src,
        dst,
        to=to,
        verify=True,
        codecs=[
            {"name": "bytes", "configuration": {"endian": "little"}},
            {"name": "gzip", "configuration": {"level": 6}},
        ],
    )
    assert report.mismatches == []
    assert report.chunks_reencoded == 8 and report.chunks_copied == 0
    (plan,) = [p for p in report.nodes if p.is_array]
    assert "codec" in plan.why_reencode
    out = zarrkit.open_array(dst)
    assert out.metadata.format == to
    np.testing.assert_array_equal(out[...], arr[...])


@pytest.mark.parametrize("to", FORMATS)
def test_copy_keeps_documents_and_chunks_byte_for_byte(tmp_path: Path, to: str) -> None:
    src, dst = str(tmp_path / "src.zarr"), str(tmp_path / "dst.zarr")
    root = zarrkit.create_group(src, zarr_format=to, attributes={"k": [1, 2]})
    arr = root.create_array("g/a", shape=(7, 7), dtype="int16", chunks=(3, 3), fill_value=-1)
    arr[1:6, 2:] = np.arange(25, dtype="i2").reshape(5, 5)
    report = transfer.copy(src, dst, verify=True)
    assert report.mismatches == [] and report.chunks_reencoded == 0
    assert report.chunks_copied == 6  # chunks never written stay absent in the copy too
    s, d = LocalStore(src), LocalStore(dst)
    assert sorted(s.list()) == sorted(d.list())
    for key in s.list():
        assert s.get(key) == d.get(key), key


def test_interrupted_conversion_resumes(tmp_path: Path) -> None:
    src, dst = str(tmp_path / "src.zarr"), str(tmp_path / "dst.zarr")
    arr = zarrkit.create_array(src, shape=(100, 100), dtype="float64", chunks=(10, 10))
    arr[:] = np.random.default_rng(1).normal(size=(100, 100))

    class Interrupt(Exception):
        pass

    def stop_midway(path: str, done: int, total: int) -> None:
        if done >= 30:
            raise Interrupt

    with pytest.raises(Interrupt):
        transfer.convert(src, dst, to="v2", progress=stop_midway, batch_bytes=8 * 100 * 10)
    partial = zarrkit.open_array(dst)
    assert partial.metadata.format == "v2"
    with pytest.raises(ContainsNodeError, match="resume"):
        transfer.convert(src, dst, to="v2")
    report = transfer.convert(src, dst, to="v2", resume=True, verify=True)
    assert report.mismatches == []
    assert report.chunks_skipped == 30 and report.chunks_copied + report.chunks_reencoded == 70


def test_resume_refuses_a_different_target(tmp_path: Path) -> None:
    src, dst = str(tmp_path / "src.zarr"), str(tmp_path / "dst.zarr")
    zarrkit.create_array(src, shape=(10,), dtype="int8", chunks=(5,))
    zarrkit.create_array(dst, shape=(11,), dtype="int8", chunks=(5,))
    with pytest.raises(transfer.TransferError, match="differs"):
        transfer.convert(src, dst, to="v3", resume=True)


def test_verify_reports_a_changed_value(tmp_path: Path) -> None:
    src, dst = str(tmp_path / "src.zarr"), str(tmp_path / "dst.zarr")
    arr = zarrkit.create_array(src, shape=(20,), dtype="int32", chunks=(5,))
    arr[:] = np.arange(20)
    transfer.copy(src, dst)
    zarrkit.open_array(dst, mode="r+")[7] = 99
    problems = transfer.compare(LocalStore(src), "", LocalStore(dst), "")
    assert problems == ["/: values differ in chunk (1,)"]


def test_memory_stays_bounded(tmp_path: Path) -> None:
    """Converting streams: peak traced memory is a few batches, not the array (32 MiB here)."""
    src, dst = MemoryStore(), MemoryStore()
    arr = zarrkit.create_array(
        src, shape=(2048, 2048), dtype="float64", chunks=(256, 256), codecs=["bytes"]
    )
    for i in range(0, 2048, 256):
        arr[i : i + 256] = np.random.default_rng(i).normal(size=(256, 2048))
    tracemalloc.start()
    try:
        report = transfer.convert(src, dst, to="v2", batch_bytes=2 << 20)
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert report.chunks_copied + report.chunks_reencoded == 64
    # stored bytes of the target count too (a memory store); what must not happen is holding
    # the source array decoded: 32 MiB of it plus 32 MiB of target would be ~64 MiB
    assert peak < 32 * 2**20 + 12 * 2**20, peak


# -- the command line -------------------------------------------------------------------------
def test_cli_convert_with_progress_and_verify(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    src, dst = str(tmp_path / "src.zarr"), str(tmp_path / "dst.zarr")
    arr = zarrkit.create_array(src, path="g/a", shape=(30, 30), dtype="uint16", chunks=(10, 10))
    arr[:] = np.arange(900).reshape(30, 30)
    code = cli_main(["convert", src, dst, "--to", "v2", "--verify", "--progress"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "/g/a [" in err and "9/9 chunks" in err
    assert "verified: all values equal" in out
    np.testing.assert_array_equal(zarrkit.open_array(dst, path="g/a")[...], arr[...])
    assert zarrkit.open_array(dst, path="g/a").metadata.format == "v2"


def test_cli_refuses_existing_target_and_unexpressible(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    src, dst = str(tmp_path / "src.zarr"), str(tmp_path / "dst.zarr")
    arr = zarrkit.create_array(src, shape=(4,), dtype="int8", chunks=(4,), codecs=SHARDED)
    arr[:] = 1
    assert cli_main(["convert", src, dst, "--to", "v2", "--no-progress"]) == 2
    assert "sharding_indexed" in capsys.readouterr().err
    assert cli_main(["copy", src, dst, "--no-progress"]) == 0
    assert cli_main(["copy", src, dst, "--no-progress"]) == 2
    assert "--overwrite" in capsys.readouterr().err


@pytest.mark.slow
def test_cli_copy_resumes_after_sigkill(tmp_path: Path) -> None:
    """A copy killed mid-way (a real process, SIGKILL) is finished by `--resume`."""
    src, dst = str(tmp_path / "src.zarr"), str(tmp_path / "dst.zarr")
    arr = zarrkit.create_array(src, shape=(400, 400), dtype="float32", chunks=(20, 20))
    arr[:] = np.random.default_rng(3).normal(size=(400, 400)).astype("f4")
    script = (
        "import os, signal, sys\n"
        "from zarrkit import transfer\n"
        "def stop(path, done, total):\n"
        "    if done >= 100:\n"
        "        os.kill(os.getpid(), signal.SIGKILL)\n"
        f"transfer.copy({src!r}, {dst!r}, progress=stop, batch_bytes=20 * 20 * 4 * 25)\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True)
    assert proc.returncode == -9
    env = dict(os.environ)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "zarrkit",
            "copy",
            src,
            dst,
            "--resume",
            "--verify",
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    assert "400 chunks" not in result.stdout  # what was there was kept, not copied again
    assert "100 already present" in result.stdout
    np.testing.assert_array_equal(zarrkit.open_array(dst)[...], arr[...])


def test_cli_store_metrics_counts_the_transfer(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    src, dst = str(tmp_path / "src.zarr"), str(tmp_path / "dst.zarr")
    arr = zarrkit.create_array(src, shape=(40,), dtype="int32", chunks=(10,))
    arr[:] = np.arange(40)
    assert cli_main(["--store-metrics", "copy", src, dst, "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert f"LocalStore('file://{dst}')" in err and f"LocalStore('file://{src}')" in err
    rows = {line.split()[0]: line.split() for line in err.splitlines() if line.startswith("    ")}
    assert rows["set_many"][2] == "4"  # the four chunks, in one batch (metadata: a set)
    assert rows["set"][1] == "1"


def test_cli_store_metrics_report_only_the_commands_stores(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """Stores counted earlier in the process (a `metrics://` URL) are not in the report of a
    command run with `--store-metrics` after them."""
    earlier = str(tmp_path / "earlier.zarr")
    zarrkit.create_array(f"metrics://{earlier}", shape=(4,), dtype="int32")[:] = 1
    src, dst = str(tmp_path / "src.zarr"), str(tmp_path / "dst.zarr")
    zarrkit.create_array(src, shape=(40,), dtype="int32", chunks=(10,))[:] = np.arange(40)
    assert cli_main(["--store-metrics", "copy", src, dst, "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert f"LocalStore('file://{dst}')" in err
    assert "earlier.zarr" not in err
