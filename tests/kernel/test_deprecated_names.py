"""Names of earlier releases still work for a plugin written against them, each with a
DeprecationWarning that names what to use instead: the renamed contract names of
`zarrkit.abc`, the helpers that moved to `zarrkit.helpers`, and `MetadataError`'s `key`."""

from __future__ import annotations

import pytest

import zarrkit.abc
import zarrkit.helpers
from zarrkit.errors import MetadataError


@pytest.mark.parametrize(
    "old, new",
    [
        ("Absence", zarrkit.abc.Diagnosis),
        ("BoundChain", zarrkit.helpers.ChunkPlan),
        ("Lasting", zarrkit.abc.CacheableRange),
        ("Names", zarrkit.abc.ExtensionNames),
        ("Skipped", zarrkit.abc.SkippedExtension),
        ("scratch", zarrkit.abc.thread_buffer),
        ("Gate", zarrkit.helpers.InFlightLimit),
        ("CodecChain", zarrkit.helpers.CodecChain),
        ("open_store", zarrkit.helpers.open_store),
        ("data_type_from_native", zarrkit.helpers.data_type_from_native),
        ("gather_limited", zarrkit.helpers.gather_limited),
        ("optimistic_update", zarrkit.helpers.optimistic_update),
    ],
)
def test_an_old_name_of_zarrkit_abc_is_the_new_one_with_a_warning(old: str, new: object) -> None:
    with pytest.warns(DeprecationWarning, match=rf"zarrkit\.abc\.{old} is deprecated.*use "):
        found = getattr(zarrkit.abc, old)
    assert found is new


def test_the_old_names_are_not_the_contract() -> None:
    """Nothing deprecated is listed as public, and a name no release had is no attribute."""
    assert not {"BoundChain", "Lasting", "open_store", "CodecChain"} & set(zarrkit.abc.__all__)
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        _ = zarrkit.abc.no_such_name  # type: ignore[attr-defined]


def test_metadata_error_key_is_field() -> None:
    with pytest.warns(DeprecationWarning, match="use field"):
        error = MetadataError("bad level", key="configuration.level")
    assert error.field == "configuration.level"
    assert "field 'configuration.level'" in str(error)
    with pytest.warns(DeprecationWarning, match="use field"):
        assert error.key == "configuration.level"
    with pytest.warns(DeprecationWarning, match="use field"):
        located = MetadataError("bad").locate(key="codecs.0", where="zarr.json")
    assert (located.field, located.where) == ("codecs.0", "zarr.json")
