"""A server that sends the head of an answer and then falls silent: every HTTP store gives up
after the `io_timeout` setting (with its retries) rather than the client's own minutes, and
says so as a zarrkit error naming the key (issue 44, item 11)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hostile_servers import Endless, HostileServer
from store_servers import serving

import zarrkit as zk

STALL = 60.0  # how long the server would stay silent; the stores must not wait for it


@pytest.fixture
def stalling(tmp_path: Path) -> Iterator[HostileServer]:
    www = tmp_path / "www"
    a = zk.create_array(str(www / "a.zarr"), shape=(8,), chunks=(4,), dtype="u1")
    a[:] = np.arange(8)
    endless = {"/a.zarr/c/": Endless("declared", declared=1 << 20, stall=STALL)}
    server = HostileServer(www, endless=endless)
    with serving(server) as running:
        try:
            yield running
        finally:
            running.release.set()


@pytest.mark.parametrize("scheme", ["http", "fsspec+http"])
def test_a_stalled_body_times_out_at_the_setting(stalling: HostileServer, scheme: str) -> None:
    url = f"{scheme}://{stalling.origin.split('://', 1)[1]}/a.zarr"
    script = textwrap.dedent(
        f"""
        import json, time, zarrkit as zk
        a = zk.open_array({url!r}, mode="r")
        started = time.monotonic()
        try:
            a[:]
            error = None
        except zk.errors.ZarrkitError as exc:
            error = [type(exc).__name__, str(exc), getattr(exc, "key", None)]
        print(json.dumps({{"error": error, "seconds": time.monotonic() - started}}))
        """
    )
    env = {**os.environ, "ZARRKIT_IO_TIMEOUT": "1", "ZARRKIT_IO_RETRIES": "1"}
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=STALL
    )
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["error"] is not None, out
    name, _message, key = out["error"]
    assert name == "StoreError"
    assert key is not None and key.endswith(("c/0", "c/1"))
    # one timeout per attempt, and the rest of the read: far from the server's minute
    assert out["seconds"] < 15, out
