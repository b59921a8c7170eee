"""The indexing engine against numpy: every selection is replayed chunk by chunk on padded chunks
cut from a numpy array and must give exactly numpy's answer, for reads and for writes."""

from __future__ import annotations

import itertools
import time
from collections.abc import Sequence
from dataclasses import dataclass
from math import prod
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from zarrkit.abc.chunk_grid import ChunkGrid
from zarrkit.errors import SelectionError
from zarrkit.indexing import (
    ChunkProjection,
    Indexer,
    basic_indexer,
    orthogonal_indexer,
    vectorized_indexer,
)
from zarrkit.plugins.grids.regular import RegularChunkGrid

PAD = -1  # value of the padding of edge chunks: reading it shows up as a wrong result
UNWRITTEN = -2  # initial value of a read's output: an element never written shows up too


# --------------------------------------------------------------------------------------------
# A grid with irregular chunks, to drive the engine through the generic ChunkGrid methods


@dataclass(frozen=True)
class RectilinearGrid(ChunkGrid):
    """Explicit chunk sizes per dimension (test-only); no uniform chunk shape."""

    sizes: tuple[tuple[int, ...], ...]

    def _starts(self, dim: int) -> np.ndarray:
        return np.concatenate(([0], np.cumsum(self.sizes[dim])[:-1])).astype(np.int64)

    def grid_shape(self, array_shape: Sequence[int]) -> tuple[int, ...]:
        return tuple(int(np.count_nonzero(self._starts(d) < n)) for d, n in enumerate(array_shape))

    def chunk_index(self, dim: int, positions: np.ndarray) -> np.ndarray:
        return np.searchsorted(self._starts(dim), positions, side="right") - 1

    def chunk_start(self, dim: int, index: np.ndarray) -> np.ndarray:
        starts = self._starts(dim)
        assert np.all(np.asarray(index) < len(starts)), "asked for a chunk beyond the grid"
        return starts[index]

    def chunk_shape(self, coords: Sequence[int]) -> tuple[int, ...]:
        return tuple(self.sizes[d][c] for d, c in enumerate(coords))


# --------------------------------------------------------------------------------------------
# Replaying projections on chunks


def chunk_region(
    grid: ChunkGrid, shape: tuple[int, ...], coords: tuple[int, ...]
) -> tuple[slice, ...]:
    """The in-array region of a chunk, computed independently of the engine."""
    region = []
    for d, c in enumerate(coords):
        start = int(grid.chunk_start(d, np.asarray([c]))[0])
        stop = min(start + grid.chunk_shape(coords)[d], shape[d])
        region.append(slice(start, stop))
    return tuple(region)


def cut_chunks(data: np.ndarray, grid: ChunkGrid) -> dict[tuple[int, ...], np.ndarray]:
    """Every chunk of `data`, edge chunks padded to the stored chunk shape with PAD."""
    chunks = {}
    for coords in itertools.product(*(range(n) for n in grid.grid_shape(data.shape))):
        chunk = np.full(grid.chunk_shape(coords), PAD, dtype=data.dtype)
        region = chunk_region(grid, data.shape, coords)
        chunk[tuple(slice(0, r.stop - r.start) for r in region)] = data[region]
        chunks[coords] = chunk
    return chunks


def glue_chunks(chunks: dict, shape: tuple[int, ...], grid: ChunkGrid) -> np.ndarray:
    """Reassemble an array from its chunks, checking that no padding was written."""
    out = np.full(shape, UNWRITTEN, dtype=np.int64)
    for coords, chunk in chunks.items():
        region = chunk_region(grid, shape, coords)
        inner = tuple(slice(0, r.stop - r.start) for r in region)
        out[region] = chunk[inner]
        padding = np.ones(chunk.shape, dtype=bool)
        padding[inner] = False
        assert np.all(chunk[padding] == PAD), f"padding of chunk {coords} was written"
    return out


def check_projections(ix: Indexer, data: np.ndarray, grid: ChunkGrid) -> list[ChunkProjection]:
    """Structural checks: distinct chunks, each really touched, is_complete exact."""
    projections = list(ix)
    assert ix.n_chunks == len(projections)
    assert len({p.coords for p in projections}) == len(projections)
    for p in projections:
        assert all(type(c) is int for c in p.coords)
        assert isinstance(p.chunk_selection, tuple) and isinstance(p.out_selection, tuple)
        mark = np.zeros(grid.chunk_shape(p.coords), dtype=bool)
        mark[p.chunk_selection] = True
        region = chunk_region(grid, data.shape, p.coords)
        inner = tuple(slice(0, r.stop - r.start) for r in region)
        assert mark.any(), f"chunk {p.coords} visited but nothing selected"
        assert p.is_complete == bool(mark[inner].all()), f"is_complete wrong for {p}"
    return projections


def read(ix: Indexer, data: np.ndarray, grid: ChunkGrid) -> np.ndarray:
    chunks = cut_chunks(data, grid)
    out = np.full(ix.shape, UNWRITTEN, dtype=np.int64)
    for p in check_projections(ix, data, grid):
        out[p.out_selection] = chunks[p.coords][p.chunk_selection]
    return out


def write(ix: Indexer, data: np.ndarray, grid: ChunkGrid, value: Any) -> np.ndarray:
    chunks = cut_chunks(data, grid)
    value = np.broadcast_to(np.asarray(value), ix.shape)
    for p in ix:
        chunks[p.coords][p.chunk_selection] = value[p.out_selection]
    return glue_chunks(chunks, data.shape, grid)


def fresh_value(shape: tuple[int, ...]) -> np.ndarray:
    return 10_000 + np.arange(prod(shape), dtype=np.int64).reshape(shape)


# --------------------------------------------------------------------------------------------
# Strategies


@st.composite
def arrays_and_grids(draw, max_dims: int = 4, max_len: int = 9):
    """(data, grid): shapes of 0..4 dims incl. zero-length ones, regular or irregular grids."""
    ndim = draw(st.integers(0, max_dims))
    shape = tuple(draw(st.integers(0, max_len)) for _ in range(ndim))
    if draw(st.booleans()):
        grid: ChunkGrid = RegularChunkGrid(tuple(draw(st.integers(1, 5)) for _ in range(ndim)))
    else:
        sizes = []
        for n in shape:
            dim_sizes = [draw(st.integers(1, 4))]
            while sum(dim_sizes) < n:
                dim_sizes.append(draw(st.integers(1, 4)))
            sizes.append(tuple(dim_sizes))
        grid = RectilinearGrid(tuple(sizes))
    data = np.arange(prod(shape), dtype=np.int64).reshape(shape)
    return data, grid


def slices(n: int):
    bound = st.none() | st.integers(-n - 2, n + 2)
    step = st.none() | st.integers(1, 4) | st.integers(-4, -1)
    return st.builds(slice, bound, bound, step)


def ints(n: int):
    return st.integers(-n, n - 1).flatmap(lambda i: st.sampled_from([i, np.int64(i), np.int32(i)]))


def basic_items(n: int):
    return slices(n) | ints(n) if n else slices(n)


@st.composite
def basic_selections(draw, shape: tuple[int, ...]):
    """A full tuple, a shortened one, one with an Ellipsis, or a bare item."""
    items = [draw(basic_items(n)) for n in shape]
    form = draw(st.sampled_from(["full", "short", "ellipsis", "bare"]))
    if form == "short":
        items = items[: draw(st.integers(0, len(items)))]
    elif form == "ellipsis":
        i = draw(st.integers(0, len(items)))
        j = draw(st.integers(i, len(items)))
        items = items[:i] + [Ellipsis] + items[j:]
    elif form == "bare" and len(items) == 1:
        return items[0]
    return tuple(items)


def int_lists(n: int, unique: bool):
    """1-D integer selections: any order, negatives, duplicates unless `unique`."""
    if n == 0:
        return st.just(np.array([], dtype=np.int64))
    if unique:
        picks = st.permutations(range(n)).flatmap(
            lambda perm: st.integers(0, n).map(lambda k: list(perm[:k]))
        )
        flip = st.lists(st.booleans(), min_size=n, max_size=n)
        values = st.tuples(picks, flip).map(lambda pf: [i - n if f else i for i, f in zip(*pf)])
    else:
        values = st.lists(st.integers(-n, n - 1), max_size=8)
    return values.flatmap(
        lambda v: st.sampled_from([v, np.array(v, dtype=np.int64), np.array(v, dtype=np.int32)])
    )


def orthogonal_items(n: int, unique: bool):
    masks = st.lists(st.booleans(), min_size=n, max_size=n).map(lambda m: np.array(m, dtype=bool))
    options = slices(n) | int_lists(n, unique) | masks
    return options | ints(n) if n else options


def ortho_reference(items: Sequence[Any], shape: tuple[int, ...]) -> tuple:
    """numpy index equivalent to an orthogonal selection, via np.ix_."""
    kept = []
    for item, n in zip(items, shape):
        if isinstance(item, slice):
            kept.append(np.arange(n)[item])
        elif isinstance(item, (list, np.ndarray)):
            arr = np.asarray(item)
            kept.append(np.flatnonzero(arr) if arr.dtype == bool else arr.astype(np.int64))
    grids = iter(np.ix_(*kept)) if kept else iter(())
    return tuple(
        item if not isinstance(item, (slice, list, np.ndarray)) else next(grids) for item in items
    )


@st.composite
def point_selections(draw, shape: tuple[int, ...], unique: bool):
    """Coordinate arrays broadcasting to a common shape (or a mask), with a seeded rng."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if draw(st.booleans()):
        return rng.random(shape) < draw(st.floats(0, 1))
    size = prod(shape)
    if unique:
        k = draw(st.integers(0, min(size, 12)))
        flat = rng.choice(size, size=k, replace=False) if size else np.zeros(0, dtype=np.int64)
        coords = np.unravel_index(flat, shape) if shape else ()
        out_shape = draw(st.sampled_from([(k,), (1, k)] + ([(2, k // 2)] if k % 2 == 0 else [])))
        return tuple(np.asarray(c, dtype=np.int64).reshape(out_shape) for c in coords)
    out_shape = tuple(
        draw(st.integers(0 if size == 0 else 1, 4)) for _ in range(draw(st.integers(0, 3)))
    )
    if size == 0:
        out_shape = out_shape + (0,)
    sel = []
    for n in shape:
        if n and draw(st.integers(0, 4)) == 0:
            sel.append(int(rng.integers(-n, n)))
            continue
        own = tuple(1 if size and draw(st.booleans()) else m for m in out_shape)
        sel.append(rng.integers(-n, max(n, 1), size=own) if n else np.zeros(own, dtype=np.int64))
    return tuple(sel)


# --------------------------------------------------------------------------------------------
# Property tests


@pytest.mark.slow
@given(st.data())
def test_basic_read_and_write(data_strategy):
    data, grid = data_strategy.draw(arrays_and_grids())
    sel = data_strategy.draw(basic_selections(data.shape))
    ix = basic_indexer(sel, data.shape, grid)
    expected = data[sel]
    assert ix.shape == expected.shape
    np.testing.assert_array_equal(read(ix, data, grid), expected)
    value = fresh_value(ix.shape)
    ref = data.copy()
    ref[sel] = value
    np.testing.assert_array_equal(write(ix, data, grid, value), ref)


@pytest.mark.slow
@given(st.data())
def test_orthogonal_read(data_strategy):
    data, grid = data_strategy.draw(arrays_and_grids(max_dims=3))
    items = tuple(data_strategy.draw(orthogonal_items(n, unique=False)) for n in data.shape)
    ix = orthogonal_indexer(items, data.shape, grid)
    expected = data[ortho_reference(items, data.shape)]
    assert ix.shape == expected.shape
    np.testing.assert_array_equal(read(ix, data, grid), expected)


@pytest.mark.slow
@given(st.data())
def test_orthogonal_write(data_strategy):
    data, grid = data_strategy.draw(arrays_and_grids(max_dims=3))
    items = tuple(data_strategy.draw(orthogonal_items(n, unique=True)) for n in data.shape)
    ix = orthogonal_indexer(items, data.shape, grid)
    value = fresh_value(ix.shape)
    ref = data.copy()
    ref[ortho_reference(items, data.shape)] = value
    np.testing.assert_array_equal(write(ix, data, grid, value), ref)


@given(st.data())
def test_vectorized_read(data_strategy):
    data, grid = data_strategy.draw(arrays_and_grids(max_dims=3))
    sel = data_strategy.draw(point_selections(data.shape, unique=False))
    ix = vectorized_indexer(sel, data.shape, grid)
    expected = data[sel]
    assert ix.shape == expected.shape
    np.testing.assert_array_equal(read(ix, data, grid), expected)


@given(st.data())
def test_vectorized_write(data_strategy):
    data, grid = data_strategy.draw(arrays_and_grids(max_dims=3))
    sel = data_strategy.draw(point_selections(data.shape, unique=True))
    ix = vectorized_indexer(sel, data.shape, grid)
    value = fresh_value(ix.shape)
    ref = data.copy()
    ref[sel] = value
    np.testing.assert_array_equal(write(ix, data, grid, value), ref)


# --------------------------------------------------------------------------------------------
# Hand-written cases

SHAPE = (10, 7)
GRID = RegularChunkGrid((3, 4))
DATA = np.arange(70, dtype=np.int64).reshape(SHAPE)


@pytest.mark.parametrize(
    "make, sel, match",
    [
        (basic_indexer, 10, r"dimension 0.*-10 to 9"),
        (basic_indexer, (0, -8), r"dimension 1.*-7 to 6"),
        (basic_indexer, (0, 0, 0), r"too many indices"),
        (basic_indexer, (..., 0, ...), r"Ellipsis"),
        (basic_indexer, (0, 1.5), r"dimension 1.*float"),
        (basic_indexer, (None, 0), r"dimension 0"),
        (basic_indexer, (0, True), r"dimension 1.*boolean"),
        (basic_indexer, (slice(None), slice(0, 5, 0)), r"dimension 1.*slice"),
        (basic_indexer, (slice(None), [1, 2]), r"dimension 1.*oindex or vindex"),
        (orthogonal_indexer, ([0, 10],), r"dimension 0.*index 10.*-10 to 9"),
        (orthogonal_indexer, (slice(None), [-8]), r"dimension 1.*index -8"),
        (orthogonal_indexer, (slice(None), [0.5, 1.0]), r"dimension 1.*integers"),
        (orthogonal_indexer, (np.ones(9, dtype=bool),), r"dimension 0.*length 9.*10"),
        (orthogonal_indexer, (np.zeros((2, 2), dtype=int),), r"dimension 0.*1-D"),
        (orthogonal_indexer, (0, 0, 0), r"too many indices"),
        (orthogonal_indexer, (np.uint64([2**63 + 5]),), r"dimension 0.*out of bounds"),
        (vectorized_indexer, np.ones((10, 6), dtype=bool), r"mask of shape \(10, 6\)"),
        (vectorized_indexer, ([1, 2], slice(None)), r"dimension 1.*slice"),
        (vectorized_indexer, ([1, 2],), r"one integer array per dimension"),
        (vectorized_indexer, ([1, 2], [1, 2, 3]), r"do not broadcast"),
        (vectorized_indexer, ([1, 2], [1, 7]), r"dimension 1.*index 7"),
        (vectorized_indexer, ([1.0], [1]), r"dimension 0.*integers"),
        (vectorized_indexer, ([[0, 1], [2]], [1]), r"dimension 0.*index array"),
        (orthogonal_indexer, ([[0, 1], [2]],), r"dimension 0.*index array"),
        (orthogonal_indexer, (np.array(True),), r"dimension 0.*boolean"),
    ],
)
def test_errors(make, sel, match):
    with pytest.raises(SelectionError, match=match):
        make(sel, SHAPE, GRID)


def test_selection_error_is_an_index_error():
    with pytest.raises(IndexError):
        basic_indexer(99, SHAPE, GRID)


def completeness(ix: Indexer) -> dict[tuple[int, ...], bool]:
    return {p.coords: p.is_complete for p in ix}


def test_is_complete_for_slices():
    everything = completeness(basic_indexer(..., SHAPE, GRID))
    assert len(everything) == 8 and all(everything.values())  # edge chunks included
    backwards = (slice(None, None, -1), slice(None, None, -1))
    assert all(completeness(basic_indexer(backwards, SHAPE, GRID)).values())
    rows = completeness(basic_indexer(slice(1, None), SHAPE, GRID))
    assert rows == {(i, j): i > 0 for i in range(4) for j in range(2)}
    assert not any(completeness(basic_indexer(slice(None, None, 2), SHAPE, GRID)).values())
    # the last row of chunks holds a single row of the array: an int covers it
    assert completeness(basic_indexer(9, SHAPE, GRID)) == {(3, 0): True, (3, 1): True}
    assert completeness(basic_indexer(8, SHAPE, GRID)) == {(2, 0): False, (2, 1): False}
    assert completeness(basic_indexer((slice(3, 6), slice(4, 7)), SHAPE, GRID)) == {(1, 1): True}


def test_is_complete_for_arrays_and_points():
    assert completeness(orthogonal_indexer(([2, 1, 0, 0, 5],), SHAPE, GRID)) == {
        (0, 0): True,
        (0, 1): True,
        (1, 0): False,
        (1, 1): False,
    }
    mask = np.zeros(SHAPE, dtype=bool)
    mask[:3, :4] = True
    mask[9, 4:] = True
    mask[5, 5] = True
    assert completeness(vectorized_indexer(mask, SHAPE, GRID)) == {
        (0, 0): True,
        (1, 1): False,
        (3, 1): True,
    }
    rows, cols = np.meshgrid(np.arange(3), np.arange(4), indexing="ij")
    points = (np.concatenate([rows.ravel(), [0]]), np.concatenate([cols.ravel(), [0]]))
    assert completeness(vectorized_indexer(points, SHAPE, GRID)) == {(0, 0): True}
    # as many points as the chunk has elements, but repeated: not complete
    repeated = (np.zeros(12, dtype=int), np.arange(12) % 2)
    assert completeness(vectorized_indexer(repeated, SHAPE, GRID)) == {(0, 0): False}


def test_zero_dimensional():
    data = np.array(42)
    grid = RegularChunkGrid(())
    for sel in [(), ...]:
        ix = basic_indexer(sel, (), grid)
        assert ix.shape == () and [p.coords for p in ix] == [()]
        assert read(ix, data, grid) == 42
    assert orthogonal_indexer((), (), grid).shape == ()
    for mask, count in [(np.array(True), 1), (np.array(False), 0)]:
        ix = vectorized_indexer(mask, (), grid)
        np.testing.assert_array_equal(read(ix, data, grid), data[mask])
        assert ix.shape == (count,)
    np.testing.assert_array_equal(
        write(vectorized_indexer(np.array(True), (), grid), data, grid, [7]), 7
    )


def test_zero_length_selections():
    assert list(basic_indexer(slice(5, 5), SHAPE, GRID)) == []
    assert basic_indexer(slice(5, 5), SHAPE, GRID).shape == (0, 7)
    ix = basic_indexer(..., (0, 5), RegularChunkGrid((2, 2)))
    assert ix.shape == (0, 5) and list(ix) == []
    assert orthogonal_indexer(([], slice(None)), SHAPE, GRID).shape == (0, 7)
    assert list(vectorized_indexer((np.zeros(0, int), np.zeros(0, int)), SHAPE, GRID)) == []


def test_representations():
    ix = basic_indexer((slice(None, None, -1), 2), SHAPE, GRID)
    for p in ix:
        assert all(isinstance(s, slice) for s in p.out_selection)
        assert isinstance(p.chunk_selection[0], slice) and type(p.chunk_selection[1]) is int
    # sorted arrays keep out_selection as slices; two array dims switch to the np.ix_ form
    (p, *_) = orthogonal_indexer(([0, 1, 2], slice(None)), SHAPE, GRID)
    assert p.chunk_selection[0] == slice(0, 3) and p.out_selection[0] == slice(0, 3)
    (p, *_) = orthogonal_indexer(([2, 0], [3, 1]), SHAPE, GRID)
    assert [s.shape for s in p.chunk_selection] == [(2, 1), (1, 2)]
    # one chunk holding every point: arrays in the output's shape, full-slice output
    (p,) = vectorized_indexer((np.array([[0, 1], [2, 0]]), np.array([[1, 1], [3, 0]])), SHAPE, GRID)
    assert p.out_selection == (slice(None), slice(None)) and p.chunk_selection[0].shape == (2, 2)


def test_orthogonal_ellipsis_and_mixed_ints():
    items = (4, [6, 0, 2], 1)
    data = np.arange(5 * 7 * 3).reshape(5, 7, 3)
    grid = RegularChunkGrid((2, 3, 2))
    np.testing.assert_array_equal(
        read(orthogonal_indexer(items, data.shape, grid), data, grid), data[4, [6, 0, 2], 1]
    )
    np.testing.assert_array_equal(
        read(orthogonal_indexer((..., [2, 0]), data.shape, grid), data, grid), data[..., [2, 0]]
    )
    # an int and an array apart: plain numpy would move the array's axis to the front
    for items in [
        (4, slice(None), [2, 0]),
        (slice(None, None, -1), 1, [0, 2, 0]),
        ([0, 2], slice(1, 6), 1),
    ]:
        ix = orthogonal_indexer(items, data.shape, RegularChunkGrid((5, 7, 3)))
        np.testing.assert_array_equal(
            read(ix, data, RegularChunkGrid((5, 7, 3))), data[ortho_reference(items, data.shape)]
        )
    ix = orthogonal_indexer(([1, 3], 2, [0, 2]), data.shape, grid)
    np.testing.assert_array_equal(read(ix, data, grid), data[np.ix_([1, 3], [2], [0, 2])][:, 0, :])


def test_huge_dimension_costs_per_chunk():
    big, chunk = 10**12, 10**11
    grid = RegularChunkGrid((chunk,))
    start = time.perf_counter()
    whole = list(basic_indexer(slice(None), (big,), grid))
    inner = list(basic_indexer(slice(5, -5), (big,), grid))
    backwards = list(basic_indexer(slice(None, None, -3), (big,), grid))
    sparse = list(basic_indexer(slice(None, None, chunk), (big,), RegularChunkGrid((10,))))
    square = basic_indexer(..., (big, big), RegularChunkGrid((chunk, chunk)))
    points = list(orthogonal_indexer(([0, big - 1, -1],), (big,), grid))
    assert time.perf_counter() - start < 0.5
    assert len(whole) == 10 and all(p.is_complete for p in whole)
    assert whole[3].chunk_selection == (slice(0, chunk),)
    assert whole[3].out_selection == (slice(3 * chunk, 4 * chunk),)
    assert [p.is_complete for p in inner] == [False] + [True] * 8 + [False]
    assert inner[0].out_selection == (slice(0, chunk - 5),)
    assert len(backwards) == 10 and sum(
        p.out_selection[0].stop - p.out_selection[0].start for p in backwards
    ) == len(range(big - 1, -1, -3))
    assert len(sparse) == 10 and [p.coords for p in sparse] == [(i * 10**10,) for i in range(10)]
    assert square.n_chunks == 100 and square.shape == (big, big)
    assert [p.coords for p in points] == [(0,), (9,)]


def _best_of(runs: int, work: Any) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def test_many_chunks_stay_fast():
    """`a[:]` over 10,000 chunks: plain Python per chunk, no numpy. Judged against a bare loop
    that builds the same tuples, timed beside it, so a loaded machine slows both alike (a
    fixed bound in seconds failed under load with nothing wrong)."""
    grid = RegularChunkGrid((10, 10))
    assert len(list(basic_indexer(..., (1000, 1000), grid))) == 10_000

    def bare() -> list[Any]:
        return [
            (
                (i, j),
                (slice(0, 10), slice(0, 10)),
                (slice(i * 10, i * 10 + 10), slice(j * 10, j * 10 + 10)),
                True,
            )
            for i in range(100)
            for j in range(100)
        ]

    indexing_time = _best_of(3, lambda: list(basic_indexer(..., (1000, 1000), grid)))
    assert indexing_time < 8 * _best_of(3, bare)
