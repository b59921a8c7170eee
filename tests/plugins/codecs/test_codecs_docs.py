"""docs/plugins/authoring-codecs.md's example is real: its code blocks are written out as a
module and its test file, and pytest runs them in a separate process; its entry-point snippet
names them."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

DOC = Path(__file__).resolve().parents[3] / "docs" / "plugins" / "authoring-codecs.md"


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def test_the_documented_codec_and_its_tests_run(tmp_path):
    files = {}
    for block in blocks("python"):
        first = block.splitlines()[0]
        assert first.startswith("# ") and first.endswith(".py"), first
        files[first[2:]] = block
    assert set(files) == {"example_delta.py", "test_example_delta.py"}
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_example_delta.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert re.search(r"\d+ passed", run.stdout)


def test_the_entry_point_snippet_names_the_documented_class():
    (snippet,) = blocks("toml")
    table = tomllib.loads(snippet)["project"]["entry-points"]["zarrkit.codecs"]
    assert table == {"example.delta": "example_delta:DeltaCodec"}
    assert "class DeltaCodec(ArrayArrayCodec)" in blocks("python")[0]
