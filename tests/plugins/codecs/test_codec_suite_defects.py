"""Issue 47: `CodecTests`, run as a plugin author runs it (a test module subclassing it, in a
pytest run of its own), fails each defective codec of `defective_codecs.py` at the check made
for its defect, and passes the rest of the suite. Each check is deterministic: it does not
depend on how threads are scheduled or how much memory is free."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent

MODULE = """
import pytest
from zarrkit_testing import CodecTests
from defective_codecs import {name}


class TestDefect(CodecTests):
    registered = False
    dtypes = {dtypes!r}

    @pytest.fixture
    def codec(self):
        return {name}()
"""


def run_suite(tmp_path: Path, name: str, dtypes: tuple[str, ...]) -> dict[str, str]:
    """Each check of the suite on the codec `name` -> PASSED, FAILED, SKIPPED or ERROR."""
    (tmp_path / "test_defect.py").write_text(MODULE.format(name=name, dtypes=dtypes))
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-v", "test_defect.py"],
        cwd=tmp_path,
        env={**_env(), "PYTHONPATH": str(HERE)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    outcomes = {
        m.group(1): m.group(2)
        for m in re.finditer(r"::TestDefect::(\w+) (PASSED|FAILED|SKIPPED|ERROR)", run.stdout)
    }
    assert outcomes, run.stdout + run.stderr
    return outcomes


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}


INTS = ("int16", "int32", "float64")
INTEGERS = ("int16", "int32", "int64")


@pytest.mark.parametrize(
    "name, dtypes, fails",
    [
        # decode allocates what an 8-byte header says, and decode_bounded checks afterwards
        ("TrustsItsHeader", INTS, {"test_a_false_length_header_is_not_believed"}),
        # one module-level scratch buffer shared by every call
        ("ModuleScratch", INTS, {"test_one_instance_on_many_threads"}),
        # a 4-byte magic before the bytes, yet BytesBytesPartialDecode declared
        ("HeaderClaimsByteRanges", INTS, {"test_byte_ranges_pass_through"}),
        # doubling in the numpy type: right on int16 and wider, int8 wraps
        ("Doubling", INTS, {"test_narrow_types_round_trip_or_are_refused"}),
    ],
)
def test_the_suite_fails_each_defect_at_its_check(
    tmp_path: Path, name: str, dtypes: tuple[str, ...], fails: set[str]
) -> None:
    outcomes = run_suite(tmp_path, name, dtypes)
    failed = {test for test, outcome in outcomes.items() if outcome in ("FAILED", "ERROR")}
    assert failed == fails, outcomes
    assert outcomes["test_round_trip"] == "PASSED"  # each is right one call at a time


def test_a_delta_codec_on_a_narrow_type_is_refused_not_corrupted(tmp_path: Path) -> None:
    """Delta on the suite's int24 takes values out of 24 bits; the kernel refuses the chunk
    (a zarrkit error, nothing stored), so the suite passes it: nothing silently wrong."""
    outcomes = run_suite(tmp_path, "Delta", INTEGERS)
    assert outcomes["test_narrow_types_round_trip_or_are_refused"] == "PASSED", outcomes
    assert outcomes["test_round_trip"] == "PASSED"


def test_the_skips_are_shown_with_their_reason(tmp_path: Path) -> None:
    """A check that does not apply is a visible skip, never a silent pass."""
    outcomes = run_suite(tmp_path, "Delta", INTEGERS)
    for check in (
        "test_decoding_is_bounded_by_the_chunk",
        "test_a_false_length_header_is_not_believed",
        "test_byte_ranges_pass_through",
    ):
        assert outcomes[check] == "SKIPPED", outcomes
