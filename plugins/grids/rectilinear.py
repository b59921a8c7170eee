"""The `rectilinear` chunk grid (zarr-extensions `chunk-grids/rectilinear`): each dimension has
its own list of chunk edge lengths, or one step size repeated to cover the dimension.

Edge lists are held as runs of equal lengths, the spec's run-length form, and never expanded:
`[[1, 1000000000]]` costs one run, so a small document cannot make the reader allocate per
chunk. Lookups search the runs (vectorised), then step inside one run with arithmetic.
"""

from __future__ import annotations

import itertools
from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from zarrkit.abc import V3, ChunkGrid, check_known_fields, names
from zarrkit.errors import MetadataError

_KEY = "chunk_grid.configuration.chunk_shapes"
_MAX = 2**63 - 1  # positions and chunk counts are int64 along the way

#: one dimension: a step size (int), or runs of equal edge lengths ((length, count), ...)
Runs = tuple[tuple[int, int], ...]
Dim = int | Runs


def _length(value: object, what: str, dim: int) -> int:
    """A positive JSON integer (a bool is not one)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise MetadataError(
            f"rectilinear grid: {what} of dimension {dim} must be a positive integer, "
            f"got {value!r}",
            field=_KEY,
        )
    if value > _MAX:
        raise MetadataError(
            f"rectilinear grid: {what} of dimension {dim} is {value}; at most 2**63 - 1",
            field=_KEY,
        )
    return int(value)


def _merged(runs: Sequence[tuple[int, int]]) -> Runs:
    """Adjacent runs of one length joined, as zarr-python's run-length encoder leaves them."""
    out: list[tuple[int, int]] = []
    for length, count in runs:
        if out and out[-1][0] == length:
            out[-1] = (length, out[-1][1] + count)
        else:
            out.append((length, count))
    return tuple(out)


def _parse_dim(spec: object, dim: int) -> Dim:
    """A bare integer (a step size) or a list of edge lengths and `[length, count]` runs."""
    if not isinstance(spec, (list, tuple)):
        return _length(spec, "the step size", dim)
    if not spec:
        raise MetadataError(f"rectilinear grid: dimension {dim} has no chunk edges", field=_KEY)
    runs: list[tuple[int, int]] = []
    for item in spec:
        if isinstance(item, (list, tuple)):
            if len(item) != 2:
                raise MetadataError(
                    f"rectilinear grid: a run of dimension {dim} must be [length, count], "
                    f"got {list(item)!r}",
                    field=_KEY,
                )
            runs.append((_length(item[0], "an edge length", dim), _length(item[1], "a count", dim)))
        else:
            runs.append((_length(item, "an edge length", dim), 1))
    return _merged(runs)


@dataclass(frozen=True, eq=False)
class _RunTable:
    """One dimension's runs as arrays: where each run starts (in elements and in chunks)."""

    lengths: np.ndarray  # edge length of each run
    starts: np.ndarray  # first element position of each run
    firsts: np.ndarray  # first chunk index of each run
    first_list: list[int]  # `firsts` for scalar lookups
    total: int  # sum of all edges
    n_chunks: int  # number of edges

    @classmethod
    def of(cls, runs: Runs, dim: int) -> _RunTable:
        starts, firsts, pos, n = [], [], 0, 0
        for length, count in runs:
            starts.append(pos)
            firsts.append(n)
            pos += length * count
            n += count
        if pos > _MAX:
            raise MetadataError(
                f"rectilinear grid: the edges of dimension {dim} sum to {pos}; at most 2**63 - 1",
                field=_KEY,
            )
        return cls(
            np.array([length for length, _ in runs], dtype=np.int64),
            np.array(starts, dtype=np.int64),
            np.array(firsts, dtype=np.int64),
            firsts,
            pos,
            n,
        )

    def index(self, positions: np.ndarray) -> np.ndarray:
        run = np.maximum(np.searchsorted(self.starts, positions, side="right") - 1, 0)
        found: np.ndarray = self.firsts[run] + (positions - self.starts[run]) // self.lengths[run]
        return found

    def start(self, index: np.ndarray) -> np.ndarray:
        run = np.maximum(np.searchsorted(self.firsts, index, side="right") - 1, 0)
        found: np.ndarray = self.starts[run] + (index - self.firsts[run]) * self.lengths[run]
        return found

    def edge(self, index: int) -> int:
        return int(self.lengths[max(bisect_right(self.first_list, index) - 1, 0)])


@dataclass(frozen=True, eq=True)
class RectilinearChunkGrid(ChunkGrid):
    """Chunks whose edge lengths vary per dimension. Edges may run past the array's end (what a
    shrinking resize leaves); the chunks there are stored with their full edge, padded."""

    names = names("rectilinear")
    chunk_shapes: tuple[Dim, ...]
    _tables: tuple[_RunTable | None, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        dims = tuple(_parse_dim(_as_spec(d), i) for i, d in enumerate(self.chunk_shapes))
        object.__setattr__(self, "chunk_shapes", dims)
        tables = tuple(
            None if isinstance(d, int) else _RunTable.of(d, i) for i, d in enumerate(dims)
        )
        object.__setattr__(self, "_tables", tables)

    @classmethod
    def from_json(
        cls, name: str, configuration: Mapping[str, Any], format: str = V3
    ) -> RectilinearChunkGrid:
        check_known_fields(configuration, {"kind", "chunk_shapes"}, owner="rectilinear chunk grid")
        kind = configuration.get("kind")
        if kind != "inline":
            raise MetadataError(
                f"rectilinear grid: kind must be 'inline', got {kind!r}",
                field="chunk_grid.configuration.kind",
            )
        shapes = configuration.get("chunk_shapes")
        if not isinstance(shapes, list):
            raise MetadataError(
                f"rectilinear grid needs a list 'chunk_shapes', got {shapes!r}", field=_KEY
            )
        return cls(tuple(_parse_dim(spec, d) for d, spec in enumerate(shapes)))

    def configuration(self, format: str = V3) -> dict:
        # zarr-python's form: a step size stays bare, runs of one are bare edges
        return {
            "kind": "inline",
            "chunk_shapes": [
                d
                if isinstance(d, int)
                else [length if count == 1 else [length, count] for length, count in d]
                for d in self.chunk_shapes
            ],
        }

    def validate(self, array_shape: Sequence[int]) -> None:
        if len(array_shape) != len(self.chunk_shapes):
            raise MetadataError(
                f"chunk_shapes has {len(self.chunk_shapes)} dimensions, "
                f"the array has {len(array_shape)}",
                field=_KEY,
            )
        for d, (table, n) in enumerate(zip(self._tables, array_shape)):
            if table is not None and table.total < n:
                raise MetadataError(
                    f"rectilinear grid: the chunk edges of dimension {d} sum to {table.total}, "
                    f"less than the array's length {n}",
                    field=_KEY,
                )

    def grid_shape(self, array_shape: Sequence[int]) -> tuple[int, ...]:
        out: list[int] = []
        for dim, table in zip(self.chunk_shapes, self._tables):
            n = int(array_shape[len(out)])
            if table is None:
                assert isinstance(dim, int)
                out.append(-(-n // dim))
            elif n == 0:
                out.append(0)
            else:
                last = int(table.index(np.asarray([min(n, table.total) - 1], dtype=np.int64))[0])
                out.append(last + 1)
        return tuple(out)

    def chunk_index(self, dim: int, positions: np.ndarray) -> np.ndarray:
        table = self._tables[dim]
        if table is None:
            return positions // self.chunk_shapes[dim]
        return table.index(np.asarray(positions, dtype=np.int64))

    def chunk_start(self, dim: int, index: np.ndarray) -> np.ndarray:
        table = self._tables[dim]
        if table is None:
            return index * self.chunk_shapes[dim]
        return table.start(np.asarray(index, dtype=np.int64))

    def chunk_shape(self, coords: Sequence[int]) -> tuple[int, ...]:
        return tuple(
            dim if table is None else table.edge(int(c))  # type: ignore[misc]
            for dim, table, c in zip(self.chunk_shapes, self._tables, coords)
        )

    @property
    def uniform_chunk_shape(self) -> tuple[int, ...] | None:
        if all(table is None for table in self._tables):
            return tuple(int(d) for d in self.chunk_shapes)  # type: ignore[arg-type]
        return None

    def chunk_shapes_used(self, array_shape: Sequence[int]) -> Iterable[tuple[int, ...]]:
        per_dim: list[list[int]] = []
        for dim, n in zip(self.chunk_shapes, self.grid_shape(array_shape)):
            if n == 0:
                return ()
            if isinstance(dim, int):
                per_dim.append([dim])
                continue
            seen: dict[int, None] = {}
            left = n
            for length, count in dim:
                if left <= 0:
                    break
                seen[length] = None
                left -= count
            per_dim.append(list(seen))
        return itertools.product(*per_dim)

    def resized(self, new_shape: Sequence[int]) -> RectilinearChunkGrid:
        """zarr-python's rule: a dimension grown past its edges gets one more chunk covering
        the growth; edges beyond a shrunk length are kept."""
        dims: list[Dim] = []
        for dim, table, n in zip(self.chunk_shapes, self._tables, new_shape):
            if table is not None and int(n) > table.total:
                assert not isinstance(dim, int)
                dim = _merged((*dim, (int(n) - table.total, 1)))
            dims.append(dim)
        return RectilinearChunkGrid(tuple(dims))


def _as_spec(dim: object) -> object:
    """A dimension held as runs, back in its JSON form (so parsing is the one check)."""
    if isinstance(dim, tuple) and dim and all(isinstance(r, tuple) for r in dim):
        return [[length, count] for length, count in dim]
    return dim
