"""Selections on a view, parsed into index transforms from the new view to the old one.

Three ways to index, as numpy and zarr-python name them: `view[...]` with numpy's rules
exactly (basic indices, and numpy's advanced indexing when an array is among them), `oindex`
(every array indexes its own dimension) and `vindex` (arrays broadcast together into points,
their dimensions first). Negative positions count from the end of the view's dimension; a
position outside it is a `SelectionError` (an `IndexError`) naming that dimension.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

import numpy as np

from zarrkit.errors import SelectionError

from .transform import Constant, Indexed, IndexTransform, OutputMap, Strided


class Mode(Enum):
    NUMPY = "view[...]"
    OINDEX = "view.oindex[...]"
    VINDEX = "view.vindex[...]"


@dataclass(frozen=True)
class _Sliced:
    """A slice of old dimension `dim`: `count` positions from `start` by `step`."""

    dim: int
    start: int
    step: int
    count: int


@dataclass(frozen=True)
class _NewAxis:
    """A dimension of length 1 that no old dimension leads to (`None`, `np.newaxis`)."""


@dataclass(frozen=True)
class _OwnArray:
    """An oindex array: old dimension `dim` at `positions`, a new dimension of its own."""

    dim: int
    positions: np.ndarray


@dataclass(frozen=True)
class _Block:
    """Where the broadcast dimensions of the advanced indices go among the new ones."""


_Item = _Sliced | _NewAxis | _OwnArray | _Block


def parse(selection: Any, shape: tuple[int, ...], mode: Mode) -> IndexTransform:
    """The transform from the view that `selection` makes (of a view of `shape`) to it."""
    items = _expanded(selection if isinstance(selection, tuple) else (selection,), shape, mode)
    new_items: list[_Item] = []
    outputs: list[OutputMap | None] = [None] * len(shape)
    advanced: dict[int, np.ndarray] = {}  # old dim -> positions, broadcast together
    advanced_items: list[int] = []  # which of the items were advanced indices
    block_at = 0  # where the first advanced index stood among the new dimensions
    ints_advanced = _ints_advanced(items, mode)
    dim = 0
    for number, item in enumerate(items):
        if (
            isinstance(item, (int, np.ndarray))
            and (ints_advanced or isinstance(item, np.ndarray))
            and mode is not Mode.OINDEX
        ):
            if not advanced_items:
                block_at = len(new_items)
            advanced_items.append(number)
        if item is None:
            new_items.append(_NewAxis())
            continue
        length = shape[dim]
        if isinstance(item, slice):
            start, stop, step = item.indices(length)
            new_items.append(_Sliced(dim, start, step, len(range(start, stop, step))))
        elif isinstance(item, np.ndarray) and item.dtype == bool:
            _check_mask(item, dim, shape)
            for offset, positions in enumerate(np.nonzero(item)):
                if mode is Mode.OINDEX:
                    new_items.append(_OwnArray(dim + offset, positions.astype(np.int64)))
                else:
                    advanced[dim + offset] = positions.astype(np.int64)
            dim += item.ndim
            continue
        elif isinstance(item, np.ndarray):
            positions = _checked_array(item, dim, length)
            if mode is Mode.OINDEX:
                new_items.append(_OwnArray(dim, positions))
            else:
                advanced[dim] = positions
        else:
            position = _checked_int(item, dim, length)
            if ints_advanced:
                advanced[dim] = np.asarray(position, dtype=np.int64)
            else:
                outputs[dim] = Constant(position)
        dim += 1
    if advanced_items:
        new_items.insert(block_at if _adjacent(advanced_items, mode) else 0, _Block())
    return _transform(new_items, outputs, advanced, len(shape))


def _ints_advanced(items: Sequence[Any], mode: Mode) -> bool:
    """Whether integers are advanced indices: in numpy's indexing when an array is among the
    indices, and always in vindex."""
    if mode is Mode.VINDEX:
        return True
    return mode is Mode.NUMPY and any(isinstance(i, np.ndarray) for i in items)


def _adjacent(at: list[int], mode: Mode) -> bool:
    """numpy keeps the advanced indices' dimensions in place when the indices stand side by
    side (nothing between them); vindex puts them first, as dask does."""
    return mode is Mode.NUMPY and at == list(range(at[0], at[0] + len(at)))


def _transform(
    new_items: list[_Item],
    outputs: list[OutputMap | None],
    advanced: dict[int, np.ndarray],
    old_ndim: int,
) -> IndexTransform:
    """The transform from the new dimensions (`new_items` in order) to the old ones."""
    try:
        broadcast = np.broadcast_shapes(*(a.shape for a in advanced.values()))
    except ValueError:
        shapes = ", ".join(str(a.shape) for a in advanced.values())
        raise SelectionError(f"index arrays of shapes {shapes} do not broadcast together") from None
    shape: list[int] = []
    own: dict[int, tuple[int, np.ndarray]] = {}  # old dim -> (new dim, positions)
    block_start = 0
    for item in new_items:
        if isinstance(item, _Block):
            block_start = len(shape)
            shape.extend(broadcast)
        elif isinstance(item, _Sliced):
            outputs[item.dim] = Strided(item.start, item.step, len(shape))
            shape.append(item.count)
        elif isinstance(item, _OwnArray):
            own[item.dim] = (len(shape), item.positions)
            shape.append(item.positions.size)
        else:
            shape.append(1)
    ndim = len(shape)
    final: list[OutputMap] = []
    for dim, output in enumerate(outputs):
        if dim in advanced:
            # kept at its own shape (length 1 where it broadcasts), so an index array that
            # varies along one dimension only (np.ix_) stays orthogonal
            index = advanced[dim]
            index = index.reshape((1,) * (len(broadcast) - index.ndim) + index.shape)
            lead = (1,) * block_start
            trail = (1,) * (ndim - block_start - len(broadcast))
            final.append(_squeezed(index.reshape(lead + index.shape + trail)))
        elif dim in own:
            at, positions = own[dim]
            along = [1] * ndim
            along[at] = positions.size
            final.append(_squeezed(positions.reshape(along)))
        else:
            assert output is not None, "every old dimension is indexed by one item"
            final.append(output)
    assert len(final) == old_ndim
    return IndexTransform(tuple(shape), tuple(final))


def _squeezed(index: np.ndarray) -> OutputMap:
    """An advanced index of one position everywhere is a constant; copies keep the
    transform independent of the caller's arrays."""
    if all(n == 1 for n in index.shape):
        return Constant(int(index.reshape(-1)[0]))
    return Indexed(np.ascontiguousarray(index, dtype=np.int64))


def _expanded(items: tuple, shape: tuple[int, ...], mode: Mode) -> list[Any]:
    """The selection with Ellipsis expanded and missing trailing dimensions as `:`; arrays
    (lists too) as numpy arrays, checked for kind; the count of dimensions checked."""
    out: list[Any] = []
    ellipsis_at = None
    used = 0
    for item in items:
        if item is Ellipsis:
            if ellipsis_at is not None:
                raise SelectionError(f"{mode.value}: an index can only have one Ellipsis (...)")
            ellipsis_at = len(out)
            continue
        if item is None:
            if mode is not Mode.NUMPY:
                raise SelectionError(
                    f"{mode.value} takes no newaxis (None); index the view with it"
                )
            out.append(None)
            continue
        item = _normalised(item, mode, len(out))
        used += item.ndim if isinstance(item, np.ndarray) and item.dtype == bool else 1
        out.append(item)
    if used > len(shape):
        raise SelectionError(
            f"{mode.value}: too many indices for a view of {len(shape)} dimensions "
            f"(shape {shape}): {used} were given"
        )
    fill = [slice(None)] * (len(shape) - used)
    if ellipsis_at is None:
        return out + fill
    return out[:ellipsis_at] + fill + out[ellipsis_at:]


def _normalised(item: Any, mode: Mode, position: int) -> Any:
    if isinstance(item, slice):
        for part in (item.start, item.stop, item.step):
            if part is not None:
                _as_int(part, f"{mode.value}: slice {item!r}")
        if item.step is not None and operator.index(item.step) == 0:
            raise SelectionError(f"{mode.value}: slice {item!r} has step 0")
        return item
    if isinstance(item, (bool, np.bool_)):
        raise SelectionError(f"{mode.value}: a boolean scalar ({item!r}) is not a valid index")
    if isinstance(item, (list, tuple, np.ndarray)):
        try:
            array = np.asarray(item)
        except ValueError as exc:
            raise SelectionError(
                f"{mode.value}: cannot make an index array of {item!r}: {exc}"
            ) from None
        if array.ndim == 0 and array.dtype != bool:
            return _as_int(array, f"{mode.value}: index {item!r}")
        if array.ndim == 0:
            raise SelectionError(f"{mode.value}: a boolean scalar ({item!r}) is not a valid index")
        if array.size == 0 and array.dtype.kind not in "iub":
            array = array.astype(np.int64)  # an empty list comes out as float64
        if array.dtype.kind not in "iub":
            raise SelectionError(
                f"{mode.value}: index arrays hold integers or booleans, got dtype {array.dtype}"
            )
        if mode is Mode.OINDEX and array.ndim != 1:
            raise SelectionError(
                f"{mode.value}: each index array indexes one dimension and must be 1-D, "
                f"got shape {array.shape}"
            )
        return array
    return _as_int(item, f"{mode.value}: index {item!r}")


def _as_int(item: Any, what: str) -> int:
    try:
        return operator.index(item)
    except TypeError:
        raise SelectionError(
            f"{what}: expected an integer, slice, Ellipsis, None or an index array, "
            f"got {type(item).__name__}"
        ) from None


def _checked_int(position: int, dim: int, length: int) -> int:
    if not -length <= position < length:
        _out_of_bounds(dim, position, length)
    return position + length if position < 0 else position


def _checked_array(array: np.ndarray, dim: int, length: int) -> np.ndarray:
    if array.size == 0:
        return array.astype(np.int64)
    low, high = int(array.min()), int(array.max())
    if low < -length or high >= length:
        _out_of_bounds(dim, low if low < -length else high, length)
    positions = array.astype(np.int64)
    return positions + length * (positions < 0) if low < 0 else positions


def _check_mask(mask: np.ndarray, dim: int, shape: tuple[int, ...]) -> None:
    """A boolean index covers the dimensions it stands for, each at its full length."""
    covered = shape[dim : dim + mask.ndim]
    if mask.shape != covered:
        raise SelectionError(
            f"dimension {dim} of the view: a boolean index of shape {mask.shape} does not match "
            f"the view's dimensions of lengths {covered}"
        )


def _out_of_bounds(dim: int, position: int, length: int) -> None:
    raise SelectionError(
        f"dimension {dim} of the view: index {position} is out of bounds for length {length} "
        f"(valid: {-length} to {length - 1})"
    )


def transposed(axes: Sequence[Any], shape: tuple[int, ...]) -> IndexTransform:
    """The transform of `view.transpose(*axes)` (no axes: reversed, as numpy's)."""
    ndim = len(shape)
    if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        axes = tuple(axes[0])
    if not axes or (len(axes) == 1 and axes[0] is None):
        order = list(range(ndim))[::-1]
    else:
        order = [_as_int(a, "transpose: axis") for a in axes]
        order = [a + ndim if a < 0 else a for a in order]
        if sorted(order) != list(range(ndim)):
            raise SelectionError(
                f"transpose: axes {tuple(axes)} are not a permutation of the view's "
                f"{ndim} dimensions"
            )
    inverse = {old: new for new, old in enumerate(order)}
    new_shape = tuple(shape[d] for d in order)
    return IndexTransform(new_shape, tuple(Strided(0, 1, inverse[d]) for d in range(ndim)))
