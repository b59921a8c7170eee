"""A writer process killed with SIGKILL in the middle of writing chunks leaves every chunk its
old or its new value, never torn, on the local, zip and LMDB stores.

The writer (a real subprocess) rewrites every chunk of an array round after round, each round's
chunks holding `base + round`, and prints each round it finished. It is killed at a random
moment, three times in a row (each time restarted on what the last one left). Chunks carry a
crc32c checksum, so a torn or half-written chunk cannot decode to anything.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import zarrkit as zk

SHAPE, CHUNKS = (128, 128), (32, 32)
BASE = np.arange(SHAPE[0] * SHAPE[1], dtype="f8").reshape(SHAPE)

WRITER = """
    import sys
    import numpy as np
    import zarrkit as zk
    url, round = sys.argv[1], int(sys.argv[2])
    array = zk.open_array(url, mode="r+")
    base = np.arange(array.size, dtype="f8").reshape(array.shape)
    flush = getattr(array.store, "flush", None)
    print("ready", flush=True)
    while True:
        round += 1
        array[...] = base + round
        if flush is not None:
            flush()  # the zip store publishes a round by rewriting the archive
        print(round, flush=True)
"""


def _create(url: str) -> None:
    array = zk.create_array(
        url,
        shape=SHAPE,
        chunks=CHUNKS,
        dtype="f8",
        fill_value=-1.0,
        codecs=[{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
    )
    array[...] = BASE
    array.store.close()


def _kill_midway(url: str, last_round: int, rng: random.Random) -> int:
    """Start a writer, SIGKILL it at a random moment; the last round it reported finished."""
    writer = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(WRITER), url, str(last_round)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert writer.stdout is not None
    assert writer.stdout.readline().strip() == "ready"
    time.sleep(rng.uniform(0.05, 0.4))
    os.kill(writer.pid, signal.SIGKILL)
    out, _ = writer.communicate(timeout=30)
    assert writer.returncode == -signal.SIGKILL
    rounds = [int(line) for line in out.split()]
    return rounds[-1] if rounds else last_round


def _chunk_rounds(url: str) -> np.ndarray:
    """The round each chunk holds (decoding every chunk: a torn one would fail here)."""
    data = zk.open_array(url)[...] - BASE
    rows, cols = SHAPE[0] // CHUNKS[0], SHAPE[1] // CHUNKS[1]
    blocks = data.reshape(rows, CHUNKS[0], cols, CHUNKS[1]).transpose(0, 2, 1, 3)
    rounds = blocks[..., 0, 0]
    assert (blocks == rounds[..., None, None]).all(), "a chunk mixes two rounds"
    return rounds


@pytest.mark.slow
@pytest.mark.parametrize("scheme", ["file", "zip", "lmdb"])
def test_sigkill_mid_write_leaves_every_chunk_old_or_new(tmp_path: Path, scheme: str) -> None:
    if scheme == "lmdb":
        pytest.importorskip("lmdb")
    path = tmp_path / f"data.{scheme}"
    url = str(path) if scheme == "file" else f"{scheme}://{path}"
    _create(url)
    rng = random.Random(os.getpid())
    start, before = 0, np.zeros((SHAPE[0] // CHUNKS[0], SHAPE[1] // CHUNKS[1]))
    moved = False
    for _ in range(3):
        finished = _kill_midway(url, start, rng)
        rounds = _chunk_rounds(url)
        if finished > start:  # every chunk was rewritten at least once, maybe twice
            assert set(np.unique(rounds)) <= {finished, finished + 1}, (finished, rounds)
        else:  # killed inside its first round: each chunk as it was, or that round's
            assert ((rounds == before) | (rounds == start + 1)).all(), (start, rounds)
        if scheme == "zip":  # a flush publishes a whole round at once
            assert len(np.unique(rounds)) == 1
        moved = moved or finished > start
        start, before = int(rounds.max()), rounds
    assert moved, "the writer never finished a round: the test proved nothing"


@pytest.mark.interop
def test_zarr_python_reads_a_zip_left_by_a_killed_writer(tmp_path: Path) -> None:
    import zarr

    path = tmp_path / "data.zip"
    _create(f"zip://{path}")
    finished = _kill_midway(f"zip://{path}", 0, random.Random(1))
    theirs = zarr.open_array(store=zarr.storage.ZipStore(path, mode="r"))
    values = theirs[...] - BASE
    assert np.unique(values).tolist() in ([finished], [finished + 1])
