"""Lazy views (`array.lazy[...]`, `zarrkit.LazyArray`, `zarrkit.read_many`): chains of
selections read and write exactly what numpy reads and writes for the same chain, on regular,
sharded and rectilinear arrays, and read only the chunks the final view touches."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarrkit as zk
from zarrkit.errors import ReadOnlyError, SelectionError, ValueCastError
from zarrkit.plugins.stores.memory import MemoryStore

SHAPE = (7, 6, 5)
LAYOUTS: dict[str, dict[str, Any]] = {
    "regular": {"chunks": (3, 4, 2)},
    "sharded": {"shards": (6, 4, 4), "chunks": (3, 2, 2)},
    "rectilinear": {
        "chunk_grid": {
            "name": "rectilinear",
            "configuration": {"kind": "inline", "chunk_shapes": [[2, 5], [1, 2, 3], [5]]},
        }
    },
}


class CountingStore(MemoryStore):
    """A memory store that remembers which keys were read, whole or in ranges."""

    def __init__(self) -> None:
        super().__init__()
        self.read: list[str] = []

    def get(self, key: str, byte_range: Any = None) -> Any:
        self.read.append(key)
        return super().get(key, byte_range)

    def get_many(self, keys: Iterable[str]) -> Any:
        keys = list(keys)
        self.read.extend(keys)
        return super().get_many(keys)

    def get_ranges(self, requests: Sequence[tuple[str, Any]]) -> Any:
        self.read.extend(key for key, _ in requests)
        return super().get_ranges(requests)


def make(layout: str, store: MemoryStore | None = None) -> tuple[zk.Array, np.ndarray]:
    a = zk.create_array(
        store if store is not None else MemoryStore(),
        shape=SHAPE,
        dtype="i4",
        fill_value=-1,
        **LAYOUTS[layout],
    )
    expect = np.arange(np.prod(SHAPE), dtype="i4").reshape(SHAPE)
    a[...] = expect
    return a, expect


# -- selections, drawn for a view of a given shape ---------------------------------------------
#: a step of a chain: (kind, selection); kind is "numpy", "oindex", "vindex" or "transpose"
Step = tuple[str, Any]


@st.composite
def _slice(draw: st.DrawFn, n: int) -> slice:
    bound = st.none() | st.integers(-n - 2, n + 2)
    step = draw(st.none() | st.sampled_from([1, 2, 3, -1, -2, -3]))
    return slice(draw(bound), draw(bound), step)


@st.composite
def _positions(draw: st.DrawFn, n: int, length: int | None = None) -> np.ndarray:
    """An index array (negatives and repeats allowed) for a dimension of length `n`."""
    size = draw(st.integers(1, 4)) if length is None else length
    return np.array(draw(st.lists(st.integers(-n, n - 1), min_size=size, max_size=size)))


@st.composite
def basic_step(draw: st.DrawFn, shape: tuple[int, ...]) -> Step:
    items: list[Any] = []
    for n in shape:
        choice = draw(st.sampled_from(["int", "slice", "slice", "all"] if n else ["slice"]))
        if choice == "int":
            items.append(draw(st.integers(-n, n - 1)))
        elif choice == "slice":
            items.append(draw(_slice(n)))
        else:
            items.append(slice(None))
    if items and draw(st.booleans()):  # an Ellipsis in place of a run of whole dimensions
        start = draw(st.integers(0, len(items)))
        stop = draw(st.integers(start, len(items)))
        items[start:stop] = [Ellipsis]
    for _ in range(draw(st.integers(0, 2))):
        items.insert(draw(st.integers(0, len(items))), None)
    return "numpy", tuple(items)


@st.composite
def advanced_step(draw: st.DrawFn, shape: tuple[int, ...]) -> Step:
    """numpy's own advanced indexing: index arrays of one length (and maybe integers) among
    slices, in place when side by side and first otherwise."""
    if not shape or not all(shape):
        return "numpy", ()
    if draw(st.integers(0, 3)) == 0:  # a boolean array, in one dimension or over two
        at = draw(st.integers(0, len(shape) - 1))
        span = draw(st.integers(1, min(2, len(shape) - at)))
        cells = int(np.prod(shape[at : at + span]))
        mask = np.array(draw(st.lists(st.booleans(), min_size=cells, max_size=cells)))
        items = [slice(None)] * at + [mask.reshape(shape[at : at + span])]
        return "numpy", tuple(items)
    length = draw(st.integers(1, 4))
    arrays = draw(st.lists(st.integers(0, len(shape) - 1), min_size=1, max_size=2, unique=True))
    items: list[Any] = []
    for d, n in enumerate(shape):
        if d in arrays:
            items.append(draw(_positions(n, length)))
        elif draw(st.booleans()):
            items.append(draw(_slice(n)))
        else:
            items.append(draw(st.integers(-n, n - 1)))
    return "numpy", tuple(items)


@st.composite
def oindex_step(draw: st.DrawFn, shape: tuple[int, ...]) -> Step:
    items: list[Any] = []
    for n in shape:
        kinds = ["array", "slice", "bool", "int"] if n else ["slice"]
        kind = draw(st.sampled_from(kinds))
        if kind == "array":
            items.append(draw(_positions(n)))
        elif kind == "bool":
            items.append(np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n))))
        elif kind == "int":
            items.append(draw(st.integers(-n, n - 1)))
        else:
            items.append(draw(_slice(n)))
    return "oindex", tuple(items)


@st.composite
def vindex_step(draw: st.DrawFn, shape: tuple[int, ...]) -> Step:
    """Points: arrays of one length in some dimensions (all of them, often), slices in the
    rest."""
    if not shape or not all(shape):
        return "numpy", ()
    length = draw(st.integers(1, 4))
    every = draw(st.booleans())
    items: list[Any] = []
    for n in shape:
        if every or draw(st.booleans()):
            items.append(draw(_positions(n, length)))
        else:
            items.append(draw(_slice(n)))
    if not any(isinstance(i, np.ndarray) for i in items):
        items[0] = draw(_positions(shape[0], length))
    return "vindex", tuple(items)


@st.composite
def transpose_step(draw: st.DrawFn, shape: tuple[int, ...]) -> Step:
    return "transpose", tuple(draw(st.permutations(range(len(shape)))))


STEPS = [basic_step, basic_step, advanced_step, oindex_step, vindex_step, transpose_step]


@st.composite
def chains(draw: st.DrawFn) -> list[Step]:
    shape: tuple[int, ...] = SHAPE
    steps: list[Step] = []
    probe = np.zeros(SHAPE)
    for _ in range(draw(st.integers(1, 3))):
        step = draw(draw(st.sampled_from(STEPS))(shape))
        steps.append(step)
        probe = numpy_step(probe, step)
        shape = probe.shape
    return steps


# -- numpy's answer for a chain ----------------------------------------------------------------
def numpy_step(x: np.ndarray, step: Step) -> np.ndarray:
    kind, selection = step
    if kind == "numpy":
        return x[selection]
    if kind == "transpose":
        return x.transpose(selection)
    if kind == "oindex":  # one dimension at a time, the last first, so positions stay put
        for d in reversed(range(len(selection))):
            x = x[(slice(None),) * d + (selection[d],)]
        return x
    # vindex: numpy's advanced indexing with the points' dimensions moved first
    out = x[selection]
    advanced = [i for i, s in enumerate(selection) if not isinstance(s, slice)]
    if advanced == list(range(advanced[0], advanced[-1] + 1)):
        points = np.broadcast_shapes(*(np.shape(selection[i]) for i in advanced))
        first = advanced[0]
        out = np.moveaxis(out, list(range(first, first + len(points))), list(range(len(points))))
    return out


def view_step(view: zk.LazyArray, step: Step) -> zk.LazyArray:
    kind, selection = step
    if kind == "numpy":
        return view[selection]
    if kind == "transpose":
        return view.transpose(*selection)
    return getattr(view, kind)[selection]


def chained(start: Any, steps: list[Step], apply: Callable[[Any, Step], Any]) -> Any:
    for step in steps:
        start = apply(start, step)
    return start


# -- chains against numpy ----------------------------------------------------------------------
CHAIN = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("layout", LAYOUTS)
@CHAIN
@given(steps=chains())
def test_a_chain_reads_what_numpy_reads(layout: str, steps: list[Step]) -> None:
    a, expect = ARRAYS[layout]
    view = chained(a.lazy, steps, view_step)
    want = chained(expect, steps, numpy_step)
    assert view.shape == want.shape
    assert view.ndim == want.ndim and view.size == want.size and view.dtype == want.dtype
    got = view.result()
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.asarray(view), want)


@pytest.mark.parametrize("layout", LAYOUTS)
@CHAIN
@given(steps=chains(), data=st.data())
def test_a_chain_writes_what_numpy_writes(
    layout: str, steps: list[Step], data: st.DataObject
) -> None:
    a, expect = make(layout)
    view = chained(a.lazy, steps, view_step)
    # where each element of the view lies in the array, by numpy's own indexing of positions
    where = chained(np.arange(expect.size).reshape(SHAPE), steps, numpy_step)
    if data.draw(st.booleans()):
        value: Any = -7
    else:
        value = -np.arange(where.size, dtype="i4").reshape(where.shape) - 10
    if data.draw(st.booleans()):
        view[...] = value
    else:
        view.write(value)
    flat = expect.reshape(-1)
    flat[where] = value  # (numpy: where a position repeats, the last value is kept)
    np.testing.assert_array_equal(a[...], expect)


ARRAYS = {layout: make(layout) for layout in LAYOUTS}


# -- semantics ---------------------------------------------------------------------------------
def test_views_read_nothing_until_asked() -> None:
    store = CountingStore()
    a, expect = make("regular", store)
    store.read.clear()
    view = a.lazy[1:, ::-2].oindex[[0, 2], :, [4, 0]].T
    assert store.read == []
    assert view.shape == (2, 3, 2)
    assert isinstance(view, zk.LazyArray)
    assert "LazyArray shape=(2, 3, 2) dtype=int32" in repr(view)
    np.testing.assert_array_equal(view.result(), expect[1:, ::-2][[0, 2]][:, :, [4, 0]].T)


def test_negative_positions_count_from_the_end_of_the_view() -> None:
    a, expect = ARRAYS["regular"]
    view = a.lazy[2:5]
    assert view[-1].result().tolist() == expect[4].tolist()
    assert view.oindex[[-3, -1]].result().tolist() == expect[[2, 4]].tolist()


def test_a_position_outside_the_view_names_its_dimension() -> None:
    a, _ = ARRAYS["regular"]
    view = a.lazy[2:5]
    with pytest.raises(IndexError, match="dimension 0 of the view: index 3 is out of bounds"):
        view[3]
    with pytest.raises(SelectionError, match="dimension 1 of the view: index -7"):
        view.vindex[[0], [-7]]
    with pytest.raises(SelectionError, match="too many indices"):
        view[0, 0, 0, 0]
    with pytest.raises(
        SelectionError, match=r"dimension 1 of the view: a boolean index of shape \(5,\)"
    ):
        view[:, np.ones(5, dtype=bool)]


def test_a_scalar_view_reads_as_numpy_indexing_does() -> None:
    a, expect = ARRAYS["sharded"]
    view = a.lazy[1][2][-1]
    assert view.shape == () and view.result() == expect[1, 2, -1]
    with pytest.raises(TypeError, match="0-d view"):
        len(view)
    assert len(a.lazy[:3]) == 3


def test_a_value_that_does_not_broadcast_writes_nothing() -> None:
    a, expect = make("regular")
    with pytest.raises(ValueCastError, match=r"shape \(3,\) cannot be written to a view"):
        a.lazy[0, :2] = [1, 2, 3]
    np.testing.assert_array_equal(a[...], expect)


def test_read_result_async() -> None:
    a, expect = ARRAYS["regular"]

    async def main() -> list[np.ndarray]:
        one = await a.lazy[1, ::2].result_async()
        many = await zk.read_many_async([a.lazy[0], a.lazy.T[1]])
        return [one, *many]

    one, first, second = asyncio.run(main())
    np.testing.assert_array_equal(one, expect[1, ::2])
    np.testing.assert_array_equal(first, expect[0])
    np.testing.assert_array_equal(second, expect.T[1])


# -- what is read ------------------------------------------------------------------------------
def _chunks_touched(a: zk.Array, where: np.ndarray, edges: Sequence[Sequence[int]]) -> set[str]:
    """The keys of the chunks holding the positions `where` (flat positions in the array)."""
    coords = np.unravel_index(where.reshape(-1), SHAPE)
    ids = [np.searchsorted(np.asarray(e), c, side="right") - 1 for e, c in zip(edges, coords)]
    return {"c/" + "/".join(map(str, t)) for t in zip(*(i.tolist() for i in ids))}


@pytest.mark.parametrize("layout", LAYOUTS)
@settings(max_examples=40, deadline=None)
@given(steps=chains())
def test_a_chain_reads_only_the_chunks_or_shards_its_final_view_touches(
    layout: str, steps: list[Step]
) -> None:
    store = CountingStore()
    a, expect = make(layout, store)
    edges = {
        "regular": [range(0, 7, 3), range(0, 6, 4), range(0, 5, 2)],
        "rectilinear": [[0, 2], [0, 1, 3], [0]],
        "sharded": [range(0, 7, 6), range(0, 6, 4), range(0, 5, 4)],  # the shards
    }[layout]
    view = chained(a.lazy, steps, view_step)
    where = chained(np.arange(expect.size).reshape(SHAPE), steps, numpy_step)
    store.read.clear()
    view.result()
    read = {k.removeprefix("a/") for k in store.read if not k.endswith("zarr.json")}
    assert read == _chunks_touched(a, where, edges)


def test_a_chain_on_a_sharded_array_reads_only_the_inner_chunks_it_needs() -> None:
    from zarrkit.plugins.stores.wrappers.metrics import MetricsStore

    inner = MemoryStore()
    _, expect = make("sharded", inner)
    metrics = MetricsStore(inner)
    b = zk.open_array(metrics, mode="r+")
    MetricsStore.reset()
    # one element of one inner chunk, after three selections
    view = b.lazy[::-1][1:, ::2].vindex[[2], [1], [3]]
    assert view.result().tolist() == [expect[::-1][1:, ::2][2, 1, 3]]
    operations = next(iter(MetricsStore.summary().values()))
    read_bytes = sum(op["bytes"] for name, op in operations.items() if name.startswith("get"))
    # the shard index and one inner chunk of 3*2*2 int32s; not the shard of 6*4*4
    assert read_bytes < 4 * 6 * 4 * 4


@pytest.mark.parametrize("layout", LAYOUTS)
def test_read_many_equals_separate_reads_with_no_more_requests_than_get_many(
    layout: str,
) -> None:
    from zarrkit.plugins.stores.wrappers.metrics import MetricsStore

    inner = MemoryStore()
    make(layout, inner)
    b = zk.open_array(MetricsStore(inner), mode="r")
    windows = [(slice(i % 5, i % 5 + 2), slice(i % 4, None, 2), i % 5) for i in range(30)]
    views = [b.lazy[w] for w in windows]

    def calls() -> int:
        summary = next(iter(MetricsStore.summary().values()), {})
        return sum(op["calls"] for name, op in summary.items() if name.startswith("get"))

    MetricsStore.reset()
    together = zk.read_many(views)
    by_views = calls()
    MetricsStore.reset()
    selections = b.get_many(windows)
    by_selections = calls()
    for got, view, want in zip(together, views, selections):
        np.testing.assert_array_equal(got, view.result())
        np.testing.assert_array_equal(got, want)
    assert by_views <= by_selections


def test_read_many_takes_views_of_several_arrays_and_empty_views() -> None:
    a, expect_a = ARRAYS["regular"]
    b, expect_b = ARRAYS["rectilinear"]
    got = zk.read_many([a.lazy[0], b.lazy.vindex[[1, 2], [3, 4]], a.lazy[:0], b.lazy.T[..., 2]])
    np.testing.assert_array_equal(got[0], expect_a[0])
    np.testing.assert_array_equal(got[1], expect_b[[1, 2], [3, 4]])
    assert got[2].shape == (0, 6, 5)
    np.testing.assert_array_equal(got[3], expect_b.T[..., 2])


def test_lazy_array_is_a_top_level_name() -> None:
    assert zk.LazyArray is type(ARRAYS["regular"][0].lazy)


def test_a_view_or_an_array_is_a_value_to_write() -> None:
    a, expect = make("regular")
    b, other = make("sharded")
    a.lazy[0] = b.lazy[1, ::-1]
    a.lazy[1:3, 0] = b.lazy[2:4, 1]
    expect[0] = other[1, ::-1]
    expect[1:3, 0] = other[2:4, 1]
    np.testing.assert_array_equal(a[...], expect)


def test_a_view_of_an_array_opened_read_only_reads_and_refuses_writes() -> None:
    store = MemoryStore()
    _, expect = make("regular", store)
    a = zk.open_array(store, mode="r")
    view = a.lazy[::-1, 2]
    np.testing.assert_array_equal(view.result(), expect[::-1, 2])
    with pytest.raises(ReadOnlyError):
        view[0] = 1


def test_a_view_pickles_with_its_array(tmp_path: Any) -> None:
    import pickle

    a = zk.create_array(str(tmp_path / "p.zarr"), shape=(20, 10), dtype="i4", chunks=(5, 5))
    a[...] = np.arange(200).reshape(20, 10)
    view = a.lazy[::-3].vindex[[0, 1], [2, 3]]
    again = pickle.loads(pickle.dumps(view))
    assert again.shape == view.shape
    np.testing.assert_array_equal(again.result(), a[...][::-3][[0, 1], [2, 3]])


def test_index_arrays_that_broadcast_apart_read_numpys_values_and_their_chunks() -> None:
    store = CountingStore()
    a, expect = make("regular", store)
    rows, columns = np.ix_([6, 0], [5, 1, 0])
    view = a.lazy[rows, columns]
    store.read.clear()
    np.testing.assert_array_equal(view.result(), expect[rows, columns])
    # rows 6 and 0 (chunks 2 and 0), columns 5, 1, 0 (chunks 1 and 0), the last dimension whole
    assert len(set(store.read)) == 2 * 2 * 3
    assert view.vindex[[1, 0], [2, 0]].result().tolist() == expect[[0, 6], [0, 5]].tolist()
