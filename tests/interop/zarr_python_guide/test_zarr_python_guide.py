"""zarr-python 3.4's user guide, every example, run with zarr-python and with zarrkit.

`pages/` holds the guide's examples as they are (one file per guide page, one named block per
example; see the header of each for the source and its MIT licence). `runner.py` runs them in
order in one subprocess per library, in the same folder (they write relative paths such as
`data/example-1.zarr`), changing only `import zarr` to `import zarrkit as zarr`. Each example's
printed text is compared after normalising only what must differ between two runs: the temp
folder's path, object addresses (`0x7f...`) and the ids that name memory stores
(`memory://140...`, the id of the store's dict, in both libraries).

An example that prints differently must be in `DIFFERENT` with the reason (each reason is
also in docs/zarr-python.md); one that starts printing the same must leave it.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("zarr")

pytestmark = [pytest.mark.interop, pytest.mark.slow]

RUNNER = Path(__file__).parent / "runner.py"

#: examples that print differently on purpose, and why (docs/zarr-python.md)
DIFFERENT = {
    "groups-17": "imports GroupMetadata from zarr-python's internal module `zarr.core.group`; "
    "zarrkit mirrors zarr-python's public modules only (create_hierarchy takes a node's "
    "document or `.metadata` instead)",
    "storage-13": "an fsspec store prints its URL (`FsspecStore('s3://bucket')`), which zarrkit's "
    "errors use to say where; zarr-python prints `<FsspecStore(S3FileSystem, bucket)>`",
    "storage-15": "a store over an obstore object prints its URL; zarr-python prints "
    "`object_store://<obstore.store.MemoryStore object at 0x...>`",
    "config-03": "zarrkit's own defaults under zarr-python's keys: `async.concurrency` 128 "
    "(zarr-python 10) and `threading.max_workers` the number of CPUs (zarr-python None)",
    "consolidated_metadata-05": "metadata objects print as zarrkit's dataclasses "
    "(`ArrayMetadata(format='v3', ...)`), not zarr-python's `ArrayV3Metadata(...)`",
    "consolidated_metadata-07": "metadata objects print as zarrkit's dataclasses, as above; and "
    "a member group read through its parent's consolidated metadata (`group['child']`) has "
    "`metadata.consolidated_metadata` None, where zarr-python gives it its own members (the "
    "parent's `metadata.consolidated_metadata.metadata['child']` has them in both)",
    "performance-10": "prints timings, which differ on every run of either library",
}
#: the guide's examples that print the same in zarrkit as in zarr-python, at least
SAME_AT_LEAST = 150


def _outcomes(library: str, work: Path, out: Path) -> dict[str, dict]:
    """Each example's outcome, by name, with one library, run in a fresh `work` folder."""
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    done = subprocess.run(
        [sys.executable, "-W", "ignore", str(RUNNER), library, str(out)],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return {o["name"]: o for o in json.loads(out.read_text())}


def _normalised(text: str, work: Path) -> str:
    text = text.replace(str(work), "<tmp>")
    text = re.sub(r"0x[0-9a-f]+", "0x...", text)
    return re.sub(r"memory://\d+", "memory://<id>", text)


def test_the_guide_prints_the_same_with_zarrkit(tmp_path: Path) -> None:
    work = tmp_path / "work"
    theirs = _outcomes("zarr", work, tmp_path / "zarr.json")
    ours = _outcomes("zarrkit", work, tmp_path / "zarrkit.json")
    assert theirs.keys() == ours.keys()
    ran = [name for name, o in theirs.items() if o["raised"] is None]  # (the rest need a network)
    same, different, raised = [], {}, {}
    for name in ran:
        mine = ours[name]
        if mine["raised"] is not None:
            raised[name] = mine["raised"]
        elif _normalised(mine["printed"], work) == _normalised(theirs[name]["printed"], work):
            same.append(name)
        else:
            different[name] = (theirs[name]["printed"], mine["printed"])
    print(
        f"zarr-python's guide: {len(theirs)} examples, {len(ran)} run with zarr-python; with "
        f"zarrkit {len(same)} print the same, {len(different)} differ, {len(raised)} raise"
    )
    unexpected = {n: v for n, v in {**different, **raised}.items() if n not in DIFFERENT}
    assert not unexpected, f"examples that now differ: {unexpected}"
    no_longer = sorted(n for n in DIFFERENT if n in same)
    assert not no_longer, f"print the same now, take them out of DIFFERENT: {no_longer}"
    assert len(same) >= SAME_AT_LEAST
