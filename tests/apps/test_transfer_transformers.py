"""Issue 47: copy and convert read and write chunks through each array's storage transformers.
A transformer that keeps chunks under other keys used to be copied as 0 chunks, with exit
status 0; now the copy holds the source's values, under the moved keys, and counts them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from zarrkit_testing.transformers import MovingTransformer

import zarrkit as zk
from zarrkit.cli.main import main
from zarrkit.helpers import open_store
from zarrkit.plugins.stores.memory import MemoryStore
from zarrkit.transfer import convert, copy


@pytest.fixture
def source(zarrkit_register: Any, tmp_path: Path) -> tuple[str, np.ndarray]:
    zarrkit_register("storage_transformer", MovingTransformer)
    url = str(tmp_path / "source.zarr")
    root = zk.open_group(url, mode="w")
    data = np.arange(48, dtype="i4").reshape(6, 8)
    a = root.create_array(
        "a",
        shape=data.shape,
        chunks=(2, 3),
        dtype="i4",
        fill_value=-1,
        storage_transformers=[MovingTransformer()],
    )
    a[:4, :] = data[:4, :]  # 6 of the 9 chunks
    expected = data.copy()
    expected[4:, :] = -1
    return url, expected


def _moved_keys(url: str) -> list[str]:
    store = open_store(url)
    return sorted(k for k in store.list() if k.startswith("a/"))


def test_a_moving_transformer_counts_and_sizes(source: tuple[str, np.ndarray]) -> None:
    url, _ = source
    a = zk.open_array(url, path="a")
    keys = _moved_keys(url)
    assert "a/moved/c.0.0" in keys and not any(k.startswith("a/c/") for k in keys)
    assert a.nchunks_initialized == 6
    store = open_store(url)
    chunk_bytes = sum(len(store.get(k) or b"") for k in keys if k.startswith("a/moved/"))
    assert a.nbytes_stored() == chunk_bytes + len(store.get("a/zarr.json") or b"")


@pytest.mark.parametrize("how", ["copy", "convert", "convert-recompressed"])
def test_copy_and_convert_go_through_the_transformer(
    source: tuple[str, np.ndarray], tmp_path: Path, how: str
) -> None:
    url, expected = source
    target = str(tmp_path / "target.zarr")
    if how == "copy":
        report = copy(url, target, verify=True)
    elif how == "convert":
        report = convert(url, target, to="v3", verify=True)
    else:  # chunks decoded and re-encoded on the way
        codecs = [{"name": "bytes"}, {"name": "gzip", "configuration": {"level": 1}}]
        report = convert(url, target, to="v3", codecs=codecs, verify=True)
    assert report.chunks_copied + report.chunks_reencoded == 6, report.summary()
    assert report.mismatches == []
    again = zk.open_array(target, path="a")
    np.testing.assert_array_equal(again[...], expected)
    assert again.nchunks_initialized == 6
    moved = [k for k in _moved_keys(target) if k.startswith("a/moved/")]
    assert len(moved) == 6, _moved_keys(target)


def test_resume_sees_what_the_target_holds_through_the_transformer(
    source: tuple[str, np.ndarray], tmp_path: Path
) -> None:
    url, expected = source
    target = str(tmp_path / "target.zarr")
    copy(url, target)
    again = copy(url, target, resume=True)
    assert again.chunks_skipped == 6 and again.chunks_copied == 0, again.summary()
    np.testing.assert_array_equal(zk.open_array(target, path="a")[...], expected)


def test_the_cli_copies_and_checks_through_the_transformer(
    source: tuple[str, np.ndarray], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url, expected = source
    target = str(tmp_path / "cli.zarr")
    assert main(["copy", url, target]) == 0
    assert main(["check", target]) == 0
    out = capsys.readouterr().out
    assert "6" in out
    np.testing.assert_array_equal(zk.open_array(target, path="a")[...], expected)


def test_an_array_in_memory_copies_through_it(zarrkit_register: Any) -> None:
    zarrkit_register("storage_transformer", MovingTransformer)
    src, dst = MemoryStore(), MemoryStore()
    a = zk.create_array(
        src, shape=(5,), chunks=(2,), dtype="u1", storage_transformers=[MovingTransformer()]
    )
    a[:] = [1, 2, 3, 4, 5]
    report = copy(src, dst)
    assert report.chunks_copied == 3, report.summary()
    np.testing.assert_array_equal(zk.open_array(dst)[:], [1, 2, 3, 4, 5])
