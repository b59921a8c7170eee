"""The README's section on dask and process pools is real: each of its examples runs as a
script (they start processes, so each under `if __name__ == "__main__"`) and prints what its
comments say."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def _examples() -> dict[str, str]:
    section = README.read_text(encoding="utf-8").split("## Dask and process pools", 1)[1]
    section = section.split("\n## ", 1)[0]
    out = {}
    for block in re.findall(r"```python\n(.*?)```", section, re.S):
        first = block.splitlines()[0]
        assert re.fullmatch(r"# example_\w+\.py", first), first
        out[first[2:]] = block
    return out


def test_the_section_has_its_three_examples() -> None:
    assert set(_examples()) == {
        "example_process_pool.py",
        "example_dask.py",
        "example_distributed.py",
    }


@pytest.mark.slow
@pytest.mark.parametrize(
    "name, printed",
    [
        ("example_process_pool.py", ["4999.5 94999.5"]),
        (
            "example_dask.py",
            [
                "(4, 4) 4194304.0",
                (
                    "refused: dask blocks along dimension 0 of '/' meet at index 300, "
                    "inside the shard [0, 512)"
                ),
            ],
        ),
        ("example_distributed.py", ["499999500000"]),
    ],
)
def test_example_runs(name: str, printed: list[str], tmp_path: Path) -> None:
    pytest.importorskip("dask")
    (tmp_path / name).write_text(_examples()[name], encoding="utf-8")
    run = subprocess.run(
        [sys.executable, name], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert run.stdout.splitlines() == printed, run.stdout + run.stderr[-3000:]
