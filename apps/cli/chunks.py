"""An array's chunks as stored: their keys, which of them the store holds, and their sizes.

Only the store contract and the array's metadata are used: keys are listed once under the
prefix the array's first and last chunk keys share (stores that cannot list are asked key by
key), and sizes are what the store tells (`Store.sizes`: a stat or an object's size, the
values' lengths only where a store has no cheaper way, as zarr-python's `getsize`)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from .nodes import Array, chunk_key

#: keys per `Store.sizes` call
_BATCH = 64


@dataclass(frozen=True)
class Chunk:
    """One chunk of the array's grid (a shard, when the array is sharded)."""

    coords: tuple[int, ...]
    key: str
    region: tuple[slice, ...]

    @property
    def nbytes_hint(self) -> int:
        return math.prod(s.stop - s.start for s in self.region)


def grid(array: Array) -> Iterator[Chunk]:
    """Every chunk of the grid, in C order, with the region of the array it covers."""
    chunk_grid = array.metadata.chunk_grid
    for coords in itertools.product(*(range(n) for n in chunk_grid.grid_shape(array.shape))):
        yield _chunk(array, coords, chunk_key(array, coords))


def held(array: Array) -> Iterator[Chunk]:
    """The chunks the store holds, from one listing through the array's storage transformers
    (`Array.stored_chunks`): as many as are stored, whatever the size of the grid. A store
    that cannot list (plain HTTP) is asked chunk by chunk."""
    store = array.chunk_store
    if not getattr(store, "listable", True):
        yield from (chunk for chunk in grid(array) if store.exists(chunk.key))
        return
    for stored in array.stored_chunks():
        yield _chunk(array, stored.coords, stored.key)


def _chunk(array: Array, coords: tuple[int, ...], key: str) -> Chunk:
    chunk_grid = array.metadata.chunk_grid
    region = []
    for d, (c, n) in enumerate(zip(coords, chunk_grid.chunk_shape(coords))):
        start = int(chunk_grid.chunk_start(d, np.asarray(c)))
        region.append(slice(start, min(start + int(n), array.shape[d])))
    return Chunk(coords, key, tuple(region))


def chunk_count(array: Array) -> int:
    return math.prod(array.metadata.chunk_grid.grid_shape(array.shape))


def node_keys(array: Array) -> list[str] | None:
    """Every key under the array's own prefix (its documents and chunks), for formats whose
    arrays keep everything under one (v2, v3); None otherwise, or when the store cannot list."""
    store = array.store
    if array.metadata.format not in ("v2", "v3") or not getattr(store, "listable", True):
        return None
    prefix = f"{array.path}/" if array.path else ""
    return list(store.list_prefix(prefix))


def sizes(store: Any, keys: Iterable[str], jobs: int) -> dict[str, int]:
    """Stored bytes per key (absent keys left out), as the store tells them (`Store.sizes`:
    a stat or an object's size where the store has one), a batch per thread."""
    keys = list(keys)
    batches = [keys[i : i + _BATCH] for i in range(0, len(keys), _BATCH)]
    out: dict[str, int] = {}
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for found in pool.map(store.sizes, batches):
            out.update(found)
    return out
