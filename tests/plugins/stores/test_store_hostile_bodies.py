"""Hostile sizes on the stores that `test_store_value_bounds` does not cover: obstore (plain
`s3://`, `obstore+s3://`, `obstore+http://`), s3fs (`fsspec+s3://`) and local files. A GET
answered with a `Content-Length` of 2**62 (obstore allocated it whole and the process died of
SIGABRT), bodies of gigabytes for a 16-byte chunk or a `zarr.json`, four of them at once, a
body without end, a 206 whose length disagrees with its range, and sparse files of gigabytes.

Each read runs in a child process, so that an abort shows as a signal rather than ending the
test run, and that process's peak RSS is its memory: a read must end in a
`ValueTooLargeError` naming the key and the operation, within `_SLACK` of the peak of the
same process reading the honest array. Servers on 127.0.0.1: `HostileServer` serves the
folder as an HTTP server and, with the headers S3 clients need, as S3's path-style GETs.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hostile_servers import Endless, HostileServer
from store_servers import serving

import zarrkit as zk
from zarrkit.abc.store import DEFAULT_VALUE_LIMIT
from zarrkit.plugins.stores.remote import s3_routing

GIB = 1 << 30
HUGE = 1 << 62  # 4611686018427387904
BUCKET = "bucket"
#: the most a refused read may take beyond the honest read of the same array
_SLACK = 64 << 20

#: run in a child: open the array (or store) as a user does, read it, and report the error
#: (zarrkit's only: anything else fails the test with its traceback) and the peak RSS
_CHILD = """
import json, resource, sys
import zarrkit as zk
from zarrkit.errors import ZarrkitError
from zarrkit.abc import ByteRange
from zarrkit.store_opening import open_store

url, path, options, how = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4]
out = {"error": None}
try:
    if how == "range":
        out["length"] = len(open_store(url, storage_options=options).get(path, ByteRange(0, 16)))
    else:
        out["sum"] = int(zk.open_array(url, path=path, storage_options=options)[...].sum())
except ZarrkitError as exc:
    out.update(
        error=type(exc).__name__, key=getattr(exc, "key", None),
        operation=getattr(exc, "operation", None), message=str(exc),
    )
out["peak"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps(out))
"""


def _read(
    url: str, path: str = "a", options: dict[str, Any] | None = None, how: str = "array"
) -> dict[str, Any]:
    """What the child reports; a child killed by a signal (an abort) fails here."""
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, url, path, json.dumps(options or {}), how],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"exit {done.returncode}:\n{done.stderr[-3000:]}"
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


#: each backend's honest peak, measured once per run
_BASELINES: dict[str, int] = {}


def _refused(
    backend: str, url: str, key: str, path: str = "a", options: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Read `path` at `url`, which must be refused for `key`; its peak within `_SLACK` of
    the honest read's (the same array, served without the hostile answers)."""
    report = _read(url, path, options)
    assert report["error"] == "ValueTooLargeError", report
    assert report["key"] == key and report["operation"] == "read", report
    assert report["peak"] < _BASELINES[backend] + _SLACK, (
        f"peak {report['peak'] >> 20} MiB, honest {_BASELINES[backend] >> 20} MiB"
    )
    return report


# == remote ======================================================================================
@pytest.fixture(scope="module")
def www(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An array `a` of four 16-byte chunks in `bucket/data`: what every server serves."""
    root = tmp_path_factory.mktemp("www")
    array = zk.create_array(
        str(root / BUCKET / "data"), path="a", shape=(64,), chunks=(16,), dtype="u1"
    )
    array[:] = 1
    return root


@pytest.fixture
def hostile(www: Path) -> Iterator[HostileServer]:
    with serving(HostileServer(www, object_headers=True)) as running:
        yield running  # type: ignore[misc]


def _s3fs_options(server: HostileServer) -> dict[str, Any]:
    """Options as a user of s3fs writes them (plain `s3://` translates them for obstore)."""
    return {
        "key": "testing",
        "secret": "testing",
        "client_kwargs": {"endpoint_url": server.origin, "region_name": "us-east-1"},
    }


def _obstore_options(server: HostileServer) -> dict[str, Any]:
    return {
        "endpoint": server.origin,
        "access_key_id": "testing",
        "secret_access_key": "testing",
        "region": "us-east-1",
        "client_options": {"allow_http": True},
        "retry_config": {"max_retries": 0},
    }


#: each remote backend: how it is opened (URL of the served `bucket/data`, options)
REMOTES = ["s3", "obstore+s3", "fsspec+s3", "obstore+http"]


def _open_args(backend: str, server: HostileServer) -> tuple[str, dict[str, Any]]:
    if backend == "obstore+http":
        pytest.importorskip("obstore")
        options = {"client_options": {"allow_http": True}, "retry_config": {"max_retries": 0}}
        return f"obstore+{server.origin}/{BUCKET}/data", options
    if backend == "obstore+s3":
        pytest.importorskip("obstore")
        return f"obstore+s3://{BUCKET}/data", _obstore_options(server)
    pytest.importorskip("s3fs" if backend == "fsspec+s3" else "obstore")
    if backend == "s3":  # (obstore's, as plain s3:// is by default)
        assert s3_routing.choose(_s3fs_options(server))[1] == "obstore"
    return f"{backend}://{BUCKET}/data", _s3fs_options(server)


def _baseline(backend: str, server: HostileServer) -> None:
    if backend not in _BASELINES:
        url, options = _open_args(backend, server)
        honest = _read(url, "a", options)
        assert honest == {**honest, "error": None, "sum": 64}, honest
        _BASELINES[backend] = honest["peak"]


@pytest.mark.parametrize("backend", REMOTES)
@pytest.mark.parametrize("declared", [HUGE, GIB], ids=["2**62", "1GiB"])
def test_a_chunk_declaring_more_than_its_bound_is_refused(
    hostile: HostileServer, backend: str, declared: int
) -> None:
    """All four chunks of the read at once: each refused from its header, no abort."""
    _baseline(backend, hostile)
    hostile.endless[f"/{BUCKET}/data/a/c/"] = Endless("declared", declared)
    url, options = _open_args(backend, hostile)
    report = _read(url, "a", options)
    assert report["error"] == "ValueTooLargeError", report
    assert report["key"].startswith("a/c/") and report["operation"] == "read", report
    assert str(declared) in report["message"], report
    assert report["peak"] < _BASELINES[backend] + _SLACK, report
    assert hostile.streamed < 256 << 20  # the client hung up


@pytest.mark.parametrize("backend", REMOTES)
@pytest.mark.parametrize("declared", [HUGE, GIB], ids=["2**62", "1GiB"])
def test_a_metadata_document_declaring_more_than_the_limit_is_refused(
    hostile: HostileServer, backend: str, declared: int
) -> None:
    _baseline(backend, hostile)
    hostile.endless[f"/{BUCKET}/data/a/zarr.json"] = Endless("declared", declared)
    url, options = _open_args(backend, hostile)
    report = _refused(backend, url, "a/zarr.json", options=options)
    assert str(DEFAULT_VALUE_LIMIT) in report["message"], report


@pytest.mark.parametrize("framing", ["chunked", "close"])
def test_an_s3_body_without_end_is_refused_at_the_bound(
    hostile: HostileServer, framing: str
) -> None:
    """s3fs reads a body without a length to its end: it is cut one block past the bound.
    (obstore refuses an answer without a Content-Length.)"""
    _baseline("fsspec+s3", hostile)
    hostile.endless[f"/{BUCKET}/data/a/c/"] = Endless(framing)
    url, options = _open_args("fsspec+s3", hostile)
    report = _read(url, "a", options)
    assert report["error"] == "ValueTooLargeError", report
    assert report["key"].startswith("a/c/") and report["operation"] == "read", report
    assert report["peak"] < _BASELINES["fsspec+s3"] + _SLACK, report
    assert hostile.streamed < 256 << 20


def test_obstore_refuses_a_body_longer_than_the_range_it_answers(hostile: HostileServer) -> None:
    """A 206 for bytes 0-15 with a Content-Length of 1 GiB: obstore believes the length (its
    own range read held the whole gigabyte); the store stops one piece past 16 bytes."""
    _baseline("obstore+http", hostile)
    hostile.endless[f"/{BUCKET}/data/a/c/"] = Endless("declared", GIB, partial=True)
    url, options = _open_args("obstore+http", hostile)
    report = _read(url, "a/c/0", options, how="range")
    assert report["error"] == "ValueTooLargeError", report
    assert report["key"] == "a/c/0" and "runs past the 16 bytes" in report["message"], report
    assert report["peak"] < _BASELINES["obstore+http"] + _SLACK, report


# == local files =================================================================================
@pytest.fixture(scope="module")
def local_array(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("local") / "data.zarr"
    array = zk.create_array(str(root), path="a", shape=(64,), chunks=(16,), dtype="u1")
    array[:] = 1
    if "file" not in _BASELINES:
        honest = _read(str(root))
        assert honest["error"] is None and honest["sum"] == 64, honest
        _BASELINES["file"] = honest["peak"]
    return root


def _sparse(path: Path, size: int) -> None:
    """A file of `size` bytes that takes no room on disk (a hole, then one byte)."""
    with open(path, "r+b" if path.exists() else "wb") as f:
        f.truncate(0)
        f.seek(size - 1)
        f.write(b"\0")


@pytest.mark.parametrize("size", [GIB, 6 * GIB], ids=["1GiB", "6GiB"])
def test_a_local_chunk_file_larger_than_its_bound_is_refused(
    local_array: Path, tmp_path: Path, size: int
) -> None:
    copy = tmp_path / "data.zarr"
    shutil.copytree(local_array, copy)
    _sparse(copy / "a" / "c" / "0", size)
    report = _refused("file", str(copy), "a/c/0")
    assert f"holds {size} bytes" in report["message"], report


def test_a_local_metadata_document_larger_than_the_limit_is_refused(
    local_array: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "data.zarr"
    shutil.copytree(local_array, copy)
    _sparse(copy / "a" / "zarr.json", GIB)
    report = _refused("file", str(copy), "a/zarr.json")
    assert f"holds {GIB} bytes" in report["message"], report
    assert str(DEFAULT_VALUE_LIMIT) in report["message"], report


def test_a_local_range_longer_than_the_bound_is_refused_before_its_buffer(
    tmp_path: Path,
) -> None:
    """A range asked of a file (a shard index lying about an inner chunk's length) is checked
    before a buffer of its length is made."""
    from zarrkit.abc.store import ByteRange, limiting_values
    from zarrkit.errors import ValueTooLargeError
    from zarrkit.plugins.stores.local.local import LocalStore

    store = LocalStore(tmp_path, mode="w")
    store.set("k", b"0123456789")
    assert store.get("k", ByteRange(2, 3)) == b"234"
    with limiting_values(1 << 20), pytest.raises(ValueTooLargeError) as info:
        store.get_ranges([("k", ByteRange(0, HUGE))])
    assert info.value.key == "k" and info.value.operation == "read"
    with limiting_values(1 << 20), pytest.raises(ValueTooLargeError):
        store.read_ranges([("k", ByteRange(0, 64 << 10)), ("k", ByteRange(0, 2 << 20))])
