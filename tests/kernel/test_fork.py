"""Fork safety: a child forked at any moment, after reads and writes on any store, reads and
writes normally. Every child runs under a deadline, so a hang fails the test."""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from process_cases import NAMES, SHARED_WRITES, Case, build, expected, in_fork, use, written
from store_servers import FileServer, Moto, address, s3_options, serving

import zarrkit
from zarrkit import config

BUCKET = "forking"

pytestmark = [
    pytest.mark.filterwarnings("ignore:This process .* is multi-threaded"),
    pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="no fork here"),
]


@pytest.fixture(scope="module")
def http_root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    served = tmp_path_factory.mktemp("served")
    with serving(FileServer(served)) as server:
        yield served, f"http://{address(server)}"


@pytest.fixture(autouse=True)
def threads() -> Iterator[None]:
    """Two pool threads at least, so reads go through the pool the child inherits."""
    with config.override(threads=max(2, config.get().threads)):
        yield


def _case(name: str, tmp_path: Path, moto: Moto, http_root: tuple[Path, str]) -> Case:
    served, base = http_root

    def serve(folder: Path) -> str:
        folder.rename(served / tmp_path.name)
        return f"{base}/{tmp_path.name}"

    return build(name, tmp_path, s3=(f"s3://{BUCKET}", s3_options(moto.endpoint)), http=serve)


def _check(case: Case, result: tuple[float, tuple[int, ...], str], wrote: bool) -> None:
    data = expected()
    assert result[:2] == (float(data.sum()), data.shape)
    seen = case.reopen()[...]
    shared = wrote and case.name in SHARED_WRITES
    assert np.array_equal(seen, written(data) if shared else data)
    # and the parent still works after the child used the inherited handle (a cache does
    # not see other processes' writes until told to: see plugins/stores/wrappers/cache.py)
    if case.name == "cache":
        case.array.store.clear()
    assert np.array_equal(case.array[...], seen)


@pytest.mark.parametrize("name", NAMES)
def test_os_fork_after_reads_and_writes(
    name: str, tmp_path: Path, moto: Moto, http_root: tuple[Path, str]
) -> None:
    case = _case(name, tmp_path, moto, http_root)  # (it wrote and read already)
    write = case.writable
    _check(case, in_fork(lambda: use(case.array, write)), write)


def _child(array: Any, write: bool, results: Any) -> None:
    try:
        results.send(("ok", use(array, write)))
    except BaseException as exc:
        results.send(("error", f"{type(exc).__name__}: {exc}"))


@pytest.mark.parametrize("name", NAMES)
def test_multiprocessing_fork_context(
    name: str, tmp_path: Path, moto: Moto, http_root: tuple[Path, str]
) -> None:
    """The handle is inherited, not pickled, by a 'fork' Process (as DataLoader workers are)."""
    case = _case(name, tmp_path, moto, http_root)
    write = case.writable
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(case.array, write, send))
    process.start()
    try:
        assert receive.poll(60), "the forked process did not answer within 60 s"
        status, value = receive.recv()
    finally:
        process.join(10)
        if process.is_alive():
            process.kill()
    assert status == "ok", value
    _check(case, value, write)


def test_fork_while_other_threads_read_and_write(tmp_path: Path) -> None:
    """Forks that land while other threads hold the pool, the chunk locks and the stores'
    locks: each child still reads and writes."""
    for sub in "lzm":
        (tmp_path / sub).mkdir()
    local = build("local", tmp_path / "l").array
    zipped = build("zip", tmp_path / "z").array
    lmdb = build("lmdb", tmp_path / "m").array
    memory = build("memory", tmp_path).array
    stop = threading.Event()
    errors: list[BaseException] = []

    def busy(array: Any) -> None:
        try:
            while not stop.is_set():
                array[...]
                if not array.read_only:
                    array[64:80, 64:80] = array[64:80, 64:80]
        except BaseException as exc:
            errors.append(exc)

    arrays = (local, zipped, lmdb, memory)

    def child() -> list[float]:
        for array in arrays:
            if not array.read_only:  # a write that keeps the data as it was
                array[100:200, 100:200] = array[100:200, 100:200]
        return [float(array[...].sum()) for array in arrays]

    workers = [threading.Thread(target=busy, args=(a,)) for a in arrays]
    for worker in workers:
        worker.start()
    try:
        for _ in range(6):
            assert in_fork(child, timeout=60) == [float(expected().sum())] * 4
    finally:
        stop.set()
        for worker in workers:
            worker.join(30)
    assert not errors


def test_zip_child_never_publishes_the_parents_pending_writes(tmp_path: Path) -> None:
    """A child forked from a zip writer reads the archive as last flushed, and its exit does
    not flush what the parent had pending (that would undo the parent's later writes)."""
    from zarrkit.plugins.stores.local.zip import ZipStore

    path = tmp_path / "w.zip"
    store = ZipStore(path, mode="w")
    array = zarrkit.create_array(store, shape=(4,), dtype="int8", fill_value=0)
    array[...] = 1
    store.flush()
    flushed = path.read_bytes()
    array[...] = 2  # pending in the parent

    def child() -> list[int]:
        seen = array[...].tolist()
        store.close()  # a child that closes (flushes) its inherited handle publishes nothing
        return seen

    assert in_fork(child) == [1, 1, 1, 1]
    assert path.read_bytes() == flushed
    assert array[...].tolist() == [2, 2, 2, 2]  # the parent's pending changes are still its own
    array[...] = 3
    store.close()
    assert zarrkit.open_array(f"zip://{tmp_path / 'w.zip'}")[...].tolist() == [3, 3, 3, 3]


def test_fork_after_many_selections_at_once(tmp_path: Path) -> None:
    """`get_many` / `read_async` run on a pool of their own: a child forked after the parent
    used it reads many selections too, rather than waiting on the parent's threads."""
    array = build("local", tmp_path).array
    windows = [np.s_[i : i + 16, i : i + 16] for i in range(0, 128, 16)]
    before = [w.copy() for w in array.get_many(windows)]
    array.read_async(np.s_[0:8, 0:8]).result()

    def child() -> list[float]:
        one = array.read_async(windows[0]).result(timeout=20)  # (one task: no new thread)
        return [float(one.sum())] + [float(w.sum()) for w in array.get_many(windows)]

    want = [float(w.sum()) for w in before]
    assert in_fork(child, timeout=60) == want[:1] + want
