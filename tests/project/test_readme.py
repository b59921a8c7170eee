"""The README says what a README is for, and says it truly: its first commands are the two
`./dev` commands that set everything up (and `dev` has them), its example runs, and every
link it gives to the documentation leads to a file of the repository."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _dev_commands() -> set[str]:
    """The commands `dev` dispatches on (its `case` labels)."""
    return set(re.findall(r"^    (\w+)\)$", (ROOT / "dev").read_text(), re.M))


def test_the_first_commands_are_demo_and_test() -> None:
    first = README.split("```sh\n", 1)[1].split("```", 1)[0]
    commands = [line.split("#")[0].split() for line in first.splitlines()]
    assert commands == [["./dev", "demo"], ["./dev", "test"]]
    assert {"demo", "test", "docs"} <= _dev_commands()


def test_the_docs_commands_exist() -> None:
    assert "./dev docs " in README and "./dev docs --serve" in README


def test_the_links_lead_to_files() -> None:
    links = re.findall(r"\]\(([^)#]+)\)", README)
    local = [link for link in links if "://" not in link]
    assert "docs/guide/index.md" in local and "docs/zarr-python.md" in local
    for link in local:
        assert (ROOT / link).exists(), link


def test_the_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code = README.split("## Example", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(tmp_path)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, "README.md (Example)", "exec"), {})
    assert printed.getvalue() == "(365, 100) (30, 100) degC\n"
