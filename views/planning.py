"""One selection on the base array for a view: what to ask the engine, and how its answer
becomes the view's values (and a written value the selection's).

A view whose every base dimension is a constant, a range or an index array along a view
dimension of its own is an orthogonal selection (slices, integers and 1-D arrays, one per base
dimension) followed by a transpose and new axes of length 1. A view where index arrays couple
dimensions (vindex) is a coordinate selection of its points. Either way the engine reads only
the chunks, and the inner chunks of shards, that the view's elements lie in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .transform import Constant, Indexed, IndexTransform, Strided


@dataclass(frozen=True, eq=False)
class OrthogonalPlan:
    """`selection` per base dimension (int, slice, or 1-D positions); the engine's result
    has the non-constant base dimensions in base order, `view_dims` their view dimensions."""

    selection: tuple[Any, ...]
    view_dims: tuple[int, ...]
    shape: tuple[int, ...]

    def to_view(self, values: np.ndarray) -> np.ndarray:
        """The engine's answer arranged as the view: transposed, then repeated along the view
        dimensions no base dimension varies along (of length 1, or a repeat of one position)."""
        order = sorted(range(len(self.view_dims)), key=lambda i: self.view_dims[i])
        values = np.transpose(values, order)
        led = set(self.view_dims)
        values = values.reshape(tuple(n if d in led else 1 for d, n in enumerate(self.shape)))
        if values.shape == self.shape:
            return values
        return np.broadcast_to(values, self.shape).copy()

    def for_write(self, value: np.ndarray) -> tuple[tuple[Any, ...], np.ndarray]:
        """The selection and value to write for a value of the view's shape. A position an
        index array names twice keeps its last value, as numpy's assignment does."""
        led = set(self.view_dims)
        # along a dimension no base dimension varies along, every element lands on one
        # position: the last one written stays
        kept = value[tuple(slice(None) if d in led else -1 for d in range(len(self.shape)))]
        ranks = {d: i for i, d in enumerate(sorted(self.view_dims))}
        kept = np.transpose(kept, [ranks[d] for d in self.view_dims])
        selection = list(self.selection)
        axis = 0
        for base_dim, item in enumerate(self.selection):
            if isinstance(item, np.ndarray):
                positions, last = _last_of_each(item)
                selection[base_dim] = positions
                kept = np.take(kept, last, axis=axis)
            if not isinstance(item, int):
                axis += 1
        return tuple(selection), kept


@dataclass(frozen=True, eq=False)
class CoordinatePlan:
    """The base positions of every element of the view, one flat array per base dimension."""

    coordinates: tuple[np.ndarray, ...]
    shape: tuple[int, ...]

    def to_view(self, values: np.ndarray) -> np.ndarray:
        return np.reshape(values, self.shape)

    def for_write(
        self, value: np.ndarray, base_shape: tuple[int, ...]
    ) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
        flat = np.ravel_multi_index(self.coordinates, base_shape)
        _, last = _last_of_each(flat)
        return tuple(c[last] for c in self.coordinates), np.reshape(value, -1)[last]


Plan = OrthogonalPlan | CoordinatePlan


def plan(transform: IndexTransform) -> Plan:
    """The engine selection that reads (or writes) the view of `transform`."""
    led: list[int] = []  # the view dimension each non-constant base dimension varies along
    coupled = False
    for output in transform.outputs:
        if isinstance(output, Strided):
            led.append(output.dim)
        elif isinstance(output, Indexed):  # (one position everywhere is a Constant)
            dims = output.dims
            coupled |= len(dims) != 1
            led.append(dims[0])
    if coupled or len(set(led)) != len(led):
        return _coordinate_plan(transform)
    selection = tuple(_orthogonal_item(output, transform.shape) for output in transform.outputs)
    return OrthogonalPlan(selection, tuple(led), transform.shape)


def _orthogonal_item(output: Any, shape: tuple[int, ...]) -> Any:
    if isinstance(output, Constant):
        return output.value
    if isinstance(output, Strided):
        count = shape[output.dim]
        stop = output.start + output.step * count
        return slice(output.start, None if stop < 0 else stop, output.step)
    return output.index.reshape(-1)


def _coordinate_plan(transform: IndexTransform) -> CoordinatePlan:
    shape = transform.shape
    coordinates = tuple(
        np.broadcast_to(transform.positions(d), shape).reshape(-1)
        for d in range(len(transform.outputs))
    )
    return CoordinatePlan(coordinates, shape)


def _last_of_each(positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct positions (sorted) and, for each, where it last occurs."""
    reverse = positions[::-1]
    distinct, first = np.unique(reverse, return_index=True)
    return distinct, positions.size - 1 - first
