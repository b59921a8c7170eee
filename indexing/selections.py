"""Selections resolved against an array's shape and chunk grid: which chunks a selection
touches, and for each one what to take from the decoded chunk and where it goes (see the
package's docstring)."""

from __future__ import annotations

import operator
from collections.abc import Iterator, Sequence
from itertools import product
from math import prod
from typing import Any, NamedTuple

import numpy as np

from zarrkit.errors import SelectionError

from .grid import ChunkGrid
from .region import Region

__all__ = [
    "ChunkProjection",
    "Indexer",
    "basic_indexer",
    "chunk_region",
    "orthogonal_indexer",
    "vectorized_indexer",
]

# Above this many chunks in the (touched part of the) grid, linear chunk ids could overflow int64,
# so points are grouped with a lexsort instead of one argsort.
_MAX_LINEAR = 2**62


class ChunkProjection(NamedTuple):
    """The part of a selection that falls in one chunk.

    `chunk_selection` is chunk-local (position minus the chunk's start); `is_complete` means the
    selection covers every element of the chunk that lies inside the array, so a write can replace
    the chunk without reading it first. (A named tuple: one is built per chunk, and a frozen
    dataclass costs several times more to build.)
    """

    coords: tuple[int, ...]
    chunk_selection: tuple
    out_selection: tuple
    is_complete: bool


_new = tuple.__new__


class Indexer:
    """A selection resolved against an array's shape and chunk grid.

    `shape` is the shape of the result (what a read returns and what a written value must
    broadcast to); iterating yields one `ChunkProjection` per chunk the selection touches;
    `n_chunks` counts them without building them.
    """

    shape: tuple[int, ...]
    #: every chunk_selection selects a product of per-dimension picks (not points)
    orthogonal: bool = True
    #: every chunk_selection holds only ints and slices (so tuples of them compare cheaply)
    plain: bool = False

    def __iter__(self) -> Iterator[ChunkProjection]:
        raise NotImplementedError

    @property
    def n_chunks(self) -> int:
        raise NotImplementedError

    @property
    def band(self) -> int:
        """Chunks per step of the outermost dimension the selection spans several chunks of,
        in iteration order: the chunks of one band write one contiguous slab of a C-order
        result, which no chunk of another band touches. 1 where not known (points)."""
        return 1


# --------------------------------------------------------------------------------------------
# One dimension of the grid


class _Axis:
    """One dimension of the array and its grid.

    Regular grids (`uniform_chunk_shape` set) tile each dimension from 0 in steps of the chunk
    size, so chunk ids and bounds come from Python int arithmetic; other grids are asked through
    the vectorised ChunkGrid methods, once per dimension rather than once per chunk.
    """

    __slots__ = ("dim", "grid", "length", "n_chunks", "size")

    def __init__(self, grid: ChunkGrid, dim: int, length: int, size: int | None, n_chunks: int):
        self.grid = grid
        self.dim = dim
        self.length = length
        self.size = size  # the chunk size of a regular grid, else None
        self.n_chunks = n_chunks  # only needed (and only computed) for other grids

    def chunk_of(self, pos: int) -> int:
        """The chunk holding one position."""
        if self.size is not None:
            return pos // self.size
        return int(self.grid.chunk_index(self.dim, np.asarray([pos], dtype=np.int64))[0])

    def chunk_ids(self, positions: np.ndarray) -> np.ndarray:
        """The chunk holding each position (int64 array)."""
        if self.size is not None:
            return positions // self.size
        return np.asarray(self.grid.chunk_index(self.dim, positions), dtype=np.int64)

    def bounds(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Start and end (exclusive, clipped to the array) of each chunk id, as int64 arrays.

        The end is the next chunk's start; the last chunk is never asked for its successor, since
        a grid need not define a chunk beyond its own shape.
        """
        ids = np.asarray(ids, dtype=np.int64)
        if self.size is not None:
            starts = ids * self.size
            # (not min(start + size, length): near 2**63 the sum would wrap)
            return starts, starts + np.minimum(self.size, self.length - starts)
        starts = np.asarray(self.grid.chunk_start(self.dim, ids), dtype=np.int64)
        last = ids + 1 >= self.n_chunks
        nxt = np.asarray(
            self.grid.chunk_start(self.dim, np.where(last, ids, ids + 1)), dtype=np.int64
        )
        return starts, np.where(last, self.length, np.minimum(nxt, self.length))

    def spans(self, ids: range | np.ndarray) -> Iterator[tuple[int, int, int]]:
        """(chunk id, start, end) for each id, as Python ints."""
        if self.size is not None:
            size, length = self.size, self.length
            for i in ids if isinstance(ids, range) else ids.tolist():
                start = i * size
                yield i, start, min(start + size, length)
            return
        arr = np.arange(ids.start, ids.stop, dtype=np.int64) if isinstance(ids, range) else ids
        starts, ends = self.bounds(arr)
        yield from zip(arr.tolist(), starts.tolist(), ends.tolist())


def _axes(shape: Sequence[int], grid: ChunkGrid) -> list[_Axis]:
    uniform = grid.uniform_chunk_shape
    if uniform is not None:
        return [_Axis(grid, d, int(n), int(c), -1) for d, (n, c) in enumerate(zip(shape, uniform))]
    grid_shape = grid.grid_shape(shape)
    return [_Axis(grid, d, int(n), None, int(g)) for d, (n, g) in enumerate(zip(shape, grid_shape))]


# --------------------------------------------------------------------------------------------
# Per-dimension pieces: what one dimension contributes to each chunk it touches


# What one dimension contributes to one chunk, as a plain tuple (built in hot loops):
#   (chunk id along the dimension,
#    chunk-local selection: int | slice | int ndarray,
#    output selection: slice | int ndarray, or None when the dimension is dropped (an int),
#    whether it covers the chunk's whole in-array extent along the dimension)
_Piece = tuple[int, Any, Any, bool]


def _int_pieces(axis: _Axis, pos: int) -> list[_Piece]:
    """An integer picks one element of one chunk and drops the dimension from the result."""
    if axis.size is not None:
        i = pos // axis.size
        start, end = i * axis.size, min((i + 1) * axis.size, axis.length)
    else:
        i, start, end = next(axis.spans(np.asarray([axis.chunk_of(pos)], dtype=np.int64)))
    return [(i, pos - start, None, end - start == 1)]


def _slice_pieces(axis: _Axis, start: int, step: int, n: int) -> _Pieces:
    """Split positions start, start+step, ... (n of them) by chunk, with arithmetic only.

    Candidate chunks are the ones between the first and last position, or, when the step
    skips over most of them, the chunks of the selected positions; either way the work is
    bounded by the number of chunks actually touched.
    """
    if n == 0:
        return []
    if step == 1 and axis.size is not None:
        return _run_pieces(axis.size, axis.length, start, start + n)
    last = start + (n - 1) * step
    lo_chunk = axis.chunk_of(min(start, last))
    hi_chunk = axis.chunk_of(max(start, last))
    if hi_chunk - lo_chunk + 1 <= n:
        candidates: range | np.ndarray = range(lo_chunk, hi_chunk + 1)
    else:
        positions = start + step * np.arange(n, dtype=np.int64)
        candidates = np.unique(axis.chunk_ids(positions))
    pieces = []
    a = abs(step)
    for i, c0, c1 in axis.spans(candidates):
        if step > 0:
            k_lo = max(0, -((start - c0) // a))
            k_hi = min(n, -((start - c1) // a))
        else:
            k_lo = max(0, (start - c1) // a + 1)
            k_hi = min(n, (start - c0) // a + 1)
        count = k_hi - k_lo
        if count <= 0:
            continue
        first = start + k_lo * step - c0
        stop = first + count * step
        chunk_sel = slice(first, stop if stop >= 0 else None, step)
        pieces.append((i, chunk_sel, slice(k_lo, k_hi), count == c1 - c0))
    return pieces


def _run_pieces(size: int, length: int, start: int, stop: int) -> _Run:
    """The common case, a contiguous run on a regular grid: one pass of int arithmetic."""
    return _Run(size, length, start, stop)


class _Run:
    """The pieces of a contiguous run (sized, iterable: all a dimension's pieces are asked
    for), made one by one as they are iterated. Built all at once,
    a run over many chunks holds a tuple and two slices per chunk for the whole read: 10,000
    tiny chunks made 30,000 objects that the garbage collector kept walking and promoting
    until a full collection ran in the middle of the read."""

    __slots__ = ("_length", "_size", "_start", "_stop")

    def __init__(self, size: int, length: int, start: int, stop: int):
        self._size, self._length, self._start, self._stop = size, length, start, stop

    def __len__(self) -> int:
        if self._stop <= self._start:
            return 0
        return (self._stop - 1) // self._size - self._start // self._size + 1

    def __iter__(self) -> Iterator[_Piece]:
        # (per chunk of a tiny-chunk read this loop is a visible share: plain comparisons
        # instead of min(), and one shared slice for every whole chunk)
        size, length, start, stop = self._size, self._length, self._start, self._stop
        whole = slice(0, size)
        i = start // size
        c0 = i * size
        pos = start
        while pos < stop:
            c1 = c0 + size
            if c1 > length:
                c1 = length
            end = c1 if c1 < stop else stop
            yield (
                i,
                whole if pos == c0 and end == c0 + size else slice(pos - c0, end - c0),
                slice(pos - start, end - start),
                end - pos == c1 - c0,
            )
            i += 1
            c0 += size
            pos = end


#: what one dimension contributes to a selection's chunks: its pieces, all at once or as a run
_Pieces = list[_Piece] | _Run


def _array_pieces(axis: _Axis, idx: np.ndarray) -> list[_Piece]:
    """Group normalised integer positions (any order, duplicates allowed) by chunk.

    Positions are sorted once (skipped when already sorted), so each chunk is a contiguous run.
    A run of consecutive distinct positions becomes a slice; if the input was sorted its output
    positions are a contiguous range and become a slice too, so sorted selections and boolean
    masks with runs avoid fancy indexing. Distinct counts per run (for `complete`) come from one
    cumulative sum rather than a unique() per chunk.
    """
    n = idx.size
    if n == 0:
        return []
    is_sorted = n < 2 or bool(np.all(idx[1:] >= idx[:-1]))
    order = None if is_sorted else np.argsort(idx, kind="stable")
    pos = idx if order is None else idx[order]
    ids = axis.chunk_ids(pos)
    cut = np.flatnonzero(ids[1:] != ids[:-1]) + 1
    lo = np.concatenate(([0], cut))
    hi = np.concatenate((cut, [n]))
    starts, ends = axis.bounds(ids[lo])
    new = np.empty(n, dtype=np.int64)
    new[0] = 1
    np.not_equal(pos[1:], pos[:-1], out=new[1:])
    cum = np.cumsum(new)
    distinct = (cum[hi - 1] - cum[lo] + 1).tolist()
    first_pos = pos[lo].tolist()
    last_pos = pos[hi - 1].tolist()
    pieces = []
    for g, (i, s, e, a, b) in enumerate(
        zip(ids[lo].tolist(), starts.tolist(), ends.tolist(), lo.tolist(), hi.tolist())
    ):
        count = b - a
        if distinct[g] == count and last_pos[g] - first_pos[g] == count - 1:
            chunk_sel: Any = slice(first_pos[g] - s, first_pos[g] - s + count)
        else:
            chunk_sel = pos[a:b] - s
        out_sel = slice(a, b) if order is None else order[a:b]
        pieces.append((i, chunk_sel, out_sel, distinct[g] == e - s))
    return pieces


# --------------------------------------------------------------------------------------------
# Parsing selections


def _expand(selection: Any, ndim: int) -> tuple:
    """A tuple of exactly `ndim` items: the Ellipsis expanded and missing trailing dims as `:`."""
    items: tuple = selection if isinstance(selection, tuple) else (selection,)
    ellipses = [i for i, s in enumerate(items) if s is Ellipsis]
    if len(ellipses) > 1:
        raise SelectionError("a selection can hold only one Ellipsis ('...')")
    n_items = len(items) - len(ellipses)
    if n_items > ndim:
        raise SelectionError(
            f"too many indices: the array has {ndim} dimension(s), the selection indexes {n_items}"
        )
    if ellipses:
        e = ellipses[0]
        items = items[:e] + (slice(None),) * (ndim - n_items) + items[e + 1 :]
    return items + (slice(None),) * (ndim - len(items))


def _is_bool_scalar(item: Any) -> bool:
    return isinstance(item, (bool, np.bool_)) or (
        isinstance(item, np.ndarray) and item.ndim == 0 and item.dtype == bool
    )


def _check_int(item: Any, dim: int, length: int) -> int:
    """An integer index, negative counted from the end, checked against the dimension."""
    if _is_bool_scalar(item):
        raise SelectionError(f"dimension {dim}: boolean scalar {item!r} is not a valid index")
    try:
        i = operator.index(item)
    except TypeError:
        raise SelectionError(
            f"dimension {dim}: expected an integer or slice, got {type(item).__name__} {item!r}"
        ) from None
    if not -length <= i < length:
        _out_of_bounds(dim, i, length)
    return i + length if i < 0 else i


def _check_slice(item: slice, dim: int, length: int) -> tuple[int, int, int]:
    """(start, step, count) of a slice resolved against the dimension, as numpy does."""
    try:
        start, stop, step = item.indices(length)
    except (TypeError, ValueError) as e:
        raise SelectionError(f"dimension {dim}: invalid slice {item!r}: {e}") from None
    return start, step, len(range(start, stop, step))


def _as_array(values: Any, dim: int | None) -> np.ndarray:
    """np.asarray, with a ragged nested list reported as a bad selection."""
    try:
        return np.asarray(values)
    except ValueError as e:
        where = f"dimension {dim}: " if dim is not None else ""
        raise SelectionError(f"{where}cannot make an index array of {values!r}: {e}") from None


def _int_array(values: Any, dim: int | None, length: int, what: str) -> np.ndarray:
    """Integer positions as int64, negatives counted from the end, checked against `length`."""
    arr = _as_array(values, dim)
    if arr.size == 0 and arr.dtype.kind not in "iub":
        arr = arr.astype(np.int64)  # an empty list comes out as float64
    if arr.dtype.kind not in "iu":
        where = f"dimension {dim}: " if dim is not None else ""
        raise SelectionError(f"{where}{what} must hold integers, got dtype {arr.dtype}")
    if arr.size == 0:
        return arr.astype(np.int64, copy=False)
    low, high = int(arr.min()), int(arr.max())  # before the cast: uint64 could wrap
    if low < -length or high >= length:
        _out_of_bounds(dim, low if low < -length else high, length)
    arr = arr.astype(np.int64, copy=False)
    return arr + length * (arr < 0) if low < 0 else arr


def _out_of_bounds(dim: int | None, index: int, length: int) -> None:
    where = f"dimension {dim}: " if dim is not None else ""
    raise SelectionError(
        f"{where}index {index} is out of bounds for length {length} "
        f"(valid: {-length} to {length - 1})"
    )


def _orthogonal_item(item: Any, dim: int, axis: _Axis) -> tuple[_Pieces, int | None]:
    """The pieces of one dimension of an orthogonal selection and its result length (None if
    the dimension is dropped)."""
    length = axis.length
    if isinstance(item, slice):
        start, step, n = _check_slice(item, dim, length)
        return _slice_pieces(axis, start, step, n), n
    if isinstance(item, (list, tuple, np.ndarray)):
        arr = _as_array(item, dim)
        if arr.ndim == 0:
            return _int_pieces(axis, _check_int(arr, dim, length)), None
        if arr.ndim != 1:
            raise SelectionError(
                f"dimension {dim}: orthogonal selection takes 1-D arrays, got shape {arr.shape}"
            )
        if arr.dtype == bool:
            if arr.shape[0] != length:
                raise SelectionError(
                    f"dimension {dim}: boolean array of length {arr.shape[0]} does not match "
                    f"the dimension's length {length}"
                )
            arr = np.flatnonzero(arr)
        else:
            arr = _int_array(arr, dim, length, "an index array")
        return _array_pieces(axis, arr), int(arr.size)
    return _int_pieces(axis, _check_int(item, dim, length)), None


# --------------------------------------------------------------------------------------------
# Indexers built from per-dimension pieces


def _to_broadcast(items: tuple) -> tuple:
    """np.ix_-style form of a mixed tuple: every non-int item becomes an integer array shaped to
    broadcast along its own result axis, so several arrays index orthogonally, not pointwise.
    Ints stay scalars (they broadcast and drop their dimension)."""
    kept = [j for j, it in enumerate(items) if not isinstance(it, int)]
    k = len(kept)
    out = list(items)
    for axis_no, j in enumerate(kept):
        it = items[j]
        if isinstance(it, slice):
            stop = -1 if it.stop is None else it.stop
            it = np.arange(it.start, stop, it.step or 1, dtype=np.int64)
        shape = [1] * k
        shape[axis_no] = -1
        out[j] = it.reshape(shape)
    return tuple(out)


def _needs_broadcast(items: tuple) -> bool:
    """Plain numpy indexing is orthogonal only with at most one advanced index (array or int
    alongside an array); otherwise arrays would be zipped together or moved to the front."""
    n_arrays = n_ints = 0
    for it in items:
        if isinstance(it, np.ndarray):
            n_arrays += 1
        elif isinstance(it, int):
            n_ints += 1
    return n_arrays > 1 or (n_arrays == 1 and n_ints > 0)


class _ProductIndexer(Indexer):
    """The chunks of a selection that acts on each dimension independently: the Cartesian
    product of the per-dimension pieces."""

    __slots__ = ("_arrays", "_drops", "_pieces", "plain", "shape")

    def __init__(self, shape: tuple[int, ...], pieces: list[_Pieces], drops: bool, arrays: bool):
        self.shape = shape
        self._pieces = pieces
        self._drops = drops  # some dimension is an int: its None out_sel must be left out
        self._arrays = arrays  # some dimension is an array: selections may need ix_ form
        self.plain = not arrays

    @property
    def n_chunks(self) -> int:
        return prod(len(p) for p in self._pieces)

    @property
    def band(self) -> int:
        for dim, pieces in enumerate(self._pieces):
            if len(pieces) > 1:
                return prod(len(p) for p in self._pieces[dim + 1 :])
        return 1

    def __iter__(self) -> Iterator[ChunkProjection]:
        if not self._pieces:  # a 0-d array: its single chunk, wholly selected
            yield ChunkProjection((), (), (), True)
            return
        drops, arrays = self._drops, self._arrays
        # (projections are built with tuple.__new__: a named tuple's own __new__ is a Python
        # function, a call more per chunk)
        if len(self._pieces) == 1 and not arrays:  # 1-D: no product to take apart
            last_sel = last = None
            for i, chunk_sel, out_sel, complete in self._pieces[0]:
                if chunk_sel is not last_sel:  # (whole chunks share one selection)
                    last_sel, last = chunk_sel, (chunk_sel,)
                yield _new(
                    ChunkProjection, ((i,), last, () if out_sel is None else (out_sel,), complete)
                )
            return
        for combo in product(*self._pieces):
            coords, chunk_sel, out_sel, completes = zip(*combo)
            if drops:
                out_sel = tuple(o for o in out_sel if o is not None)
            if arrays:
                if _needs_broadcast(chunk_sel):
                    chunk_sel = _to_broadcast(chunk_sel)
                if _needs_broadcast(out_sel):
                    out_sel = _to_broadcast(out_sel)
            yield _new(ChunkProjection, (coords, chunk_sel, out_sel, all(completes)))


def basic_indexer(selection: Any, shape: Sequence[int], grid: ChunkGrid) -> Indexer:
    """Ints, slices (any step) and at most one Ellipsis, with numpy's semantics.

    chunk_selection and out_selection hold only Python ints and slices (out_selection only
    slices: integer dimensions are dropped), so both are plain numpy basic indexing.
    """
    axes = _axes(shape, grid)
    items = _expand(selection, len(axes))
    pieces, out_shape, drops = [], [], False
    for dim, (item, axis) in enumerate(zip(items, axes)):
        if isinstance(item, slice):
            start, step, n = _check_slice(item, dim, axis.length)
            pieces.append(_slice_pieces(axis, start, step, n))
            out_shape.append(n)
        elif isinstance(item, (list, np.ndarray)) and np.ndim(item) > 0:
            raise SelectionError(
                f"dimension {dim}: arrays are not basic indices; use oindex or vindex"
            )
        else:
            pieces.append(_int_pieces(axis, _check_int(item, dim, axis.length)))
            drops = True
    return _ProductIndexer(tuple(out_shape), pieces, drops, False)


def block_indexer(selection: Any, shape: Sequence[int], grid: ChunkGrid) -> Indexer:
    """Whole chunks by their grid positions (`array.blocks[...]`): per dimension an int or a
    slice of step 1 over the chunk grid, as zarr-python's block indexing. An int keeps its
    dimension (it stands for that chunk's whole extent), so the answer has the array's rank;
    edge chunks end at the array's edge."""
    grid_shape = grid.grid_shape(shape)
    items = _expand(selection, len(shape))
    region = []
    for dim, (item, n, length) in enumerate(zip(items, grid_shape, shape)):
        if isinstance(item, slice):
            if item.step not in (None, 1):
                raise SelectionError(
                    f"dimension {dim}: block selections take slices of step 1, got {item!r}"
                )
            lo, hi, _ = item.indices(n)
            hi = max(lo, hi)
        elif isinstance(item, (list, np.ndarray)) and np.ndim(item) > 0:
            raise SelectionError(
                f"dimension {dim}: block selections take ints and slices, not index arrays"
            )
        else:
            try:
                lo = _check_int(item, dim, n)
            except SelectionError:
                if isinstance(item, (int, np.integer)) and not _is_bool_scalar(item):
                    raise SelectionError(
                        f"dimension {dim}: block {item} is out of bounds: the dimension has {n} "
                        f"chunk(s) (valid: {-n} to {n - 1})"
                    ) from None
                raise
            hi = lo + 1
        region.append(
            slice(_block_edge(grid, dim, lo, n, length), _block_edge(grid, dim, hi, n, length))
        )
    return basic_indexer(tuple(region), shape, grid)


def _block_edge(grid: ChunkGrid, dim: int, block: int, n: int, length: int) -> int:
    """Where chunk `block` of a dimension starts (the array's end after the last chunk)."""
    if block >= n:
        return length
    return min(length, int(grid.chunk_start(dim, np.asarray([block]))[0]))


def orthogonal_indexer(selection: Any, shape: Sequence[int], grid: ChunkGrid) -> Indexer:
    """Each dimension independently an int, a slice, a 1-D integer array/list (any order,
    duplicates and negatives allowed) or a 1-D boolean array of the dimension's length.

    The result is the outer product of the per-dimension picks, shape = their lengths with
    integer dimensions dropped. Guarantee: chunk_selection and out_selection can be used
    directly as numpy indices and behave orthogonally. Each entry is an int, a slice or a 1-D
    int array; when a tuple would hold more than one advanced index (two arrays, or an array
    and an int), the whole tuple is given in np.ix_ form instead (arrays reshaped to broadcast
    along their own axis, slices turned into such arrays, ints kept), so numpy never zips
    arrays together or moves their axes.
    """
    axes = _axes(shape, grid)
    items = _expand(selection, len(axes))
    pieces, out_shape, drops, arrays = [], [], False, False
    for dim, (item, axis) in enumerate(zip(items, axes)):
        dim_pieces, n = _orthogonal_item(item, dim, axis)
        pieces.append(dim_pieces)
        if n is None:
            drops = True
        else:
            out_shape.append(n)
            arrays = arrays or not isinstance(item, slice)
    return _ProductIndexer(tuple(out_shape), pieces, drops, arrays)


# --------------------------------------------------------------------------------------------
# Vectorized (point) selections


class _PointIndexer(Indexer):
    """Points (one coordinate array per dimension) grouped by chunk.

    Points are sorted by chunk with one stable sort, so each chunk is a contiguous run and the
    per-chunk selections are views of arrays computed once.
    """

    __slots__ = ("_projections", "shape")
    orthogonal = False

    def __init__(self, shape: tuple[int, ...], projections: list[ChunkProjection]):
        self.shape = shape
        self._projections = projections

    @property
    def n_chunks(self) -> int:
        return len(self._projections)

    def __iter__(self) -> Iterator[ChunkProjection]:
        return iter(self._projections)


def _parse_points(
    selection: Any, axes: list[_Axis]
) -> tuple[list[np.ndarray], tuple[int, ...], bool]:
    """Flat normalised coordinates per dimension, the result shape, and whether the points are
    known to be distinct (they are for a mask)."""
    ndim = len(axes)
    shape = tuple(a.length for a in axes)
    mask = selection[0] if isinstance(selection, tuple) and len(selection) == 1 else selection
    if isinstance(mask, (list, bool, np.bool_)):
        mask = _as_array(mask, None)
    if isinstance(mask, np.ndarray) and mask.dtype == bool:
        if mask.shape != shape:
            raise SelectionError(
                f"boolean mask of shape {mask.shape} does not match the array's shape {shape}"
            )
        coords = [c.astype(np.int64, copy=False) for c in np.nonzero(mask)] if ndim else []
        return coords, (int(np.count_nonzero(mask)),), True
    items = selection if isinstance(selection, tuple) else (selection,)
    if len(items) != ndim:
        raise SelectionError(
            f"vectorized selection needs one integer array per dimension: the array has {ndim} "
            f"dimension(s), the selection has {len(items)} item(s)"
        )
    arrays = []
    for dim, (item, axis) in enumerate(zip(items, axes)):
        if (
            item is None
            or isinstance(item, slice)
            or item is Ellipsis
            or _is_bool_scalar(item)
            or (isinstance(item, np.ndarray) and item.dtype == bool)
        ):
            raise SelectionError(
                f"dimension {dim}: vectorized selection takes integer arrays or ints (or a single "
                f"boolean mask of the array's shape), got {type(item).__name__} {item!r}"
            )
        arrays.append(_int_array(item, dim, axis.length, "a coordinate array"))
    try:
        broadcast = np.broadcast_arrays(*arrays) if arrays else []
    except ValueError:
        shapes = ", ".join(str(a.shape) for a in arrays)
        raise SelectionError(
            f"coordinate arrays of shapes {shapes} do not broadcast together"
        ) from None
    out_shape = broadcast[0].shape if broadcast else ()
    return [b.ravel() for b in broadcast], out_shape, False


def _chunk_order(ids: list[np.ndarray]) -> np.ndarray | None:
    """A permutation sorting points by chunk (None if they already are), stable so the points of
    one chunk keep their order."""
    if len(ids) == 1:
        lin = ids[0]
    else:
        lows = [i.min() for i in ids]
        spans = [int(i.max()) - int(lo) + 1 for i, lo in zip(ids, lows)]
        if prod(spans) >= _MAX_LINEAR:
            return np.lexsort(ids[::-1])
        lin = np.zeros(ids[0].size, dtype=np.int64)
        for i, lo, span in zip(ids, lows, spans):
            lin *= span
            lin += i - lo
    if lin.size < 2 or bool(np.all(lin[1:] >= lin[:-1])):
        return None
    return np.argsort(lin, kind="stable")


def _group_complete(local: Sequence[np.ndarray], extents: Sequence[int], distinct: bool) -> bool:
    """Whether points (chunk-local coordinates) cover the whole in-array region of a chunk.
    Only worth checking (with a unique) when there are at least as many points as elements."""
    size = prod(extents)
    n = local[0].size if local else 1
    if n < size:
        return False
    if distinct or size == 1:
        return True
    return np.unique(np.ravel_multi_index(local, extents)).size == size


def vectorized_indexer(selection: Any, shape: Sequence[int], grid: ChunkGrid) -> Indexer:
    """Points as numpy advanced indexing: a tuple of integer arrays (and ints) broadcast together
    (result shape = broadcast shape), or one boolean mask of the array's shape (result shape =
    (number of True,), points in C order). Duplicate points are fine for reads.

    chunk_selection is a tuple of int arrays, the chunk-local coordinates of the chunk's points.
    out_selection says where those points go in the result, so that `out[out_sel] =
    chunk[chunk_sel]` works on an array of `indexer.shape`:
      * one chunk holds every point: chunk arrays reshaped to the result shape and out_selection
        all full slices (no scatter);
      * 1-D result: `(slice(a, b),)` when the chunk's points are consecutive in the result
        (e.g. a 1-D mask), else `(int array,)`;
      * N-D result: a tuple of int arrays, `np.unravel_index` of the points' flat positions.
    A 0-d array has chunk_selection () and out_selection () (tuple selection) or (0,) (mask).
    """
    axes = _axes(shape, grid)
    coords, out_shape, distinct = _parse_points(selection, axes)
    n = prod(out_shape)
    if n == 0:
        return _PointIndexer(out_shape, [])
    if not axes:
        out_sel = (0,) if out_shape else ()
        return _PointIndexer(out_shape, [ChunkProjection((), (), out_sel, True)])
    ids = [axis.chunk_ids(c) for axis, c in zip(axes, coords)]
    order = _chunk_order(ids)
    if order is not None:
        coords = [c[order] for c in coords]
        ids = [i[order] for i in ids]
    return _PointIndexer(
        out_shape, _point_projections(axes, coords, ids, order, out_shape, distinct)
    )


def _runs(ids: list[np.ndarray]) -> tuple[list[int], list[int]]:
    """Start and end of each run of points sharing a chunk (points already sorted by chunk)."""
    n = ids[0].size
    change = np.zeros(n - 1, dtype=bool)
    for i in ids:
        change |= i[1:] != i[:-1]
    cut = np.flatnonzero(change) + 1
    return [0] + cut.tolist(), cut.tolist() + [n]


def _point_projections(
    axes: list[_Axis],
    coords: list[np.ndarray],
    ids: list[np.ndarray],
    order: np.ndarray | None,
    out_shape: tuple[int, ...],
    distinct: bool,
) -> list[ChunkProjection]:
    """One projection per run of same-chunk points; selections are views of whole-point arrays,
    so the per-chunk cost is a few slices, not an allocation per point."""
    lo, hi = _runs(ids)
    group_ids = [i[lo] for i in ids]
    bounds = [axis.bounds(g) for axis, g in zip(axes, group_ids)]
    sizes = np.subtract(hi, lo)
    local = [c - np.repeat(start, sizes) for c, (start, _) in zip(coords, bounds)]
    group_coords = list(zip(*(g.tolist() for g in group_ids)))
    group_extents = list(zip(*((end - start).tolist() for start, end in bounds)))
    if len(lo) == 1:
        whole_sel: tuple[np.ndarray, ...] = tuple(c.reshape(out_shape) for c in local)
        whole_out: tuple[slice | np.ndarray, ...] = (slice(None),) * len(out_shape)
        complete = _group_complete(local, group_extents[0], distinct)
        return [ChunkProjection(group_coords[0], whole_sel, whole_out, complete)]
    out_pos: tuple[np.ndarray, ...] | None
    if len(out_shape) == 1:
        out_pos = None if order is None else (order,)
    else:
        flat = np.arange(ids[0].size) if order is None else order
        out_pos = np.unravel_index(flat, out_shape)
    projections = []
    for g, (a, b) in enumerate(zip(lo, hi)):
        chunk_sel = tuple(c[a:b] for c in local)
        out_sel: tuple[slice | np.ndarray, ...] = (
            (slice(a, b),) if out_pos is None else tuple(o[a:b] for o in out_pos)
        )
        complete = _group_complete(chunk_sel, group_extents[g], distinct)
        projections.append(ChunkProjection(group_coords[g], chunk_sel, out_sel, complete))
    return projections


# --------------------------------------------------------------------------------------------
# Regions: what a codec that reads or writes part of a chunk is told


def shifted(chunk_selection: tuple, origin: Sequence[int]) -> tuple:
    """A chunk selection made relative to `origin`, for indexing a box of the chunk that
    starts there and holds every selected position (a partial decode's result)."""
    out = []
    for item, lo in zip(chunk_selection, origin):
        if not lo:
            out.append(item)
        elif isinstance(item, slice):
            start = None if item.start is None else item.start - lo
            stop = None if item.stop is None or item.stop - lo < 0 else item.stop - lo
            out.append(slice(start, stop, item.step))
        else:  # an int or an integer array: positions inside the box
            out.append(item - lo)
    return tuple(out)


def chunk_region(chunk_selection: tuple, chunk_shape: Sequence[int], orthogonal: bool) -> Region:
    """The `Region` of a chunk that a projection's chunk_selection touches: per dimension a
    step-1 slice or the sorted distinct positions. Exact for orthogonal selections; for points
    (several coordinate arrays) it is the product of each dimension's positions, a superset."""
    parts: list[slice | np.ndarray] = []
    for item, n in zip(chunk_selection, chunk_shape):
        if isinstance(item, slice):
            start, stop, step = item.indices(n)
            if step == 1:
                parts.append(slice(start, max(start, stop)))
                continue
            item = np.arange(start, stop, step, dtype=np.int64)
        elif not isinstance(item, np.ndarray):
            i = operator.index(item)
            parts.append(slice(i, i + 1))
            continue
        positions = np.unique(np.asarray(item, dtype=np.int64).ravel())
        if positions.size and positions[-1] - positions[0] + 1 == positions.size:
            parts.append(slice(int(positions[0]), int(positions[-1]) + 1))
        else:
            parts.append(positions)
    points = not orthogonal and sum(isinstance(i, np.ndarray) for i in chunk_selection) > 1
    return Region(tuple(parts), exact=not points)


def union_region(regions: Sequence[Region]) -> Region:
    """A region holding every one of `regions` (of one chunk): one as it is; several as the
    product of each dimension's positions, a superset (not exact)."""
    if len(regions) == 1:
        return regions[0]
    parts: list[slice | np.ndarray] = []
    for d in range(len(regions[0].parts)):
        positions = np.unique(np.concatenate([_positions(r.parts[d]) for r in regions]))
        if positions.size and positions[-1] - positions[0] + 1 == positions.size:
            parts.append(slice(int(positions[0]), int(positions[-1]) + 1))
        else:
            parts.append(positions)
    return Region(tuple(parts), exact=False)


def _positions(part: slice | np.ndarray) -> np.ndarray:
    if isinstance(part, slice):
        return np.arange(part.start, part.stop, dtype=np.int64)
    return part
