"""A conformance suite every chunk grid plugin should pass: subclass it in a test module.

    class TestMyGrid(ChunkGridTests):
        array_shapes = ((10, 7), (3, 20))        # array shapes the grid describes

        @pytest.fixture
        def grid(self):
            return MyGrid(...)                   # an instance to test

`grid` and `array_shapes` are what a grid must give: an irregular grid (rectilinear) names
shapes its chunk edges cover. Optional: `resize_shapes` (what each array shape is resized
to; by default grown and shrunk along every dimension), `bad_configurations` (JSON
configurations the grid must refuse with a `MetadataError`), `registered` (False: the suite
registers the class for each test instead of requiring its entry point).

The suite asks only what the kernel asks of a grid (`zarrkit.abc.ChunkGrid`): chunk
coordinates <-> element regions along each dimension (vectorised), the stored shape of each
chunk (edge chunks may be padded, no other chunk may be), `uniform_chunk_shape` (the kernel's
fast path trusts it), `resized`, JSON in every format the grid has a name in, and a real
array written, resized, appended to and read back through the grid. A chunk's region along a
dimension is `[chunk_start(i), chunk_start(i + 1))`, the last one ending at the array's edge.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

from zarrkit import registry
from zarrkit.abc import V3, ChunkGrid
from zarrkit.errors import MetadataError

from .extension_checks import check_bad_configurations, check_json_round_trip, check_odd_values
from .reachable import reachable

#: values a fuzzed configuration field takes: each is wrong for most fields


def _regions(grid: ChunkGrid, shape: Sequence[int], dim: int) -> tuple[np.ndarray, np.ndarray]:
    count = int(grid.grid_shape(shape)[dim])
    ids = np.arange(count, dtype=np.int64)
    starts = np.asarray(grid.chunk_start(dim, ids), dtype=np.int64)
    ends = np.append(starts[1:], np.int64(shape[dim]))
    return starts, ends


def _describe(grid: ChunkGrid) -> str:
    return json.dumps(grid.to_json(V3)) if type(grid).names.written(V3) else repr(grid)


def check_layout(grid: ChunkGrid, shape: Sequence[int]) -> None:
    """Every invariant of the grid over an array of `shape` (AssertionError naming the first
    one that fails): what the kernel relies on when it indexes, reads and writes."""
    what = f"{_describe(grid)} over shape {tuple(shape)}"
    counts = grid.grid_shape(shape)
    assert len(counts) == len(shape), f"{what}: grid_shape {counts} has the wrong length"
    for dim, (length, count) in enumerate(zip(shape, counts)):
        assert int(count) >= 0, f"{what}: negative chunk count {count} along {dim}"
        if length == 0:
            continue
        assert count >= 1, f"{what}: no chunk along dimension {dim} of length {length}"
        starts, ends = _regions(grid, shape, dim)
        assert starts[0] == 0, f"{what}: the first chunk along {dim} starts at {starts[0]}"
        assert np.all(ends > starts), (
            f"{what}: chunk starts along {dim} are not increasing, or the last chunk starts "
            f"beyond the array's edge (starts {starts.tolist()}, length {length}): "
            f"grid_shape counts a chunk that holds nothing"
        )
        positions = np.arange(length, dtype=np.int64)
        index = np.asarray(grid.chunk_index(dim, positions))
        assert index.shape == positions.shape, f"{what}: chunk_index is not vectorised"
        assert index.min() >= 0 and index.max() < count, (
            f"{what}: chunk_index along {dim} gives {int(index.max())}, "
            f"but grid_shape says {count} chunks"
        )
        expected = np.searchsorted(starts, positions, side="right") - 1
        wrong = np.flatnonzero(index != expected)
        assert wrong.size == 0, (
            f"{what}: position {int(wrong[0])} along {dim} is in chunk "
            f"{int(expected[wrong[0]])} (starts {starts.tolist()}), chunk_index says "
            f"{int(index[wrong[0]])}"
        )
    # every chunk: its stored shape holds its region, and only edge chunks are padded
    spans = [_regions(grid, shape, d) for d in range(len(shape))]
    for coords in itertools.product(*(range(int(n)) for n in counts)):
        stored = tuple(grid.chunk_shape(coords))
        given: tuple[object, ...] = stored  # a plugin's answer: checked, not trusted
        assert len(stored) == len(shape) and all(
            isinstance(n, (int, np.integer)) and n >= 1 for n in given
        ), f"{what}: chunk {coords} has stored shape {stored}"
        for dim, (c, n) in enumerate(zip(coords, stored)):
            size = int(spans[dim][1][c] - spans[dim][0][c])
            if c == counts[dim] - 1:
                assert n >= size, (
                    f"{what}: edge chunk {coords} holds {size} elements along {dim}, "
                    f"its stored shape {stored} only {n}"
                )
            else:
                assert n == size, (
                    f"{what}: chunk {coords} holds {size} elements along {dim}, its stored "
                    f"shape {stored} says {n} (only edge chunks may be padded)"
                )
    uniform = grid.uniform_chunk_shape
    if uniform is not None:
        assert len(uniform) == len(shape), f"{what}: uniform_chunk_shape {uniform}"
        for dim, (starts, _ends) in enumerate(spans):
            step = np.arange(len(starts), dtype=np.int64) * uniform[dim]
            assert np.array_equal(starts, step), (
                f"{what}: uniform_chunk_shape is {uniform}, so chunk i must start at "
                f"i * {uniform[dim]} along {dim}; chunk_start gives {starts.tolist()}"
            )
        for coords in itertools.product(*(range(int(n)) for n in counts)):
            assert tuple(grid.chunk_shape(coords)) == tuple(uniform), (
                f"{what}: uniform_chunk_shape is {uniform}, chunk {coords} is "
                f"{grid.chunk_shape(coords)}"
            )


def _coverage(grid: ChunkGrid, shape: Sequence[int]) -> np.ndarray:
    """How many stored chunks hold each element of an array of `shape`: each chunk spans its
    stored shape from its start, clipped to the array (what a reader of that chunk gets)."""
    seen = np.zeros(tuple(shape), dtype=np.int64)
    counts = grid.grid_shape(shape)
    for coords in itertools.product(*(range(int(n)) for n in counts)):
        stored = grid.chunk_shape(coords)
        starts = [int(grid.chunk_start(d, np.asarray([c]))[0]) for d, c in enumerate(coords)]
        seen[tuple(slice(a, min(a + int(n), s)) for a, n, s in zip(starts, stored, shape))] += 1
    return seen


class ChunkGridTests:
    """Behaviour every chunk grid owes the indexing engine, the formats and users."""

    #: array shapes this grid describes (small: every element is checked)
    array_shapes: ClassVar[tuple[tuple[int, ...], ...]] = ()
    #: shapes to resize each of `array_shapes` to (None: grown and shrunk along each dimension)
    resize_shapes: ClassVar[tuple[tuple[int, ...], ...] | None] = None
    #: configurations the grid must refuse with a MetadataError (besides an unknown field)
    bad_configurations: ClassVar[tuple[dict[str, Any], ...]] = ()
    #: False: the class need not be reachable through an entry point
    registered: ClassVar[bool] = True

    @pytest.fixture(autouse=True)
    def _reachable(self, grid: ChunkGrid) -> Iterator[None]:
        """Register the class for this test when it is not what its v3 name resolves to."""
        if self.registered:
            yield
            return
        with reachable("chunk_grid", type(grid), type(grid).names.written(V3)):
            yield

    def _shapes(self) -> tuple[tuple[int, ...], ...]:
        assert self.array_shapes, "set `array_shapes`: array shapes this grid describes"
        return self.array_shapes

    def _resize_targets(self, shape: tuple[int, ...]) -> list[tuple[int, ...]]:
        if self.resize_shapes is not None:
            return list(self.resize_shapes)
        grown = tuple(n + 5 for n in shape)
        shrunk = tuple(max(1, n - 3) for n in shape)
        mixed = tuple(g if d % 2 == 0 else s for d, (g, s) in enumerate(zip(grown, shrunk)))
        return [grown, shrunk, mixed]

    # -- names and JSON --------------------------------------------------------------------
    def test_names_resolve_to_the_class(self, grid: ChunkGrid) -> None:
        formats = type(grid).names.formats()
        assert formats, f"{type(grid).__name__} has no name in any format"
        for fmt in formats:
            name = grid.written_name(fmt)
            assert registry.lookup("chunk_grid", name, fmt) is type(grid), (fmt, name)

    def test_json_round_trip(self, grid: ChunkGrid) -> None:
        """In every format the grid has a name in, through real JSON text."""
        check_json_round_trip(grid, type(grid).names.formats())

    def test_bad_configuration_is_a_metadata_error(self, grid: ChunkGrid) -> None:
        check_bad_configurations(grid, self.bad_configurations)

    def test_odd_configuration_values_are_refused_with_zarrkit_errors(
        self, grid: ChunkGrid
    ) -> None:
        """Each field replaced by values of the wrong type or range: a grid is built, or a
        zarrkit error says why; never a raw TypeError, IndexError... from deep inside."""
        shapes = self._shapes()

        def use(built: ChunkGrid) -> None:
            for shape in shapes:
                built.validate(shape)

        check_odd_values(grid, ChunkGrid, use)

    # -- the grid's layout ------------------------------------------------------------------
    def test_validate_accepts_its_shapes_and_refuses_other_ranks(self, grid: ChunkGrid) -> None:
        for shape in self._shapes():
            grid.validate(shape)
            with pytest.raises(MetadataError):
                grid.validate((*shape, 4))

    def test_chunk_coordinates_and_regions_agree(self, grid: ChunkGrid) -> None:
        """chunk_index, chunk_start, grid_shape and chunk_shape describe one layout; edge
        chunks end at the array's edge; only they may be padded; uniform_chunk_shape holds."""
        for shape in self._shapes():
            check_layout(grid, shape)

    def test_every_element_is_in_exactly_one_chunk(self, grid: ChunkGrid) -> None:
        """Counted from each chunk's start and stored shape: no element left out (it would
        read as fill forever) and none in two chunks (one write would hide the other)."""
        for shape in self._shapes():
            seen = _coverage(grid, shape)
            wrong = np.argwhere(seen != 1)
            assert wrong.size == 0, (
                f"{_describe(grid)} over {shape}: element {tuple(wrong[0].tolist())} is in "
                f"{int(seen[tuple(wrong[0])])} chunks"
            )

    def test_resize_keeps_the_chunks_of_kept_elements(self, grid: ChunkGrid) -> None:
        """A resize moves no data: every element inside both shapes stays in the chunk (same
        coordinates, start and stored shape) it was in, and the new grid is consistent."""
        for shape in self._shapes():
            for new in self._resize_targets(shape):
                after = grid.resized(new)
                assert isinstance(after, ChunkGrid), f"resized gave {after!r}"
                after.validate(new)
                check_layout(after, new)
                kept = tuple(min(a, b) for a, b in zip(shape, new))
                for dim, length in enumerate(kept):
                    positions = np.arange(length, dtype=np.int64)
                    before_ids = np.asarray(grid.chunk_index(dim, positions))
                    after_ids = np.asarray(after.chunk_index(dim, positions))
                    assert np.array_equal(before_ids, after_ids), (
                        f"resizing {shape} -> {new} moved elements along {dim} to other chunks"
                    )
                    ids = np.unique(before_ids)
                    assert np.array_equal(
                        np.asarray(grid.chunk_start(dim, ids)),
                        np.asarray(after.chunk_start(dim, ids)),
                    ), f"resizing {shape} -> {new} moved chunk starts along {dim}"
                for coords in itertools.product(*(range(int(n)) for n in grid.grid_shape(kept))):
                    assert tuple(after.chunk_shape(coords)) == tuple(grid.chunk_shape(coords)), (
                        f"resizing {shape} -> {new} changed the stored shape of chunk {coords}, "
                        f"which holds kept elements: its stored bytes would be misread"
                    )

    # -- through a real array ---------------------------------------------------------------
    def test_array_round_trip(self, grid: ChunkGrid, tmp_path: Path) -> None:
        """Written, read back, resized and appended to through a real array: one stored
        chunk per chunk of the grid, and every value where it was put."""
        from zarrkit.api import create_array, open_array

        if V3 not in type(grid).names.formats():
            pytest.skip("the grid has no v3 name")
        shape = self._shapes()[0]
        path = tmp_path / "a"
        a = create_array(
            path, shape=shape, dtype="int32", chunk_grid=grid.to_json(V3), fill_value=-1
        )
        values = np.arange(int(np.prod(shape)), dtype="int32").reshape(shape)
        a[...] = values
        stored = {p.relative_to(path).as_posix() for p in path.rglob("*") if p.is_file()}
        assert len(stored - {"zarr.json"}) == int(np.prod(grid.grid_shape(shape)))
        b = open_array(path, mode="r+")
        np.testing.assert_array_equal(b[...], values)
        window = tuple(slice(n // 3, n - n // 4) for n in shape)
        np.testing.assert_array_equal(b[window], values[window])
        grown = tuple(n + 3 for n in shape)
        b.resize(grown)
        expected = np.full(grown, -1, dtype="int32")
        expected[tuple(slice(0, n) for n in shape)] = values
        np.testing.assert_array_equal(open_array(path)[...], expected)
        b.append(np.full((2, *grown[1:]), 7, dtype="int32"), axis=0)
        expected = np.concatenate([expected, np.full((2, *grown[1:]), 7, dtype="int32")])
        np.testing.assert_array_equal(open_array(path)[...], expected)
        shrunk = tuple(max(1, n - 2) for n in shape)
        b.resize(shrunk)
        b.resize(expected.shape)
        again = np.full(expected.shape, -1, dtype="int32")
        again[tuple(slice(0, n) for n in shrunk)] = expected[tuple(slice(0, n) for n in shrunk)]
        np.testing.assert_array_equal(open_array(path)[...], again)

    def test_bad_configuration_in_a_document_is_a_metadata_error(
        self, grid: ChunkGrid, tmp_path: Path
    ) -> None:
        """Opening an array whose grid configuration is wrong names the chunk grid."""
        from zarrkit.api import create_array, open_array

        if V3 not in type(grid).names.formats():
            pytest.skip("the grid has no v3 name")
        shape = self._shapes()[0]
        create_array(tmp_path, shape=shape, dtype="uint8", chunk_grid=grid.to_json(V3))
        doc = json.loads((tmp_path / "zarr.json").read_text())
        doc["chunk_grid"]["configuration"] = {
            **doc["chunk_grid"].get("configuration", {}),
            "no_such_field": 1,
        }
        (tmp_path / "zarr.json").write_text(json.dumps(doc))
        with pytest.raises(MetadataError) as info:
            open_array(tmp_path)
        assert "chunk_grid" in str(info.value)
