"""The chunk grid, chunk key encoding and memory layout suites fail on broken plugins of their
kind (and pass on a correct irregular grid): a suite that passes everything protects nobody."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from zarrkit_testing import ChunkGridTests, ChunkKeyEncodingTests, MemoryLayoutTests

from zarrkit.abc import V3, ChunkGrid, ChunkKeyEncoding, MemoryLayout, check_known_fields, names
from zarrkit.errors import MetadataError
from zarrkit.helpers import extension_from_json


# -- an irregular grid: explicit chunk edges per dimension, grown by the last size --------------
@dataclass(frozen=True)
class ExplicitGrid(ChunkGrid):
    names = names("test.explicit")
    sizes: tuple[tuple[int, ...], ...]

    @classmethod
    def from_json(
        cls, name: str, configuration: Mapping[str, Any], format: str = V3
    ) -> ExplicitGrid:
        check_known_fields(configuration, {"chunk_sizes"}, owner="test.explicit")
        sizes = configuration.get("chunk_sizes")
        if not isinstance(sizes, list) or not all(
            isinstance(dim, list) and dim and all(type(n) is int and n > 0 for n in dim)
            for dim in sizes
        ):
            raise MetadataError(
                f"chunk_sizes must be lists of positive integers, got {sizes!r}",
                field="chunk_grid.configuration.chunk_sizes",
            )
        return cls(tuple(tuple(dim) for dim in sizes))

    def configuration(self, format: str = V3) -> dict[str, Any]:
        return {"chunk_sizes": [list(dim) for dim in self.sizes]}

    def _starts(self, dim: int) -> np.ndarray:
        return np.concatenate([[0], np.cumsum(self.sizes[dim])[:-1]]).astype(np.int64)

    def validate(self, array_shape: Sequence[int]) -> None:
        if len(array_shape) != len(self.sizes) or any(
            sum(dim) < n for dim, n in zip(self.sizes, array_shape)
        ):
            raise MetadataError(f"chunk_sizes {self.sizes} do not cover {array_shape}")

    def grid_shape(self, array_shape: Sequence[int]) -> tuple[int, ...]:
        return tuple(int(np.count_nonzero(self._starts(d) < n)) for d, n in enumerate(array_shape))

    def chunk_index(self, dim: int, positions: np.ndarray) -> np.ndarray:
        return np.searchsorted(self._starts(dim), positions, side="right") - 1

    def chunk_start(self, dim: int, index: np.ndarray) -> np.ndarray:
        return self._starts(dim)[index]

    def chunk_shape(self, coords: Sequence[int]) -> tuple[int, ...]:
        return tuple(dim[c] for dim, c in zip(self.sizes, coords))

    def resized(self, new_shape: Sequence[int]) -> ExplicitGrid:
        grown = []
        for dim, n in zip(self.sizes, new_shape):
            dim = list(dim)
            while sum(dim) < n:
                dim.append(dim[-1])
            grown.append(tuple(dim))
        return ExplicitGrid(tuple(grown))


class TestExplicitGridPasses(ChunkGridTests):
    """An irregular grid (chunks of unequal sizes, edges padded) passes as it should."""

    array_shapes = ((10, 7), (9, 5))
    registered = False
    bad_configurations = ({"chunk_sizes": [[3, 0]]}, {"chunk_sizes": "3"})

    @pytest.fixture
    def grid(self):
        return ExplicitGrid(((3, 1, 4, 2), (5, 2, 2)))


# -- broken grids -------------------------------------------------------------------------------
class FloorGrid(ExplicitGrid):
    """Counts chunks by whole chunks: the partial edge chunk is forgotten."""

    def grid_shape(self, array_shape: Sequence[int]) -> tuple[int, ...]:
        return tuple(
            int(np.count_nonzero(np.cumsum(self.sizes[d]) <= n)) for d, n in enumerate(array_shape)
        )


class ShortEdgeGrid(ExplicitGrid):
    """Stores the edge chunk one element short of what it holds."""

    def chunk_shape(self, coords: Sequence[int]) -> tuple[int, ...]:
        shape = super().chunk_shape(coords)
        return tuple(
            n - 1 if c == len(dim) - 1 and n > 1 else n
            for n, c, dim in zip(shape, coords, self.sizes)
        )


class OffByOneIndexGrid(ExplicitGrid):
    """Puts the first element of every chunk after the first into the chunk before it."""

    def chunk_index(self, dim: int, positions: np.ndarray) -> np.ndarray:
        return np.searchsorted(self._starts(dim), positions, side="left") - 1 + (positions == 0)


class FakeUniformGrid(ExplicitGrid):
    """Claims one chunk shape (the kernel's fast path would trust it) but is irregular."""

    @property
    def uniform_chunk_shape(self) -> tuple[int, ...]:
        return tuple(dim[0] for dim in self.sizes)


class ReshufflingResizeGrid(ExplicitGrid):
    """A resize that re-chunks: stored chunks would no longer match their keys."""

    def resized(self, new_shape: Sequence[int]) -> ExplicitGrid:
        return ExplicitGrid(tuple((n,) for n in new_shape))


class RawErrorGrid(ExplicitGrid):
    """Reads its configuration without checking it: a TypeError leaks to the user."""

    @classmethod
    def from_json(
        cls, name: str, configuration: Mapping[str, Any], format: str = V3
    ) -> ExplicitGrid:
        check_known_fields(configuration, {"chunk_sizes"}, owner="test.explicit")
        return cls(tuple(tuple(int(n) for n in dim) for dim in configuration["chunk_sizes"]))


def _failures(suite: type, fixture: str, plugin: Any, tmp_path: Path) -> set[str]:
    """The suite's tests that fail for `plugin` (run directly, as pytest would with the
    plugin as the fixture's value)."""
    from zarrkit import registry

    instance = suite()
    failed = set()
    for name in dir(suite):
        if not name.startswith("test_"):
            continue
        method = getattr(instance, name)
        kwargs: dict[str, Any] = {fixture: plugin}
        if "tmp_path" in method.__code__.co_varnames:
            kwargs["tmp_path"] = tmp_path / name
            kwargs["tmp_path"].mkdir(parents=True)
        handle = registry.register(suite.kind, type(plugin))
        try:
            method(**kwargs)
        except pytest.skip.Exception:
            pass
        except (Exception, pytest.fail.Exception):  # any error fails the test under pytest
            failed.add(name)
        finally:
            registry.unregister(handle)
    return failed


class _Grids(ChunkGridTests):
    kind = "chunk_grid"
    array_shapes = ((10, 7), (9, 5))


@pytest.mark.parametrize(
    "broken, caught_by",
    [
        (FloorGrid, "test_every_element_is_in_exactly_one_chunk"),
        (ShortEdgeGrid, "test_chunk_coordinates_and_regions_agree"),
        (OffByOneIndexGrid, "test_chunk_coordinates_and_regions_agree"),
        (FakeUniformGrid, "test_chunk_coordinates_and_regions_agree"),
        (ReshufflingResizeGrid, "test_resize_keeps_the_chunks_of_kept_elements"),
        (RawErrorGrid, "test_odd_configuration_values_are_refused_with_zarrkit_errors"),
    ],
)
def test_grid_suite_fails_broken_grids(broken, caught_by, tmp_path):
    failed = _failures(_Grids, "grid", broken(((3, 1, 4, 2), (5, 2, 2))), tmp_path)
    assert caught_by in failed, failed


def test_grid_suite_passes_the_correct_irregular_grid(tmp_path):
    assert _failures(_Grids, "grid", ExplicitGrid(((3, 1, 4, 2), (5, 2, 2))), tmp_path) == set()


# -- broken chunk key encodings -----------------------------------------------------------------
@dataclass(frozen=True)
class JoinedKeys(ChunkKeyEncoding):
    """Digits run together: (1, 11) and (11, 1) share the key `c111`."""

    names = names("test.joined")

    def encode(self, coords: Sequence[int]) -> str:
        return "c" + "".join(map(str, coords))

    def decode(self, key: str) -> tuple[int, ...]:
        return tuple(int(d) for d in key[1:])


@dataclass(frozen=True)
class RootedKeys(ChunkKeyEncoding):
    """Keys with a leading `/`: outside the array's node."""

    names = names("test.rooted")

    def encode(self, coords: Sequence[int]) -> str:
        return "/" + "/".join(["c", *map(str, coords)])

    def decode(self, key: str) -> tuple[int, ...]:
        return tuple(int(p) for p in key.split("/")[2:])


@dataclass(frozen=True)
class UncheckedKeys(ChunkKeyEncoding):
    """Takes any separator: `None` fails deep inside with a raw TypeError, `""` joins digits."""

    names = names("test.unchecked")
    separator: Any = "/"

    @classmethod
    def from_json(
        cls, name: str, configuration: Mapping[str, Any], format: str = V3
    ) -> UncheckedKeys:
        check_known_fields(configuration, {"separator"}, owner="test.unchecked")
        return cls(configuration.get("separator", "/"))

    def configuration(self, format: str = V3) -> dict[str, Any]:
        return {"separator": self.separator}

    def encode(self, coords: Sequence[int]) -> str:
        return self.separator.join(["c", *map(str, coords)])

    def decode(self, key: str) -> tuple[int, ...]:
        return tuple(int(p) for p in key.split(self.separator)[1:])


class _Keys(ChunkKeyEncodingTests):
    kind = "chunk_key_encoding"


@pytest.mark.parametrize(
    "broken, caught_by",
    [
        (JoinedKeys(), "test_distinct_coordinates_have_distinct_keys"),
        (JoinedKeys(), "test_decode_inverts_encode"),
        (RootedKeys(), "test_keys_are_valid_store_keys"),
        (UncheckedKeys(), "test_odd_configuration_values_are_refused_with_zarrkit_errors"),
    ],
)
def test_key_encoding_suite_fails_broken_encodings(broken, caught_by, tmp_path):
    assert caught_by in _failures(_Keys, "key_encoding", broken, tmp_path)


# -- broken memory layouts ----------------------------------------------------------------------
class ScramblingLayout(MemoryLayout):
    """Writes the elements backwards and reads them as they lie."""

    names = names(v2="test.scramble", draft="test.scramble")

    def to_bytes(self, chunk: np.ndarray, dtype: np.dtype) -> Any:
        return np.ascontiguousarray(np.asarray(chunk, dtype=dtype).reshape(-1)[::-1]).tobytes()


class NativeEndianLayout(MemoryLayout):
    """Ignores the byte order the dtype asks for."""

    names = names(v2="test.native", draft="test.native")

    def to_bytes(self, chunk: np.ndarray, dtype: np.dtype) -> Any:
        return np.asarray(chunk, dtype=dtype.newbyteorder("=")).tobytes()

    def from_bytes(self, data: Any, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        native = np.frombuffer(data, dtype=dtype.newbyteorder("="))
        return native.reshape(shape).astype(dtype)


class MislabelledLayout(MemoryLayout):
    """F order, but claims the v3 codecs of C order."""

    names = names(v2="test.mislabelled", draft="test.mislabelled")
    numpy_order = "F"

    def v3_codecs(self, ndim: int, endian: str | None) -> list[dict[str, Any]]:
        return [{"name": "bytes", "configuration": {"endian": endian or "little"}}]


class _Layouts(MemoryLayoutTests):
    kind = "memory_layout"


@pytest.mark.parametrize(
    "broken, caught_by",
    [
        (ScramblingLayout(), "test_round_trip"),
        (NativeEndianLayout(), "test_elements_are_stored_whole_in_the_dtype_byte_order"),
        (MislabelledLayout(), "test_v3_codecs_lay_out_the_same_bytes"),
    ],
)
def test_layout_suite_fails_broken_layouts(broken, caught_by, tmp_path):
    assert caught_by in _failures(_Layouts, "layout", broken, tmp_path)


def test_layout_suite_passes_first_party_layouts(tmp_path):
    for order in ("C", "F"):
        layout = extension_from_json("memory_layout", order, "v2", key="order")
        assert _failures(_Layouts, "layout", layout, tmp_path / order) == set()
