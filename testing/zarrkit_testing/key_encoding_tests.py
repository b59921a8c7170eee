"""A conformance suite every chunk key encoding plugin should pass: subclass it in a test module.

    class TestMyKeys(ChunkKeyEncodingTests):
        @pytest.fixture
        def key_encoding(self):
            return MyKeyEncoding(separator="/")   # an instance to test

Optional: `bad_configurations` (JSON configurations the encoding must refuse with a
`MetadataError`, besides an unknown field), `registered` (False: the suite registers the
class for each test instead of requiring its entry point).

The suite asks what the kernel and every store ask of an encoding
(`zarrkit.abc.ChunkKeyEncoding`): `decode(encode(coords)) == coords` for 0-d to 4-d chunks
and coordinates up to 2**40 (a 0-d chunk's key may decode as zeros: v2 spells it `0`); distinct coordinates give distinct keys; keys are valid store
keys (relative, no empty, `.` or `..` segment, never a metadata document's name); a
`separator` in the configuration is the one keys are split by (`/` nests, `.` does not); the
JSON round trip in every format; a real array's stored chunk keys are exactly the encoded ones.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

from zarrkit import registry
from zarrkit.abc import V3, ChunkKeyEncoding, check_key
from zarrkit.errors import ZarrkitError

from .extension_checks import check_bad_configurations, check_json_round_trip, check_odd_values
from .reachable import reachable

#: names a chunk key must never take: the metadata documents of every format
METADATA_NAMES = frozenset({"zarr.json", ".zarray", ".zgroup", ".zattrs", ".zmetadata"})


def sample_coords(ndim: int) -> list[tuple[int, ...]]:
    """Small coordinates, all of them, and a few large ones: what keys are made of."""
    small = list(itertools.product(range(13 if ndim < 3 else 4), repeat=ndim))
    big = [tuple(v * (d + 1) for d in range(ndim)) for v in (99, 1000, 12345, 2**40)]
    return small + [c for c in big if c not in small]


class ChunkKeyEncodingTests:
    """Behaviour every chunk key encoding owes the chunk engine and the stores."""

    #: ranks of the chunk coordinates to try
    ndims: ClassVar[tuple[int, ...]] = (0, 1, 2, 3, 4)
    #: configurations the encoding must refuse with a MetadataError (besides an unknown field)
    bad_configurations: ClassVar[tuple[dict[str, Any], ...]] = ()
    #: False: the class need not be reachable through an entry point
    registered: ClassVar[bool] = True

    @pytest.fixture(autouse=True)
    def _reachable(self, key_encoding: ChunkKeyEncoding) -> Iterator[None]:
        if self.registered:
            yield
            return
        cls = type(key_encoding)
        with reachable("chunk_key_encoding", cls, cls.names.written(V3)):
            yield

    # -- names and JSON --------------------------------------------------------------------
    def test_names_resolve_to_the_class(self, key_encoding: ChunkKeyEncoding) -> None:
        formats = type(key_encoding).names.formats()
        assert formats, f"{type(key_encoding).__name__} has no name in any format"
        for fmt in formats:
            name = key_encoding.written_name(fmt)
            found = registry.lookup("chunk_key_encoding", name, fmt)
            assert found is type(key_encoding), (fmt, name, found)

    def test_json_round_trip(self, key_encoding: ChunkKeyEncoding) -> None:
        check_json_round_trip(key_encoding, type(key_encoding).names.formats())

    def test_bad_configuration_is_a_metadata_error(self, key_encoding: ChunkKeyEncoding) -> None:
        check_bad_configurations(key_encoding, self.bad_configurations)

    def test_odd_configuration_values_are_refused_with_zarrkit_errors(
        self, key_encoding: ChunkKeyEncoding
    ) -> None:
        """Each field replaced by values of the wrong type or range: an encoding is built
        (and keeps its round trip), or a zarrkit error says why; never a raw exception."""

        def use(built: ChunkKeyEncoding) -> None:
            coords = (3, 14, 1)
            try:
                back = built.decode(built.encode(coords))
            except ZarrkitError as exc:  # built, so it must encode
                raise AssertionError(f"{built!r} was built but cannot encode: {exc}") from exc
            assert back == coords, built

        check_odd_values(key_encoding, ChunkKeyEncoding, use)

    # -- keys -------------------------------------------------------------------------------
    def test_decode_inverts_encode(self, key_encoding: ChunkKeyEncoding) -> None:
        for ndim in self.ndims:
            for coords in sample_coords(ndim):
                key = key_encoding.encode(coords)
                back = tuple(key_encoding.decode(key))
                if ndim == 0 and back and not any(back):
                    continue  # v2 spells the 0-d chunk "0", as the first chunk of a 1-d array
                assert back == coords, f"{coords} -> {key!r} -> {back}"
                assert key_encoding.encode(list(coords)) == key, "a list encodes like a tuple"
                numpy_coords: list[Any] = [np.int64(c) for c in coords]
                assert key_encoding.encode(numpy_coords) == key, (
                    f"numpy integers {coords} encode differently: the engine passes them too"
                )

    def test_distinct_coordinates_have_distinct_keys(self, key_encoding: ChunkKeyEncoding) -> None:
        for ndim in self.ndims:
            keys: dict[str, tuple[int, ...]] = {}
            for coords in sample_coords(ndim):
                key = key_encoding.encode(coords)
                assert keys.setdefault(key, coords) == coords, (
                    f"{keys[key]} and {coords} share the key {key!r}: one chunk would "
                    f"overwrite the other"
                )

    def test_keys_are_valid_store_keys(self, key_encoding: ChunkKeyEncoding) -> None:
        for ndim in self.ndims:
            for coords in sample_coords(ndim):
                key = key_encoding.encode(coords)
                assert isinstance(key, str), f"{coords} -> {key!r} is not a string"
                check_key(key)  # InvalidKeyError: escapes the node, or not a key at all
                check_key(f"group/array/{key}")
                last = key.rsplit("/", 1)[-1]
                assert key not in METADATA_NAMES and last not in METADATA_NAMES, (
                    f"{coords} -> {key!r}: the name of a metadata document"
                )

    def test_the_separator_is_the_one_configured(self, key_encoding: ChunkKeyEncoding) -> None:
        """`/` nests chunk keys in folders (one level per dimension); `.` keeps them in one."""
        separator = key_encoding.configuration(V3).get("separator")
        if separator is None:
            configs = [key_encoding.configuration(f) for f in type(key_encoding).names.formats()]
            separator = next((c["separator"] for c in configs if "separator" in c), None)
        if separator is None:
            pytest.skip("no separator in the configuration")
        for coords in sample_coords(3)[:30]:
            key = key_encoding.encode(coords)
            assert key.count(separator) >= 2, f"{coords} -> {key!r} with separator {separator!r}"
            if separator != "/":
                assert "/" not in key, f"{coords} -> {key!r}: nested, separator is {separator!r}"

    # -- through a real array ---------------------------------------------------------------
    def test_array_stores_chunks_under_encoded_keys(
        self, key_encoding: ChunkKeyEncoding, tmp_path: Path
    ) -> None:
        from zarrkit.api import create_array, open_array

        if V3 not in type(key_encoding).names.formats():
            pytest.skip("the encoding has no v3 name")
        path = tmp_path / "a"
        a = create_array(
            path,
            shape=(5, 7),
            chunks=(2, 3),
            dtype="int16",
            chunk_key_encoding=key_encoding.to_json(V3),
        )
        values = np.arange(35, dtype="int16").reshape(5, 7)
        a[...] = values
        stored = {p.relative_to(path).as_posix() for p in path.rglob("*") if p.is_file()}
        expected = {key_encoding.encode(c) for c in itertools.product(range(3), range(3))}
        assert stored - METADATA_NAMES == expected
        np.testing.assert_array_equal(open_array(path)[...], values)
