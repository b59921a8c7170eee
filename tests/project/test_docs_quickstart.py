"""The user guide's Quickstart (docs/guide/index.md) runs as written, in a fresh folder, and
writes what it says, as zarr-python reads it (the README's examples: test_readme_examples)."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guide" / "index.md"


def quickstart() -> str:
    section = GUIDE.read_text(encoding="utf-8").split("## Quickstart", 1)[1]
    return section.split("```python", 1)[1].split("```", 1)[0]


def test_quickstart_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    names: dict[str, object] = {}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(quickstart(), "docs/guide/index.md (Quickstart)", "exec"), names)
    import zarr

    stored = zarr.open_group(str(tmp_path / "data.zarr"), mode="r")
    assert sorted(stored) == ["g", "s", "t", "z"]
    assert stored["t"].attrs["units"] == "K"
    assert [type(c).__name__ for c in stored["g"].compressors] == ["GzipCodec"]
    assert stored["g"].compressors[0].level == 5
    np.testing.assert_array_equal(stored["g"][...], np.arange(100))
    theirs = zarr.create_array(zarr.storage.MemoryStore(), shape=(2000, 2000), dtype="int16")
    assert stored["z"].chunks == theirs.chunks  # chunks="auto" as zarr-python guesses them
    assert stored["s"].shards == (2048, 2048) and stored["s"].chunks == (256, 256)
    assert "Chunks Initialized : 100\n" in printed.getvalue()  # (zarr-python's info text)
