"""dask arrays over zarrkit: `from_zarrkit` (or `Array.to_dask()`) reads lazily, one task per
stored chunk (per shard for a sharded array) by default; `to_zarrkit` writes a dask array.

Every task reads and writes through zarrkit itself: the array handle travels to the workers by
pickle (a few hundred bytes: store arguments, path and metadata document; see
`zarrkit.node`), so any scheduler works: threads, processes, dask.distributed.

Writes are refused where they could lose an update. A stored chunk (or shard) that two dask
blocks share would be read, modified and written back by two tasks; in one process zarrkit's
per-key locks serialize them, but tasks in different processes would race, and the last write
would silently undo the other. So by default every boundary between two dask blocks must fall
on a boundary between stored chunks (shards), as `dask.array.to_zarr` and xarray's
`safe_chunks` require; otherwise `UnsafeWriteError` names the dimension and the rechunk that
fixes it. `safe_chunks=False` lets such a write through: safe on the threaded and synchronous
schedulers, and across processes only where the store serializes writers itself.

This package imports dask; `import zarrkit` does not import it.
"""

from __future__ import annotations

try:
    import dask.array  # noqa: F401  (imported to fail here, naming the extra)
except ImportError as exc:  # (an ImportError still: `import zarrkit.dask` is an import)
    raise ImportError(f"zarrkit.dask needs dask: pip install 'zarrkit[dask]' ({exc})") from exc

from .reading import from_zarrkit
from .writing import to_zarrkit

__all__ = ["from_zarrkit", "to_zarrkit"]
