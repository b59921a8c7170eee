"""Metadata-field plugins (issue 26, point 8): a package declares a top-level field of
`zarr.json` it understands; the kernel then accepts the field even with `must_understand`
true, and calls the plugin when a document carrying it is read and written. Consolidated
metadata is the first-party user. Third-party plugins here are real distributions on disk
(`fake_distribution`)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import zarrkit as zk
from zarrkit import registry
from zarrkit.errors import MetadataError, MustUnderstandError

GROUP = "zarrkit.metadata_fields"
FIELD = "example.audit"

#: a field plugin that records its calls and acts on writing (counts the writes)
AUDIT = """
from zarrkit.abc import MetadataField, names
from zarrkit.errors import MetadataError

CALLS = []

class Audit(MetadataField):
    names = names("example.audit")

    def read(self, value, site):
        CALLS.append(("read", site.node_type, dict(value)))
        if not isinstance(value.get("writes"), int):
            raise MetadataError("expected an integer", field="writes")
        return value

    def write(self, value, site):
        CALLS.append(("write", site.node_type, dict(value)))
        return {**value, "writes": value["writes"] + 1}
"""


def _add_field(doc_path: Path, value: object) -> None:
    doc = json.loads(doc_path.read_text())
    doc[FIELD] = value
    doc_path.write_text(json.dumps(doc))


@pytest.fixture
def audited(tmp_path: Path) -> Path:
    """A group and an array whose documents carry the field, `must_understand` left true."""
    root = zk.create_group(str(tmp_path))
    a = root.create_array("a", shape=(4,), chunks=(2,), dtype="i2")
    a[...] = np.arange(4, dtype="i2")
    for doc_path in (tmp_path / "zarr.json", tmp_path / "a" / "zarr.json"):
        _add_field(doc_path, {"must_understand": True, "writes": 0})
    return tmp_path


def _install_audit(fake_distribution) -> list:
    fake_distribution(
        "zarrkit-audit",
        entry_points={GROUP: {FIELD: "zk_audit:Audit"}},
        modules={"zk_audit": AUDIT},
    )
    import zk_audit  # type: ignore[import-not-found]

    calls: list = zk_audit.CALLS
    return calls


def test_a_field_that_must_be_understood_is_refused_without_its_plugin(audited: Path) -> None:
    for path in ("", "a"):
        with pytest.raises(MustUnderstandError) as info:
            zk.open(str(audited), path=path, mode="r")
        assert info.value.field == FIELD and "zarrkit.metadata_fields" in str(info.value)


def test_with_its_plugin_the_field_is_accepted_and_its_hooks_run(
    audited: Path, fake_distribution
) -> None:
    calls = _install_audit(fake_distribution)
    group = zk.open_group(str(audited), mode="r+")
    array = zk.open_array(str(audited), path="a", mode="r+")
    np.testing.assert_array_equal(array[...], np.arange(4))
    assert ("read", "group", {"must_understand": True, "writes": 0}) in calls
    assert ("read", "array", {"must_understand": True, "writes": 0}) in calls
    assert FIELD not in array.metadata.extra_fields  # understood, not merely skipped
    calls.clear()
    group.attrs["x"] = 1
    array.resize((6,))
    assert [(c[0], c[1]) for c in calls if c[0] == "write"] == [
        ("write", "group"),
        ("write", "array"),
    ]
    for doc_path in (audited / "zarr.json", audited / "a" / "zarr.json"):
        assert json.loads(doc_path.read_text())[FIELD] == {"must_understand": True, "writes": 1}
    assert zk.open_array(str(audited), path="a").shape == (6,)


def test_the_plugin_refusing_a_value_names_the_field(audited: Path, fake_distribution) -> None:
    _install_audit(fake_distribution)
    _add_field(audited / "zarr.json", {"must_understand": True, "writes": "many"})
    with pytest.raises(MetadataError) as info:
        zk.open_group(str(audited))
    assert info.value.field == f"{FIELD}.writes" and "zarr.json" in str(info.value)


def test_a_field_for_groups_only_is_not_understood_on_an_array(
    audited: Path, fake_distribution
) -> None:
    fake_distribution(
        "zarrkit-audit-groups",
        entry_points={GROUP: {FIELD: "zk_audit_groups:GroupAudit"}},
        modules={
            "zk_audit_groups": AUDIT
            + "\nclass GroupAudit(Audit):\n    node_types = frozenset({'group'})\n"
        },
    )
    zk.open_group(str(audited))
    with pytest.raises(MustUnderstandError):
        zk.open_array(str(audited), path="a")


# -- consolidated metadata, the first-party field plugin ------------------------------------------
def test_consolidated_metadata_is_a_first_party_field_plugin() -> None:
    (provider,) = registry.get_registry("metadata_field").entries()["consolidated_metadata"]
    assert provider.distribution == "zarrkit"
    cls = registry.lookup("metadata_field", "consolidated_metadata")
    assert cls.__module__ == "zarrkit.plugins.fields.consolidated"


def test_consolidated_metadata_marked_must_understand_is_read_and_written_back_skippable(
    tmp_path: Path,
) -> None:
    root = zk.create_group(str(tmp_path))
    root.create_array("a", shape=(3,), dtype="f4")
    zk.consolidate_metadata(str(tmp_path))
    doc = json.loads((tmp_path / "zarr.json").read_text())
    doc["consolidated_metadata"]["must_understand"] = True
    (tmp_path / "zarr.json").write_text(json.dumps(doc))
    group = zk.open_group(str(tmp_path), mode="r+")
    assert list(group.array_keys()) == ["a"]  # served from the consolidated documents
    group.attrs["edited"] = True
    written = json.loads((tmp_path / "zarr.json").read_text())["consolidated_metadata"]
    assert (written["kind"], written["must_understand"]) == ("inline", False)
    assert set(written["metadata"]) == {"a"}


def test_consolidated_metadata_null_reads_as_none(tmp_path: Path) -> None:
    """zarr-python reads `"consolidated_metadata": null` as no consolidated metadata."""
    zk.create_group(str(tmp_path)).create_group("g")
    doc = json.loads((tmp_path / "zarr.json").read_text())
    doc["consolidated_metadata"] = None
    (tmp_path / "zarr.json").write_text(json.dumps(doc))
    assert list(zk.open_group(str(tmp_path)).group_keys()) == ["g"]  # from the listing
