"""`LazyArray`: a view of a zarrkit array that reads nothing until asked.

`array.lazy[...]` makes one; indexing it (numpy's rules, `oindex`, `vindex`, `transpose`)
makes another, composing index transforms (`transform`), so however long the chain, reading
the final view is one selection on the base array that touches only its chunks.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

import numpy as np

from zarrkit.errors import ArgumentError

from . import reading
from .selection import Mode, parse, transposed
from .transform import Constant, Indexed, IndexTransform, Strided, compose

if TYPE_CHECKING:
    from zarrkit.array import Array


class LazyArray:
    """A selection of a zarrkit `Array`, kept as an index transform and read on demand.

    `view[sel]`, `view.oindex[sel]`, `view.vindex[sel]`, `view.transpose(*axes)` and
    `view.T` return views without I/O; `view.result()`, `np.asarray(view)` and
    `await view.result_async()` read; `view[sel] = value` and `view.write(value)` write
    through to the array. Indexing follows numpy: a position outside a dimension raises
    `zarrkit.errors.SelectionError` (an `IndexError`) naming the view's dimension.
    """

    __slots__ = ("_array", "_transform")

    def __init__(self, array: Array, transform: IndexTransform | None = None) -> None:
        """array: the base `zarrkit.Array`; transform: where the view's elements lie in it
        (None: the whole array)."""
        self._array = array
        self._transform = (
            transform if transform is not None else IndexTransform.identity(array.shape)
        )

    # -- what the view is --------------------------------------------------------------------
    @property
    def array(self) -> Array:
        """The base array the view reads from and writes to."""
        return self._array

    @property
    def transform(self) -> IndexTransform:
        """The map from the view's coordinates to the base array's."""
        return self._transform

    @property
    def shape(self) -> tuple[int, ...]:
        return self._transform.shape

    @property
    def dtype(self) -> np.dtype:
        return self._array.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def __len__(self) -> int:
        if not self.shape:
            raise ArgumentError("len() of a 0-d view")
        return self.shape[0]

    def __repr__(self) -> str:
        base = repr(self._array).removeprefix("<").removesuffix(">")
        return f"<LazyArray shape={self.shape} dtype={self.dtype} of {base}: {self._describe()}>"

    def _describe(self) -> str:
        """The selection on the base array, one entry per base dimension."""
        parts = []
        for output in self._transform.outputs:
            if isinstance(output, Constant):
                parts.append(str(output.value))
            elif isinstance(output, Strided):
                parts.append(_affine(output))
            else:
                dims = ",".join(f"i{d}" for d in output.dims)
                parts.append(f"array[{dims}]")
        return "[" + ", ".join(parts) + "]"

    # -- views of the view -------------------------------------------------------------------
    def _selected(self, selection: Any, mode: Mode) -> LazyArray:
        step = parse(selection, self.shape, mode)
        return LazyArray(self._array, compose(self._transform, step))

    def __getitem__(self, selection: Any) -> LazyArray:
        """The view of `selection` (what numpy's indexing takes: ints, slices, `...`, `None`,
        integer and boolean arrays), without I/O. Raises `SelectionError` (an `IndexError`)
        for a position outside the view or a selection numpy would refuse."""
        return self._selected(selection, Mode.NUMPY)

    def __setitem__(self, selection: Any, value: Any) -> None:
        """`self[selection].write(value)`."""
        self[selection].write(value)

    @property
    def oindex(self) -> _Selecting:
        """Orthogonal selection: each index array indexes its own dimension."""
        return _Selecting(self, Mode.OINDEX)

    @property
    def vindex(self) -> _Selecting:
        """Points: index arrays broadcast together; their dimensions come first, then the
        sliced ones (dask's vindex)."""
        return _Selecting(self, Mode.VINDEX)

    def transpose(self, *axes: Any) -> LazyArray:
        """The view with its dimensions in the order `axes` (ints or one tuple of them,
        negative counted from the end; none: reversed), as numpy's. Raises `SelectionError`
        when `axes` is not a permutation of the view's dimensions."""
        return LazyArray(self._array, compose(self._transform, transposed(axes, self.shape)))

    @property
    def T(self) -> LazyArray:
        return self.transpose()

    # -- reading and writing -----------------------------------------------------------------
    def result(self) -> Any:
        """Read the view: an array of its shape (a scalar for a 0-d view, as numpy indexing
        gives). Raises the errors a read of the array raises."""
        values = reading.read_one(self)
        return values[()] if values.shape == () else values

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        """`np.asarray(view)`: the view read, as a new array (cast to `dtype` when given)."""
        values = reading.read_one(self)
        return values if dtype is None else values.astype(dtype)

    def result_async(self) -> Awaitable[np.ndarray]:
        """`result()` to await (an array, 0-d for a 0-d view): the event loop runs on while
        the view is read. Raises what `result()` raises."""
        return _first(reading.read_many_async([self]))

    def write(self, value: Any) -> None:
        """Write `value` to the view's elements of the array, broadcast to the view's shape as
        numpy assigns (where an index array names a position twice, the last value wins).
        Raises `ValueCastError` (a value that does not broadcast or fit the data type),
        `ReadOnlyError`."""
        reading.write(self, value)

    # -- dask --------------------------------------------------------------------------------
    def __dask_tokenize__(self) -> Any:
        """Names a dask graph over the view by the array and the exact transform, so two
        views of different elements never share a dask name."""
        digest = hashlib.sha1(repr((repr(self._array), self.shape)).encode())
        digest.update(str(id(self._array)).encode())
        for output in self._transform.outputs:
            if isinstance(output, Indexed):
                digest.update(repr(output.index.shape).encode() + output.index.tobytes())
            else:
                digest.update(repr(output).encode())
        return (type(self).__name__, digest.hexdigest())


def _affine(output: Strided) -> str:
    """`start + step * i<dim>` written as a person would: `i0`, `3+i1`, `5-2*i0`."""
    term = f"i{output.dim}" if abs(output.step) == 1 else f"{abs(output.step)}*i{output.dim}"
    if output.start == 0:
        return term if output.step > 0 else f"-{term}"
    return f"{output.start}{'+' if output.step > 0 else '-'}{term}"


async def _first(values: Awaitable[list[np.ndarray]]) -> np.ndarray:
    return (await values)[0]


class _Selecting:
    """`view.oindex` / `view.vindex`."""

    __slots__ = ("_mode", "_view")

    def __init__(self, view: LazyArray, mode: Mode) -> None:
        self._view = view
        self._mode = mode

    def __getitem__(self, selection: Any) -> LazyArray:
        return self._view._selected(selection, self._mode)

    def __setitem__(self, selection: Any, value: Any) -> None:
        self._view._selected(selection, self._mode).write(value)
