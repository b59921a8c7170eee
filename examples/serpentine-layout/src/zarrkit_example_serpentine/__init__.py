"""`example.serpentine`: a chunk's rows in serpentine (boustrophedon) order, as a zarrkit
memory layout plugin for zarr v2 (`"order": "example.serpentine"`) and the 2020 draft.

Scanning instruments (beamlines, scanning microscopes) often record a raster in serpentine
order: left to right, then right to left on the next row. Stored that way, a chunk's bytes are
the order the samples arrived in. It is C order with every other row (along the last axis)
reversed; the layout is its own inverse. Elements are stored whole, in the byte order the
array's dtype names, as every layout must.

Only zarrkit with this package installed reads such arrays: neither zarr v2 nor the draft
defines this layout for other implementations.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from zarrkit.abc import MemoryLayout, names


def _serpentine(chunk: np.ndarray) -> np.ndarray:
    """C-ordered copy with every other row (along the last axis) reversed."""
    out = np.array(chunk, order="C")  # a copy: the caller's chunk is never changed
    if out.ndim >= 1 and out.size:
        rows = out.reshape(-1, out.shape[-1])  # a view of the copy
        rows[1::2] = rows[1::2, ::-1].copy()
    return out


class SerpentineLayout(MemoryLayout):
    names = names(v2="example.serpentine", draft="example.serpentine")

    def to_bytes(self, chunk: np.ndarray, dtype: np.dtype) -> Any:
        return _serpentine(np.asarray(chunk, dtype=dtype)).tobytes()

    def from_bytes(self, data: Any, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        count = int(np.prod(shape, dtype=np.int64))
        stored = np.frombuffer(data, dtype=dtype, count=count).reshape(shape)
        return _serpentine(stored)
