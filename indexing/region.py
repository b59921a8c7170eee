"""The part of a chunk a selection touches (`Region`): what a partial decode or re-encode is
asked for, per dimension a step-1 slice or sorted unique positions."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Region:
    """The part of a chunk a selection touches, per dimension: a step-1 slice or sorted unique
    positions (int64). `exact` says every element of the product is selected (orthogonal
    selections); otherwise the region is only a box around the selected points."""

    parts: tuple[slice | np.ndarray, ...]
    exact: bool = True

    @classmethod
    def whole(cls, shape: Sequence[int]) -> Region:
        return cls(tuple(slice(0, int(n)) for n in shape), True)

    def overlap(self, dim: int, start: int, stop: int) -> slice | np.ndarray | None:
        """This region's positions along `dim` inside [start, stop), made local to `start`;
        None when there are none."""
        part = self.parts[dim]
        if isinstance(part, slice):
            lo, hi = max(part.start, start), min(part.stop, stop)
            return slice(lo - start, hi - start) if lo < hi else None
        lo, hi = np.searchsorted(part, (start, stop))
        return part[lo:hi] - start if hi > lo else None

    def covers(self, box: Sequence[tuple[int, int]]) -> bool:
        """Whether every element of the box [(start, stop) per dimension] is selected."""
        if not self.exact:
            return False
        for part, (start, stop) in zip(self.parts, box):
            if isinstance(part, slice):
                if part.start > start or part.stop < stop:
                    return False
            else:
                lo, hi = np.searchsorted(part, (start, stop))
                if hi - lo != stop - start:
                    return False
        return True

    def within(self, box: Sequence[tuple[int, int]]) -> Region:
        """The part of this region inside a box, in the box's local coordinates (every part
        non-empty: ask `overlap` first)."""
        parts: list[slice | np.ndarray] = []
        for d, (a, b) in enumerate(box):
            part = self.overlap(d, a, b)
            parts.append(part if part is not None else slice(0, 0))
        return Region(tuple(parts), self.exact)

    def bounds(self) -> tuple[tuple[int, int], ...]:
        """The box around the region: (first, last + 1) per dimension. A partial decode
        returns this box of the chunk, not the whole chunk (see
        `ArrayBytesPartialDecode.decode_partial`)."""
        return tuple(
            (p.start, p.stop)
            if isinstance(p, slice)
            else (int(p[0]), int(p[-1]) + 1)
            if p.size
            else (0, 0)
            for p in self.parts
        )

    def permuted(self, order: Sequence[int]) -> Region:
        return Region(tuple(self.parts[i] for i in order), self.exact)
