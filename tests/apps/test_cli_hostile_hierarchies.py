"""The command line on hierarchies a hostile or careless writer made: names that carry
terminal control characters are printed escaped (never raw), and hierarchies deeper than
Python's recursion limit are walked by every command (issue 44, items 8 and 9)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import zarrkit as zk

#: a bell, an escape sequence, the C1 CSI, a carriage return, a backspace, a newline that
#: would forge a line, and a right-to-left override
HOSTILE = [
    "bell\x07",
    "esc\x1b[31mred",
    "csi\x9b2J",
    "cr\rx",
    "bs\x08y",
    "nl\nforged",
    "rlo\u202etxt",
]


def zarrkit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "zarrkit", *args], capture_output=True, text=True, timeout=300
    )


def raw_controls(text: str) -> list[str]:
    """Characters a terminal would act on, other than the line breaks between lines."""
    return [
        ch
        for ch in text
        if ch != "\n" and (unicodedata.category(ch) == "Cc" or "\u202a" <= ch <= "\u202e")
    ]


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    root = tmp_path / "hostile.zarr"
    group = zk.open_group(str(root), mode="w")
    for name in HOSTILE:
        a = group.create_array(name, shape=(2,), dtype="i1", dimension_names=[f"d{name}"])
        a[:] = 1
        a.attrs[f"k{name}"] = f"v{name}"
    return root


@pytest.mark.parametrize("command", [["tree"], ["ls", "-r"], ["info"], ["check"]])
def test_control_characters_in_names_are_printed_escaped(hostile: Path, command: list[str]) -> None:
    run = zarrkit(*command, str(hostile))
    assert run.returncode == 0, run.stderr
    assert raw_controls(run.stdout + run.stderr) == []
    if command[0] in ("tree", "ls"):
        # every member on a line of its own: no name forged one
        assert len(run.stdout.splitlines()) == len(HOSTILE) + (1 if command[0] == "tree" else 0)
        assert "esc\\x1b[31mred" in run.stdout and "nl\\nforged" in run.stdout


@pytest.mark.parametrize("name", HOSTILE)
def test_info_of_an_array_escapes_its_attributes_and_dimensions(hostile: Path, name: str) -> None:
    run = zarrkit("info", str(hostile), "--path", name)
    assert run.returncode == 0, run.stderr
    assert raw_controls(run.stdout + run.stderr) == []


def test_a_fault_in_a_hostile_array_is_reported_escaped(hostile: Path) -> None:
    chunk = hostile / "esc\x1b[31mred" / "c" / "0"
    chunk.write_bytes(b"not zstd at all")
    run = zarrkit("check", str(hostile))
    assert run.returncode != 0
    assert "esc\\x1b[31mred" in run.stdout
    assert raw_controls(run.stdout + run.stderr) == []


# -- deep hierarchies ------------------------------------------------------------------------
DEPTH = 1200  # beyond Python's default recursion limit of 1000 frames


def _remove_bottom_up(root: Path) -> None:
    """Remove a tree deeper than Python's recursion limit (shutil.rmtree, and so pytest's own
    clean-up of old temporary folders, recurses once per level)."""
    for folder, folders, files in os.walk(root, topdown=False):
        for name in files:
            os.unlink(os.path.join(folder, name))
        for name in folders:
            os.rmdir(os.path.join(folder, name))
    os.rmdir(root)


@pytest.fixture
def deep(tmp_path: Path) -> Iterator[Path]:
    """Groups nested DEPTH deep with an array at the bottom, written document by document;
    removed again afterwards, as no recursive clean-up could."""
    root = tmp_path / "deep.zarr"
    group = json.dumps({"zarr_format": 3, "node_type": "group", "attributes": {}})
    path = root
    path.mkdir()
    (path / "zarr.json").write_text(group)
    for _ in range(DEPTH):
        path = path / "a"
        path.mkdir()
        (path / "zarr.json").write_text(group)
    bottom = zk.open_group(str(root), path="/".join(["a"] * DEPTH), mode="r+")
    bottom.create_array("x", shape=(3,), dtype="i2", fill_value=0)[:] = [1, 2, 3]
    yield root
    for made in (root, tmp_path / "copy.zarr"):
        if made.exists():
            _remove_bottom_up(made)


def test_members_walks_any_depth(deep: Path) -> None:
    root = zk.open_group(str(deep), mode="r")
    members = list(root.members(max_depth=None))
    assert len(members) == DEPTH + 1
    assert members[-1][0] == "/".join(["a"] * DEPTH + ["x"])
    assert root.tree().count("\n") == DEPTH + 2
    assert root.info_complete().count_arrays == 1


@pytest.mark.slow
@pytest.mark.parametrize(
    "command", [["tree"], ["tree", "--json"], ["ls", "-r"], ["info"], ["check"]]
)
def test_every_command_walks_a_deep_hierarchy(deep: Path, command: list[str]) -> None:
    run = zarrkit(*command, str(deep))
    assert run.returncode == 0, run.stderr[-2000:]
    assert "Traceback" not in run.stderr


@pytest.mark.slow
def test_copy_of_a_deep_hierarchy_keeps_its_values(deep: Path, tmp_path: Path) -> None:
    target = tmp_path / "copy.zarr"
    run = zarrkit("copy", str(deep), str(target))
    assert run.returncode == 0, run.stderr[-2000:]
    copied = zk.open_array(str(target), path="/".join(["a"] * DEPTH + ["x"]))
    np.testing.assert_array_equal(copied[:], [1, 2, 3])
