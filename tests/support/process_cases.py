"""Arrays on every shipped store, for the tests that hand them to other processes (pickling,
fork safety, dask): each case builds the same sharded array, writes it, reads it back, so the
store has opened what it opens (files, environments, pools, connections) before a process is
started. Worker functions live here so spawned processes import this module, not pytest's."""

from __future__ import annotations

import os
import pickle
import select
import signal
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import zarrkit

#: 256 KiB shards of 32 KiB float64 chunks: big enough that reads use the thread pool
SHAPE, SHARDS, CHUNKS = (256, 256), (128, 128), (64, 64)

#: every shipped store, and the wrappers (around a local store)
NAMES = ("memory", "local", "zip", "lmdb", "s3", "http", "cache", "metrics")
#: where a write made in another process is seen by this one
SHARED_WRITES = {"local", "lmdb", "s3", "cache", "metrics"}


def expected() -> np.ndarray:
    return np.arange(SHAPE[0] * SHAPE[1], dtype="float64").reshape(SHAPE)


@dataclass
class Case:
    name: str
    array: Any  # the handle given to other processes
    reopen: Callable[[], Any]  # a fresh handle in this process, to see other processes' writes

    @property
    def writable(self) -> bool:
        return not self.array.read_only


def build(
    name: str,
    tmp: Path,
    *,
    s3: tuple[str, dict] | None = None,
    http: Callable[[Path], str] | None = None,
) -> Case:
    """The array on store `name`; `s3` (bucket URL prefix, storage options) and `http` (serve a
    folder, answer its URL) for the stores that need a server."""
    data = expected()

    def create(store: Any, **options: Any) -> Any:
        array = zarrkit.create_array(
            store,
            shape=SHAPE,
            dtype="float64",
            chunks=CHUNKS,
            shards=SHARDS,
            fill_value=0,
            **options,
        )
        array[...] = data
        assert np.array_equal(array[...], data)
        return array

    if name == "memory":
        url = f"memory://process-{uuid.uuid4().hex}"
        array = create(url)
        return Case(name, array, lambda: zarrkit.open_array(url, mode="r"))
    if name == "local":
        array = create(str(tmp / "local.zarr"))
        return Case(
            name,
            zarrkit.open_array(str(tmp / "local.zarr"), mode="r+"),
            lambda: zarrkit.open_array(str(tmp / "local.zarr")),
        )
    if name == "zip":
        from zarrkit.plugins.stores.local.zip import ZipStore

        writer = ZipStore(tmp / "data.zip", mode="w")
        create(writer)
        writer.close()
        url = f"zip://{tmp / 'data.zip'}"
        return Case(name, zarrkit.open_array(url, mode="r"), lambda: zarrkit.open_array(url))
    if name == "lmdb":
        url = f"lmdb://{tmp / 'data.lmdb'}"
        create(url)
        return Case(name, zarrkit.open_array(url, mode="r+"), lambda: zarrkit.open_array(url))
    if name == "s3":
        assert s3 is not None
        prefix, options = s3
        url = f"{prefix}/{uuid.uuid4().hex}/data.zarr"
        create(url, storage_options=options)
        return Case(
            name,
            zarrkit.open_array(url, mode="r+", storage_options=options),
            lambda: zarrkit.open_array(url, storage_options=options),
        )
    if name == "http":
        assert http is not None
        served = tmp / "served"
        create(str(served / "data.zarr"))
        url = http(served) + "/data.zarr"
        array = zarrkit.open_array(url)
        return Case(name, array, lambda: zarrkit.open_array(url))
    if name in ("cache", "metrics"):
        from zarrkit.plugins.stores.local.local import LocalStore
        from zarrkit.plugins.stores.wrappers.cache import CachingStore
        from zarrkit.plugins.stores.wrappers.metrics import MetricsStore

        wrapper = CachingStore if name == "cache" else MetricsStore
        create(str(tmp / f"{name}.zarr"))
        store = wrapper(LocalStore(tmp / f"{name}.zarr", mode="a"))
        array = zarrkit.open_array(store, mode="r+")
        assert np.array_equal(array[...], data)
        return Case(name, array, lambda: zarrkit.open_array(str(tmp / f"{name}.zarr")))
    raise ValueError(name)


# -- what another process does with a handle ----------------------------------------------------------
def use(array: Any, write: bool) -> tuple[float, tuple[int, ...], str]:
    """Read the whole array (and, if asked, write one shard and one chunk of another):
    (sum of what was read, shape, repr of the store) in the other process."""
    total = float(np.asarray(array[...]).sum())
    if write:
        array[:128, :128] = -1.0  # a whole shard
        array[128:192, 128:192] = -2.0  # one inner chunk of another shard
        after = array[...]
        assert (after[:128, :128] == -1).all() and (after[128:192, 128:192] == -2).all()
    return total, array.shape, repr(array.store)


def read_then_fill(array: Any, value: float) -> float:
    """The sum of the array as read, then every element set to `value` (read back)."""
    total = float(np.asarray(array[...]).sum())
    array[...] = value
    assert (array[...] == value).all()
    return total


def written(data: np.ndarray) -> np.ndarray:
    """`data` after `use(..., write=True)`."""
    out = data.copy()
    out[:128, :128] = -1.0
    out[128:192, 128:192] = -2.0
    return out


def use_pickled(blob: bytes, write: bool) -> tuple[float, tuple[int, ...], str]:
    return use(pickle.loads(blob), write)


# -- running a function in a forked child, with a deadline ---------------------------------------------
class ChildHung(AssertionError):
    pass


def in_fork(run: Callable[[], Any], timeout: float = 60.0) -> Any:
    """`run()` in a child made by os.fork(), its result (or error) sent back through a pipe; a
    child still running after `timeout` seconds is killed and the test fails (a hang would
    otherwise hang the suite)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 0
        try:
            os.close(r)
            try:
                message = pickle.dumps(("ok", run()))
            except BaseException as exc:
                message = pickle.dumps(("error", f"{type(exc).__name__}: {exc}"))
            view = memoryview(message)
            while view:
                view = view[os.write(w, view) :]
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    os.close(w)
    received = bytearray()
    deadline = time.monotonic() + timeout
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                os.kill(pid, signal.SIGKILL)
                raise ChildHung(f"the forked child did not finish within {timeout} s")
            ready, _, _ = select.select([r], [], [], left)
            if ready:
                block = os.read(r, 1 << 16)
                if not block:
                    break
                received += block
    finally:
        os.close(r)
        os.waitpid(pid, 0)
    status, value = pickle.loads(bytes(received))
    if status != "ok":
        raise AssertionError(f"in the forked child: {value}")
    return value
