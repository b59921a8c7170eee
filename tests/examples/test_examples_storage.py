"""The example storage transformer and store packages (examples/checksum-transformer,
examples/sqlite-store), pip-installed into the test environment by `./dev` as a user would
install them: found by entry point, used through arrays, checked by `zarrkit plugins --check`,
and each package's own tests (the conformance suites) run here."""

from __future__ import annotations

import importlib.metadata as md
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import zarrkit as zk
from zarrkit import registry

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
INSTALLED = {ep.name for ep in md.entry_points(group="zarrkit.storage_transformers")} | {
    ep.name for ep in md.entry_points(group="zarrkit.stores")
}
if not {"example.checksum", "sqlite"} <= INSTALLED:
    pytest.skip(
        "zarrkit-example-checksum and zarrkit-example-sqlite are not installed (./dev installs "
        "every package under examples/)",
        allow_module_level=True,
    )


def _own_tests(folder: str, name: str) -> ModuleType:
    """A package's own test module, loaded under a name of its own, so that its test
    classes and functions run as part of this module."""
    path = EXAMPLES / folder / "tests" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"_examples_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_checksum = _own_tests("checksum-transformer", "test_checksum")
_sqlite = _own_tests("sqlite-store", "test_sqlite")
TestChecksum = _checksum.TestChecksum
test_a_damaged_chunk_is_reported = _checksum.test_a_damaged_chunk_is_reported
TestSqliteStore = _sqlite.TestSqliteStore
test_an_array_by_url = _sqlite.test_an_array_by_url


def test_found_by_entry_point_of_their_distributions() -> None:
    for kind, name, dist, module in (
        ("storage_transformer", "example.checksum", "zarrkit-example-checksum", "checksum"),
        ("store", "sqlite", "zarrkit-example-sqlite", "sqlite"),
    ):
        (provider,) = registry.get_registry(kind).entries()[name]
        assert provider.distribution == dist
        assert registry.lookup(kind, name).__module__ == f"zarrkit_example_{module}"


def test_an_array_through_both(tmp_path: Path) -> None:
    """A checksummed array in a SQLite file: written, read back, and its chunks stored with
    their checksums."""
    import zlib

    url = f"sqlite://{tmp_path / 'x.db'}"
    data = np.arange(24, dtype="int16").reshape(4, 6)
    a = zk.create_array(
        url,
        path="t",
        shape=data.shape,
        chunks=(2, 6),
        dtype="int16",
        codecs=["bytes"],
        storage_transformers=[
            {"name": "example.checksum", "configuration": {"algorithm": "crc32"}}
        ],
    )
    a[...] = data
    store = zk.open_group(url, mode="r").store
    meta = json.loads(store.get("t/zarr.json") or b"")
    assert meta["storage_transformers"] == [
        {"name": "example.checksum", "configuration": {"algorithm": "crc32"}}
    ]
    chunk = store.get("t/c/0/0")
    assert chunk == data[:2].astype("<i2").tobytes() + zlib.crc32(chunk[:-4]).to_bytes(4, "big")
    np.testing.assert_array_equal(zk.open_array(url, path="t", mode="r")[...], data)


def test_plugins_check_passes() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "zarrkit", "plugins", "--check", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    found = {(p["kind"], p["name"]): p for p in json.loads(run.stdout)}
    for key in (("storage_transformer", "example.checksum"), ("store", "sqlite")):
        assert found[key]["problems"] == [], found[key]


# -- the guides show the examples as they are -----------------------------------------------
DOCS = EXAMPLES.parent / "docs" / "plugins"


def _blocks(guide: str) -> list[str]:
    text = (DOCS / guide).read_text()
    return [
        block.split("\n", 1)[1] for block in text.split("```")[1::2] if block.startswith("python")
    ]


def _lines(code: str) -> set[str]:
    """Lines of code as written, less trailing comments and the guide's elisions."""
    kept = (line.split("  #")[0].rstrip() for line in code.splitlines())
    return {line for line in kept if line.strip() and "..." not in line}


@pytest.mark.parametrize(
    "guide, files",
    [
        (
            "authoring-storage-transformers.md",
            [
                "checksum-transformer/src/zarrkit_example_checksum/__init__.py",
                "checksum-transformer/tests/test_checksum.py",
            ],
        ),
        (
            "authoring-stores.md",
            [
                "sqlite-store/src/zarrkit_example_sqlite/__init__.py",
                "sqlite-store/tests/test_sqlite.py",
            ],
        ),
    ],
)
def test_the_guide_quotes_the_example_package(guide: str, files: list[str]) -> None:
    """Each code block of the example package in a guide is a part of the package's files
    (the guide may leave lines out, marked "...")."""
    sources = [(EXAMPLES / f).read_text() for f in files]
    quoted = [b for b in _blocks(guide) if "class " in b]
    assert len(quoted) >= 2
    for block in quoted:
        missing = [line for line in sorted(_lines(block)) if not any(line in s for s in sources)]
        assert missing == [], f"{guide} quotes lines the example does not have: {missing}"
