"""Who answers a name several installed classes answer to (issue 26, point 6).

A provider that names an extension (its name or an alias) beats one that answers generically
(a name pattern, `matches_name`, or `generic = True`, as a bridge to another registry is); two
distributions that both name it are a `PluginConflictError`, raised only when the name is used;
several classes of one distribution are an `AmbiguousExtensionError`, which the metadata
settles (v2's `|O` by its object codec), never reported as a clash of distributions. Every
plugin here is a real distribution on disk (`fake_distribution`).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import zarrkit as zk
from zarrkit import config, registry
from zarrkit.abc.extension import V2, V3
from zarrkit.errors import AmbiguousExtensionError, PluginConflictError

KIND = "chunk_key_encoding"
GROUP = "zarrkit.chunk_key_encodings"


def encodings(**classes: str) -> str:
    """A module of chunk key encodings: class name -> the body after `names = `."""
    lines = [
        "from zarrkit.abc import ChunkKeyEncoding",
        "from zarrkit.abc import names",
        "",
    ]
    for class_name, body in classes.items():
        lines += [f"class {class_name}(ChunkKeyEncoding):", f"    {body}", ""]
    return "\n".join(lines)


@pytest.fixture
def family(fake_distribution) -> None:
    """A generic provider answering every `fam.*` name, as the numcodecs bridge answers ids."""
    fake_distribution(
        "family-bridge",
        entry_points={GROUP: {"fam.*": "fam_bridge:Bridge"}},
        modules={"fam_bridge": encodings(Bridge="names = names(pattern=r'fam\\..+')")},
    )


def test_a_package_naming_an_extension_beats_a_pattern(family, fake_distribution) -> None:
    assert registry.lookup(KIND, "fam.x").__module__ == "fam_bridge"
    fake_distribution(
        "fam-x",
        entry_points={GROUP: {"example.x": "fam_x:X"}},
        modules={"fam_x": encodings(X="names = names('example.x', aliases=['fam.x'])")},
    )
    assert registry.lookup(KIND, "fam.x").__module__ == "fam_x"
    assert registry.lookup(KIND, "fam.y").__module__ == "fam_bridge"  # not named: the bridge's
    with config.override(prefer={(KIND, "fam.x"): "family-bridge"}):
        assert registry.lookup(KIND, "fam.x").__module__ == "fam_bridge"


def test_a_class_declared_generic_yields_even_when_it_lists_the_name(fake_distribution) -> None:
    fake_distribution(
        "listing-bridge",
        entry_points={GROUP: {"listed": "listing:Bridge"}},
        modules={
            "listing": encodings(
                Bridge="names = names('listed', aliases=['shared.name'])\n    generic = True"
            )
        },
    )
    fake_distribution(
        "owner",
        entry_points={GROUP: {"owned": "owner_mod:Owner"}},
        modules={"owner_mod": encodings(Owner="names = names('owned', aliases=['shared.name'])")},
    )
    assert registry.lookup(KIND, "shared.name").__module__ == "owner_mod"


def test_two_packages_naming_it_still_conflict_only_when_used(family, fake_distribution) -> None:
    for letter in "ab":
        fake_distribution(
            f"fam-{letter}",
            entry_points={GROUP: {f"example.{letter}": f"fam_{letter}:X"}},
            modules={
                f"fam_{letter}": encodings(
                    X=f"names = names('example.{letter}', aliases=['fam.x'])"
                )
            },
        )
    with pytest.raises(PluginConflictError) as info:
        registry.lookup(KIND, "fam.x")
    assert "fam-a" in str(info.value) and "fam-b" in str(info.value)
    assert "family-bridge" not in str(info.value)  # the generic one is not in the running
    assert registry.lookup(KIND, "fam.y").__module__ == "fam_bridge"
    assert registry.lookup(KIND, "example.a").__module__ == "fam_a"
    with config.override(prefer={(KIND, "fam.x"): "fam-b"}):
        assert registry.lookup(KIND, "fam.x").__module__ == "fam_b"


def test_two_classes_of_one_distribution_are_ambiguous_not_a_clash(fake_distribution) -> None:
    fake_distribution(
        "one-dist",
        entry_points={GROUP: {"left": "one_dist:Left", "right": "one_dist:Right"}},
        modules={
            "one_dist": encodings(
                Left="names = names('left', v2='both')", Right="names = names('right', v2='both')"
            )
        },
    )
    with pytest.raises(AmbiguousExtensionError) as info:
        registry.lookup(KIND, "both", V2)
    assert not isinstance(info.value, PluginConflictError)
    assert "more than one distribution" not in str(info.value)
    assert {c.__name__ for c in info.value.classes} == {"Left", "Right"}
    assert registry.lookup(KIND, "left", V3).__name__ == "Left"


# -- the scenario inside zarrkit: v2 `|O`, settled by its object codec ------------------
@pytest.mark.parametrize("dtype", ["|O", object])
def test_v2_object_array_with_a_vlen_utf8_filter_writes_and_reads_back(tmp_path, dtype) -> None:
    data = np.array(["a", "", "ünï", "long " * 20, "x"], dtype=object)
    a = zk.create_array(
        str(tmp_path), shape=(5,), chunks=(2,), dtype=dtype, zarr_format=2, filters=["vlen-utf8"]
    )
    a[...] = data
    assert a.metadata.data_type.written_name(V3) == "string"
    zarray = json.loads((tmp_path / ".zarray").read_text())
    assert (zarray["dtype"], zarray["filters"]) == ("|O", [{"id": "vlen-utf8"}])
    assert list(zk.open_array(str(tmp_path))[...]) == list(data)


def test_v2_object_array_with_numcodecs_vlen_bytes_is_bytes(tmp_path) -> None:
    import numcodecs

    a = zk.create_array(
        str(tmp_path), shape=(3,), dtype="|O", zarr_format=2, filters=[numcodecs.VLenBytes()]
    )
    a[...] = np.array([b"a", b"\x00b", b""], dtype=object)
    assert a.metadata.data_type.written_name(V3) == "bytes"
    assert list(zk.open_array(str(tmp_path))[...]) == [b"a", b"\x00b", b""]


def test_object_dtype_without_an_object_codec_asks_for_one(tmp_path) -> None:
    with pytest.raises(AmbiguousExtensionError) as info:
        zk.create_array(str(tmp_path), shape=(3,), dtype="|O", zarr_format=2)
    message = str(info.value)
    assert "string" in message and "bytes" in message and "vlen-utf8" in message
    assert "more than one distribution" not in message


@pytest.mark.interop
def test_v2_object_array_written_by_zarrkit_reads_in_zarr_python(tmp_path) -> None:
    zarr = pytest.importorskip("zarr")
    data = np.array(["\u00e9t\u00e9", "bb", "", "dddd"], dtype=object)
    a = zk.create_array(
        str(tmp_path), shape=(4,), chunks=(3,), dtype=object, zarr_format=2, filters=["vlen-utf8"]
    )
    a[...] = data
    assert list(zarr.open_array(str(tmp_path), mode="r")[...]) == list(data)
