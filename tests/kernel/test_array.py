"""Arrays as a user sees them, with numpy as the reference, on real stores (memory and local).

Every read must equal numpy's answer on the same data; every write must leave the whole array
equal to a numpy array that received the same assignment, and the store must hold exactly the
chunks that are not all fill value.
"""

from __future__ import annotations

import itertools
import json
import threading
from math import prod
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import zarrkit as zk
from zarrkit import config
from zarrkit.errors import (
    ContainsNodeError,
    NodeNotFoundError,
    ReadOnlyError,
    SelectionError,
    ValueCastError,
    ZarrkitError,
)
from zarrkit.plugins.stores.local.local import LocalStore
from zarrkit.plugins.stores.memory import MemoryStore

FILL = 3  # fill value of the random-access tests: data is drawn from 0..5, so it shows up often
BYTES_ONLY = [{"name": "bytes", "configuration": {"endian": "little"}}]


# --------------------------------------------------------------------------------------------
# Stores and helpers


def new_store(kind: str, factory: pytest.TempPathFactory) -> Any:
    if kind == "memory":
        return MemoryStore()
    return LocalStore(factory.mktemp("h"), mode="w")


def snapshot(store: Any) -> dict[str, bytes]:
    return {k: store.get(k) for k in store.list()}


def chunk_keys(store: Any, path: str = "") -> set[str]:
    prefix = f"{path}/c" if path else "c"
    return {k for k in store.list() if k == prefix or k.startswith(prefix + "/")}


def expected_keys(ref: np.ndarray, chunks: tuple[int, ...], fill: Any) -> set[str]:
    """Keys of the chunks of `ref` holding anything but the fill value (NaN equal to NaN)."""
    keys = set()
    for coords in itertools.product(*(range(-(-n // c)) for n, c in zip(ref.shape, chunks))):
        region = ref[tuple(slice(i * c, (i + 1) * c) for i, c in zip(coords, chunks))]
        same = region == fill
        if np.asarray(fill).dtype.kind == "f" and np.isnan(fill):
            same = np.isnan(region)
        if not np.all(same):
            keys.add("/".join(["c", *map(str, coords)]))
    return keys


def assert_same(got: Any, expected: Any) -> None:
    assert np.shape(got) == np.shape(expected)
    assert np.asarray(got).dtype == np.asarray(expected).dtype
    np.testing.assert_array_equal(got, expected)


def assert_array_state(a: zk.Array, store: Any, ref: np.ndarray) -> None:
    assert_same(a[...], ref)
    assert chunk_keys(store) == expected_keys(ref, a.chunks, a.fill_value)


# --------------------------------------------------------------------------------------------
# Strategies


@st.composite
def arrays(draw):
    """(shape, chunks, data, other, write_first): 0-3 dims, zero-length dims included."""
    shape = tuple(draw(st.lists(st.integers(0, 6), max_size=3)))
    chunks = tuple(draw(st.integers(1, 4)) for _ in shape)
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 6, size=shape).astype(np.int16)
    other = (100 + rng.integers(0, 50, size=shape)).astype(np.int16)  # values a write puts in
    return shape, chunks, data, other, draw(st.booleans())


def slices(n: int):
    bound = st.none() | st.integers(-n - 2, n + 2)
    step = st.none() | st.integers(1, 3) | st.integers(-3, -1)
    return st.builds(slice, bound, bound, step)


def ints(n: int):
    return st.integers(-n, n - 1)


@st.composite
def basic_selections(draw, shape):
    items = [draw(slices(n) | ints(n)) if n else draw(slices(n)) for n in shape]
    form = draw(st.sampled_from(["full", "partial", "ellipsis", "bare"]))
    if form == "partial":
        items = items[: draw(st.integers(0, len(items)))]
    elif form == "ellipsis":
        i = draw(st.integers(0, len(items)))
        j = draw(st.integers(i, len(items)))
        items = items[:i] + [Ellipsis] + items[j:]
    elif form == "bare" and len(items) == 1:
        return items[0]
    return tuple(items)


@st.composite
def orthogonal_selections(draw, shape):
    items = []
    for n in shape:
        kinds = ["slice", "list", "mask"] + (["int"] if n else [])
        kind = draw(st.sampled_from(kinds))
        if kind == "slice":
            items.append(draw(slices(n)))
        elif kind == "int":
            items.append(draw(ints(n)))
        elif kind == "list":  # unsorted, negatives and duplicates; sometimes empty
            items.append(draw(st.lists(ints(n), max_size=6)) if n else [])
        else:
            items.append(
                np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
            )
    return tuple(items)


def orthogonal_reference(shape, items):
    """np.ix_ form of an orthogonal selection, and the shape zarrkit gives (ints dropped)."""
    index, out_shape = [], []
    for item, n in zip(items, shape):
        if isinstance(item, slice):
            index.append(np.arange(n)[item])
            out_shape.append(len(index[-1]))
        elif isinstance(item, np.ndarray) and item.dtype == bool:
            index.append(np.flatnonzero(item))
            out_shape.append(len(index[-1]))
        elif isinstance(item, list):
            index.append(np.asarray(item, dtype=np.int64))
            out_shape.append(len(item))
        else:
            index.append(np.array([item]))
    return (np.ix_(*index) if index else ()), tuple(out_shape)


@st.composite
def vectorized_selections(draw, shape):
    """A tuple of broadcastable coordinate arrays and ints, or one boolean mask of the shape."""
    if draw(st.booleans()):
        flags = draw(st.lists(st.booleans(), min_size=prod(shape), max_size=prod(shape)))
        mask = np.array(flags, dtype=bool).reshape(shape)
        return (mask,) if draw(st.booleans()) else mask
    out_shape = draw(st.lists(st.integers(0, 3), min_size=1, max_size=2))
    if 0 in shape:  # no valid coordinate exists: only empty arrays select nothing there
        out_shape[0] = 0
        return tuple(np.zeros(out_shape, dtype=np.int64) for _ in shape)
    items = []
    for n in shape:
        if draw(st.integers(0, 3)) == 0:
            items.append(draw(ints(n)))
            continue
        ashape = [draw(st.sampled_from([k, 1])) for k in out_shape]
        ashape = ashape[draw(st.integers(0, len(ashape))) :]
        values = draw(st.lists(ints(n), min_size=prod(ashape), max_size=prod(ashape)))
        items.append(np.array(values, dtype=np.int64).reshape(ashape))
    return tuple(items)


@st.composite
def write_values(draw, expected_shape, full, element=False):
    """A value for a selection: a scalar (often the fill), the full value, or a broadcast one.
    (numpy refuses an extra leading length-1 dimension for a single `element` and for masks.)"""
    kinds = ["scalar", "fill", "full"] + ([] if element else ["leading1"])
    if len(expected_shape) >= 1 and expected_shape[0] > 0:
        kinds.append("row")
    kind = draw(st.sampled_from(kinds))
    if kind == "scalar":
        return int(draw(st.integers(0, 120)))
    if kind == "fill":
        return FILL
    if kind == "row":
        return np.asarray(full)[0]  # broadcast over the first dimension
    if kind == "leading1":
        return np.asarray(full)[np.newaxis]  # an extra leading length-1 dimension
    return full


def make(kind, factory, shape, chunks, data, write_first):
    store = new_store(kind, factory)
    a = zk.create_array(store, shape=shape, dtype="int16", chunks=chunks, fill_value=FILL)
    ref = np.full(shape, FILL, dtype=np.int16)
    if write_first:
        a[...] = data
        ref[...] = data
    return store, a, ref


# --------------------------------------------------------------------------------------------
# Random selections against numpy


@pytest.mark.parametrize("kind", ["memory", "local"])
@given(setup=arrays(), data=st.data())
def test_basic_selection_matches_numpy(kind, tmp_path_factory, setup, data):
    shape, chunks, init, other, write_first = setup
    store, a, ref = make(kind, tmp_path_factory, shape, chunks, init, write_first)
    sel = data.draw(basic_selections(shape))
    assert_same(a[sel], ref[sel])
    value = data.draw(
        write_values(ref[sel].shape, other[sel], element=not isinstance(ref[sel], np.ndarray))
    )
    a[sel] = value
    ref[sel] = value
    assert_array_state(a, store, ref)


@pytest.mark.parametrize("kind", ["memory", "local"])
@given(setup=arrays(), data=st.data())
def test_orthogonal_selection_matches_numpy(kind, tmp_path_factory, setup, data):
    shape, chunks, init, other, write_first = setup
    store, a, ref = make(kind, tmp_path_factory, shape, chunks, init, write_first)
    sel = data.draw(orthogonal_selections(shape))
    ix, out_shape = orthogonal_reference(shape, sel)
    assert_same(a.oindex[sel], ref[ix].reshape(out_shape))
    assert_same(a.get_orthogonal_selection(sel), ref[ix].reshape(out_shape))
    # duplicated indices receive equal values, so numpy's result does not depend on order
    value = data.draw(write_values(out_shape, other[ix].reshape(out_shape)))
    a.oindex[sel] = value
    v = np.asarray(value)
    while v.ndim > len(out_shape) and v.shape[0] == 1:  # numpy drops extra leading 1s
        v = v[0]
    ref[ix] = np.broadcast_to(v, out_shape).reshape(ref[ix].shape)
    assert_array_state(a, store, ref)


@pytest.mark.parametrize("kind", ["memory", "local"])
@given(setup=arrays(), data=st.data())
def test_vectorized_selection_matches_numpy(kind, tmp_path_factory, setup, data):
    shape, chunks, init, other, write_first = setup
    store, a, ref = make(kind, tmp_path_factory, shape, chunks, init, write_first)
    sel = data.draw(vectorized_selections(shape))
    is_mask = isinstance(sel, tuple) and len(sel) == 1 and np.asarray(sel[0]).dtype == bool
    np_sel = sel[0] if is_mask else sel
    assert_same(a.vindex[sel], ref[np_sel])
    # numpy takes no extra leading dimension for a mask, nor for a single element
    value = data.draw(
        write_values(
            ref[np_sel].shape,
            other[np_sel],
            element=is_mask
            or isinstance(sel, np.ndarray)
            or not isinstance(ref[np_sel], np.ndarray),
        )
    )
    a.vindex[sel] = value
    ref[np_sel] = value
    assert_array_state(a, store, ref)


@st.composite
def fancy_selections(draw, shape):
    """What `a[...]` takes beyond basic indexing: one 1-D index array among ints and slices,
    an index array for every dimension, or a boolean mask of the whole shape."""
    assert shape, "a[...] of a 0-d array takes no index arrays"
    kind = draw(st.sampled_from(["one", "all", "mask"]))
    if kind == "mask":
        flags = draw(st.lists(st.booleans(), min_size=prod(shape), max_size=prod(shape)))
        return np.array(flags, dtype=bool).reshape(shape)
    if kind == "all":
        k = draw(st.integers(0, 4)) if 0 not in shape else 0
        return tuple(draw(st.lists(ints(n), min_size=k, max_size=k)) if n else [] for n in shape)
    where = draw(st.integers(0, len(shape) - 1))
    items = []
    for d, n in enumerate(shape):
        if d == where:
            if draw(st.booleans()):
                items.append(
                    np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
                )
            else:
                items.append(draw(st.lists(ints(n), max_size=5)) if n else [])
        else:
            items.append(draw(slices(n) | ints(n)) if n else draw(slices(n)))
    return tuple(items)


def advanced_apart(sel) -> bool:
    """numpy moves the array's dimension to the front when ints and the array are apart."""
    at = [i for i, item in enumerate(sel) if not isinstance(item, slice)]
    return bool(at) and at[-1] - at[0] + 1 != len(at)


@pytest.mark.parametrize("kind", ["memory", "local"])
@given(setup=arrays(), data=st.data())
def test_fancy_getitem_matches_numpy(kind, tmp_path_factory, setup, data):
    shape, chunks, init, other, write_first = setup
    assume(shape)
    store, a, ref = make(kind, tmp_path_factory, shape, chunks, init, write_first)
    sel = data.draw(fancy_selections(shape))
    if isinstance(sel, tuple) and advanced_apart(sel):  # refused rather than answered wrongly
        with pytest.raises(IndexError, match="oindex"):
            a[sel]
        with pytest.raises(IndexError, match="oindex"):
            a[sel] = 1
        return
    assert_same(a[sel], ref[sel])
    value = data.draw(write_values(ref[sel].shape, other[sel], element=True))
    a[sel] = value
    ref[sel] = value
    assert_array_state(a, store, ref)


# --------------------------------------------------------------------------------------------
# Selections spelled out


def test_selection_examples(store):
    ref = np.arange(6 * 7 * 5, dtype="float64").reshape(6, 7, 5)
    a = zk.create_array(store, shape=ref.shape, dtype="float64", chunks=(4, 3, 2))
    a[...] = ref
    for sel in [
        -1,
        (-2, -3, -1),
        (slice(None, None, -1),),
        (slice(5, 0, -2), 3),
        (Ellipsis, 1),
        (1, Ellipsis, slice(None, None, -3)),
        (),
        Ellipsis,
        (slice(2, 2), 0),
        (slice(-100, 100, 4),),
    ]:
        assert_same(a[sel], ref[sel])
    assert_same(
        a.oindex[[4, -1, 0], :, [True, False, True, False, True]],
        ref[np.ix_([4, -1, 0], range(7), [0, 2, 4])],
    )
    assert_same(a.oindex[1, [6, 0, 6], 2:], ref[1][np.ix_([6, 0, 6], range(2, 5))])
    assert_same(a.oindex[..., [1]], ref[..., [1]])
    assert_same(a.vindex[[0, 5], [6, 1], [4, 0]], ref[[0, 5], [6, 1], [4, 0]])
    assert_same(
        a.vindex[np.array([[0], [5]]), [1, 2, 3], 2], ref[np.array([[0], [5]]), [1, 2, 3], 2]
    )
    mask = ref % 3 == 0
    assert_same(a.vindex[mask], ref[mask])
    assert_same(a.get_coordinate_selection(([1], [1], [1])), ref[[1], [1], [1]])
    assert_same(a.get_basic_selection((slice(None), 2)), ref[:, 2])


@pytest.mark.parametrize(
    "codecs",
    [
        [{"name": "bytes"}, {"name": "zstd"}],
        [
            {
                "name": "sharding_indexed",
                "configuration": {
                    "chunk_shape": [2, 8],
                    "codecs": [{"name": "bytes"}, {"name": "zstd"}],
                    "index_codecs": [{"name": "bytes"}, {"name": "crc32c"}],
                },
            }
        ],
    ],
    ids=["zstd", "sharded"],
)
def test_a_selection_taking_whole_chunks_in_another_order_reads_their_values(store, codecs):
    """Every element of each chunk, in another order: decoding straight into the chunk's place
    in the output cannot work there (with an index array, out[out_selection] is a copy)."""
    ref = np.arange(4 * 16, dtype="float32").reshape(4, 16)
    a = zk.create_array(store, shape=ref.shape, dtype="float32", chunks=(2, 16), codecs=codecs)
    a[...] = ref
    assert_same(a.oindex[[1, 0, 3, 2], :], ref[[1, 0, 3, 2]])
    assert_same(a.oindex[[2, 3, 0, 1], ::-1], ref[[2, 3, 0, 1], ::-1])
    assert_same(a.vindex[[1, 0], [5, 5]], ref[[1, 0], [5, 5]])
    assert_same(a[1::-1], ref[1::-1])


@pytest.mark.parametrize("n", [10, 20_000], ids=["small", "64KiB-and-more"])
def test_datetime_chunks_decode_straight_into_the_output(store, n):
    """numpy gives datetime arrays no buffer format, so they are decoded through a plain bytes
    buffer; a big chunk used to fail to read ("cannot include dtype 'M' in a buffer")."""
    ref = (np.arange(2 * n) * 1000).astype("M8[s]").reshape(2, n)
    a = zk.create_array(
        store,
        shape=ref.shape,
        dtype=ref.dtype,
        chunks=ref.shape,
        codecs=[{"name": "bytes"}, {"name": "zstd"}],
    )
    a[...] = ref
    assert_same(a[...], ref)
    assert_same(a[:, 1:], ref[:, 1:])


def test_selection_errors(store):
    a = zk.create_array(store, shape=(4, 5), dtype="int8", chunks=(2, 2))
    for sel in [4, (0, -6), (0, 0, 0), (Ellipsis, Ellipsis)]:
        with pytest.raises(IndexError):
            a[sel]
    with pytest.raises(IndexError):
        a.oindex[[0, 4]]
    with pytest.raises(IndexError):
        a.vindex[[0, 1], [0, 1, 2]]
    with pytest.raises(IndexError):
        a.vindex[np.ones((4, 4), dtype=bool)]


def test_writes_spelled_out(store):
    ref = np.zeros((6, 7), dtype="int32")
    a = zk.create_array(store, shape=ref.shape, dtype="int32", chunks=(4, 3))
    for sel, value in [
        ((slice(None, None, -2), slice(1, None, 3)), 5),
        ((-1,), np.arange(7)),
        ((Ellipsis, -1), np.arange(6)[::-1]),
    ]:
        a[sel] = value
        ref[sel] = value
    a.oindex[[5, 0], [True] * 3 + [False] * 4] = [[1, 2, 3], [4, 5, 6]]
    ref[np.ix_([5, 0], [0, 1, 2])] = [[1, 2, 3], [4, 5, 6]]
    a.vindex[[1, 2, 3], [6, 5, 4]] = [7, 8, 9]
    ref[[1, 2, 3], [6, 5, 4]] = [7, 8, 9]
    a.vindex[ref == 0] = -4
    ref[ref == 0] = -4
    a.set_basic_selection((0, 0), 11)
    a.set_orthogonal_selection(([1], [1]), [[12]])
    a.set_coordinate_selection(([2], [2]), [13])
    ref[0, 0], ref[1, 1], ref[2, 2] = 11, 12, 13
    assert_same(a[...], ref)


# --------------------------------------------------------------------------------------------
# Reading into the caller's array (out=), mask and block selections

SHARDED_I4 = [
    {
        "name": "sharding_indexed",
        "configuration": {
            "chunk_shape": [2, 3],
            "codecs": [{"name": "bytes"}, {"name": "zstd"}],
            "index_codecs": [{"name": "bytes"}, {"name": "crc32c"}],
        },
    }
]


@pytest.mark.parametrize(
    "codecs",
    [None, [{"name": "bytes"}, {"name": "zstd"}], SHARDED_I4],
    ids=["bytes", "zstd", "sharded"],
)
@pytest.mark.parametrize("layout", ["C", "F", "strided"])
def test_reads_into_out_land_in_the_given_array(store, codecs, layout):
    """Every get_* method fills the given array and returns that very array, whatever its
    memory layout; chunks never written read as the fill value there too."""
    ref = np.arange(10 * 7, dtype="int32").reshape(10, 7)
    kwargs = {"codecs": codecs} if codecs else {}
    a = zk.create_array(
        store, shape=ref.shape, dtype="int32", chunks=(4, 6), fill_value=-9, **kwargs
    )
    a[:8] = ref[:8]
    ref[8:] = -9

    def fresh(shape):
        if layout == "C":
            return np.full(shape, 77, dtype="int32")
        if layout == "F":
            return np.asfortranarray(np.full(shape, 77, dtype="int32"))
        return np.full(tuple(2 * n for n in shape), 77, dtype="int32")[
            tuple(slice(None, None, 2) for _ in shape)
        ]

    mask = ref % 4 == 1
    cases = [
        (a.get_basic_selection, Ellipsis, ref),
        (a.get_basic_selection, (slice(1, 9), slice(None, None, -2)), ref[1:9, ::-2]),
        (a.get_orthogonal_selection, ([9, 0, 4], slice(2, 7)), ref[[9, 0, 4], 2:7]),
        (a.get_coordinate_selection, ([0, 9, 5], [6, 0, 3]), ref[[0, 9, 5], [6, 0, 3]]),
        (a.get_mask_selection, mask, ref[mask]),
        (a.get_block_selection, (slice(1, None), 1), ref[4:, 6:]),
    ]
    for method, selection, expected in cases:
        out = fresh(expected.shape)
        got = method(selection, out=out)
        assert got is out, method.__name__
        assert_same(out, expected)


def test_read_into_out_of_another_dtype_casts_as_numpy_assigns(store):
    ref = np.arange(12, dtype="int16").reshape(3, 4) - 6
    a = zk.create_array(store, shape=ref.shape, dtype="int16", chunks=(2, 2))
    a[...] = ref
    out = np.zeros((3, 4), dtype="float64")
    assert a.get_basic_selection(out=out) is out
    assert_same(out, ref.astype("float64"))


def test_a_wrong_out_is_refused_before_anything_is_read(store):
    a = zk.create_array(store, shape=(4, 5), dtype="int8", chunks=(2, 2))
    a[...] = 1
    read_only = np.zeros((2, 5), dtype="int8")
    read_only.flags.writeable = False
    for out, error, says in [
        (np.zeros((5, 2), dtype="int8"), ValueError, r"\(5, 2\).*\(2, 5\)"),
        (np.zeros(10, dtype="int8"), ValueError, "shape"),
        ([[0] * 5] * 2, TypeError, "numpy array"),
        (read_only, ValueError, "read-only"),
    ]:
        with pytest.raises(error, match=says):
            a.get_basic_selection(slice(0, 2), out=out)
        assert not np.any(np.asarray(out)), "a refused out= was written"


def test_mask_selection_matches_numpy(store):
    ref = np.arange(6 * 7, dtype="float32").reshape(6, 7)
    a = zk.create_array(store, shape=ref.shape, dtype="float32", chunks=(4, 3))
    a[...] = ref
    mask = (ref % 5 == 0) | (ref > 38)
    assert_same(a.get_mask_selection(mask), ref[mask])
    a.set_mask_selection(mask, -1)
    ref[mask] = -1
    assert_same(a[...], ref)
    a.set_mask_selection(~mask, np.arange(int((~mask).sum()), dtype="float32"))
    ref[~mask] = np.arange(int((~mask).sum()))
    assert_same(a[...], ref)
    for bad, says in [(mask[:5], r"shape \(5, 7\)"), (mask.astype(int), "dtype int64")]:
        with pytest.raises(SelectionError, match=says):
            a.get_mask_selection(bad)
        with pytest.raises(SelectionError, match=says):
            a.set_mask_selection(bad, 0)
    assert_same(a[...], ref)


def _block_region(sel, shape, chunks):
    """The array region of a block selection, worked out from the chunk shape alone."""
    sel = sel if isinstance(sel, tuple) else (sel,)
    if Ellipsis in sel:
        at = sel.index(Ellipsis)
        sel = sel[:at] + (slice(None),) * (len(shape) - len(sel) + 1) + sel[at + 1 :]
    sel = sel + (slice(None),) * (len(shape) - len(sel))
    region = []
    for item, n, c in zip(sel, shape, chunks):
        nblocks = -(-n // c)
        if isinstance(item, slice):
            lo, hi, _ = item.indices(nblocks)
            hi = max(lo, hi)
        else:
            lo = item + nblocks if item < 0 else item
            hi = lo + 1
        region.append(slice(min(n, lo * c), min(n, hi * c)))
    return tuple(region)


BLOCK_SELECTIONS = [
    0,
    -1,
    (1, 2),
    (slice(1, 3), -2),
    (slice(None), slice(2, None)),
    (slice(-2, None), 0),
    (slice(5, 9),),
    (slice(2, 1), 1),
    Ellipsis,
    (Ellipsis, 1),
]


def test_block_selection_reads_and_writes_whole_chunks(store):
    """`blocks` and get/set_block_selection against numpy on the chunks' regions; an int
    keeps its dimension, edge chunks end at the array's edge."""
    shape, chunks = (10, 11), (4, 3)
    ref = np.arange(110, dtype="int32").reshape(shape)
    a = zk.create_array(store, shape=shape, dtype="int32", chunks=chunks)
    a[...] = ref
    for sel in BLOCK_SELECTIONS:
        region = _block_region(sel, shape, chunks)
        assert_same(a.blocks[sel], ref[region])
        assert_same(a.get_block_selection(sel), ref[region])
    a.blocks[1, -1] = -7
    ref[4:8, 9:] = -7
    a.set_block_selection((slice(2, None), slice(0, 2)), 5)
    ref[8:, :6] = 5
    assert_same(a[...], ref)
    for bad, says in [
        (slice(None, None, 2), "step 1"),
        (3, "block 3 is out of bounds"),
        (([0, 1],), "index arrays"),
        ((0, 0, 0), "too many"),
    ]:
        with pytest.raises(SelectionError, match=says):
            a.blocks[bad]
        with pytest.raises(SelectionError, match=says):
            a.blocks[bad] = 0
    assert_same(a[...], ref)


# --------------------------------------------------------------------------------------------
# Fill values and which chunks are stored


def test_missing_chunks_read_as_fill(store):
    a = zk.create_array(store, shape=(5, 4), dtype="float64", chunks=(2, 2), fill_value=-2.5)
    assert_same(a[...], np.full((5, 4), -2.5))
    assert_same(a[4, 3], np.float64(-2.5))
    assert chunk_keys(store) == set()
    a[0, 0] = 1.0
    expected = np.full((5, 4), -2.5)
    expected[0, 0] = 1.0
    assert_same(a[...], expected)
    assert chunk_keys(store) == {"c/0/0"}


def test_chunk_equal_to_fill_is_not_stored_and_erases(store):
    a = zk.create_array(store, shape=(4, 4), dtype="int32", chunks=(2, 2), fill_value=7)
    a[0:2, 0:2] = 7
    a[2:4, 2:4] = np.full((2, 2), 7)
    assert chunk_keys(store) == set()
    a[...] = np.arange(16).reshape(4, 4)
    assert chunk_keys(store) == {"c/0/0", "c/0/1", "c/1/0", "c/1/1"}
    a[0:2, 2:4] = 7  # a whole chunk back to fill: erased
    a[2, 0:2] = 7  # a partial write that leaves the chunk all fill: erased as well
    a[3, 0:2] = 7
    assert chunk_keys(store) == {"c/0/0", "c/1/1"}
    expected = np.arange(16).reshape(4, 4).astype("int32")
    expected[0:2, 2:4] = 7
    expected[2:4, 0:2] = 7
    assert_same(a[...], expected)


def test_write_empty_chunks_stores_fill_chunks(store):
    a = zk.create_array(store, shape=(4, 4), dtype="int32", chunks=(2, 2), fill_value=7)
    with config.override(write_empty_chunks=True):
        a[...] = 7  # (a handle keeps the setting of when it was made, as zarr-python's)
        assert chunk_keys(store) == set()
        b = zk.open_array(store, mode="a")
        assert b.config.write_empty_chunks is True
        b[...] = 7
        assert chunk_keys(store) == {"c/0/0", "c/0/1", "c/1/0", "c/1/1"}
    b[0:2, 0:2] = 7  # still b's setting
    assert chunk_keys(store) == {"c/0/0", "c/0/1", "c/1/0", "c/1/1"}
    a[0:2, 0:2] = 7
    assert chunk_keys(store) == {"c/0/1", "c/1/0", "c/1/1"}
    assert_same(a[...], np.full((4, 4), 7, dtype="int32"))


def test_nan_fill_chunks_are_not_stored(store):
    a = zk.create_array(store, shape=(4, 3), dtype="float32", chunks=(2, 3), fill_value="NaN")
    assert np.isnan(a.fill_value)
    a[...] = np.nan
    assert chunk_keys(store) == set()
    a[...] = np.full((4, 3), np.nan, dtype="float64")  # NaN cast from float64 is fill too
    assert chunk_keys(store) == set()
    a[3, 2] = 1.0
    assert chunk_keys(store) == {"c/1/0"}
    a[3, 2] = float("nan")
    assert chunk_keys(store) == set()
    assert np.isnan(a[...]).all()


def test_partial_write_keeps_rest_of_chunk(store):
    data = np.arange(36, dtype="uint16").reshape(6, 6)
    a = zk.create_array(store, shape=(6, 6), dtype="uint16", chunks=(3, 3))
    a[...] = data
    a[1, 1] = 999
    a[4:, 0:2] = [[1, 2], [3, 4]]
    a.oindex[[0, 5], [5]] = 77
    a.vindex[[2], [3]] = 55
    data[1, 1] = 999
    data[4:, 0:2] = [[1, 2], [3, 4]]
    data[[0, 5], 5] = 77
    data[2, 3] = 55
    assert_same(a[...], data)
    reopened = zk.open_array(store)
    assert_same(reopened[...], data)


def decode_bytes_only(store: Any, key: str, chunk_shape, dtype) -> np.ndarray:
    raw = store.get(key)
    assert raw is not None, f"chunk {key} is not stored"
    return np.frombuffer(raw, dtype=np.dtype(dtype).newbyteorder("<")).reshape(chunk_shape)


def test_edge_chunks_roundtrip_and_padding_is_fill(store):
    data = np.arange(1, 36, dtype="int32").reshape(5, 7)
    a = zk.create_array(
        store,
        path="a",
        shape=(5, 7),
        dtype="int32",
        chunks=(2, 3),
        fill_value=-9,
        codecs=BYTES_ONLY,
    )
    a[...] = data
    assert_same(a[...], data)
    assert chunk_keys(store, "a") == {f"a/c/{i}/{j}" for i in range(3) for j in range(3)}
    corner = decode_bytes_only(store, "a/c/2/2", (2, 3), "int32")
    assert_same(corner, np.array([[data[4, 6], -9, -9], [-9, -9, -9]], dtype="int32"))
    bottom = decode_bytes_only(store, "a/c/2/0", (2, 3), "int32")
    assert_same(bottom[1], np.full(3, -9, dtype="int32"))
    assert_same(bottom[0], data[4, 0:3])
    # an edge chunk created by a partial write is padded with fill as well
    b = zk.create_array(
        store,
        path="b",
        shape=(5, 7),
        dtype="int32",
        chunks=(2, 3),
        fill_value=-9,
        codecs=BYTES_ONLY,
    )
    b[4, 6] = 1
    assert_same(
        decode_bytes_only(store, "b/c/2/2", (2, 3), "int32"),
        np.array([[1, -9, -9], [-9, -9, -9]], dtype="int32"),
    )


def test_big_endian_bytes_codec_roundtrip(store):
    data = np.arange(12, dtype="float64").reshape(3, 4) / 7
    a = zk.create_array(
        store,
        shape=(3, 4),
        dtype="float64",
        chunks=(2, 2),
        codecs=[{"name": "bytes", "configuration": {"endian": "big"}}],
    )
    a[...] = data
    assert_same(zk.open_array(store)[...], data)
    raw = store.get("c/0/0")
    assert_same(np.frombuffer(raw, dtype=">f8").reshape(2, 2).astype("float64"), data[:2, :2])


# --------------------------------------------------------------------------------------------
# Values that cannot be written


def test_wrong_shape_writes_nothing(store):
    a = zk.create_array(store, shape=(4, 6), dtype="int32", chunks=(2, 2))
    a[...] = 1
    before = snapshot(store)
    for sel, value in [
        ((slice(0, 2), slice(0, 3)), np.ones((3, 3))),
        ((slice(None),), np.ones(5)),
        ((0,), [1, 2]),
        ((slice(0, 2), slice(0, 3)), np.ones((2, 2, 3))),
    ]:
        with pytest.raises(ValueCastError):
            a[sel] = value
    with pytest.raises(ValueCastError):
        a.oindex[[0, 1], [0]] = [1, 2, 3]
    with pytest.raises(ValueCastError):
        a.vindex[[0, 1], [0, 1]] = [1, 2, 3]
    assert snapshot(store) == before
    assert_same(a[...], np.ones((4, 6), dtype="int32"))


@pytest.mark.parametrize(
    "dtype, value",
    [
        ("int8", 300),
        ("int8", [1, 300]),
        ("int8", np.int64(-129)),
        ("uint8", -1),
        ("uint8", np.array([-1, 2])),
        ("int32", 1.5),
        ("int32", [1.0, 1.5]),
        ("int32", float("nan")),
        ("float32", "x"),
        ("float32", ["1", "x"]),
        ("int64", 2**70),
        ("int64", [2**70, 1]),
        ("uint64", -(2**63)),
        ("int64", 2**63),
        ("uint32", np.array([-1, 1], dtype="int32")),
        ("int16", np.array([40000, 1], dtype="uint16")),
        ("uint64", np.int64(-1)),
        ("int64", np.array([2**64 - 1, 0], dtype="uint64")),
    ],
)
def test_unrepresentable_values_write_nothing(store, dtype, value):
    a = zk.create_array(store, shape=(2,), dtype=dtype, chunks=(1,), fill_value=0)
    a[...] = 1
    before = snapshot(store)
    with pytest.raises(ValueCastError):
        a[...] = value
    with pytest.raises(ValueCastError):
        a.vindex[[0, 1]] = value
    assert snapshot(store) == before
    assert_same(a[...], np.ones(2, dtype=dtype))


def test_compatible_values_are_cast(store):
    f32 = zk.create_array(store, path="f32", shape=(3,), dtype="float32", chunks=(2,))
    values = np.array([0.1, 1e10, -2.5], dtype="float64")
    f32[...] = values
    assert_same(f32[...], values.astype("float32"))
    f32[...] = np.array([1, 2, 3], dtype="int64")  # int data into a float array
    assert_same(f32[...], np.array([1, 2, 3], dtype="float32"))
    f32[0] = 7  # a python int
    f32[1] = np.float64(0.5)
    assert_same(f32[...], np.array([7, 0.5, 3], dtype="float32"))
    i16 = zk.create_array(store, path="i16", shape=(3,), dtype="int16", chunks=(2,))
    i16[...] = np.array([1.0, -2.0, 3.0])  # floats holding whole numbers
    i16[2] = np.uint8(200)
    assert_same(i16[...], np.array([1, -2, 200], dtype="int16"))
    b = zk.create_array(store, path="b", shape=(2,), dtype="bool", chunks=(2,))
    b[...] = [True, False]
    assert_same(b[...], np.array([True, False]))


def test_value_with_extra_leading_length1_dims(store):
    ref = np.zeros((4, 5), dtype="int64")
    a = zk.create_array(store, shape=(4, 5), dtype="int64", chunks=(3, 2))
    value = np.arange(6).reshape(1, 1, 2, 3)
    a[1:3, 1:4] = value
    ref[1:3, 1:4] = value
    a[0] = np.arange(5).reshape(1, 5)
    ref[0] = np.arange(5).reshape(1, 5)
    assert_same(a[...], ref)
    with pytest.raises(ValueError):
        ref[1:3, 1:4] = np.arange(12).reshape(2, 2, 3)
    with pytest.raises(ValueCastError):
        a[1:3, 1:4] = np.arange(12).reshape(2, 2, 3)
    assert_same(a[...], ref)


# --------------------------------------------------------------------------------------------
# resize and append


def test_resize_grow(store):
    a = zk.create_array(store, shape=(4, 4), dtype="int32", chunks=(3, 3), fill_value=-1)
    data = np.arange(16, dtype="int32").reshape(4, 4)
    a[...] = data
    a.resize(6, 5)
    expected = np.full((6, 5), -1, dtype="int32")
    expected[:4, :4] = data
    assert a.shape == (6, 5)
    assert_same(a[...], expected)
    doc = json.loads(store.get("zarr.json"))
    assert doc["shape"] == [6, 5]
    assert zk.open_array(store).shape == (6, 5)
    assert_same(zk.open_array(store)[...], expected)


def test_resize_shrink_erases_and_regrow_shows_fill(store):
    a = zk.create_array(store, shape=(6, 6), dtype="int32", chunks=(2, 2), fill_value=-1)
    data = np.arange(36, dtype="int32").reshape(6, 6)
    a[...] = data
    a.resize((3, 3))
    assert a.shape == (3, 3)
    assert_same(a[...], data[:3, :3])
    assert chunk_keys(store) == {"c/0/0", "c/0/1", "c/1/0", "c/1/1"}
    assert json.loads(store.get("zarr.json"))["shape"] == [3, 3]
    assert zk.open_array(store).shape == (3, 3)
    a.resize(6, 6)
    expected = np.full((6, 6), -1, dtype="int32")
    expected[:3, :3] = data[:3, :3]
    assert_same(a[...], expected)
    assert_same(zk.open_array(store)[...], expected)


def test_resize_to_zero_and_back(store):
    a = zk.create_array(store, shape=(5,), dtype="uint8", chunks=(2,), fill_value=9)
    a[...] = [1, 2, 3, 4, 5]
    a.resize(0)
    assert a.shape == (0,)
    assert chunk_keys(store) == set()
    a.resize(3)
    assert_same(a[...], np.full(3, 9, dtype="uint8"))


def test_resize_refuses_wrong_rank(store):
    a = zk.create_array(store, shape=(5,), dtype="uint8", chunks=(2,))
    with pytest.raises(ValueError):
        a.resize(2, 2)
    with pytest.raises(ValueError):
        a.resize(-1)
    assert a.shape == (5,)


def test_append(store):
    ref = np.arange(6, dtype="float32").reshape(2, 3)
    a = zk.create_array(store, shape=(2, 3), dtype="float32", chunks=(2, 2))
    a[...] = ref
    extra0 = np.full((3, 3), 5.0)
    assert a.append(extra0) == (5, 3)
    ref = np.concatenate([ref, extra0.astype("float32")], axis=0)
    assert_same(a[...], ref)
    extra1 = np.arange(10, dtype="float32").reshape(5, 2)
    assert a.append(extra1, axis=1) == (5, 5)
    ref = np.concatenate([ref, extra1], axis=1)
    assert_same(a[...], ref)
    assert_same(zk.open_array(store)[...], ref)


@pytest.mark.parametrize("kind", ["memory", "local"])
@given(setup=arrays(), data=st.data())
def test_resize_sequence_matches_numpy_model(kind, tmp_path_factory, setup, data):
    """Whatever the sequence of resizes and writes, data inside the overlap survives, the
    rest reads as fill, and only chunks holding something other than fill stay stored."""
    shape, chunks, init, _other, write_first = setup
    store, a, ref = make(kind, tmp_path_factory, shape, chunks, init, write_first)
    for step in range(3):
        new = tuple(data.draw(st.integers(0, 7)) for _ in shape)
        a.resize(new)
        model = np.full(new, FILL, dtype=np.int16)
        overlap = tuple(slice(0, min(n, o)) for n, o in zip(new, ref.shape))
        model[overlap] = ref[overlap]
        ref = model
        assert a.shape == new
        assert zk.open_array(store).shape == new
        assert_array_state(a, store, ref)
        if ref.size and data.draw(st.booleans()):
            corner = tuple(slice(n // 2, None) for n in new)
            a[corner] = 50 + step
            ref[corner] = 50 + step
            assert_array_state(a, store, ref)


def test_resize_takes_numpy_ints(store):
    a = zk.create_array(store, path="a", shape=(5,), dtype="uint8", chunks=(2,))
    a.resize(np.int64(3))
    assert a.shape == (3,)
    a.resize([np.int32(4)])
    assert a.shape == (4,)
    b = zk.create_array(store, path="b", shape=(2, 2), dtype="uint8", chunks=(2, 2))
    b.resize(np.array([3, 1]))
    assert b.shape == (3, 1)


def test_append_negative_axis_and_bad_axis(store):
    ref = np.arange(6, dtype="int16").reshape(2, 3)
    a = zk.create_array(store, path="a", shape=(2, 3), dtype="int16", chunks=(2, 2))
    a[...] = ref
    a.append(np.full((2, 1), 9), axis=-1)
    ref = np.concatenate([ref, np.full((2, 1), 9, dtype="int16")], axis=-1)
    assert_same(a[...], ref)
    before = snapshot(store)
    for axis in (2, -3):  # numpy refuses these too, rather than wrapping them around
        with pytest.raises(np.exceptions.AxisError):
            np.concatenate([ref, np.ones((1, 4), dtype="int16")], axis=axis)
        with pytest.raises(ValueCastError):
            a.append(np.ones((1, 4)), axis=axis)
    assert snapshot(store) == before
    assert_same(a[...], ref)
    scalar = zk.create_array(store, path="s", shape=(), dtype="int16")
    with pytest.raises(ValueCastError):
        scalar.append([1])
    assert scalar.shape == ()


def test_append_wrong_shape_leaves_array_unchanged(store):
    ref = np.arange(6, dtype="int8").reshape(2, 3)
    a = zk.create_array(store, shape=(2, 3), dtype="int8", chunks=(2, 2))
    a[...] = ref
    before = snapshot(store)
    for data, axis in [
        (np.ones((2, 4)), 0),
        (np.ones((3,)), 0),
        (np.ones((3, 3)), 1),
        (np.full((1, 3), 300), 0),
    ]:
        with pytest.raises(ValueCastError):
            a.append(data, axis=axis)
        assert a.shape == (2, 3)
        assert snapshot(store) == before
    assert_same(a[...], ref)


# --------------------------------------------------------------------------------------------
# attributes


class CountingStore(MemoryStore):
    """A memory store counting writes of metadata documents."""

    def __init__(self) -> None:
        super().__init__()
        self.metadata_writes = 0

    def set(self, key: str, value: bytes) -> None:
        self.metadata_writes += key.endswith("zarr.json")
        super().set(key, value)

    def set_many(self, items) -> None:
        self.metadata_writes += sum(k.endswith("zarr.json") for k in items)
        super().set_many(items)


def test_attributes_one_write_per_update():
    store = CountingStore()
    a = zk.create_array(store, shape=(2,), dtype="int8", attributes={"a": 1})
    store.metadata_writes = 0
    a.attrs.update({"b": [1, 2], "c": {"d": None}}, e="x")
    assert store.metadata_writes == 1
    a.attrs["f"] = 1.5
    assert store.metadata_writes == 2
    del a.attrs["a"]
    assert store.metadata_writes == 3
    assert a.attrs.asdict() == {"b": [1, 2], "c": {"d": None}, "e": "x", "f": 1.5}


def test_attributes_persist(url):
    a = zk.create_array(url, shape=(3,), dtype="int8", attributes={"units": "m"})
    assert dict(a.attrs) == {"units": "m"}
    a.attrs["scale"] = 2
    a.attrs.update(offset=[1, 2])
    del a.attrs["units"]
    assert "units" not in a.attrs
    assert len(a.attrs) == 2
    reopened = zk.open_array(url)
    assert reopened.attrs.asdict() == {"scale": 2, "offset": [1, 2]}
    assert reopened.metadata.attributes["scale"] == 2
    with pytest.raises(KeyError):
        del a.attrs["missing"]
    a.attrs.put({"only": True})
    assert zk.open_array(url).attrs.asdict() == {"only": True}


def test_attributes_must_be_json(store):
    a = zk.create_array(store, shape=(3,), dtype="int8")
    before = snapshot(store)
    with pytest.raises(ZarrkitError):
        a.attrs["bad"] = object()
    with pytest.raises(ZarrkitError):
        a.attrs["nan"] = float("nan")
    assert snapshot(store) == before
    assert dict(a.attrs) == {}


def test_attributes_read_only(url):
    zk.create_array(url, shape=(3,), dtype="int8", attributes={"x": 1})
    a = zk.open_array(url, mode="r")
    with pytest.raises(ReadOnlyError):
        a.attrs["y"] = 2
    with pytest.raises(ReadOnlyError):
        del a.attrs["x"]
    with pytest.raises(ReadOnlyError):
        a.attrs.update(y=2)
    assert zk.open_array(url).attrs.asdict() == {"x": 1}


# --------------------------------------------------------------------------------------------
# open modes


def test_mode_r_refuses_writes(url):
    zk.create_array(url, shape=(4,), dtype="int32", chunks=(2,))
    a = zk.open_array(url, mode="r")
    assert a.read_only
    for write in (
        lambda: a.__setitem__(0, 1),
        lambda: a.oindex.__setitem__([0], 1),
        lambda: a.vindex.__setitem__([0], 1),
        lambda: a.resize(8),
        lambda: a.append([1]),
    ):
        with pytest.raises(ReadOnlyError):
            write()
    assert_same(zk.open_array(url)[...], np.zeros(4, dtype="int32"))
    assert zk.open_array(url).shape == (4,)
    with pytest.raises(TypeError):
        zk.open_array(url, mode="r", shape=(4,))


def test_mode_r_plus_writes(url):
    zk.create_array(url, shape=(4,), dtype="int32", chunks=(2,))
    a = zk.open_array(url, mode="r+")
    a[1:3] = [5, 6]
    assert_same(zk.open_array(url)[...], np.array([0, 5, 6, 0], dtype="int32"))
    with pytest.raises(NodeNotFoundError):
        zk.open_array(url, path="missing", mode="r+")


def test_mode_a_creates_then_opens(url):
    a = zk.open_array(url, mode="a", shape=(3,), dtype="float64", fill_value=1.5)
    assert a.shape == (3,) and a.dtype == np.float64
    a[0] = 9
    b = zk.open_array(url, mode="a", shape=(10,), dtype="int8")  # present: opened, not replaced
    assert b.shape == (3,) and b.dtype == np.float64
    assert_same(b[...], np.array([9, 1.5, 1.5]))
    b[1] = 8
    assert_same(zk.open_array(url)[...], np.array([9, 8, 1.5]))


def test_mode_w_replaces(url):
    a = zk.create_array(url, shape=(4,), dtype="int32", chunks=(1,))
    a[...] = [1, 2, 3, 4]
    store = a.store
    assert chunk_keys(store) == {"c/0", "c/1", "c/2", "c/3"}
    b = zk.open_array(url, mode="w", shape=(2,), dtype="uint8", chunks=(2,))
    assert chunk_keys(b.store) == set()
    assert_same(b[...], np.zeros(2, dtype="uint8"))
    assert zk.open_array(url).dtype == np.uint8
    assert_same(zk.open_array(url)[...], np.zeros(2, dtype="uint8"))


def test_mode_w_minus_refuses_existing(url):
    zk.create_array(url, path="x", shape=(4,), dtype="int32")
    with pytest.raises(ContainsNodeError):
        zk.open_array(url, path="x", mode="w-", shape=(2,), dtype="int8")
    with pytest.raises(ContainsNodeError):
        zk.open_array(url, mode="w-", shape=(2,), dtype="int8")  # the root group
    assert zk.open_array(url, path="x").shape == (4,)
    c = zk.open_array(url, path="new", mode="w-", shape=(2,), dtype="int8")
    assert c.shape == (2,)


def test_mode_r_missing_raises(url):
    with pytest.raises(NodeNotFoundError):
        zk.open_array(url, mode="r")
    with pytest.raises(NodeNotFoundError):
        zk.open_array(url, path="a/b", mode="r")


def test_open_array_on_group_raises(url):
    zk.create_group(url, path="g")
    with pytest.raises(NodeNotFoundError, match="group"):
        zk.open_array(url, path="g")
    with pytest.raises(NodeNotFoundError, match="group"):
        zk.open_array(url, path="g", mode="a", shape=(2,), dtype="int8")


def test_bad_mode(url):
    with pytest.raises(ValueError):
        zk.open_array(url, mode="x")


# --------------------------------------------------------------------------------------------
# data type and fill value arguments


@pytest.mark.parametrize(
    "spellings, name, numpy_dtype",
    [
        (
            ["float32", {"name": "float32"}, np.float32, "<f4", "f4", np.dtype("float32")],
            "float32",
            np.dtype("float32"),
        ),
        (["int32", np.int32, "<i4", "i4", np.dtype(">i4")], "int32", np.dtype("int32")),
        (["uint8", np.uint8, "u1", "B"], "uint8", np.dtype("uint8")),
        (["complex128", np.complex128, "c16", complex], "complex128", np.dtype("complex128")),
        (["bool", np.bool_, "?", bool], "bool", np.dtype("bool")),
        (["r16", {"name": "r16"}, np.dtype("V2"), "V2"], "r16", np.dtype("V2")),
    ],
)
def test_dtype_spellings(store, spellings, name, numpy_dtype):
    data_types = set()
    for i, spelling in enumerate(spellings):
        a = zk.create_array(store, path=f"a{i}", shape=(2,), dtype=spelling)
        assert a.dtype == numpy_dtype, spelling
        assert json.loads(store.get(f"a{i}/zarr.json"))["data_type"] == name, spelling
        data_types.add(a.data_type)
        assert zk.open_array(store, path=f"a{i}").dtype == numpy_dtype
    assert len(data_types) == 1


def test_unknown_dtype(store):
    with pytest.raises(ZarrkitError):
        zk.create_array(store, shape=(2,), dtype="float33")
    with pytest.raises(ZarrkitError):
        zk.create_array(store, shape=(2,), dtype={"name": "nope"})
    assert snapshot(store) == {}


def fill_of(store: Any, path: str) -> Any:
    return json.loads(store.get(f"{path}/zarr.json"))["fill_value"]


@pytest.mark.parametrize(
    "dtype, fill, check, json_fill",
    [
        ("float32", 1.5, lambda v: v == 1.5, 1.5),
        ("float32", np.float32(1.5), lambda v: v == 1.5, 1.5),
        ("float32", np.float64(-0.25), lambda v: v == -0.25, -0.25),
        ("float32", 2, lambda v: v == 2.0, 2.0),
        ("float32", "NaN", np.isnan, "NaN"),
        ("float32", float("nan"), np.isnan, "NaN"),
        ("float64", "-Infinity", lambda v: v == -np.inf, "-Infinity"),
        ("float64", "Infinity", lambda v: v == np.inf, "Infinity"),
        ("float32", "0x7fc00000", np.isnan, "NaN"),
        ("float32", "0x3fc00000", lambda v: v == 1.5, 1.5),
        ("complex64", [1.0, -2.0], lambda v: v == 1 - 2j, [1.0, -2.0]),
        ("complex64", 1 - 2j, lambda v: v == 1 - 2j, [1.0, -2.0]),
        ("complex128", np.complex128(3j), lambda v: v == 3j, [0.0, 3.0]),
        (
            "complex128",
            ["NaN", "Infinity"],
            lambda v: np.isnan(v.real) and v.imag == np.inf,
            ["NaN", "Infinity"],
        ),
        ("r16", [1, 2], lambda v: bytes(v) == b"\x01\x02", [1, 2]),
        ("r16", b"\x03\x04", lambda v: bytes(v) == b"\x03\x04", [3, 4]),
        ("int8", -128, lambda v: v == -128, -128),
        ("int8", np.int8(5), lambda v: v == 5, 5),
        ("uint64", 2**64 - 1, lambda v: v == 2**64 - 1, 2**64 - 1),
        ("bool", True, lambda v: v == np.True_, True),
    ],
)
def test_fill_value_spellings(store, dtype, fill, check, json_fill):
    a = zk.create_array(store, path="a", shape=(3,), dtype=dtype, chunks=(2,), fill_value=fill)
    assert check(a.fill_value)
    assert np.asarray(a.fill_value).dtype == a.dtype
    assert fill_of(store, "a") == json_fill
    got = zk.open_array(store, path="a")[...]
    assert got.dtype == a.dtype
    assert all(check(v) for v in got)
    assert chunk_keys(store, "a") == set()


@pytest.mark.parametrize(
    "dtype, fill",
    [
        ("int8", 300),
        ("uint8", -1),
        ("int32", 1.5),
        ("float32", "x"),
        ("float32", "0x7fc0"),
        ("r16", [1, 2, 3]),
        ("bool", "yes"),
        ("int64", 2**70),
        ("complex64", [1.0]),
    ],
)
def test_bad_fill_values(store, dtype, fill):
    with pytest.raises(ZarrkitError):
        zk.create_array(store, shape=(3,), dtype=dtype, fill_value=fill)
    assert snapshot(store) == {}


def test_raw_bits_read_write(store):
    a = zk.create_array(store, shape=(3,), dtype="r16", chunks=(2,), fill_value=[1, 2])
    assert a[0].tobytes() == b"\x01\x02"
    value = np.frombuffer(b"\x05\x06\x07\x08", dtype="V2")
    a[1:] = value
    assert a[...].tobytes() == b"\x01\x02\x05\x06\x07\x08"


# --------------------------------------------------------------------------------------------
# properties


def test_properties(store):
    a = zk.create_array(
        store,
        path="x/y",
        shape=(5, 0, 3),
        dtype="int16",
        chunks=(2, 4, 3),
        fill_value=4,
        dimension_names=["t", None, "z"],
    )
    assert a.shape == (5, 0, 3)
    assert a.dtype == np.dtype("int16")
    assert a.chunks == (2, 4, 3)
    assert a.ndim == 3
    assert a.size == 0
    assert a.nbytes == 0
    assert a.dimension_names == ("t", None, "z")
    assert a.fill_value == 4 and np.asarray(a.fill_value).dtype == np.int16
    assert a.metadata.shape == (5, 0, 3)
    assert a.metadata.to_json()["dimension_names"] == ["t", None, "z"]
    assert a.path == "x/y" and a.name == "/x/y" and a.basename == "y"
    assert len(a) == 5
    assert_same(np.asarray(a), np.full((5, 0, 3), 4, dtype="int16"))
    text = str(a.info)
    assert "(5, 0, 3)" in text and "Int16(endianness='little')" in text and "(2, 4, 3)" in text
    assert "x/y" in repr(a)

    b = zk.create_array(store, path="b", shape=(7, 3), dtype="float64", chunks=(3, 3))
    b[...] = np.arange(21).reshape(7, 3)
    assert b.size == 21 and b.nbytes == 21 * 8 and len(b) == 7
    assert b.dimension_names is None
    assert b.cdata_shape == (3, 1) and b.nchunks == 3
    assert_same(np.asarray(b), np.arange(21.0).reshape(7, 3))
    assert_same(np.asarray(b, dtype="int64"), np.arange(21).reshape(7, 3))
    assert_same(np.array(b)[::-1], np.arange(21.0).reshape(7, 3)[::-1])
    assert not b.read_only

    c = zk.create_array(store, path="c", shape=(), dtype="uint8", fill_value=2)
    assert c.shape == () and c.ndim == 0 and c.size == 1 and c.nbytes == 1 and c.chunks == ()
    assert_same(c[...], np.uint8(2))
    c[...] = 5
    assert_same(c[()], np.uint8(5))
    assert_same(np.asarray(c), np.array(5, dtype="uint8"))
    assert chunk_keys(store, "c") == {"c/c"}
    with pytest.raises(TypeError):
        len(c)


def test_dimension_names_must_match_rank(store):
    with pytest.raises(ZarrkitError):
        zk.create_array(store, shape=(2, 2), dtype="int8", dimension_names=["only-one"])
    assert snapshot(store) == {}


# --------------------------------------------------------------------------------------------
# threads


@pytest.mark.parametrize("repeat", range(2))
def test_threads_writing_disjoint_chunks(store, repeat):
    rows = 6
    a = zk.create_array(store, shape=(4 * rows, 10), dtype="int64", chunks=(rows // 2, 5))
    barrier = threading.Barrier(4)
    errors = []

    def worker(i: int) -> None:
        try:
            barrier.wait()
            for step in range(15):
                region = slice(i * rows, (i + 1) * rows)
                a[region] = np.full((rows, 10), i * 1000 + step)
                a[region.start, 0] = i * 1000 + step  # a partial write of its own chunk
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    expected = np.repeat(np.arange(4) * 1000 + 14, rows)[:, None] * np.ones((1, 10), dtype="int64")
    assert_same(a[...], expected)
    assert_same(zk.open_array(store)[...], expected)
