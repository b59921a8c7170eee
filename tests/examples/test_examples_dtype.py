"""The example data type package (examples/int3-data-type), pip-installed into the test
environment, used exactly as a user would: found by entry point, data round-tripped, and the
collision rules when a second provider claims its name."""

from __future__ import annotations

import importlib.metadata as md
import json

import numpy as np
import pytest

import zarrkit
from zarrkit import config, registry
from zarrkit.errors import PluginConflictError

DIST = "zarrkit-example-int3"

pytestmark = pytest.mark.skipif(
    not any(ep.name == "example.int3" for ep in md.entry_points(group="zarrkit.data_types")),
    reason=f"{DIST} is not installed (./dev installs every package under examples/)",
)


def test_found_by_entry_point_of_its_distribution():
    (provider,) = registry.get_registry("data_type").entries()["example.int3"]
    assert provider.distribution == DIST
    assert registry.lookup("data_type", "example.int3").__module__ == "zarrkit_example_int3"


@pytest.mark.parametrize("codec", ["bytes", "packbits"])
def test_round_trip(tmp_path, codec):
    values = np.array([[-4, 3, 0], [1, -1, 2]], dtype=np.int8)
    a = zarrkit.create_array(
        tmp_path,
        shape=(2, 3),
        dtype="example.int3",
        chunks=(1, 2),
        codecs=[{"name": codec}, {"name": "zstd"}],
        fill_value=-2,
    )
    a[...] = values
    doc = json.loads((tmp_path / "zarr.json").read_text())
    assert doc["data_type"] == "example.int3" and doc["fill_value"] == -2
    b = zarrkit.open_array(tmp_path)
    assert b[...].tolist() == values.tolist()
    b2 = zarrkit.open_array(tmp_path, mode="r+")
    b2.resize(3, 3)
    assert b2[2].tolist() == [-2, -2, -2]


_OTHER_INT3 = """
import numpy as np
from zarrkit.abc import names
from zarrkit_example_int3 import Int3

class OtherInt3(Int3):
    names = names("example.int3")

    def fill_from_json(self, value, format="v3"):
        return np.int8(3)  # recognisably different
"""


def test_second_provider_is_a_conflict_until_one_is_preferred(tmp_path, fake_distribution):
    fake_distribution(
        "other-int3",
        entry_points={"zarrkit.data_types": {"example.int3": "other_int3:OtherInt3"}},
        modules={"other_int3": _OTHER_INT3},
    )
    with pytest.raises(PluginConflictError) as info:
        registry.lookup("data_type", "example.int3")
    assert DIST in str(info.value) and "other-int3" in str(info.value)
    # other names keep working while this one is contested
    assert registry.lookup("data_type", "int8").__name__ == "Int8"
    with config.override(prefer={("data_type", "example.int3"): DIST}):
        assert registry.lookup("data_type", "example.int3").__module__ == "zarrkit_example_int3"
    with config.override(prefer={("data_type", "example.int3"): "other-int3"}):
        assert registry.lookup("data_type", "example.int3").__name__ == "OtherInt3"


def test_runtime_registration_overrides_the_installed_one(zarrkit_register):
    from zarrkit_example_int3 import Int3

    class Patched(Int3):
        pass

    zarrkit_register("data_type", Patched, name="example.int3")
    assert registry.lookup("data_type", "example.int3") is Patched


@pytest.mark.parametrize("serializer", ["bytes", "packbits"])
def test_a_filter_leaving_the_range_is_refused_not_stored(tmp_path, serializer):
    """The guide's int3 behind scale_offset doubling: 3 becomes 6, which 3 bits cannot hold; the write is refused and what was stored stays (issue 47)."""
    from zarrkit.errors import ValueCastError

    a = zarrkit.create_array(
        tmp_path,
        shape=(4,),
        dtype="example.int3",
        chunks=(4,),
        filters=[{"name": "scale_offset", "configuration": {"offset": 0, "scale": 2}}],
        serializer={"name": serializer},
        compressors=None,
        fill_value=0,
    )
    a[:] = [0, 1, -2, 1]  # doubled within 3 bits
    with pytest.raises(ValueCastError, match=r"chunk 'c/0'.*outside the range -4\.\.3"):
        a[:] = [-4, 3, -4, 3]
    np.testing.assert_array_equal(zarrkit.open_array(tmp_path)[:], [0, 1, -2, 1])
