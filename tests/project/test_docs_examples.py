"""Every Python example of the user-facing pages runs, so the documentation cannot drift from
the code (docs/contributing-docs.md states the convention for authors).

The pages are `docs/index.md`, `docs/installation.md` and `docs/guide/*.md`. Each fenced
```` ```python ```` block runs:

- in order, the blocks of one page in one namespace, with a fresh temporary folder as the
  working directory (a page is one session; a later block may use what an earlier one made);
- as a script when its first line names a file (`# example_dask.py`): written to that file and
  run with `python <file>` in the same folder, exit status 0 required, and its printed lines
  compared with `SCRIPT_OUTPUT` when listed there;
- not at all when the line before its fence is `<!-- docs-test: skip (reason) -->`, which
  `SKIPPED` must list per page (so every skip is seen in review).

Examples reach nothing beyond 127.0.0.1: a page that needs a server starts it itself.
"""

from __future__ import annotations

import contextlib
import io
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

import zarrkit

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = [DOCS / "index.md", DOCS / "installation.md", *sorted((DOCS / "guide").glob("*.md"))]

#: blocks marked `<!-- docs-test: skip (...) -->`, by page: each needs a cloud bucket
SKIPPED = {"guide/storage.md": 1}

#: what each script block prints, line by line
SCRIPT_OUTPUT = {
    "example_process_pool.py": ["4999.5 94999.5"],
    "example_dask.py": [
        "(4, 4) 4194304.0",
        "refused: dask blocks along dimension 0 of '/' meet at index 300, inside the shard [0, 512)",
    ],
    "example_distributed.py": ["499999500000"],
}

#: pages whose examples start processes or a cluster (slow), or servers on 127.0.0.1
MARKS = {
    "guide/processes.md": [pytest.mark.slow],
    "guide/dask.md": [pytest.mark.slow, pytest.mark.network],
    "guide/storage.md": [pytest.mark.network, pytest.mark.interop],
}

SKIP = re.compile(r"<!-- docs-test: skip \(.+\) -->")
SCRIPT = re.compile(r"# (example_\w+\.py)")


@dataclass(frozen=True)
class Block:
    """One fenced python block of a page: its code, the line its code starts on, and how the
    test treats it."""

    code: str
    line: int
    skipped: bool
    script: str | None  # the file name of a script block


def blocks(page: Path) -> list[Block]:
    lines = page.read_text(encoding="utf-8").splitlines()
    found, i = [], 0
    while i < len(lines):
        if lines[i].strip() == "```python":
            end = lines.index("```", i + 1)  # (fences of these pages are not indented)
            code = "\n".join(lines[i + 1 : end]) + "\n"
            before = lines[i - 1].strip() if i else ""
            first = SCRIPT.fullmatch(lines[i + 1].strip()) if end > i + 1 else None
            found.append(Block(code, i + 2, bool(SKIP.fullmatch(before)), first and first.group(1)))
            i = end
        i += 1
    return found


def _name(page: Path) -> str:
    return page.relative_to(DOCS).as_posix()


def test_the_pages_have_examples_and_the_skips_are_listed() -> None:
    counts = {_name(p): sum(b.skipped for b in blocks(p)) for p in PAGES}
    assert {k: v for k, v in counts.items() if v} == SKIPPED
    every = [b for p in PAGES for b in blocks(p)]
    scripts = {b.script for b in every if b.script}
    assert scripts == set(SCRIPT_OUTPUT)
    assert sum(not b.skipped for b in every) >= 30  # (a parsing slip would find none)


def _run_script(block: Block, folder: Path) -> None:
    assert block.script is not None
    (folder / block.script).write_text(block.code, encoding="utf-8")
    run = subprocess.run(
        [sys.executable, block.script], cwd=folder, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    if block.script in SCRIPT_OUTPUT:
        assert run.stdout.splitlines() == SCRIPT_OUTPUT[block.script], run.stderr[-3000:]


@pytest.mark.parametrize(
    "page", [pytest.param(p, id=_name(p), marks=MARKS.get(_name(p), [])) for p in PAGES]
)
def test_the_page_examples_run(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    names: dict[str, object] = {"__name__": "docs_example"}
    printed = io.StringIO()
    try:
        for block in blocks(page):
            if block.skipped:
                continue
            if block.script:
                _run_script(block, tmp_path)
                continue
            # line numbers in a traceback are the page's own
            source = "\n" * (block.line - 1) + block.code
            with contextlib.redirect_stdout(printed):
                exec(compile(source, str(page), "exec"), names)
    finally:
        zarrkit.config.reset()  # (a page may change settings for the whole process)
