"""The rectilinear chunk grid (zarr-extensions `chunk-grids/rectilinear`): its metadata, irregular
chunks read and written, sharding inside it, resize and append, and zarr-python 3.4 both ways."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrkit as zk
from zarrkit.errors import CodecChainError, ConflictingArgumentsError, MetadataError
from zarrkit.plugins.grids.rectilinear import RectilinearChunkGrid
from zarrkit.plugins.stores.memory import MemoryStore


def _grid_doc(path: Path) -> Any:
    return json.loads((path / "zarr.json").read_text())["chunk_grid"]


def _chunk_files(path: Path) -> set[str]:
    return {str(p.relative_to(path / "c")) for p in (path / "c").rglob("*") if p.is_file()}


def _grid(*shapes: Any) -> RectilinearChunkGrid:
    conf = {"kind": "inline", "chunk_shapes": list(shapes)}
    return RectilinearChunkGrid.from_json("rectilinear", conf)


# -- the grid ---------------------------------------------------------------------------------
def test_run_length_form_reads_as_its_expansion() -> None:
    """The spec's example: every form of edge list, and positions land in the right chunk."""
    grid = _grid(4, [1, 2, 3], [[4, 2]], [[1, 3], 3], [4, 4, 4])
    grid.validate((6, 6, 6, 6, 6))
    assert grid.grid_shape((6, 6, 6, 6, 6)) == (2, 3, 2, 4, 2)
    expanded = [[4, 4], [1, 2, 3], [4, 4], [1, 1, 1, 3], [4, 4, 4]]
    for dim, edges in enumerate(expanded):
        starts = np.concatenate(([0], np.cumsum(edges)[:-1]))
        positions = np.arange(6)
        expect = np.searchsorted(starts, positions, side="right") - 1
        assert grid.chunk_index(dim, positions).tolist() == expect.tolist()
        ids = np.arange(len(edges))
        assert grid.chunk_start(dim, ids).tolist() == starts.tolist()
    assert grid.chunk_shape((1, 2, 0, 3, 2)) == (4, 3, 4, 3, 4)


def test_written_as_zarr_python_writes_it() -> None:
    """Runs of more than one are [length, count]; runs of one and step sizes stay bare."""
    grid = _grid([10, 10, [10, 1], 5], 4, [1, 2, 3])
    assert grid.configuration()["chunk_shapes"] == [[[10, 3], 5], 4, [1, 2, 3]]
    assert grid.to_json()["name"] == "rectilinear"


def test_huge_run_is_not_expanded() -> None:
    """A billion chunks in one run cost one run: nothing is allocated per chunk."""
    grid = _grid([[1, 10**9], 7])
    n = 10**9 + 7
    grid.validate((n,))
    assert grid.grid_shape((n,)) == (10**9 + 1,)
    assert grid.chunk_index(0, np.array([n - 1, 10**9 - 1])).tolist() == [10**9, 10**9 - 1]
    assert grid.chunk_shape((10**9,)) == (7,)


@st.composite
def _dims(draw: st.DrawFn, max_dims: int = 3) -> tuple[list[Any], list[list[int]], list[int]]:
    """(JSON chunk_shapes, the edges each expands to, an array shape they cover): step sizes,
    bare edges and runs mixed, the shape sometimes short of the edges' sum (a shrunk array)."""
    specs: list[Any] = []
    expanded: list[list[int]] = []
    shape: list[int] = []
    for _ in range(draw(st.integers(1, max_dims))):
        if draw(st.booleans()):
            step = draw(st.integers(1, 5))
            n = draw(st.integers(0, 13))
            specs.append(step)
            expanded.append([step] * max(1, -(-n // step)))
            shape.append(n)
            continue
        items = draw(
            st.lists(
                st.integers(1, 4) | st.tuples(st.integers(1, 4), st.integers(1, 3)),
                min_size=1,
                max_size=4,
            )
        )
        specs.append([list(i) if isinstance(i, tuple) else i for i in items])
        edges = [n for i in items for n in ([i[0]] * i[1] if isinstance(i, tuple) else [i])]
        expanded.append(edges)
        shape.append(draw(st.integers(0, sum(edges))))
    return specs, expanded, shape


@settings(max_examples=60)
@given(_dims())
def test_grid_agrees_with_expanded_edges(
    case: tuple[list[Any], list[list[int]], list[int]],
) -> None:
    specs, expanded, shape = case
    grid = _grid(*specs)
    grid.validate(shape)
    starts = [np.concatenate(([0], np.cumsum(e)[:-1])).astype(np.int64) for e in expanded]
    expect_grid = tuple(int(np.count_nonzero(s < n)) for s, n in zip(starts, shape))
    assert grid.grid_shape(shape) == expect_grid
    for d, (s, n) in enumerate(zip(starts, shape)):
        positions = np.arange(n, dtype=np.int64)
        assert (
            grid.chunk_index(d, positions).tolist()
            == (np.searchsorted(s, positions, "right") - 1).tolist()
        )
        ids = np.arange(expect_grid[d], dtype=np.int64)
        assert grid.chunk_start(d, ids).tolist() == s[ids].tolist()
    last = tuple(max(0, g - 1) for g in expect_grid)
    assert grid.chunk_shape(last) == tuple(e[i] for e, i in zip(expanded, last))
    again = RectilinearChunkGrid.from_json("rectilinear", grid.configuration())
    assert again == grid and again.configuration() == grid.configuration()


@settings(max_examples=15)
@given(_dims(), st.data())
def test_regions_read_and_written_across_irregular_chunks(
    case: tuple[list[Any], list[list[int]], list[int]], data: st.DataObject
) -> None:
    specs, _, shape = case
    conf = {"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": specs}}
    a = zk.create_array(
        MemoryStore(), shape=tuple(shape), dtype="i4", chunk_grid=conf, fill_value=-1
    )
    expect = np.full(shape, -1, dtype="i4")
    for _ in range(2):
        region = tuple(
            slice(*sorted(data.draw(st.tuples(st.integers(0, n), st.integers(0, n)))))
            for n in shape
        )
        values = np.arange(expect[region].size, dtype="i4").reshape(expect[region].shape)
        a[region] = values
        expect[region] = values
        np.testing.assert_array_equal(a[:], expect)
        np.testing.assert_array_equal(a[region], expect[region])


BAD = {
    "zero edge": ({"kind": "inline", "chunk_shapes": [[10, 0, 25]]}, "chunk_shapes"),
    "negative edge": ({"kind": "inline", "chunk_shapes": [[-5, 40]]}, "chunk_shapes"),
    "bool edge": ({"kind": "inline", "chunk_shapes": [[True, 34]]}, "chunk_shapes"),
    "float edge": ({"kind": "inline", "chunk_shapes": [[10.5, 25]]}, "chunk_shapes"),
    "empty edges": ({"kind": "inline", "chunk_shapes": [[]]}, "chunk_shapes"),
    "zero count": ({"kind": "inline", "chunk_shapes": [[[5, 0], 35]]}, "chunk_shapes"),
    "three-item run": ({"kind": "inline", "chunk_shapes": [[[5, 7, 1]]]}, "chunk_shapes"),
    "short sum": ({"kind": "inline", "chunk_shapes": [[10, 20]]}, "chunk_shapes"),
    "wrong ndim": ({"kind": "inline", "chunk_shapes": [[35], [4]]}, "chunk_shapes"),
    "not a list": ({"kind": "inline", "chunk_shapes": "35"}, "chunk_shapes"),
    "huge sum": ({"kind": "inline", "chunk_shapes": [[[2**62, 3]]]}, "chunk_shapes"),
    "no kind": ({"chunk_shapes": [[35]]}, "kind"),
    "other kind": ({"kind": "file", "chunk_shapes": [[35]]}, "kind"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_metadata_refused_naming_the_field(tmp_path: Path, case: str) -> None:
    a = zk.create_array(str(tmp_path), shape=(35,), dtype="i2", chunks=[[10, 25]])
    doc = json.loads((tmp_path / "zarr.json").read_text())
    doc["chunk_grid"]["configuration"] = BAD[case][0]
    (tmp_path / "zarr.json").write_text(json.dumps(doc))
    with pytest.raises(MetadataError) as info:
        zk.open_array(str(tmp_path))
    assert info.value.field == f"chunk_grid.configuration.{BAD[case][1]}"
    assert "zarr.json" in str(info.value)
    del a


# -- creating, reading and writing ------------------------------------------------------------
def test_create_from_edge_lists_and_read_regions(tmp_path: Path) -> None:
    a = zk.create_array(str(tmp_path), shape=(35, 9), dtype="i4", chunks=[[10, 20, 5], 4])
    assert _grid_doc(tmp_path) == {
        "name": "rectilinear",
        "configuration": {"kind": "inline", "chunk_shapes": [[10, 20, 5], 4]},
    }
    data = np.arange(35 * 9, dtype="i4").reshape(35, 9)
    a[:] = data
    # one file per chunk: 3 along the edges, ceil(9 / 4) along the step size
    assert _chunk_files(tmp_path) == {f"{i}/{j}" for i in range(3) for j in range(3)}
    assert a.chunks is None and a.cdata_shape == (3, 3)
    b = zk.open_array(str(tmp_path))
    for sel in [np.s_[7:23, 3:6], np.s_[29:31, :], np.s_[34, 8], np.s_[::3, ::2], np.s_[-12:]]:
        np.testing.assert_array_equal(b[sel], data[sel])
    np.testing.assert_array_equal(
        b.get_coordinate_selection(([0, 9, 10, 34], [8, 0, 4, 1])),
        data[[0, 9, 10, 34], [8, 0, 4, 1]],
    )
    a[8:12, 2:7] = -1  # straddles two chunks along the irregular dimension
    data[8:12, 2:7] = -1
    np.testing.assert_array_equal(zk.open_array(str(tmp_path))[:], data)


def test_bad_edge_lists_refused_at_creation(tmp_path: Path) -> None:
    with pytest.raises(MetadataError, match="sum to 30"):
        zk.create_array(str(tmp_path / "a"), shape=(35,), dtype="i1", chunks=[[10, 20]])
    with pytest.raises(MetadataError, match="positive"):
        zk.create_array(str(tmp_path / "b"), shape=(35,), dtype="i1", chunks=[[0, 35]])
    with pytest.raises(MetadataError, match="format v2"):
        zk.create_array(
            str(tmp_path / "c"), shape=(35,), dtype="i1", chunks=[[5, 30]], zarr_format=2
        )
    with pytest.raises(ConflictingArgumentsError):
        zk.create_array(
            str(tmp_path / "d"), shape=(35,), dtype="i1", chunks=[[5, 30]], shards=[[35]]
        )
    assert not any(tmp_path.rglob("zarr.json"))


def test_sharded_with_rectilinear_shards(tmp_path: Path) -> None:
    a = zk.create_array(
        str(tmp_path), shape=(40, 8), dtype="u2", chunks=(5, 4), shards=[[10, 20, 10], [8]]
    )
    assert _grid_doc(tmp_path)["configuration"]["chunk_shapes"] == [[10, 20, 10], [8]]
    data = np.arange(320, dtype="u2").reshape(40, 8)
    a[:] = data
    assert _chunk_files(tmp_path) == {"0/0", "1/0", "2/0"}
    np.testing.assert_array_equal(zk.open_array(str(tmp_path))[3:27, 1:7], data[3:27, 1:7])


def test_shard_edge_the_inner_chunks_do_not_divide_is_refused(tmp_path: Path) -> None:
    with pytest.raises(MetadataError, match="multiple"):
        zk.create_array(
            str(tmp_path / "a"), shape=(33,), dtype="u2", chunks=(5,), shards=[[10, 20, 3]]
        )
    a = zk.create_array(
        str(tmp_path / "b"), shape=(40,), dtype="u2", chunks=(5,), shards=[[10, 30]]
    )
    a[:] = 7
    before = (tmp_path / "b" / "zarr.json").read_text()
    with pytest.raises(CodecChainError, match="multiple"):
        a.append(np.ones(3, dtype="u2"))  # the new edge, 3, is not a multiple of 5
    assert (tmp_path / "b" / "zarr.json").read_text() == before and a.shape == (40,)


# -- resize and append ------------------------------------------------------------------------
def test_resize_grows_by_one_edge_and_shrinking_keeps_edges(tmp_path: Path) -> None:
    a = zk.create_array(str(tmp_path), shape=(35,), dtype="i4", chunks=[[10, 20, 5]], fill_value=-9)
    a[:] = np.arange(35)
    a.resize(12)  # inside chunk 1: its part beyond 12 is cleared, chunk 2 erased
    assert _grid_doc(tmp_path)["configuration"]["chunk_shapes"] == [[10, 20, 5]]
    assert _chunk_files(tmp_path) == {"0", "1"}
    a.resize(41)  # past the edges' sum (35): one more edge of 6
    assert _grid_doc(tmp_path)["configuration"]["chunk_shapes"] == [[10, 20, 5, 6]]
    expect = np.full(41, -9)
    expect[:12] = np.arange(12)
    np.testing.assert_array_equal(zk.open_array(str(tmp_path))[:], expect)
    assert a.append(np.arange(100, 104)) == (45,)
    assert _grid_doc(tmp_path)["configuration"]["chunk_shapes"] == [[10, 20, 5, 6, 4]]
    np.testing.assert_array_equal(zk.open_array(str(tmp_path))[41:], np.arange(100, 104))


def test_append_along_a_step_size_dimension_keeps_it(tmp_path: Path) -> None:
    a = zk.create_array(str(tmp_path), shape=(6, 4), dtype="i4", chunks=[[2, 4], 3])
    a[:] = 1
    a.append(np.full((6, 5), 2), axis=1)
    assert _grid_doc(tmp_path)["configuration"]["chunk_shapes"] == [[2, 4], 3]
    expect = np.concatenate([np.ones((6, 4)), np.full((6, 5), 2)], axis=1)
    np.testing.assert_array_equal(zk.open_array(str(tmp_path))[:], expect)


# -- zarr-python 3.4, both ways ---------------------------------------------------------------
@pytest.fixture
def zarr_rectilinear() -> Iterator[Any]:
    zarr = pytest.importorskip("zarr")
    with zarr.config.set({"array.rectilinear_chunks": True}):
        yield zarr


@pytest.mark.interop
@pytest.mark.parametrize("sharded", [False, True], ids=["plain", "sharded"])
def test_zarr_python_reads_what_zarrkit_writes(
    tmp_path: Path, zarr_rectilinear: Any, sharded: bool
) -> None:
    zarr = zarr_rectilinear
    args: dict[str, Any] = (
        {"chunks": (5, 3), "shards": [[10, 20], [6, 3]]}
        if sharded
        else {"chunks": [[10, 10, 10], 3]}
    )
    a = zk.create_array(str(tmp_path), shape=(30, 9), dtype="f8", fill_value=np.nan, **args)
    # the sharded array grows by 5, which its inner chunks (5) divide
    data = np.random.default_rng(3).standard_normal((35 if sharded else 37, 9))
    a[:] = data[:30]
    a.append(data[30:])
    z = zarr.open_array(str(tmp_path), mode="r")
    assert z.shape == data.shape
    np.testing.assert_array_equal(z[:], data)
    np.testing.assert_array_equal(z[4:26, 2:8], data[4:26, 2:8])
    assert z.write_chunk_sizes[0] == ((10, 20, 5) if sharded else (10, 10, 10, 7))


@pytest.mark.interop
@pytest.mark.parametrize("sharded", [False, True], ids=["plain", "sharded"])
def test_zarrkit_reads_what_zarr_python_writes(
    tmp_path: Path, zarr_rectilinear: Any, sharded: bool
) -> None:
    zarr = zarr_rectilinear
    args: dict[str, Any] = (
        {"chunks": (5, 4), "shards": [[10, 20, 10], [8]]}
        if sharded
        else {"chunks": [[10, 10, 10, 5, 5], [3, 5]]}
    )
    z = zarr.create_array(str(tmp_path), shape=(40, 8), dtype="i8", fill_value=-1, **args)
    data = np.arange(320, dtype="i8").reshape(40, 8)
    z[:] = data
    z.resize((45, 8))  # one more edge of 5
    z[40:] = data[:5] + 1000
    z.append(data[:10] + 2000)  # and one of 10
    expect = np.concatenate([data, data[:5] + 1000, data[:10] + 2000])
    shapes = _grid_doc(tmp_path)["configuration"]["chunk_shapes"]
    assert shapes[0] == ([10, 20, 10, 5, 10] if sharded else [[10, 3], [5, 3], 10])
    a = zk.open_array(str(tmp_path), mode="a")
    np.testing.assert_array_equal(a[:], expect)
    np.testing.assert_array_equal(a[7:43, 2:7], expect[7:43, 2:7])
    # and zarrkit's writes on top read back in zarr-python
    a[12:18, :] = -5
    expect[12:18, :] = -5
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path), mode="r")[:], expect)


@pytest.mark.interop
def test_zarr_python_resizes_zarrkit_array_and_back(tmp_path: Path, zarr_rectilinear: Any) -> None:
    """Each side grows the other's grid as the other expects (one edge covering the growth)."""
    zarr = zarr_rectilinear
    a = zk.create_array(str(tmp_path), shape=(35,), dtype="i2", chunks=[[10, 20, 5]])
    a[:] = np.arange(35)
    z = zarr.open_array(str(tmp_path), mode="a")
    z.append(np.arange(35, 42, dtype="i2"))
    a = zk.open_array(str(tmp_path), mode="a")
    a.append(np.arange(42, 50, dtype="i2"))
    assert _grid_doc(tmp_path)["configuration"]["chunk_shapes"] == [[10, 20, 5, 7, 8]]
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path), mode="r")[:], np.arange(50))


@pytest.mark.interop
def test_chunk_sizes_as_zarr_python_reports_them(tmp_path: Path, zarr_rectilinear: Any) -> None:
    """`write_chunk_sizes` / `read_chunk_sizes` (zarr-python's view of any grid), `chunks` (the
    inner chunks of a sharded array) and the initialized chunks, after a shrink that leaves an
    edge running past the array's end."""
    zarr = zarr_rectilinear
    plain = zk.create_array(str(tmp_path / "p"), shape=(38, 8), dtype="i4", chunks=[[10, 20, 8], 3])
    sharded = zk.create_array(
        str(tmp_path / "s"), shape=(40, 8), dtype="i4", chunks=(5, 4), shards=[[10, 20, 10], [8]]
    )
    sharded[:12] = 1
    sharded.resize((38, 8))
    assert plain.write_chunk_sizes == ((10, 20, 8), (3, 3, 2))
    assert sharded.write_chunk_sizes == ((10, 20, 8), (8,))
    assert sharded.read_chunk_sizes == ((5, 5, 5, 5, 5, 5, 5, 3), (4, 4))
    assert (sharded.chunks, sharded.shards, sharded.cdata_shape) == ((5, 4), None, (8, 2))
    for ours, name in ((plain, "p"), (sharded, "s")):
        theirs = zarr.open_array(str(tmp_path / name), mode="r")
        assert ours.write_chunk_sizes == theirs.write_chunk_sizes
        assert ours.read_chunk_sizes == theirs.read_chunk_sizes
        assert ours.nchunks_initialized == theirs.nchunks_initialized


@pytest.mark.interop
@pytest.mark.xfail(
    strict=True, raises=ValueError, reason="tensorstore 0.1.86 reads only the regular chunk grid"
)
def test_tensorstore_reads_it(tmp_path: Path) -> None:
    ts = pytest.importorskip("tensorstore")
    a = zk.create_array(str(tmp_path), shape=(35,), dtype="i4", chunks=[[10, 20, 5]])
    a[:] = np.arange(35)
    spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": str(tmp_path)}}
    np.testing.assert_array_equal(ts.open(spec).result().read().result(), np.arange(35))


def test_dask_blocks_are_the_irregular_chunks(tmp_path: Path) -> None:
    """A dask array of a rectilinear array has one block per stored chunk, lengths as stored."""
    pytest.importorskip("dask.array")
    from zarrkit.dask import from_zarrkit

    a = zk.create_array(str(tmp_path), shape=(35, 9), dtype="i4", chunks=[[10, 20, 5], 4])
    data = np.arange(35 * 9, dtype="i4").reshape(35, 9)
    a[:] = data
    lazy = from_zarrkit(str(tmp_path))
    assert lazy.chunks == ((10, 20, 5), (4, 4, 1))
    np.testing.assert_array_equal(lazy[5:30, 2:8].compute(scheduler="sync"), data[5:30, 2:8])


@pytest.mark.interop
def test_documented_differences_from_zarr_python(tmp_path: Path) -> None:
    """docs/zarr-python.md: no flag here; `chunks` / `shards` are None where
    zarr-python raises NotImplementedError."""
    zarr = pytest.importorskip("zarr")
    plain = zk.create_array(str(tmp_path / "p"), shape=(35,), dtype="i1", chunks=[[10, 25]])
    sharded = zk.create_array(
        str(tmp_path / "s"), shape=(30,), dtype="i1", chunks=(5,), shards=[[10, 20]]
    )
    assert (plain.chunks, plain.shards, sharded.shards) == (None, None, None)
    with zarr.config.set({"array.rectilinear_chunks": False}):
        with pytest.raises(ValueError, match="rectilinear_chunks"):
            zarr.open_array(str(tmp_path / "p"), mode="r")
    with zarr.config.set({"array.rectilinear_chunks": True}):
        with pytest.raises(NotImplementedError):
            _ = zarr.open_array(str(tmp_path / "p"), mode="r").chunks
        with pytest.raises(NotImplementedError):
            _ = zarr.open_array(str(tmp_path / "s"), mode="r").shards
