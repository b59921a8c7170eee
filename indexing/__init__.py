"""zarrkit.indexing: selections to per-chunk work: which chunks a selection touches, and for
each one what to take from the decoded chunk and where it goes in the result.

Everything is computed per dimension, so the cost follows the number of chunks touched, never the
number of elements: a slice gets its per-chunk pieces by integer arithmetic on Python ints (no
numpy at all, so `a[:]` and `a[10:20, ::2]` stay cheap), integer/boolean arrays are grouped by
chunk with one sort per dimension, and only chunks that receive at least one element are visited.

Three kinds of selection, all matching numpy's results on the same data:

* `basic_indexer`      -- ints, slices (any step) and one Ellipsis, as `numpy.ndarray.__getitem__`.
* `orthogonal_indexer` -- each dimension independently an int, slice, integer array or boolean
  array (`.oindex`): the result is the outer product of the per-dimension picks.
* `vectorized_indexer` -- integer coordinate arrays broadcast together, or a single boolean mask of
  the array's shape (`.vindex`), as numpy advanced indexing.

Every `ChunkProjection` satisfies, for `out` of shape `indexer.shape` and `chunk` the decoded chunk
(padded edge chunks included):

    out[p.out_selection] = chunk[p.chunk_selection]      # read
    chunk[p.chunk_selection] = value[p.out_selection]    # write, value broadcast to indexer.shape

The package names nothing of the kernel (an import-linter contract in pyproject.toml says so):
it asks a chunk grid only what `grid.ChunkGrid` lists, and raises `zarrkit.errors`'
`SelectionError`. The kernel's engine and `Array` use it; codecs get `Region` through
`zarrkit.abc`.
"""

from .grid import ChunkGrid
from .region import Region
from .selections import (
    ChunkProjection,
    Indexer,
    basic_indexer,
    block_indexer,
    chunk_region,
    orthogonal_indexer,
    shifted,
    union_region,
    vectorized_indexer,
)

__all__ = [
    "ChunkGrid",
    "ChunkProjection",
    "Indexer",
    "Region",
    "basic_indexer",
    "block_indexer",
    "chunk_region",
    "orthogonal_indexer",
    "shifted",
    "union_region",
    "vectorized_indexer",
]
