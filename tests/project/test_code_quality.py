"""The quality gates, run with the suite so `./dev test` is the one command a change must pass:
ruff's lint rules, ruff's formatting, and mypy under the pyproject configuration (strict, on the
installed package layout). Each test fails with the tool's own report.

Deselect them while iterating on something else: `./dev test -m "not quality"`.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.quality

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, capture_output=True, text=True, check=False
    )


def _passes(result: subprocess.CompletedProcess[str], what: str) -> None:
    if result.returncode != 0:
        pytest.fail(f"{what} failed:\n{result.stdout}{result.stderr}", pytrace=False)


def test_ruff_lint() -> None:
    _passes(_run("-m", "ruff", "check", "--no-cache", "."), "ruff check")


def test_ruff_format() -> None:
    _passes(_run("-m", "ruff", "format", "--check", "--no-cache", "."), "ruff format --check")


def test_mypy() -> None:
    _passes(_run(str(ROOT / "scripts" / "typecheck.py")), "mypy (scripts/typecheck.py)")
