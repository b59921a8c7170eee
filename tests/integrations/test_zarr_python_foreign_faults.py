"""Foreign plugins that misbehave, through the zarr-python bridges (issue 44, item 14): a
zarr-python codec that raises SystemExit, a zarr-python store that answers far more than a
chunk holds, and one whose coroutine never returns. Each is a zarrkit error naming what
failed, in bounded time and memory; each runs in a child process, so a hang is a timeout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.interop
pytest.importorskip("zarr")


def run(source: str, **env: str) -> dict:
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(source)],
        capture_output=True,
        text=True,
        timeout=90,  # a hang fails the test here rather than holding the suite
        env={**os.environ, **env},
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    out: dict = json.loads(result.stdout.strip().splitlines()[-1])
    return out


def test_a_codec_raising_system_exit_in_decode_is_a_chunk_decode_error() -> None:
    out = run(
        """
        import json, numpy as np, zarr, zarr.registry, zarrkit as zk
        from dataclasses import dataclass
        from zarr.abc.codec import BytesBytesCodec

        @dataclass(frozen=True)
        class Quits(BytesBytesCodec):
            is_fixed_size = True
            @classmethod
            def from_dict(cls, data):
                return cls()
            def to_dict(self):
                return {"name": "example.quits"}
            def compute_encoded_size(self, n, spec):
                return n
            async def _encode_single(self, data, spec):
                return data
            async def _decode_single(self, data, spec):
                raise SystemExit("the codec quit")

        zarr.registry.register_codec("example.quits", Quits)
        store = zarr.storage.MemoryStore()
        a = zarr.create_array(store, shape=(8,), chunks=(4,), dtype="u1", compressors=[Quits()])
        a[:] = np.arange(8)
        error = None
        try:
            zk.open_array(store)[:]
        except zk.errors.ZarrkitError as exc:
            error = (type(exc).__name__, str(exc))
        # zarr-python's loop, on which the codec ran, still runs what comes next
        after = zk.open_array(store).nchunks_initialized
        print(json.dumps({"error": error, "after": after}))
        """
    )
    name, message = out["error"]
    assert name == "ChunkDecodeError"
    assert "SystemExit" in message and "the codec quit" in message
    assert out["after"] == 2


def test_a_store_answering_far_more_than_a_chunk_is_refused_without_holding_it() -> None:
    out = run(
        """
        import json, resource, numpy as np, zarr, zarrkit as zk
        from zarr.core.buffer import default_buffer_prototype

        store = zarr.storage.MemoryStore()
        a = zarr.create_array(store, shape=(16,), chunks=(16,), dtype="u1", compressors=None)
        a[:] = 1
        huge = np.zeros(512 << 20, dtype="u1")  # 512 MiB where a 16-byte chunk belongs
        huge[::4096] = 1  # (touched, so it is resident before the read)
        store._store_dict["c/0"] = default_buffer_prototype().buffer.from_array_like(huge)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        try:
            zk.open_array(store)[:]
            error = None
        except zk.errors.ZarrkitError as exc:
            error = (type(exc).__name__, str(exc), exc.key)
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(json.dumps({"error": error, "grew_kib": after - before}))
        """
    )
    name, message, key = out["error"]
    assert name == "ValueTooLargeError" and key == "c/0"
    assert "more than the" in message
    assert out["grew_kib"] < 64 << 10  # not another copy of the 512 MiB


def test_a_store_coroutine_that_never_returns_times_out() -> None:
    out = run(
        """
        import asyncio, json, time, zarr, zarrkit as zk

        class Stuck(zarr.storage.MemoryStore):
            async def get(self, key, prototype, byte_range=None):
                if key.startswith("c/"):
                    await asyncio.Event().wait()  # never set
                return await super().get(key, prototype, byte_range)

        store = Stuck()
        zarr.create_array(store, shape=(8,), chunks=(4,), dtype="u1")[:] = 1
        started = time.monotonic()
        try:
            zk.open_array(store)[:]
            error = None
        except zk.errors.StoreError as exc:
            error = (type(exc).__name__, str(exc), exc.operation)
        print(json.dumps({"error": error, "seconds": time.monotonic() - started}))
        """,
        ZARRKIT_IO_TIMEOUT="0.5",
        ZARRKIT_IO_RETRIES="1",
    )
    name, message, operation = out["error"]
    assert name == "StoreError" and operation == "read"
    assert "did not finish within" in message
    assert out["seconds"] < 20
