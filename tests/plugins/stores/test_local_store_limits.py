"""The local store at the limits of its machine: a process allowed ~1,024 open files lists a
group of 1,100 members, and a read-only file system refuses every kind of write with a zarrkit
error that names what was refused, leaving the data as it was (issue 44, items 7 and 10)."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrkit as zk
from zarrkit.errors import ReadOnlyError, ZarrkitError

GROUP = json.dumps({"zarr_format": 3, "node_type": "group", "attributes": {}})
MEMBERS = 1100


@pytest.fixture
def wide(tmp_path: Path) -> Path:
    root = tmp_path / "wide.zarr"
    root.mkdir()
    (root / "zarr.json").write_text(GROUP)
    for i in range(MEMBERS):
        (root / f"m{i:04d}").mkdir()
        (root / f"m{i:04d}" / "zarr.json").write_text(GROUP)
    return root


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))


def test_a_group_wider_than_the_file_limit_is_listed(wide: Path) -> None:
    script = (
        "import sys, zarrkit as zk\n"
        "g = zk.open_group(sys.argv[1], mode='r')\n"
        "print(len(list(g.members())), g.info_complete().count_members)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", script, str(wide)],
        capture_output=True,
        text=True,
        preexec_fn=_limited,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == [str(MEMBERS), str(MEMBERS)]


@pytest.mark.parametrize("command", [["ls"], ["tree"], ["info"]])
def test_the_cli_lists_a_group_wider_than_the_file_limit(wide: Path, command: list[str]) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "zarrkit", *command, str(wide)],
        capture_output=True,
        text=True,
        preexec_fn=_limited,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "m1099" in run.stdout or command == ["info"]


# -- a read-only file system -----------------------------------------------------------------
@pytest.fixture
def read_only_fs(tmp_path: Path) -> Iterator[Callable[[], None]]:
    """A tmpfs of this test's own, mounted writable; the fixture's value remounts it read-only.
    Mounting needs root: elsewhere the test is skipped, except under CI, where it fails."""
    where = tmp_path / "fs"
    where.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(where)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"cannot mount a tmpfs for the read-only tests: {mounted.stderr}")
        pytest.skip(f"cannot mount a tmpfs here (not root?): {mounted.stderr.strip()}")

    def remount_read_only() -> None:
        subprocess.run(["mount", "-o", "remount,ro", str(where)], check=True)

    try:
        yield remount_read_only
    finally:
        subprocess.run(["umount", str(where)], check=False)


WRITES: dict[str, Callable[[str], Any]] = {
    "a whole write": lambda root: zk.open_array(root, path="a", mode="r+").__setitem__(
        slice(None), 5
    ),
    "a partial write": lambda root: zk.open_array(root, path="a", mode="r+").__setitem__(
        slice(0, 2), 5
    ),
    "an attribute update": lambda root: zk.open_array(root, path="a", mode="r+").attrs.update(
        {"x": 1}
    ),
    "create_array": lambda root: zk.open_group(root, mode="r+").create_array(
        "b", shape=(2,), dtype="i1"
    ),
    "mode w": lambda root: zk.open_group(root, mode="w"),
    "consolidation": lambda root: zk.consolidate_metadata(root),
    "a resize": lambda root: zk.open_array(root, path="a", mode="r+").resize((16,)),
    "a delete": lambda root: zk.open_group(root, mode="r+").__delitem__("a"),
    "a chunk back to fill": lambda root: zk.open_array(root, path="a", mode="r+").__setitem__(
        slice(0, 4), 0
    ),
}


@pytest.mark.parametrize("write", list(WRITES))
def test_every_write_to_a_read_only_file_system_is_a_read_only_error(
    tmp_path: Path, read_only_fs: Callable[[], None], write: str
) -> None:
    root = str(tmp_path / "fs" / "data.zarr")
    group = zk.open_group(root, mode="w")
    group.create_array("a", shape=(8,), chunks=(4,), dtype="i4", fill_value=0)[:] = np.arange(8)
    before = sorted(p.relative_to(root).as_posix() for p in Path(root).rglob("*"))
    read_only_fs()
    with pytest.raises(ReadOnlyError) as info:
        WRITES[write](root)
    assert isinstance(info.value, ZarrkitError)
    assert "read-only file system" in str(info.value)
    assert not isinstance(info.value.__cause__, ZarrkitError)  # the OS's refusal, chained
    after = sorted(p.relative_to(root).as_posix() for p in Path(root).rglob("*"))
    assert after == before
    np.testing.assert_array_equal(zk.open_array(root, path="a")[:], np.arange(8))
