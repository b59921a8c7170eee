"""Index transforms: where each element of a view lives in its base array.

A view of shape `shape` maps its coordinates to one position of the base array per base
dimension, each by an output map of one of three kinds (tensorstore's `IndexTransform` in
miniature): a `Constant` (an integer index dropped the dimension), a `Strided` range over one
view dimension (a slice, a transpose), or an `Indexed` array broadcast over the view's
dimensions (an index array; vindex couples several base dimensions to the same view
dimensions). A selection on a view is itself such a map from the new view to the old one, and
`compose` folds it in, so a chain of selections stays one transform on the base array.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Constant:
    """The base position is `value` for every element of the view."""

    value: int


@dataclass(frozen=True)
class Strided:
    """The base position is `start + step * i`, `i` the element's index along view dimension
    `dim`."""

    start: int
    step: int
    dim: int


@dataclass(frozen=True, eq=False)
class Indexed:
    """The base position is `index[i0, i1, ...]` at the element's view coordinates: `index`
    has the view's number of dimensions, each of the view's length or 1 (broadcast), and
    holds base positions already checked against the base dimension."""

    index: np.ndarray

    @property
    def dims(self) -> tuple[int, ...]:
        """The view dimensions the positions vary along."""
        return tuple(d for d, n in enumerate(self.index.shape) if n != 1)


OutputMap = Constant | Strided | Indexed


@dataclass(frozen=True, eq=False)
class IndexTransform:
    """A view's shape and, per base dimension, the map from view coordinates to it."""

    shape: tuple[int, ...]
    outputs: tuple[OutputMap, ...]

    @classmethod
    def identity(cls, shape: Sequence[int]) -> IndexTransform:
        return cls(tuple(shape), tuple(Strided(0, 1, d) for d in range(len(shape))))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def positions(self, base_dim: int) -> np.ndarray:
        """The base positions of base dimension `base_dim`, broadcastable to the view's shape
        (an array of the view's number of dimensions)."""
        return _positions(self.outputs[base_dim], self.shape)


def compose(outer: IndexTransform, inner: IndexTransform) -> IndexTransform:
    """The transform of a selection `inner` (new view -> old view coordinates) applied to a
    view whose transform is `outer` (old view -> base coordinates): new view -> base."""
    return IndexTransform(inner.shape, tuple(_through(m, inner) for m in outer.outputs))


def _through(output: OutputMap, inner: IndexTransform) -> OutputMap:
    """One base dimension's map, seen from the new view."""
    if isinstance(output, Constant):
        return output
    if isinstance(output, Strided):
        step_in = inner.outputs[output.dim]
        if isinstance(step_in, Constant):
            return Constant(output.start + output.step * step_in.value)
        if isinstance(step_in, Strided):
            return Strided(
                output.start + output.step * step_in.start, output.step * step_in.step, step_in.dim
            )
        return _indexed(output.start + output.step * step_in.index, inner.ndim)
    # an index array: evaluate it at the old coordinates of every new element, broadcasting
    # over the new dimensions only where the old ones it varies along lead
    where = tuple(
        _positions(inner.outputs[d], inner.shape) if n != 1 else np.zeros((1,) * inner.ndim, int)
        for d, n in enumerate(output.index.shape)
    )
    if not where:
        return _indexed(output.index.reshape((1,) * inner.ndim), inner.ndim)
    return _indexed(output.index[where], inner.ndim)


def _indexed(index: np.ndarray, ndim: int) -> OutputMap:
    """An index array of `ndim` dimensions, as a `Constant` when it holds a single position."""
    index = np.asarray(index, dtype=np.int64)
    if index.ndim < ndim:
        index = index.reshape((1,) * (ndim - index.ndim) + index.shape)
    if all(n == 1 for n in index.shape):
        return Constant(int(index.reshape(-1)[0]))
    return Indexed(index)


def _positions(output: OutputMap, shape: tuple[int, ...]) -> np.ndarray:
    ndim = len(shape)
    if isinstance(output, Constant):
        return np.full((1,) * ndim, output.value, dtype=np.int64)
    if isinstance(output, Strided):
        along = [1] * ndim
        along[output.dim] = shape[output.dim]
        steps = np.arange(shape[output.dim], dtype=np.int64)
        return (output.start + output.step * steps).reshape(along)
    return output.index
