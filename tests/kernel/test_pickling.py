"""Arrays, groups and every shipped store pickle with the standard library and unpickle in
another process (spawn, forkserver, fork) to a working handle on the same data."""

from __future__ import annotations

import multiprocessing
import pickle
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from process_cases import NAMES, SHARED_WRITES, build, expected, read_then_fill, use, written
from store_servers import FileServer, Moto, address, s3_options, serving

import zarrkit
from zarrkit.errors import StoreError

BUCKET = "pickling"
CONTEXTS = ("spawn", "forkserver", "fork")

pytestmark = pytest.mark.filterwarnings("ignore:This process .* is multi-threaded")


@pytest.fixture(scope="module")
def http_root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    served = tmp_path_factory.mktemp("served")
    with serving(FileServer(served)) as server:
        yield served, f"http://{address(server)}"


@pytest.fixture(scope="module", params=CONTEXTS)
def pool(request: pytest.FixtureRequest) -> Iterator[ProcessPoolExecutor]:
    """One worker process per start method, reused by the tests of this module."""
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context(request.param)) as ex:
        yield ex


def _case(name: str, tmp_path: Path, moto: Moto, http_root: tuple[Path, str]) -> Any:
    served, base = http_root

    def serve(folder: Path) -> str:
        target = served / tmp_path.name
        folder.rename(target)
        return f"{base}/{tmp_path.name}"

    return build(name, tmp_path, s3=(f"s3://{BUCKET}", s3_options(moto.endpoint)), http=serve)


@pytest.mark.parametrize("name", NAMES)
def test_array_unpickles_in_another_process(
    name: str, pool: ProcessPoolExecutor, tmp_path: Path, moto: Moto, http_root: tuple[Path, str]
) -> None:
    case = _case(name, tmp_path, moto, http_root)
    data = expected()
    write = case.writable
    total, shape, store = pool.submit(use, case.array, write).result(timeout=120)
    assert (total, shape) == (float(data.sum()), data.shape)
    assert store == repr(case.array.store)
    seen = case.reopen()[...]
    if write and name in SHARED_WRITES:
        assert np.array_equal(seen, written(data))
    else:  # read-only, or a memory store: the other process wrote into its own copy
        assert np.array_equal(seen, data)


@pytest.mark.parametrize("name", NAMES)
def test_pickles_are_small_and_carry_no_open_state(
    name: str, tmp_path: Path, moto: Moto, http_root: tuple[Path, str]
) -> None:
    """A handle pickles as what opens it again (a zarr-python array: about 1.5 kB); a memory
    store carries its contents."""
    case = _case(name, tmp_path, moto, http_root)
    blob = pickle.dumps(case.array)
    limit = 3000 + (expected().nbytes if name == "memory" else 0)
    assert len(blob) < limit, (name, len(blob))
    again = pickle.loads(blob)
    assert np.array_equal(again[...], expected())
    assert again.shape == case.array.shape and again.read_only == case.array.read_only


def test_group_unpickles_to_the_same_hierarchy(tmp_path: Path, pool: ProcessPoolExecutor) -> None:
    root = zarrkit.create_group(str(tmp_path / "g.zarr"), attributes={"title": "t"})
    sub = root.create_group("sub")
    sub.create_array("a", shape=(4,), dtype="int32")[...] = [1, 2, 3, 4]
    for group in (root, sub):
        again = pickle.loads(pickle.dumps(group))
        assert type(again) is type(group) and again.path == group.path
        assert again.attrs.asdict() == group.attrs.asdict()
    blob = pickle.dumps(root)
    assert pool.submit(use_pickled_group, blob).result(timeout=120) == [1, 2, 3, 4]


def use_pickled_group(blob: bytes) -> list[int]:
    return pickle.loads(blob)["sub/a"][...].tolist()


def test_consolidated_subgroup_pickles_with_its_holder(tmp_path: Path) -> None:
    root = zarrkit.create_group(str(tmp_path / "c.zarr"))
    root.create_group("sub").create_array("a", shape=(3,), dtype="int8")[...] = 7
    zarrkit.consolidate_metadata(str(tmp_path / "c.zarr"))
    sub = zarrkit.open_group(str(tmp_path / "c.zarr"))["sub"]
    again = pickle.loads(pickle.dumps(sub))
    assert type(again) is type(sub) and again.keys() == ["a"]
    assert again["a"][...].tolist() == [7, 7, 7]


def test_memory_store_pickles_its_contents(pool: ProcessPoolExecutor) -> None:
    """As zarr-python's does: the other process reads a copy; its writes stay there."""
    array = zarrkit.create_array("memory://", shape=(8,), dtype="int16", chunks=(4,))
    array[...] = np.arange(8)
    assert pool.submit(read_then_fill, array, 1).result(timeout=120) == sum(range(8))
    assert array[...].tolist() == list(range(8))


def test_named_memory_store_unpickled_here_is_the_same_store() -> None:
    array = zarrkit.create_array("memory://pickle-same", shape=(2,), dtype="int8", overwrite=True)
    again = pickle.loads(pickle.dumps(array))
    again[...] = 5
    assert array[...].tolist() == [5, 5]


def test_cloudpickle_memory_array() -> None:
    """The issue: a memory:// array failed even with cloudpickle (`_thread.lock`)."""
    cloudpickle = pytest.importorskip("cloudpickle")
    array = zarrkit.create_array("memory://", shape=(3,), dtype="int8")
    array[...] = 3
    assert cloudpickle.loads(cloudpickle.dumps(array))[...].tolist() == [3, 3, 3]


def test_zip_writer_pickles_within_its_process_only(tmp_path: Path) -> None:
    """A writing zip handle's pending changes live in its process: a copy made there shares
    them (zarr-python's store checks pickle a store and compare); another process is refused."""
    import subprocess
    import sys

    array = zarrkit.create_array(f"zip://{tmp_path / 'w.zip'}", shape=(2,), dtype="int8")
    copy = pickle.loads(pickle.dumps(array))
    copy[...] = 4  # pending, not yet flushed: the original sees it all the same
    assert array[...].tolist() == [4, 4] and copy.store == array.store
    load = "import pickle, sys; pickle.loads(sys.stdin.buffer.read())"
    child = subprocess.run(
        [sys.executable, "-c", load], input=pickle.dumps(array), capture_output=True
    )
    assert child.returncode != 0
    assert b"StoreError" in child.stderr and b"unpickles only in the process" in child.stderr
    array.store.close()


def test_unpickled_stores_open_nothing_until_used(tmp_path: Path) -> None:
    """A process that only passes a pickle on (a dask scheduler) opens no archive or
    environment: unpickling a handle whose file is gone succeeds, the first read fails."""
    import shutil

    zip_url, lmdb_url = f"zip://{tmp_path / 'a.zip'}", f"lmdb://{tmp_path / 'a.lmdb'}"
    for url in (zip_url, lmdb_url):
        array = zarrkit.create_array(url, shape=(2,), dtype="int8")
        array[...] = 1
        array.store.close()
    blobs = [pickle.dumps(zarrkit.open_array(url)) for url in (zip_url, lmdb_url)]
    (tmp_path / "a.zip").unlink()
    shutil.rmtree(tmp_path / "a.lmdb")
    for blob in blobs:
        array = pickle.loads(blob)
        with pytest.raises(StoreError):
            array[...]


@pytest.mark.network
def test_fsspec_store_carries_its_storage_options(moto: Moto) -> None:
    url = f"s3://{BUCKET}/options/data.zarr"
    options = s3_options(moto.endpoint)
    zarrkit.create_array(url, shape=(2,), dtype="int8", storage_options=options)[...] = 9
    again = pickle.loads(pickle.dumps(zarrkit.open_array(url, storage_options=options)))
    assert again.store.fs.client_kwargs["endpoint_url"] == moto.endpoint
    assert again[...].tolist() == [9, 9]
