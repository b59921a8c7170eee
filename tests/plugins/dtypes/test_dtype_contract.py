"""The data type contract as an outside author meets it: a type whose stored size is not its
size in memory (an int24 held as int32, stored in 3 bytes), codecs that cannot lay a type out
refusing it when the array is created or opened, the deprecated `item_size`, and the
conformance suite failing on deliberately broken types."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest
from zarrkit_testing import DataTypeTests, narrow
from zarrkit_testing.narrow import HIGH, LOW

import zarrkit
from zarrkit import registry
from zarrkit.abc import V3, DataType, names
from zarrkit.errors import CodecChainError


class Int24(narrow.Int24):
    """A signed 24-bit integer: held as int32 in memory, stored as 3 bytes (the testing
    package's, registered under this test's own name)."""

    names = names("test.int24")


class Int24Unpackable(Int24):
    """The same bytes, but the type says nothing of its bits: packbits cannot take it."""

    names = names("test.int24-unpackable")

    @property
    def bit_layout(self) -> tuple[int, int, bool] | None:
        return None


SAMPLE = np.array([LOW, -1, 0, 1, 0x123456, HIGH, -0x10203, 7], dtype=np.int32)


class TestInt24(DataTypeTests):
    fill_values = (LOW, HIGH, -5)

    @pytest.fixture
    def data_type(self) -> DataType:
        return Int24()

    @pytest.fixture
    def sample(self) -> np.ndarray:
        return SAMPLE


@contextmanager
def registered(*classes: type[DataType]) -> Iterator[None]:
    handles = [registry.register("data_type", cls) for cls in classes]
    try:
        yield
    finally:
        for handle in handles:
            registry.unregister(handle)


@pytest.fixture
def int24_types():
    with registered(Int24, Int24Unpackable):
        yield


@pytest.fixture(autouse=True)
def _broken_types():
    """The deliberately wrong types below, reachable by name as an installed plugin is."""
    with registered(_BadLayout, _WrongStoredSize, _NoSignExtension, _LossyFill, _NoBitsDeclared):
        yield


def test_sizes_are_named_apart():
    assert (Int24().stored_size, Int24().memory_size) == (3, 4)


@pytest.mark.parametrize(
    "codec,size",
    [({"name": "bytes", "configuration": {"endian": "big"}}, 24), ({"name": "packbits"}, 24)],
)
def test_int24_stores_three_bytes_per_element(tmp_path, int24_types, codec, size):
    a = zarrkit.create_array(tmp_path, shape=(8,), dtype="test.int24", chunks=(8,), codecs=[codec])
    a[...] = SAMPLE
    assert (tmp_path / "c" / "0").stat().st_size == size
    assert zarrkit.open_array(tmp_path)[...].tolist() == SAMPLE.tolist()


def test_a_codec_that_cannot_pack_the_type_refuses_it_at_creation(tmp_path, int24_types):
    with pytest.raises(
        CodecChainError, match="'packbits' cannot handle data type 'test.int24-unpackable'"
    ):
        zarrkit.create_array(
            tmp_path, shape=(8,), dtype="test.int24-unpackable", codecs=[{"name": "packbits"}]
        )
    assert not (tmp_path / "zarr.json").exists()  # nothing written


def test_a_codec_that_cannot_pack_the_type_refuses_it_at_open(tmp_path, int24_types):
    zarrkit.create_array(tmp_path, shape=(8,), dtype="test.int24-unpackable", chunks=(4,))
    doc = json.loads((tmp_path / "zarr.json").read_text())
    doc["codecs"] = [{"name": "packbits"}]
    (tmp_path / "zarr.json").write_text(json.dumps(doc))
    with pytest.raises(CodecChainError, match="'packbits' cannot handle data type"):
        zarrkit.open_array(tmp_path)


class _BadLayout(Int24):
    """An author's first try: a numpy typestring numpy has no dtype for."""

    names = names("test.int24-bad-layout")

    @property
    def stored_size(self) -> int:
        return 3

    def encoded_dtype(self, endian: str | None) -> np.dtype:
        return np.dtype(("<" if endian != "big" else ">") + "u3")


@pytest.mark.parametrize("codec", ["bytes", "packbits"])
def test_a_type_whose_layout_numpy_refuses_is_refused_at_creation(tmp_path, codec):
    # before: `TypeError: data type '<u3' not understood` at the first write
    with pytest.raises(
        CodecChainError, match=f"'{codec}' cannot handle data type 'test.int24-bad-layout'"
    ):
        zarrkit.create_array(tmp_path, shape=(8,), dtype=_BadLayout(), codecs=[{"name": codec}])


def test_sharding_refuses_what_its_inner_serializer_cannot_take(tmp_path, int24_types):
    inner = {
        "chunk_shape": [4],
        "codecs": [{"name": "packbits"}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
    }
    with pytest.raises(CodecChainError, match="'packbits' cannot handle"):
        zarrkit.create_array(
            tmp_path,
            shape=(8,),
            dtype=Int24Unpackable(),
            chunks=(8,),
            codecs=[{"name": "sharding_indexed", "configuration": inner}],
        )


# -- the deprecated `item_size` --------------------------------------------------------------
def test_item_size_still_reads_the_stored_size_with_a_warning():
    with pytest.warns(DeprecationWarning, match="stored_size"):
        assert Int24().item_size == 3


def test_a_type_that_defines_item_size_keeps_working(tmp_path):
    with pytest.warns(DeprecationWarning, match="define stored_size"):

        class Legacy(Int24):
            names = names("test.int24-legacy")

            @property
            def item_size(self) -> int:
                return 3

    assert Legacy().stored_size == 3
    with registered(Legacy):
        a = zarrkit.create_array(tmp_path, shape=(8,), dtype=Legacy(), chunks=(8,))
        a[...] = SAMPLE
        assert zarrkit.open_array(tmp_path)[...].tolist() == SAMPLE.tolist()


# -- the suite fails on broken types ---------------------------------------------------------
class _WrongStoredSize(Int24):
    names = names("test.broken-size")

    @property
    def stored_size(self) -> int:
        return 4  # what numpy holds it as, not what is stored


class _NoSignExtension(Int24):
    names = names("test.broken-sign")

    def from_encoded(self, stored: np.ndarray, endian: str | None) -> np.ndarray:
        raw = np.ascontiguousarray(stored).reshape(-1).view(np.uint8).reshape(-1, 3)
        if endian == "big":
            raw = raw[:, ::-1]
        wide = np.zeros((raw.shape[0], 4), dtype=np.uint8)
        wide[:, :3] = raw
        return wide.view("<i4").reshape(stored.shape)


class _LossyFill(Int24):
    names = names("test.broken-fill")

    def fill_to_json(self, value: Any, format: str = V3) -> Any:
        return int(value) // 2 * 2  # odd fill values come back even


class _NoBitsDeclared(Int24):
    """Says it packs into 32 bits per 3-byte component: packbits must refuse it, and a type
    that raises something else than a refusal fails the suite."""

    names = names("test.broken-bits")

    @property
    def bit_layout(self) -> tuple[int, int, bool]:
        return 32, 1, True


def test_the_suite_fails_on_a_stored_size_that_is_not_the_stored_layout():
    with pytest.raises(AssertionError):
        DataTypeTests().test_sizes(_WrongStoredSize())


def test_the_suite_fails_on_a_layout_that_loses_values():
    with pytest.raises(AssertionError):
        DataTypeTests().test_bytes_layout_round_trip(_NoSignExtension(), SAMPLE, "little")


def test_the_suite_fails_on_fill_values_that_do_not_round_trip():
    class Suite(DataTypeTests):
        fill_values = (-5,)

    with pytest.raises(AssertionError):
        Suite().test_fill_values_round_trip(_LossyFill())


def test_the_suite_fails_on_a_type_a_serializer_breaks_on_after_creation():
    class Suite(DataTypeTests):
        serializers = ({"name": "bytes", "configuration": {"endian": "little"}},)

    with pytest.raises(AssertionError):
        Suite().test_serializers_refuse_at_creation_or_round_trip(_NoSignExtension(), SAMPLE)


def test_the_suite_passes_on_a_refusal_that_names_codec_and_type():
    class Suite(DataTypeTests):
        serializers = ({"name": "packbits"},)

    Suite().test_serializers_refuse_at_creation_or_round_trip(_NoBitsDeclared(), SAMPLE)


@pytest.mark.parametrize("serializer", ["bytes", "packbits"])
def test_the_guides_int24_behind_a_filter_is_refused_out_of_range(
    tmp_path, int24_types, serializer
):
    """The data-type guide's Int24 cuts values to 3 bytes without a check: the kernel checks its
    `int_range` after scale_offset doubles the values, so 2**24 - 2 is refused, not stored cut
    (it read back as -2), and the chunk stays as it was (issue 47)."""
    from zarrkit.errors import ValueCastError

    a = zarrkit.create_array(
        tmp_path,
        shape=(4,),
        dtype="test.int24",
        chunks=(4,),
        filters=[{"name": "scale_offset", "configuration": {"offset": 0, "scale": 2}}],
        serializer={"name": serializer},
        compressors=None,
        fill_value=0,
    )
    a[:] = [LOW // 2, 0, HIGH // 2, 1]  # doubled within 24 bits
    with pytest.raises(ValueCastError, match=r"chunk 'c/0'.*'test\.int24'"):
        a[:] = [LOW, HIGH, LOW, HIGH]
    np.testing.assert_array_equal(zarrkit.open_array(tmp_path)[:], [LOW // 2, 0, HIGH // 2, 1])
