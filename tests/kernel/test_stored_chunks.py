"""What an array says of its stored chunks (`stored_chunks`, `nchunks_initialized`,
`info_complete`, `zarrkit info` and `check`) comes from one listing through its storage
transformers: work in proportion to what is stored, never to the grid, and right when a
transformer keeps chunks under other keys."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import tracemalloc
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrkit as zk
from zarrkit.abc import Range, StorageTransformer, Store, names
from zarrkit.errors import SelectionError, StoreError, ValueTooLargeError
from zarrkit.plugins.stores.memory import MemoryStore


# -- a transformer that keeps every chunk under another key ------------------------------------
@dataclass(frozen=True)
class MovingTransformer(StorageTransformer):
    """Stores chunk `<node>/c/0/1` at `<node>/moved/c.0.1`, as the transformer guide allows."""

    names = names("test.moving")

    def wrap(self, store: Store, node_path: str) -> Store:
        return _MovedStore(store, f"{node_path}/" if node_path else "")


class _MovedStore(Store):
    def __init__(self, inner: Store, prefix: str) -> None:
        self.inner, self.prefix = inner, prefix
        self.read_only, self.writeable = inner.read_only, inner.writeable

    def _out(self, key: str) -> str:
        rest = key[len(self.prefix) :]
        return f"{self.prefix}moved/{rest.replace('/', '.')}"

    def _in(self, stored: str) -> str:
        rest = stored[len(self.prefix) + len("moved/") :]
        return self.prefix + rest.replace(".", "/")

    def get(self, key: str, byte_range: Range | None = None) -> bytes | None:
        return self.inner.get(self._out(key), byte_range)

    def set(self, key: str, value: Any) -> None:
        self.inner.set(self._out(key), value)

    def erase(self, key: str) -> None:
        self.inner.erase(self._out(key))

    def list(self) -> Iterator[str]:
        moved = f"{self.prefix}moved/"
        return (self._in(k) for k in self.inner.list_prefix(moved))


@pytest.fixture
def moving(zarrkit_register: Any) -> None:
    zarrkit_register("storage_transformer", MovingTransformer)


def _moving_array(store: MemoryStore, **options: Any) -> zk.Array:
    """A 6x6 array of 2x3 chunks at g/a whose chunks the moving transformer stores."""
    return zk.create_array(
        store,
        path="g/a",
        shape=(6, 6),
        chunks=(2, 3),
        dtype="i4",
        fill_value=0,
        storage_transformers=["test.moving"],
        **options,
    )


def test_a_transformer_that_moves_keys_counts_its_chunks(moving: None) -> None:
    store = MemoryStore()
    a = _moving_array(store)
    a[:3, :] = 7
    assert not any(k.startswith("g/a/c/") for k in store.list())  # really moved
    assert sorted(c.coords for c in a.stored_chunks()) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert a.nchunks_initialized == 4
    assert a.info_complete().chunks_initialized == 4
    reopened = zk.open_array(store, path="g/a")
    np.testing.assert_array_equal(reopened[:3, :], 7)
    assert reopened.nchunks_initialized == 4


def test_the_cli_counts_and_checks_chunks_a_transformer_moved(moving: None, tmp_path: Path) -> None:
    """`zarrkit info` and `zarrkit check` run in another process, which finds the transformer
    through a plugin package on its path."""
    package = tmp_path / "site"
    (package / "moving_plugin").mkdir(parents=True)
    source = Path(__file__).read_text()
    start, end = source.index("# -- a transformer"), source.index("@pytest.fixture")
    (package / "moving_plugin" / "__init__.py").write_text(
        "from __future__ import annotations\n"
        "from collections.abc import Iterator\nfrom dataclasses import dataclass\n"
        "from typing import Any\n"
        "from zarrkit.abc import Range, Store, StorageTransformer, names\n" + source[start:end]
    )
    dist = package / "moving_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: moving-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[zarrkit.storage_transformers]\ntest.moving = moving_plugin:MovingTransformer\n"
    )
    root = tmp_path / "data.zarr"
    a = zk.create_array(
        str(root),
        shape=(6, 6),
        chunks=(2, 3),
        dtype="i4",
        fill_value=0,
        storage_transformers=["test.moving"],
    )
    a[:3, :] = 7
    env = {**os.environ, "PYTHONPATH": str(package)}
    zarrkit = [sys.executable, "-m", "zarrkit"]
    info = subprocess.run(
        [*zarrkit, "info", "--json", str(root)], capture_output=True, text=True, env=env
    )
    assert info.returncode == 0, info.stderr
    assert json.loads(info.stdout)["chunks_initialized"] == 4
    check = subprocess.run(
        [*zarrkit, "check", "--json", str(root)], capture_output=True, text=True, env=env
    )
    assert check.returncode == 0, check.stdout + check.stderr
    report = json.loads(check.stdout)["arrays"][0]
    assert (report["stored"], report["absent"], report["chunks"]) == (4, 2, 6)


def test_read_stored_chunks_reads_the_encoded_values_through_the_transformers(
    moving: None,
) -> None:
    store = MemoryStore()
    a = _moving_array(store, compressors=None)
    a[:2, :3] = 7
    got = a.read_stored_chunks([(0, 0), (2, 1)])
    assert list(got) == [(0, 0)]  # (2, 1) was never written
    assert bytes(got[(0, 0)]) == store.get("g/a/moved/c.0.0")
    assert np.frombuffer(got[(0, 0)], dtype="<i4").tolist() == [7] * 6
    with pytest.raises(SelectionError, match=r"\(3, 0\) is not a chunk"):
        a.read_stored_chunks([(3, 0)])
    with pytest.raises(SelectionError, match="not a chunk"):
        a.read_stored_chunks([(0,)])


def test_read_stored_chunks_refuses_a_value_larger_than_a_chunk_can_be(tmp_path: Path) -> None:
    """The limit is the array's (about four times a chunk), not a store's default."""
    root = tmp_path / "a.zarr"
    a = zk.create_array(str(root), shape=(8,), chunks=(4,), dtype="u1", fill_value=0)
    a[:4] = 1
    (root / "c" / "0").write_bytes(b"\0" * (2 << 20))  # 2 MiB where a 4-byte chunk goes
    assert len(a.store.get("c/0") or b"") == 2 << 20  # (the store alone reads it)
    with pytest.raises(ValueTooLargeError):
        a.read_stored_chunks([(0,)])


# -- huge grids: work by what is stored --------------------------------------------------------
@pytest.mark.parametrize(
    "grid",
    [
        {"chunks": (1,)},
        {
            "chunk_grid": {
                "name": "rectilinear",
                "configuration": {"kind": "inline", "chunk_shapes": [[[1, 10**9]]]},
            }
        },
    ],
    ids=["regular", "rectilinear"],
)
def test_a_grid_of_a_billion_chunks_with_one_stored(store: Any, grid: dict[str, Any]) -> None:
    a = zk.create_array(store, shape=(10**9,), dtype="u1", fill_value=0, **grid)
    a[5] = 1
    tracemalloc.start()
    try:
        assert a.nchunks_initialized == 1
        info = a.info_complete()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert info.chunks_initialized == 1
    assert peak < 8 << 20  # a grid walk of 10**9 keys would take gigabytes


def test_the_cli_on_a_billion_chunk_grid(tmp_path: Path) -> None:
    root = tmp_path / "huge.zarr"
    a = zk.create_array(str(root), shape=(10**9,), chunks=(1,), dtype="u1", fill_value=0)
    a[[3, 10**9 - 1]] = 1
    script = textwrap.dedent(
        f"""
        import resource, subprocess, sys
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))  # 1 GiB for the command
        from zarrkit.cli import main
        sys.argv = ["zarrkit", "check", "--json", {str(root)!r}]
        main()
        """
    )
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    report = json.loads(run.stdout)["arrays"][0]
    assert (report["stored"], report["chunks"]) == (2, 10**9)


def test_a_listing_of_endless_other_keys_is_a_store_error() -> None:
    class Endless(MemoryStore):
        def list_prefix(self, prefix: str) -> Iterator[str]:
            n = 0
            while True:  # a listing that never ends, of keys that are no chunks
                n += 1
                yield f"junk{n}"

    a = zk.create_array(Endless(), shape=(4,), chunks=(2,), dtype="u1", fill_value=0)
    with pytest.raises(StoreError, match="more keys than"):
        _ = a.nchunks_initialized


def test_a_listing_with_more_chunks_than_the_grid_is_a_store_error() -> None:
    class Repeating(MemoryStore):
        def list_prefix(self, prefix: str) -> Iterator[str]:
            while True:  # a listing that never ends, always naming a real chunk
                yield "c/0"

    a = zk.create_array(Repeating(), shape=(4,), chunks=(2,), dtype="u1", fill_value=0)
    a[:] = 1
    with pytest.raises(StoreError, match="more chunks than"):
        _ = a.nchunks_initialized


# -- sizes from the store, not from reading ---------------------------------------------------
def test_nbytes_stored_sizes_a_huge_sparse_chunk_without_reading_it(tmp_path: Path) -> None:
    """A 6 GiB sparse file where a 16-byte chunk belongs: sized by stat (issue 44 item 6)."""
    root = tmp_path / "a.zarr"
    a = zk.create_array(str(root), shape=(16,), chunks=(16,), dtype="u1", compressors=None)
    a[:] = 1
    chunk = root / "c" / "0"
    with chunk.open("r+b") as f:
        f.truncate(6 << 30)
    tracemalloc.start()
    try:
        stored = zk.open_array(str(root)).nbytes_stored()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert stored == (6 << 30) + len((root / "zarr.json").read_bytes())
    assert peak < 8 << 20


def test_sizes_agree_with_the_values_on_every_first_party_store(store: Any) -> None:
    a = zk.create_array(store, path="g/a", shape=(10,), chunks=(3,), dtype="i8", fill_value=0)
    a[:] = np.arange(10)
    keys = sorted(store.list_prefix("g/a/"))
    read = {k: len(v) for k, v in store.get_many(keys).items()}
    assert store.sizes([*keys, "g/a/c/99"]) == read
    assert a.nbytes_stored() == sum(read.values())
