"""The network workloads of issue 28: zarrkit beside zarr-python 3 and tensorstore on moto's S3
server behind a proxy that adds a delay to every request (tests/support/store_servers.py `NetBed`).

The proxy runs in a child process and moto in one of its own, so neither's Python is the
client's nor waits on the other's interpreter lock; every implementation reads the same
objects, written once by zarrkit. For each delay, workload and implementation it prints the
median time of `--reps` runs and the requests and body bytes the proxy saw in the last run.
Nothing is written to the repository.

    .venv/bin/python bench/network_bench.py --delay 0.02 --reps 3
    .venv/bin/python bench/network_bench.py --delay 0 0.02 0.05 --only zarrkit-fsspec tensorstore

Workloads: `list` (a group of 100 arrays: open the group, list it, read each one's metadata),
`read` (a 64 MiB zstd array in 256 objects), `windows` (100 windows of 300x300 of a 4096x4096
uint16 array in shards of 2048x2048 with 256x256 inner chunks), `write` (the `read` array
written anew), `async_windows` (the `windows` read each library's async way: zarr-python's
`asyncio.gather` over `AsyncArray.getitem`, tensorstore's futures awaited together, zarrkit's
`asyncio.gather` over `zarrkit.AsyncArray.getitem`; `zarrkit-obstore-views` reads them as lazy
views through `zarrkit.read_many`, see `_read_many_views`).

    .venv/bin/python bench/network_bench.py --delay 0.02 --reps 5 --workloads async_windows

At the end it judges issue 28's targets for each zarrkit backend measured: at least 2x as fast
as zarr-python + fsspec, ahead of zarr-python + obstore and of tensorstore, and no more requests
than the fewest of them.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "support"))

from store_servers import obstore_s3_options  # noqa: E402  (the test bed's spelling)

BUCKET = "bench"
CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_REGION": "us-east-1",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
}
ZSTD = {"name": "zstd", "configuration": {"level": 1}}
BYTES = {"name": "bytes", "configuration": {"endian": "little"}}


# -- the servers, in a child process ----------------------------------------------------------------
def _serve(conn: Any) -> None:
    from store_servers import NetBed

    with NetBed(Path(tempfile.mkdtemp()), bucket=BUCKET, apart=True) as bed:
        conn.send(bed.s3_endpoint)
        while True:
            command, arg = conn.recv()
            if command == "delay":
                bed.set_delay(arg)
                conn.send(None)
            elif command == "reset":
                bed.reset()
                conn.send(None)
            elif command == "count":
                conn.send((bed.requests(), bed.sent_bytes()))
            elif command == "clear":
                _clear(bed.s3_endpoint, arg)
                conn.send(None)
            else:
                conn.send(None)
                return


def _clear(endpoint: str, prefix: str) -> None:
    """Delete what the writes left under `prefix` (not timed): moto's listing walks every key
    of a bucket, so a bucket that grew with each write would slow the later workloads."""
    import fsspec

    fs = fsspec.filesystem("s3", skip_instance_cache=True, **fsspec_options(endpoint))
    found = fs.find(f"{BUCKET}/{prefix.rsplit('/', 1)[0]}/", prefix=prefix.rsplit("/", 1)[1])
    if found:
        fs.rm(found)


class Servers:
    def __init__(self) -> None:
        self.conn, child = mp.Pipe()
        # (not a daemon: it starts moto's process; `close` ends both)
        self.process = mp.get_context("spawn").Process(target=_serve, args=(child,))
        self.process.start()
        self.endpoint = self.conn.recv()

    def ask(self, command: str, arg: Any = None) -> Any:
        self.conn.send((command, arg))
        return self.conn.recv()

    def close(self) -> None:
        self.ask("stop")
        self.process.join(10)


# -- data ------------------------------------------------------------------------------------------
def _dense() -> np.ndarray:
    """64 MiB of float64 that zstd compresses somewhat, as measured data does."""
    rng = np.random.default_rng(0)
    base = np.linspace(0, 100, 4096 * 2048).reshape(4096, 2048)
    return np.round(base + rng.normal(0, 0.01, base.shape), 2)


def _image() -> np.ndarray:
    y, x = np.mgrid[0:4096, 0:4096]
    return ((x * 3 + y * 7) % 4099).astype("u2")


def _windows() -> list[tuple[slice, slice]]:
    corners = np.random.default_rng(1).integers(0, 4096 - 300, size=(100, 2))
    return [np.s_[int(r) : int(r) + 300, int(c) : int(c) + 300] for r, c in corners]


def prepare(endpoint: str, prefix: str) -> None:
    import zarrkit as zk

    options = fsspec_options(endpoint)
    group = zk.open_group(f"s3://{BUCKET}/{prefix}/group.zarr", mode="w", storage_options=options)
    for i in range(100):
        group.create_array(f"a{i:03d}", shape=(100,), chunks=(10,), dtype="i4", attributes={"i": i})
    dense = zk.create_array(
        f"s3://{BUCKET}/{prefix}/dense.zarr",
        shape=(4096, 2048),
        chunks=(256, 128),
        dtype="f8",
        codecs=[BYTES, ZSTD],
        storage_options=options,
    )
    dense[...] = _dense()
    image = zk.create_array(
        f"s3://{BUCKET}/{prefix}/sharded.zarr",
        shape=(4096, 4096),
        chunks=(256, 256),
        shards=(2048, 2048),
        dtype="u2",
        codecs=[BYTES, ZSTD],
        storage_options=options,
    )
    image[...] = _image()


def fsspec_options(endpoint: str) -> dict[str, Any]:
    return {
        "key": "testing",
        "secret": "testing",
        "client_kwargs": {"endpoint_url": endpoint, "region_name": "us-east-1"},
    }


# -- the implementations ---------------------------------------------------------------------------
class Zarrkit:
    def __init__(self, endpoint: str, prefix: str, backend: str) -> None:
        self.scheme = "fsspec+s3" if backend == "fsspec" else "obstore+s3"
        self.options = (
            fsspec_options(endpoint) if backend == "fsspec" else obstore_s3_options(endpoint)
        )
        self.root = f"{self.scheme}://{BUCKET}/{prefix}"

    def list(self) -> Any:
        import zarrkit as zk

        group = zk.open_group(f"{self.root}/group.zarr", storage_options=self.options)
        return {name: (a.shape, dict(a.attrs)) for name, a in group.arrays()}

    def read(self) -> Any:
        import zarrkit as zk

        return zk.open_array(f"{self.root}/dense.zarr", storage_options=self.options)[...]

    def windows(self) -> Any:
        import zarrkit as zk

        a = zk.open_array(f"{self.root}/sharded.zarr", storage_options=self.options)
        if not hasattr(a, "get_many"):  # a zarrkit from before issue 28 (for before/after)
            return [a[w] for w in _windows()]
        return a.get_many(_windows())

    def async_windows(self) -> Any:
        import zarrkit.api.asynchronous as za

        async def read() -> list[Any]:
            a = await za.open_array(f"{self.root}/sharded.zarr", storage_options=self.options)
            return await asyncio.gather(*[a.getitem(w) for w in _windows()])

        return asyncio.run(read())

    def write(self, data: np.ndarray) -> None:
        import zarrkit as zk

        a = zk.create_array(
            f"{self.root}/w-{uuid.uuid4().hex}.zarr",
            shape=data.shape,
            chunks=(256, 128),
            dtype="f8",
            codecs=[BYTES, ZSTD],
            storage_options=self.options,
        )
        a[...] = data


class ZarrkitViews(Zarrkit):
    """zarrkit reading the windows as lazy views, all in one plan (`zarrkit.read_many`)."""

    def async_windows(self) -> Any:
        import zarrkit as zk

        a = zk.open_array(f"{self.root}/sharded.zarr", storage_options=self.options)
        return _read_many_views(a, _windows())


def _read_many_views(array: Any, windows: list[tuple[slice, slice]]) -> Any:
    """HOOK for issue 45's lazy views (branch lazy45 builds `array.lazy[...]` and
    `zarrkit.read_many`): the 100 windows as views, read together in one plan, awaited when
    zarrkit has an async form (`read_many_async`), else read synchronously. Until those exist
    this raises, and the bench prints `zarrkit-obstore-views failed: ...`."""
    import zarrkit as zk

    read_many = getattr(zk, "read_many", None)
    if read_many is None or not hasattr(array, "lazy"):
        raise NotImplementedError("zarrkit.read_many / Array.lazy are not in this zarrkit yet")
    views = [array.lazy[w] for w in windows]
    read_many_async = getattr(zk, "read_many_async", None)
    if read_many_async is not None:
        return asyncio.run(read_many_async(views))
    return read_many(views)


class ZarrPython:
    def __init__(self, endpoint: str, prefix: str, backend: str) -> None:
        self.endpoint, self.prefix, self.backend = endpoint, prefix, backend

    def store(self, name: str, read_only: bool = True) -> Any:
        import zarr.storage

        path = f"{self.prefix}/{name}"
        if self.backend == "fsspec":
            return zarr.storage.FsspecStore.from_url(
                f"s3://{BUCKET}/{path}",
                read_only=read_only,
                storage_options={**fsspec_options(self.endpoint), "asynchronous": True},
            )
        from obstore.store import S3Store

        return zarr.storage.ObjectStore(
            S3Store(BUCKET, prefix=path, **obstore_s3_options(self.endpoint)), read_only=read_only
        )

    def list(self) -> Any:
        import zarr

        group = zarr.open_group(self.store("group.zarr"), mode="r", use_consolidated=False)
        return {name: (a.shape, dict(a.attrs)) for name, a in group.arrays()}

    def read(self) -> Any:
        import zarr

        return zarr.open_array(self.store("dense.zarr"), mode="r")[...]

    def windows(self) -> Any:
        import zarr

        a = zarr.open_array(self.store("sharded.zarr"), mode="r")
        return [a[w] for w in _windows()]

    def async_windows(self) -> Any:
        import zarr.api.asynchronous as zasync

        async def read() -> list[Any]:
            a = await zasync.open_array(store=self.store("sharded.zarr"), mode="r")
            return await asyncio.gather(*[a.getitem(w) for w in _windows()])

        return asyncio.run(read())

    def write(self, data: np.ndarray) -> None:
        import zarr

        a = zarr.create_array(
            self.store(f"w-{uuid.uuid4().hex}.zarr", read_only=False),
            shape=data.shape,
            chunks=(256, 128),
            dtype="f8",
            compressors=[ZSTD],
        )
        a[...] = data


class Tensorstore:
    def __init__(self, endpoint: str, prefix: str, backend: str) -> None:
        self.endpoint, self.prefix = endpoint, prefix
        os.environ.update(CREDENTIALS)

    def kvstore(self, name: str) -> dict[str, Any]:
        return {
            "driver": "s3",
            "bucket": BUCKET,
            "path": f"{self.prefix}/{name}/",
            "endpoint": self.endpoint,
            "aws_region": "us-east-1",
            "aws_credentials": {"type": "environment"},  # CREDENTIALS, no profile lookups
        }

    def open(self, name: str, **extra: Any) -> Any:
        import tensorstore as ts

        return ts.open({"driver": "zarr3", "kvstore": self.kvstore(name)}, **extra).result()

    def list(self) -> Any:
        import json

        import tensorstore as ts

        kv = ts.KvStore.open(self.kvstore("group.zarr")).result()
        # the group's own document, as opening a group reads it in zarr-python and zarrkit
        # (is it a group, which format): read while the listing is in flight
        group, listing = kv.read("zarr.json"), kv.list()
        keys = [k.decode() for k in listing.result()]
        docs = [k for k in keys if k.endswith("/zarr.json")]
        futures = [kv.read(k) for k in docs]
        assert json.loads(group.result().value)["node_type"] == "group"
        return {k: json.loads(f.result().value) for k, f in zip(docs, futures)}

    def read(self) -> Any:
        return self.open("dense.zarr").read().result()

    def windows(self) -> Any:
        a = self.open("sharded.zarr")
        futures = [a[w].read() for w in _windows()]
        return [f.result() for f in futures]

    def async_windows(self) -> Any:
        import tensorstore as ts

        async def read() -> list[Any]:
            a = await ts.open({"driver": "zarr3", "kvstore": self.kvstore("sharded.zarr")})
            return await asyncio.gather(*[a[w].read() for w in _windows()])

        return asyncio.run(read())

    def write(self, data: np.ndarray) -> None:
        import tensorstore as ts

        spec = {
            "driver": "zarr3",
            "kvstore": self.kvstore(f"w-{uuid.uuid4().hex}.zarr"),
            "metadata": {
                "shape": list(data.shape),
                "data_type": "float64",
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [256, 128]}},
                "codecs": [BYTES, ZSTD],
            },
        }
        a = ts.open(spec, create=True).result()
        a.write(data).result()


IMPLEMENTATIONS: dict[str, Callable[[str, str], Any]] = {
    "zarrkit-fsspec": lambda e, p: Zarrkit(e, p, "fsspec"),
    "zarrkit-obstore": lambda e, p: Zarrkit(e, p, "obstore"),
    "zarr-python-fsspec": lambda e, p: ZarrPython(e, p, "fsspec"),
    "zarr-python-obstore": lambda e, p: ZarrPython(e, p, "obstore"),
    "tensorstore": lambda e, p: Tensorstore(e, p, "s3"),
    # lazy views read in one plan (the `_read_many_views` hook; fails until lazy45 is merged)
    "zarrkit-obstore-views": lambda e, p: ZarrkitViews(e, p, "obstore"),
}
WORKLOADS = ("list", "read", "windows", "write", "async_windows")
#: implementations of the `async_windows` workload alone
ASYNC_ONLY = frozenset({"zarrkit-obstore-views"})


def check(workload: str, result: Any, dense: np.ndarray) -> None:
    """Every implementation must have read what is there (a fast wrong answer counts not)."""
    if workload == "list":
        assert len(result) == 100, len(result)
    elif workload == "read":
        np.testing.assert_array_equal(np.asarray(result), dense)
    elif workload in ("windows", "async_windows"):
        image = _image()
        for w, got in zip(_windows(), result):
            np.testing.assert_array_equal(np.asarray(got), image[w])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--delay", type=float, nargs="+", default=[0.02])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument(
        "--only", nargs="+", choices=list(IMPLEMENTATIONS), default=list(IMPLEMENTATIONS)
    )
    parser.add_argument("--workloads", nargs="+", choices=WORKLOADS, default=list(WORKLOADS))
    args = parser.parse_args()
    os.environ.update(CREDENTIALS)
    servers = Servers()
    try:
        prefix = uuid.uuid4().hex
        prepare(servers.endpoint, prefix)
        dense = _dense()
        results: dict[tuple[float, str, str], tuple[float, int]] = {}
        print(
            f"{'delay':>6} {'workload':<9} {'implementation':<20} {'median s':>9} "
            f"{'requests':>9} {'MB':>8}"
        )
        for delay in args.delay:
            servers.ask("delay", delay)
            for workload in args.workloads:
                measure(servers, prefix, dense, delay, workload, args.only, args.reps, results)
    finally:
        servers.close()
    judge(results)


def measure(
    servers: Servers,
    prefix: str,
    dense: np.ndarray,
    delay: float,
    workload: str,
    names: list[str],
    reps: int,
    results: dict[tuple[float, str, str], tuple[float, int]],
) -> None:
    """Run `workload` `reps` times per implementation, the implementations interleaved (each
    rep in a rotated order, so drift in the machine's load or the server's state falls on all
    alike), and print each one's median time, requests and body bytes of its last run."""
    names = [n for n in names if workload == "async_windows" or n not in ASYNC_ONLY]
    impls = {name: IMPLEMENTATIONS[name](servers.endpoint, prefix) for name in names}
    times: dict[str, list[float]] = {name: [] for name in names}
    counts: dict[str, tuple[int, int]] = {}
    failed: dict[str, str] = {}
    for rep in range(reps):
        order = names[rep % len(names) :] + names[: rep % len(names)]
        for name in order:
            if name in failed:
                continue
            try:
                servers.ask("reset")
                start = time.perf_counter()
                impl = impls[name]
                result = impl.write(dense) if workload == "write" else getattr(impl, workload)()
                times[name].append(time.perf_counter() - start)
                counts[name] = servers.ask("count")
                check(workload, result, dense)
                if workload == "write":
                    servers.ask("clear", f"{prefix}/w-")
            except Exception as exc:  # one implementation failing does not stop the rest
                failed[name] = f"{type(exc).__name__}: {str(exc)[:200]}"
    for name in names:
        if name in failed:
            print(f"{delay:>6} {workload:<9} {name:<20} failed: {failed[name]}", flush=True)
            continue
        median, (requests, sent) = statistics.median(times[name]), counts[name]
        results[delay, workload, name] = (median, requests)
        print(
            f"{delay:>6} {workload:<9} {name:<20} {median:>9.3f} {requests:>9} {sent / 1e6:>8.1f}",
            flush=True,
        )


#: what each zarrkit backend is judged against: (peer, how many times faster zarrkit must be)
TARGETS = (("zarr-python-fsspec", 2.0), ("zarr-python-obstore", 1.0), ("tensorstore", 1.0))


def judge(results: dict[tuple[float, str, str], tuple[float, int]]) -> None:
    """Print, per delay and workload, each zarrkit backend's speed-up over each peer (the
    peer's time over zarrkit's) and its requests against the fewest any peer made."""
    ours = sorted({k[2] for k in results if k[2].startswith("zarrkit")})
    if not ours:
        return
    print("\ntargets: peer time / zarrkit time (needed), requests zarrkit / fewest of the peers")
    for delay, workload in sorted(
        {k[:2] for k in results}, key=lambda k: (k[0], WORKLOADS.index(k[1]))
    ):
        peers = {n: v for (d, w, n), v in results.items() if (d, w) == (delay, workload)}
        fewest = min((v[1] for n, v in peers.items() if not n.startswith("zarrkit")), default=None)
        for name in ours:
            if name not in peers:
                continue
            took, requests = peers[name]
            cells, met = [], True
            for peer, needed in TARGETS:
                if peer in peers:
                    ratio = peers[peer][0] / took
                    met &= ratio >= needed if needed > 1 else ratio > needed
                    cells.append(f"{peer} {ratio:.2f}x (>{needed:g})")
            if fewest is not None:
                met &= requests <= fewest
                cells.append(f"requests {requests}/{fewest}")
            verdict = "met" if met else "NOT met"
            print(f"{delay:>6} {workload:<9} {name:<16} {verdict:<8} " + ", ".join(cells))


if __name__ == "__main__":
    main()
