"""The example metadata-field package (examples/revision-field), the one
docs/plugins/authoring-metadata-fields.md walks through: installed as a distribution of its own
(by `./dev` with pip, or here from its files when it is not), then used as a user would."""

from __future__ import annotations

import importlib.metadata as md
import json
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

import zarrkit as zk
from zarrkit import registry
from zarrkit.errors import MetadataError, MustUnderstandError

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "revision-field"
DIST = "zarrkit-example-revision"
FIELD = "example.revision"


@pytest.fixture
def example(fake_distribution) -> None:
    """The example package installed: as it is, or as a distribution built from its files."""
    try:
        md.distribution(DIST)
        return
    except md.PackageNotFoundError:
        pass
    project = tomllib.loads((EXAMPLE / "pyproject.toml").read_text())["project"]
    package = EXAMPLE / "src" / "zarrkit_example_revision"
    fake_distribution(
        project["name"],
        version=project["version"],
        entry_points=project["entry-points"],
        modules={"zarrkit_example_revision": (package / "__init__.py").read_text()},
    )


def _with_revision(tmp_path: Path) -> Path:
    a = zk.create_array(str(tmp_path), shape=(4,), chunks=(2,), dtype="u1")
    a[...] = np.arange(4, dtype="u1")
    doc_path = tmp_path / "zarr.json"
    doc = json.loads(doc_path.read_text())
    doc[FIELD] = {"must_understand": True, "revision": 0}
    doc_path.write_text(json.dumps(doc))
    return doc_path


def test_the_field_is_refused_unless_a_package_understands_it(tmp_path: Path) -> None:
    if registry.get_registry("metadata_field").find(FIELD) is not None:
        pytest.skip(f"{DIST} is installed in this environment")
    _with_revision(tmp_path)
    with pytest.raises(MustUnderstandError):
        zk.open_array(str(tmp_path))


def test_the_example_counts_rewrites(tmp_path: Path, example: None) -> None:
    doc_path = _with_revision(tmp_path)
    a = zk.open_array(str(tmp_path), mode="r+")
    np.testing.assert_array_equal(a[...], np.arange(4))
    a.attrs["note"] = "first"
    a.resize((6,))
    assert json.loads(doc_path.read_text())[FIELD] == {"must_understand": True, "revision": 2}


def test_the_example_refuses_a_bad_count_naming_it(tmp_path: Path, example: None) -> None:
    doc_path = _with_revision(tmp_path)
    doc = json.loads(doc_path.read_text())
    doc[FIELD]["revision"] = -1
    doc_path.write_text(json.dumps(doc))
    with pytest.raises(MetadataError) as info:
        zk.open_array(str(tmp_path))
    assert info.value.field == f"{FIELD}.revision"


def test_the_guide_shows_the_example_as_it_is() -> None:
    guide = (EXAMPLE.parents[1] / "docs" / "plugins" / "authoring-metadata-fields.md").read_text()
    shown = guide.split("```python\n", 1)[1].split("```", 1)[0]
    source = (EXAMPLE / "src" / "zarrkit_example_revision" / "__init__.py").read_text()
    body = shown[shown.index("class Revision") :]
    assert body.strip() in source
    entry_point = guide.split("```toml\n", 1)[1].split("```", 1)[0]
    assert entry_point.strip() in (EXAMPLE / "pyproject.toml").read_text()


@pytest.mark.slow
def test_the_package_own_tests_pass() -> None:
    if registry.get_registry("metadata_field").find(FIELD) is None:
        pytest.skip(f"{DIST} is not installed here (./dev test installs it)")
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(EXAMPLE / "tests")],
        capture_output=True,
        text=True,
        cwd=EXAMPLE,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert " passed" in run.stdout
