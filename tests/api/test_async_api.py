"""zarr-python's async API (`zarr.api.asynchronous`, `AsyncArray`, `AsyncGroup`) and
`zarrkit.api.asynchronous` side by side: the same calls, in zarr-python's shapes, give the same
values; the async faces and the synchronous ones are one array (one engine); randomised round
trips through the async API equal the synchronous API's."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any

import numpy as np
import pytest

import zarrkit
import zarrkit.api.asynchronous as za
from zarrkit.errors import ArgumentError, NodeNotFoundError, ReadOnlyError, SelectionError

zarr = pytest.importorskip("zarr")
zasync = pytest.importorskip("zarr.api.asynchronous")


def run(coro: Coroutine[Any, Any, Any]) -> Any:
    return asyncio.run(coro)


def test_top_level_names() -> None:
    assert zarrkit.AsyncArray is za.AsyncArray
    assert zarrkit.AsyncGroup is za.AsyncGroup
    assert "AsyncArray" in dir(zarrkit)


@pytest.mark.interop
@pytest.mark.parametrize("shards", [None, (8, 12)])
def test_zarr_python_async_example_same_values(tmp_path: Any, shards: Any) -> None:
    """zarr-python's async example (create, write, read back by every kind of selection),
    run against both libraries on their own copies of one local store."""
    data = np.arange(16 * 24, dtype="int32").reshape(16, 24)
    mask = (data % 7) == 0

    async def session(api: Any, where: str) -> list[Any]:
        a = await api.create_array(
            store=where, shape=data.shape, chunks=(4, 6), shards=shards, dtype="int32"
        )
        await a.setitem(slice(None), data)
        await a.setitem((slice(2, 5), slice(3, 9)), -1)
        out = [
            await a.getitem(slice(None)),
            await a.getitem((slice(1, 13, 3), slice(None, None, 5))),
            await a.getitem((3, 4)),
            await a.get_orthogonal_selection(([0, 5, 9], slice(2, 20))),
            await a.get_coordinate_selection(([1, 2, 3], [4, 5, 6])),
            await a.get_mask_selection(mask),
            await a.nchunks_initialized(),
            await a.nbytes_stored() > 0,
            a.shape,
            a.chunks,
            a.shards,
            str(a.dtype),
        ]
        await a.resize((20, 24))
        out.append(await a.getitem(slice(None)))
        out.append(await a.append(np.ones((4, 24), dtype="int32")))
        out.append(await a.getitem(slice(None)))
        b = await a.update_attributes({"units": "m"})
        out.append(dict(b.attrs))
        opened = await type(a).open(where)
        out.append(await opened.getitem((slice(0, 3), slice(0, 3))))
        return out

    ours = run(session(za, str(tmp_path / "zarrkit.zarr")))
    theirs = run(session(zasync, str(tmp_path / "zarr.zarr")))
    assert len(ours) == len(theirs)
    for mine, other in zip(ours, theirs):
        if isinstance(other, np.ndarray) or np.isscalar(other):
            np.testing.assert_array_equal(np.asarray(mine), np.asarray(other))
        else:
            assert mine == other
    # and each reads the other's array
    cross = zarrkit.open_array(str(tmp_path / "zarr.zarr"))
    np.testing.assert_array_equal(cross[...], theirs[-3])


@pytest.mark.interop
def test_creation_functions_same_as_zarr_python(tmp_path: Any) -> None:
    """`zeros`, `ones`, `full`, `empty`, `array`, `*_like`, `open`, `open_array`, `group`,
    `open_group`, `consolidate_metadata`, `load`, `save`: same shapes and values."""

    async def session(api: Any, root: str) -> list[Any]:
        out: list[Any] = []
        z = await api.zeros(shape=(6, 5), chunks=(3, 5), store=f"{root}/z", dtype="f8")
        o = await api.ones(shape=(6, 5), chunks=(3, 5), store=f"{root}/o", dtype="i2")
        f = await api.full(shape=(4,), fill_value=3.5, store=f"{root}/f", dtype="f4")
        e = await api.empty(shape=(4,), store=f"{root}/e", dtype="u1")
        arr = await api.array(np.arange(10), chunks=(4,), store=f"{root}/a")
        zl = await api.zeros_like(arr, store=f"{root}/zl")
        ol = await api.ones_like(arr, store=f"{root}/ol")
        fl = await api.full_like(arr, fill_value=9, store=f"{root}/fl")
        for a in (z, o, f, arr, zl, ol, fl):
            out.append(await a.getitem(slice(None)))
            out.append((a.shape, str(a.dtype)))
        out.append((e.shape, str(e.dtype)))
        g = await api.group(store=f"{root}/g", attributes={"k": 1})
        sub = await g.create_group("sub")
        await sub.create_array("x", shape=(3,), dtype="i4", fill_value=5)
        await g.create_array("y", shape=(2, 2), dtype="f4")
        out.append(sorted([k async for k in g.keys()]))  # noqa: SIM118  (an async iterator)
        out.append(sorted([k async for k, _ in g.arrays()]))
        out.append(sorted([k async for k, _ in g.groups()]))
        out.append(sorted([k async for k, _ in g.members(max_depth=None)]))
        out.append(await g.nmembers(max_depth=None))
        out.append(await g.contains("sub/x"))
        out.append(await g.contains("nope"))
        x = await g.getitem("sub/x")
        out.append(await x.getitem(slice(None)))
        again = await api.open_group(f"{root}/g", mode="r")
        out.append(dict(again.attrs))
        node = await api.open(store=f"{root}/g", path="sub/x", mode="r")
        out.append(await node.getitem(slice(None)))
        opened = await api.open_array(store=f"{root}/a", mode="r")
        out.append(await opened.getitem(slice(2, 5)))
        consolidated = await api.consolidate_metadata(f"{root}/g")
        out.append(sorted([k async for k in consolidated.keys()]))  # noqa: SIM118  (an async iterator)
        await api.save(f"{root}/s", np.arange(6).reshape(2, 3))
        out.append(await api.load(store=f"{root}/s"))
        required = await g.require_group("sub")
        out.append(required.name)
        required_array = await g.require_array("y", shape=(2, 2), dtype="f4")
        out.append(required_array.shape)
        return out

    ours = run(session(za, str(tmp_path / "ours")))
    theirs = run(session(zasync, str(tmp_path / "theirs")))
    for i, (mine, other) in enumerate(zip(ours, theirs, strict=True)):
        if isinstance(other, np.ndarray) or hasattr(other, "__array__"):
            np.testing.assert_array_equal(np.asarray(mine), np.asarray(other), err_msg=str(i))
        else:
            assert mine == other, i


def test_async_and_sync_faces_are_one_array() -> None:
    """A write through either face is seen by the other at once: one handle, one engine."""
    array = zarrkit.create_array("memory://", shape=(10,), chunks=(3,), dtype="i8")
    face = zarrkit.AsyncArray(array)
    assert face.as_sync() is array
    array[:] = np.arange(10)

    async def go() -> Any:
        await face.setitem(slice(0, 3), -5)
        return await face.getitem(slice(None))

    np.testing.assert_array_equal(run(go()), [-5, -5, -5, *range(3, 10)])
    np.testing.assert_array_equal(array[:3], [-5, -5, -5])
    group = zarrkit.group()
    assert za.as_async(group).as_sync() is group
    assert repr(face).startswith("<AsyncArray memory://")


def test_bad_input_raises_zarrkit_errors_before_awaiting() -> None:
    array = zarrkit.create_array("memory://", shape=(4, 4), chunks=(2, 2), dtype="i4")
    face = zarrkit.AsyncArray(array)
    with pytest.raises(SelectionError):
        run(face.getitem((slice(None), slice(None), 0)))
    with pytest.raises(SelectionError):
        run(face.get_mask_selection(np.ones((3, 3), bool)))
    with pytest.raises(ArgumentError):
        run(face.get_basic_selection(slice(None), fields="a"))
    with pytest.raises(ArgumentError):
        zarrkit.AsyncArray(np.zeros(3))  # type: ignore[arg-type]
    with pytest.raises(NodeNotFoundError):
        run(za.open_array("memory://nothing-here", mode="r"))
    read_only = zarrkit.AsyncArray(zarrkit.open_array(array.store, mode="r"))
    with pytest.raises(ReadOnlyError):
        run(read_only.setitem(0, 1))
    np.testing.assert_array_equal(array[...], 0)


def test_set_and_get_forms_match_numpy() -> None:
    """The `set_*_selection` / `get_*_selection` coroutines (zarrkit has every form zarr-python's
    synchronous `Array` has; its `AsyncArray` lacks the `set_` ones) against numpy."""
    expected = np.arange(12 * 10, dtype="i4").reshape(12, 10)
    face = run(za.array(expected.copy(), chunks=(5, 4), store="memory://"))
    mask = (expected % 3) == 0

    async def go() -> list[Any]:
        await face.set_basic_selection((slice(0, 2), slice(None)), 1)
        await face.set_orthogonal_selection(([3, 7], slice(1, 9)), 2)
        await face.set_coordinate_selection(([0, 11, 5], [9, 0, 5]), 3)
        await face.set_mask_selection(mask, 4)
        await face.set_block_selection((1, slice(0, 2)), 5)
        return [
            await face.get_basic_selection(slice(None)),
            await face.get_block_selection((slice(0, 2), 1)),
        ]

    everything, blocks = run(go())
    expected[0:2, :] = 1
    expected[np.ix_([3, 7], range(1, 9))] = 2
    expected[[0, 11, 5], [9, 0, 5]] = 3
    expected[mask] = 4
    expected[5:10, 0:8] = 5
    np.testing.assert_array_equal(everything, expected)
    np.testing.assert_array_equal(blocks, expected[0:10, 4:8])


def test_out_and_fortran_order() -> None:
    array = zarrkit.create_array("memory://", shape=(6, 4), chunks=(4, 4), dtype="f4")
    array[...] = np.arange(24).reshape(6, 4)
    face = zarrkit.AsyncArray(array)
    out = np.zeros((2, 4), dtype="f4")
    got = run(face.get_basic_selection((slice(1, 3), slice(None)), out=out))
    assert got is out
    np.testing.assert_array_equal(out, array[1:3])
    fortran = face.with_config({"order": "F"})
    assert run(fortran.getitem(slice(None))).flags.f_contiguous


def test_sync_api_inside_a_running_loop_and_from_threads() -> None:
    """The synchronous API called from a coroutine (as Jupyter does) and awaited reads run
    on loops in several threads at once: nothing deadlocks, every value is right."""
    array = zarrkit.create_array("memory://", shape=(64,), chunks=(8,), dtype="i4")
    array[:] = np.arange(64)
    face = zarrkit.AsyncArray(array)

    async def inside() -> Any:
        sync_value = array[5:9]  # blocking call inside the loop: no deadlock
        awaited_value = await face.getitem(slice(5, 9))
        return sync_value, awaited_value

    a, b = run(inside())
    np.testing.assert_array_equal(a, b)
    results: list[Any] = []

    def worker(i: int) -> None:
        async def go() -> Any:
            return await asyncio.gather(*[face.getitem(slice(j, j + 8)) for j in range(0, 56, 7)])

        results.append((i, asyncio.run(go())))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(results) == 4
    for _, values in results:
        for j, value in zip(range(0, 56, 7), values):
            np.testing.assert_array_equal(value, np.arange(j, j + 8))


@pytest.mark.parametrize("seed", range(6))
def test_random_round_trips_async_equals_sync(seed: int) -> None:
    """Random arrays (plain, sharded), random windows and writes: the async API reads and
    writes exactly what the synchronous API does."""
    rng = np.random.default_rng(seed)
    ndim = int(rng.integers(1, 4))
    shape = tuple(int(n) for n in rng.integers(1, 20, ndim))
    chunks = tuple(int(rng.integers(1, n + 1)) for n in shape)
    sharded = bool(rng.integers(0, 2))
    shards = tuple(c * int(rng.integers(1, 3)) for c in chunks) if sharded else None
    kwargs = dict(shape=shape, chunks=chunks, shards=shards, dtype="i4", fill_value=-1)
    sync = zarrkit.create_array("memory://", **kwargs)
    face = run(za.create_array("memory://", **kwargs))
    expected = np.full(shape, -1, dtype="i4")

    def window() -> tuple[slice, ...]:
        sel = []
        for n in shape:
            a, b = sorted(int(x) for x in rng.integers(0, n + 1, 2))
            sel.append(slice(a, b, int(rng.integers(1, 3))))
        return tuple(sel)

    async def go() -> None:
        for _ in range(8):
            sel = window()
            value = rng.integers(-100, 100, expected[sel].shape).astype("i4")
            expected[sel] = value
            sync[sel] = value
            await face.setitem(sel, value)
        reads = [window() for _ in range(10)]
        got = await asyncio.gather(*[face.getitem(s) for s in reads])
        for sel, value in zip(reads, got):
            np.testing.assert_array_equal(value, expected[sel])
            np.testing.assert_array_equal(value, sync[sel])
        idx = [np.unique(rng.integers(0, n, 3)) for n in shape]
        np.testing.assert_array_equal(
            await face.get_orthogonal_selection(tuple(idx)), sync.oindex[tuple(idx)]
        )

    run(go())
