"""The README's Python examples run as written, one after the other in a fresh folder, and
print what their comments say."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```python\n(.*?)```", README, flags=re.DOTALL)
#: `print(...)  # what it prints`
PROMISE = re.compile(r"^print\(.*\)\s+#\s*(.+)$", flags=re.MULTILINE)


def test_the_readme_has_its_examples() -> None:
    assert len(BLOCKS) >= 3
    assert any("za.open_array" in block and "start_server" in block for block in BLOCKS)
    assert any(".lazy[" in block for block in BLOCKS)


def test_the_readme_examples_print_what_they_say(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    names: dict[str, object] = {}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        for number, block in enumerate(BLOCKS):
            exec(compile(block, f"README.md (example {number + 1})", "exec"), names)
    promised = [m.group(1).strip() for block in BLOCKS for m in PROMISE.finditer(block)]
    assert printed.getvalue().splitlines() == promised
