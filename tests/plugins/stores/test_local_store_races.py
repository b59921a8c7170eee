"""The local store against a process that swaps its folders for symlinks to a folder outside
the root while the store writes, reads, lists and erases: nothing outside may be created,
changed, removed or read, whatever the timing."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrkit as zk
from zarrkit.errors import ZarrkitError
from zarrkit.plugins.stores.local import beneath, posix
from zarrkit.plugins.stores.local.local import LocalStore

#: how long each race runs
SECONDS = 3.0
#: rows of the array; row i is the folder c/i, swapped for rows in SWAPPED
ROWS, COLUMNS, CHUNK = 8, 256, 16
SWAPPED = ("c/1", "c/3", "c/6")
#: what the planted chunk files outside decode to (the array itself never holds it)
SENTINEL = -7777.0

#: Renames each folder away (to a name inside the root, so the files the store had put in it
#: stay there) and puts a symlink to the outside folder in its place, then removes the symlinks
#: so that the store makes the folders again: every moment is a different state to meet.
RACER = r"""
import os, shutil, sys, time
root, outside, seconds, folders = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4:]
end = time.monotonic() + seconds
swaps = 0
print("ready", flush=True)
while time.monotonic() < end:
    for folder in folders:
        path = os.path.join(root, folder)
        away = os.path.join(root, f".away-{swaps % 16}")
        shutil.rmtree(away, ignore_errors=True)
        try:
            os.rename(path, away)
        except OSError:
            pass
        try:
            os.symlink(outside, path, target_is_directory=True)
            swaps += 1
        except OSError:
            pass
    for folder in folders:
        try:
            os.unlink(os.path.join(root, folder))
        except OSError:
            pass
print(swaps, flush=True)
"""


def _outside_state(outside: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in outside.iterdir()}


def _race(tmp_path: Path, operation: Callable[[LocalStore, Any], None]) -> tuple[int, int, int]:
    """Run `operation(store, array)` over and over while the racer runs; check the outside
    folder after. Returns (swaps made, operations done, operations refused)."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    outside.mkdir()
    planted = np.full(CHUNK, SENTINEL, dtype="<f4").tobytes()
    for j in range(COLUMNS // CHUNK):
        (outside / str(j)).write_bytes(planted)  # what a read that followed the link finds
    (outside / "planted").write_bytes(planted)  # a name no chunk has: shows up in a listing
    before = _outside_state(outside)
    store = LocalStore(root, mode="w")
    array = zk.create_array(
        store,
        shape=(ROWS, COLUMNS),
        chunks=(1, CHUNK),
        dtype="<f4",
        codecs=[{"name": "bytes"}],
        fill_value=0,
    )
    array[:] = 1
    racer = subprocess.Popen(
        [sys.executable, "-c", RACER, str(root), str(outside), str(SECONDS), *SWAPPED],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert racer.stdout is not None and racer.stdout.readline() == "ready\n"
    done = refused = 0
    unexpected: list[BaseException] = []
    try:
        while racer.poll() is None:
            try:
                operation(store, array)
            except ZarrkitError:
                refused += 1
            except Exception as exc:
                unexpected.append(exc)
            done += 1
    finally:
        racer.wait(timeout=60)
    with racer.stdout:
        swaps = int(racer.stdout.read().split()[0])
    after = _outside_state(outside)
    assert sorted(after) == sorted(before), "files were created or removed outside the root"
    changed = [name for name in before if after[name] != before[name]]
    assert not changed, f"{len(changed)} files outside the root were overwritten or touched"
    assert not unexpected, f"errors other than a refusal: {unexpected[:3]!r}"
    assert swaps > 100 and done > 5, "the race did not really run"
    return swaps, done, refused


def _never_the_sentinel(values: Any) -> None:
    assert not (np.asarray(values) == SENTINEL).any(), "a read returned a file outside the root"


def write_whole(store: LocalStore, array: Any) -> None:
    array[:] = np.random.default_rng().integers(1, 100)


def write_partial(store: LocalStore, array: Any) -> None:
    """Parts of chunks: each is read, updated and written back."""
    rng = np.random.default_rng()
    for row in (1, 3, 6):
        start = int(rng.integers(0, COLUMNS - 4))
        array[row, start : start + 3] = rng.integers(1, 100)


def read(store: LocalStore, array: Any) -> None:
    _never_the_sentinel(array[:])
    keys = [f"{folder}/{j}" for folder in SWAPPED for j in range(COLUMNS // CHUNK)]
    with store.reading() as source:
        for value in source.read_many(keys).values():
            _never_the_sentinel(np.frombuffer(value, "<f4"))
    for key in keys[::5]:
        value = store.get(key)
        if value is not None:
            _never_the_sentinel(np.frombuffer(value, "<f4"))
    for value in store.get_ranges([(key, None) for key in keys[::3]]):
        if value is not None:
            _never_the_sentinel(np.frombuffer(value, "<f4"))


def list_keys(store: LocalStore, array: Any) -> None:
    keys = list(store.list()) + list(store.list_prefix("c/3/"))
    keys += [f"c/1/{k}" for k in store.list_dir("c/1/")[0]]
    assert not any(key.endswith("planted") for key in keys), "a listing showed a file outside"


def erase(store: LocalStore, array: Any) -> None:
    store.erase("c/1/2")
    store.erase_many(["c/3/0", "c/3/5"])
    store.erase_prefix("c/6/")
    array[1:2, :32] = 5  # and write some back, so that there is something to erase


@pytest.mark.parametrize(
    "operation", [write_whole, write_partial, read, list_keys, erase], ids=lambda f: f.__name__
)
def test_no_operation_reaches_outside_the_root_while_folders_are_swapped(
    tmp_path: Path, operation: Callable[[LocalStore, Any], None]
) -> None:
    _swaps, _done, refused = _race(tmp_path, operation)
    assert refused > 0, "no operation met a swapped folder: the race proves nothing"


@pytest.mark.skipif(beneath.openat2_read is None, reason="no openat2 here: already walked")
@pytest.mark.parametrize("operation", [write_whole, read], ids=lambda f: f.__name__)
def test_the_walk_one_folder_at_a_time_holds_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, operation: Callable[[LocalStore, Any], None]
) -> None:
    """Where the kernel has no openat2 (before Linux 5.6, other POSIX systems), each path
    segment is opened with openat and O_NOFOLLOW: that way is forced here."""
    monkeypatch.setattr(beneath, "_openat2", None)
    monkeypatch.setattr(posix, "_openat2_read", None)
    _swaps, _done, refused = _race(tmp_path, operation)
    assert refused > 0, "no operation met a swapped folder: the race proves nothing"
