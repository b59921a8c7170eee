"""xarray through zarrkit: `engine="zarrkit"` against xarray's own zarr engine (zarr-python) on
the same data, `to_zarrkit` against `Dataset.to_zarr`, both ways, v2 and v3."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from store_servers import FileServer, Moto, address, s3_options, serving

import zarrkit
from zarrkit import store_opening
from zarrkit.errors import ContainsNodeError, DimensionNamesError, MetadataError

xr = pytest.importorskip("xarray")
pytest.importorskip("dask")
zarr = pytest.importorskip("zarr")

from zarrkit.xarray import datatree_to_zarrkit, to_zarrkit  # noqa: E402  (needs xarray)
from zarrkit.xarray.backend import ZarrkitBackendEntrypoint  # noqa: E402  (needs xarray)

pytestmark = [
    pytest.mark.interop,  # every dataset is compared with what xarray's zarr engine makes of it
    pytest.mark.filterwarnings("ignore:Consolidated metadata is currently not part:UserWarning"),
]

FORMATS = [2, 3]
BUCKET = "xarray"
#: encodings that decide what a reader sees, compared between the two engines
ENCODINGS = (
    "dtype",
    "scale_factor",
    "add_offset",
    "_FillValue",
    "units",
    "calendar",
    "chunks",
    "preferred_chunks",
    "shards",
    "fill_value",
)


def dataset() -> Any:
    """CF times and timedeltas, scale/offset packing, NaN fills, strings (variable and fixed
    length), integers, attributes of several types."""
    rng = np.random.default_rng(0)
    temp = rng.random((6, 4, 5)).astype("f4")
    temp[0, 0, 0] = np.nan
    packed = np.linspace(0, 10, 30).reshape(6, 5)
    packed[1, 1] = np.nan
    ds = xr.Dataset(
        {
            "temp": (("time", "y", "x"), temp, {"units": "K", "long_name": "temperature"}),
            "packed": (("time", "x"), packed),
            "name": (("x",), np.array(["a", "bb", "ccc", "", "eeeee"], dtype=object)),
            "fixed": (("x",), np.array(["a", "bb", "ccc", "", "eeeee"])),
            "count": (("y",), np.arange(4, dtype="i2")),
            "lag": (("time",), pd.to_timedelta(np.arange(6), unit="h")),
        },
        coords={
            "time": pd.date_range("2000-01-01", periods=6, freq="6h"),
            "y": np.arange(4.0),
            "x": np.arange(5),
        },
        attrs={"title": "test", "n": 3, "levels": [1, 2], "f": 0.5},
    )
    ds["packed"].encoding = {
        "scale_factor": 0.1,
        "add_offset": 1.0,
        "dtype": "i2",
        "_FillValue": -1,
    }
    ds["temp"].encoding = {"chunks": (2, 2, 5)}
    return ds


def assert_back(actual: Any) -> None:
    """`actual` holds `dataset()`: packed values within their packing's resolution (0.1)."""
    expected = dataset()
    xr.testing.assert_identical(actual.drop_vars("packed"), expected.drop_vars("packed"))
    xr.testing.assert_allclose(actual["packed"], expected["packed"], atol=0.051, rtol=0)
    assert actual["packed"].attrs == expected["packed"].attrs


def assert_same_encodings(expected: Any, actual: Any) -> None:
    for name in expected.variables:
        for key in ENCODINGS:
            a, b = expected[name].encoding.get(key), actual[name].encoding.get(key)
            if key == "dtype":  # zarr-python's strings (see test_strings_read_as_objects)
                a, b = (np.dtype("O") if d == np.dtypes.StringDType() else d for d in (a, b))
            assert _same(a, b), (name, key, a, b)
        assert _codec_names(expected[name].encoding.get("compressors")) == _codec_names(
            actual[name].encoding.get("compressors")
        ), name


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, dict) or isinstance(b, dict):
        return a == b
    try:
        return bool(np.array_equal(a, b, equal_nan=True))
    except TypeError:  # not numbers
        return bool(np.array_equal(a, b))


def _codec_names(codecs: Any) -> list[str]:
    out = []
    for c in codecs or ():
        item = (
            c if isinstance(c, dict) else (c.to_dict() if hasattr(c, "to_dict") else c.get_config())
        )
        out.append(item.get("name") or item.get("id"))
    return out


def open_both(path: Any, **kwargs: Any) -> tuple[Any, Any]:
    expected = xr.open_dataset(path, engine="zarr", **kwargs).load()
    actual = xr.open_dataset(path, engine="zarrkit", **kwargs).load()
    return expected, actual


# -- the engine and the package ---------------------------------------------------------------
def test_engine_is_an_entry_point_and_import_zarrkit_stays_light() -> None:
    from importlib.metadata import entry_points

    found = [ep for ep in entry_points(group="xarray.backends") if ep.name == "zarrkit"]
    assert [ep.value for ep in found] == ["zarrkit.xarray.backend:ZarrkitBackendEntrypoint"]
    assert isinstance(xr.backends.list_engines()["zarrkit"], ZarrkitBackendEntrypoint)
    code = (
        "import sys, zarrkit; zarrkit.open_group; "
        "print(sorted(m for m in ('xarray', 'dask', 'zarr') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.slow
def test_zarr_python_is_not_imported(tmp_path: Path) -> None:
    """zarrkit does the I/O: writing and reading (with dask) never import zarr-python."""
    code = (
        "import sys, numpy as np, xarray as xr\n"
        "from zarrkit.xarray import to_zarrkit\n"
        "ds = xr.Dataset({'a': ('x', np.arange(4.0))}, attrs={'k': 1})\n"
        f"to_zarrkit(ds, {str(tmp_path / 'd.zarr')!r}, encoding={{'a': {{'chunks': (2,)}}}})\n"
        f"back = xr.open_dataset({str(tmp_path / 'd.zarr')!r}, engine='zarrkit', chunks={{}})\n"
        "xr.testing.assert_identical(back.compute(), ds)\n"
        "print('zarr' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_guess_can_open(tmp_path: Path) -> None:
    engine = ZarrkitBackendEntrypoint()
    folder = tmp_path / "plain"
    zarrkit.create_group(str(folder))
    assert engine.guess_can_open(str(tmp_path / "x.zarr/"))
    assert engine.guess_can_open("s3://bucket/data.zarr")
    assert engine.guess_can_open(f"zip://{tmp_path}/data.zip")
    assert engine.guess_can_open(folder)  # a folder holding zarr.json
    assert engine.guess_can_open(store_opening.open_store(f"memory://{uuid.uuid4().hex}", mode="w"))
    assert not engine.guess_can_open(str(tmp_path / "data.nc"))
    assert not engine.guess_can_open("https://example.org/data.nc")
    # with no engine given, xarray asks the installed engines and opens the folder
    dataset().to_zarr(folder / "d", zarr_format=3, mode="w")
    assert xr.open_dataset(folder / "d", engine=None, consolidated=False)["temp"].shape == (6, 4, 5)


# -- reading what zarr-python wrote -----------------------------------------------------------
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("consolidated", [True, False])
def test_reads_what_zarr_python_wrote(tmp_path: Path, fmt: int, consolidated: bool) -> None:
    path = tmp_path / "d.zarr"
    dataset().to_zarr(path, zarr_format=fmt, consolidated=consolidated, mode="w")
    expected, actual = open_both(path, consolidated=consolidated)
    xr.testing.assert_identical(expected, actual)
    assert_back(actual)  # CF decoding is xarray's: the values written come back
    assert_same_encodings(expected, actual)
    assert actual["time"].encoding["units"].startswith("hours since")


def test_sharded_arrays_zarr_python_wrote(tmp_path: Path) -> None:
    path = tmp_path / "s.zarr"
    encoding = {
        "temp": {"chunks": (1, 2, 5), "shards": (2, 4, 5)},
        "packed": {
            "chunks": (2, 5),
            "shards": (6, 5),
            "compressors": [{"name": "gzip", "configuration": {"level": 1}}],
        },
    }
    dataset().to_zarr(path, zarr_format=3, encoding=encoding)
    expected, actual = open_both(path)
    xr.testing.assert_identical(expected, actual)
    assert_same_encodings(expected, actual)
    assert actual["temp"].encoding["shards"] == (2, 4, 5)
    assert actual["temp"].encoding["chunks"] == (1, 2, 5)
    lazy = xr.open_dataset(path, engine="zarrkit", chunks={})
    assert lazy["temp"].chunks == xr.open_dataset(path, engine="zarr", chunks={})["temp"].chunks
    xr.testing.assert_identical(
        lazy.isel(time=[1, 4], x=slice(1, 4)).compute(), expected.isel(time=[1, 4], x=slice(1, 4))
    )


@pytest.mark.parametrize("fmt", FORMATS)
def test_strings_read_as_string_dtype(tmp_path: Path, fmt: int) -> None:
    """Variable-length strings come back as numpy's StringDType, with it in the encoding, as
    engine="zarr" gives them (lazily, through dask, and one at a time), and write back
    through either writer in either format."""
    path = tmp_path / "d.zarr"
    dataset().to_zarr(path, zarr_format=fmt, mode="w")
    string = np.dtypes.StringDType()
    for engine in ("zarr", "zarrkit"):
        opened = xr.open_dataset(path, engine=engine)
        name = opened["name"]
        assert name.dtype == string and name.encoding["dtype"] == string, engine
        assert name[1].values.dtype == string and name[1].values == "bb"
        assert xr.open_dataset(path, engine=engine, chunks={})["name"].data.dtype == string
        assert name.values.tolist() == ["a", "bb", "ccc", "", "eeeee"]
        assert opened["fixed"].dtype == np.dtype("<U5")
        again = tmp_path / f"{engine}.zarr"
        to_zarrkit(opened, again, zarr_format=fmt)
        for reader in ("zarr", "zarrkit"):
            xr.testing.assert_identical(xr.open_dataset(again, engine=reader), opened)


@pytest.mark.parametrize("fmt", FORMATS)
def test_decoding_switches_are_xarray_s(tmp_path: Path, fmt: int) -> None:
    path = tmp_path / "d.zarr"
    dataset().to_zarr(path, zarr_format=fmt, mode="w")
    for kwargs in (
        {"decode_times": False},
        {"mask_and_scale": False},
        {"decode_timedelta": False},
        {"drop_variables": ["name"]},
    ):
        expected, actual = open_both(path, **kwargs)
        xr.testing.assert_identical(expected, actual)
    packed = xr.open_dataset(path, engine="zarrkit", mask_and_scale=False)["packed"]
    assert packed.dtype == np.int16 and packed.attrs["scale_factor"] == 0.1


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("group", [None, "sub"])
def test_falling_back_to_unconsolidated_metadata_warns_as_engine_zarr(
    tmp_path: Path, fmt: int, group: str | None
) -> None:
    """consolidated=None without consolidated metadata: the same RuntimeWarning as
    engine="zarr", pointing at the caller; none with it, nor with consolidated=False."""
    path = tmp_path / "d.zarr"
    xr.Dataset({"v": ("x", [1, 2])}).to_zarr(path, group=group, zarr_format=fmt, consolidated=False)
    for engine in ("zarr", "zarrkit"):
        with pytest.warns(RuntimeWarning, match="Failed to open Zarr store with consolidated") as w:
            xr.open_dataset(path, engine=engine, group=group)
        assert w[0].filename == __file__
        xr.open_dataset(path, engine=engine, group=group, consolidated=False)  # no warning
    with pytest.warns(RuntimeWarning, match="consolidated"):
        xr.open_datatree(path, engine="zarrkit")
    zarrkit.consolidate_metadata(str(path))
    xr.open_dataset(path, engine="zarrkit", group=group)  # no warning


def test_mode_r_is_accepted_when_opening(tmp_path: Path) -> None:
    path = tmp_path / "d.zarr"
    dataset().to_zarr(path, mode="w")
    xr.testing.assert_identical(
        xr.open_dataset(path, engine="zarrkit", mode="r"), xr.open_dataset(path, engine="zarr")
    )
    xr.open_datatree(path, engine="zarrkit", mode="r")
    with pytest.raises(ValueError, match='mode must be "r"'):
        xr.open_dataset(path, engine="zarrkit", mode="a")


def test_consolidated_true_requires_it(tmp_path: Path) -> None:
    path = tmp_path / "d.zarr"
    dataset().to_zarr(path, zarr_format=3, consolidated=False, mode="w")
    with pytest.raises(MetadataError, match="no consolidated metadata"):
        xr.open_dataset(path, engine="zarrkit", consolidated=True)


@pytest.mark.parametrize("fmt", FORMATS)
def test_consolidated_metadata_is_what_is_read(tmp_path: Path, fmt: int) -> None:
    """Opened through consolidated metadata, no member's own document is read: with them
    all removed, the dataset still opens whole."""
    path = tmp_path / "d.zarr"
    dataset().to_zarr(path, zarr_format=fmt, consolidated=True, mode="w")
    expected = xr.open_dataset(path, engine="zarr").load()
    for doc in [*path.glob("*/zarr.json"), *path.glob("*/.zarray"), *path.glob("*/.zattrs")]:
        doc.unlink()
    xr.testing.assert_identical(xr.open_dataset(path, engine="zarrkit").load(), expected)
    # without it, the store holds no array documents any more
    assert not xr.open_dataset(path, engine="zarrkit", consolidated=False).variables


@pytest.mark.parametrize("fmt", FORMATS)
def test_missing_dimension_names_are_a_zarrkit_error(tmp_path: Path, fmt: int) -> None:
    """A zarrkit error that is also the KeyError engine="zarr" raises for the same array."""
    path = str(tmp_path / "d.zarr")
    zarrkit.create_array(path, path="a", shape=(3,), dtype="i1", zarr_format=fmt)
    match = "dimension" if fmt == 3 else "_ARRAY_DIMENSIONS"
    with pytest.raises(DimensionNamesError, match=match) as info:
        xr.open_dataset(path, engine="zarrkit", consolidated=False)
    assert isinstance(info.value, MetadataError) and isinstance(info.value, KeyError)
    with pytest.raises(KeyError):
        xr.open_dataset(path, engine="zarr", consolidated=False)


@pytest.mark.parametrize("engine", ["zarr", "zarrkit"])
def test_errors_are_the_builtins_engine_zarr_raises(tmp_path: Path, engine: str) -> None:
    """Each condition raises, through either engine, the built-in class xarray users catch
    (through zarrkit, also zarrkit's own class)."""
    path = tmp_path / "d.zarr"
    write = to_zarrkit if engine == "zarrkit" else xr.Dataset.to_zarr
    ds = xr.Dataset({"v": ("x", np.arange(8))})
    write(ds, path)
    with pytest.raises(FileExistsError) as exists:
        write(ds, path, mode="w-")
    with pytest.raises(FileNotFoundError) as missing:
        xr.open_dataset(tmp_path / "nothing.zarr", engine=engine)
    with pytest.raises(TypeError) as not_json:
        write(ds.assign_attrs(a=object()), tmp_path / "attrs.zarr")
    with pytest.raises(ValueError) as shards:
        write(ds, tmp_path / "s.zarr", encoding={"v": {"chunks": (3,), "shards": (4,)}})
    if engine == "zarrkit":
        assert isinstance(exists.value, ContainsNodeError)
        assert isinstance(missing.value, zarrkit.errors.StoreNotFoundError)
        assert isinstance(not_json.value, zarrkit.errors.NotJSONError)
        assert isinstance(shards.value, zarrkit.errors.ShardShapeError)


# -- lazy indexing and dask ---------------------------------------------------------------------
def _written(tmp_path: Path, fmt: int = 3) -> Path:
    path = tmp_path / "lazy.zarr"
    dataset().to_zarr(path, zarr_format=fmt, mode="w")
    return path


@pytest.mark.parametrize("fmt", FORMATS)
def test_basic_orthogonal_and_vectorized_selection(tmp_path: Path, fmt: int) -> None:
    path = _written(tmp_path, fmt)
    lazy = xr.open_dataset(path, engine="zarrkit")["temp"]
    eager = dataset()["temp"]
    picks = [
        {"time": 1, "y": slice(1, 3)},  # basic
        {"time": slice(None, None, 2), "x": slice(4, 0, -2)},  # basic, steps
        {"time": [0, 5, 2], "x": [4, 1]},  # orthogonal
        {"y": np.array([True, False, True, True])},  # orthogonal mask
        {
            "time": xr.DataArray([0, 3, 5], dims="p"),  # vectorized
            "x": xr.DataArray([4, 0, 2], dims="p"),
        },
        {
            "time": xr.DataArray([[0, 1], [2, 3]], dims=("a", "b")),  # vectorized, with a
            "x": xr.DataArray([[4, 3], [2, 1]], dims=("a", "b")),
        },  # sliced dimension
    ]
    for pick in picks:
        xr.testing.assert_identical(lazy.isel(pick).load(), eager.isel(pick))


def test_load_async(tmp_path: Path) -> None:
    import asyncio

    path = _written(tmp_path)
    lazy = xr.open_dataset(path, engine="zarrkit")
    picked = lazy.isel(time=[0, 4], x=slice(1, 3))
    loaded = asyncio.run(picked.load_async())
    xr.testing.assert_identical(
        loaded, xr.open_dataset(path, engine="zarr").isel(time=[0, 4], x=slice(1, 3)).load()
    )


def test_a_selection_reads_only_its_chunks(tmp_path: Path) -> None:
    path = _written(tmp_path)
    store = store_opening.open_store(f"metrics://{path}")
    temp = xr.open_dataset(store, engine="zarrkit", consolidated=False)["temp"]
    store_opening.reset_metrics()
    assert float(temp[1, 2, 3]) == pytest.approx(float(dataset()["temp"][1, 2, 3]))
    keys = sum(
        op["keys"] for ops in store_opening.metrics_summary().values() for op in ops.values()
    )
    assert keys == 1  # one chunk of the 3 x 2 x 1 grid


@pytest.mark.parametrize("fmt", FORMATS)
def test_chunks_give_dask_arrays_along_the_stored_chunks(tmp_path: Path, fmt: int) -> None:
    import dask.array as da

    path = _written(tmp_path, fmt)
    ds = xr.open_dataset(path, engine="zarrkit", chunks={})
    assert isinstance(ds["temp"].data, da.Array)
    assert ds["temp"].chunks == ((2, 2, 2), (2, 2), (5,))
    expected = xr.open_dataset(path, engine="zarr", chunks={})
    assert ds["temp"].chunks == expected["temp"].chunks
    xr.testing.assert_identical(ds.compute(), expected.compute())
    assert float(ds["temp"].mean()) == pytest.approx(float(dataset()["temp"].mean()))


@pytest.mark.parametrize("sharded", [False, True], ids=["chunks", "shards"])
def test_irregular_chunks_give_the_encoding_and_dask_blocks_zarr_python_does(
    tmp_path: Path, sharded: bool
) -> None:
    """A rectilinear grid (irregular chunks, or irregular shards of regular inner chunks):
    each irregular dimension's lengths in `encoding`, as xarray's zarr backend reads them, so
    `chunks={}` makes one dask block per stored chunk rather than blocks cut across them."""
    path = tmp_path / "r.zarr"
    group = zarrkit.open_group(str(path), mode="w")
    grid: dict[str, Any] = (
        {"chunks": (5, 3), "shards": [[10, 20, 5], 9]} if sharded else {"chunks": [[10, 20, 5], 4]}
    )
    values = np.arange(35 * 9, dtype="f4").reshape(35, 9)
    group.create_array("t", shape=(35, 9), dtype="f4", dimension_names=("y", "x"), **grid)[...] = (
        values
    )
    group.create_array("y", shape=(35,), dtype="i8", chunks=(35,), dimension_names=("y",))[...] = (
        np.arange(35)
    )
    with zarr.config.set({"array.rectilinear_chunks": True}):
        expected = xr.open_dataset(path, engine="zarr", chunks={}, consolidated=False)
        actual = xr.open_dataset(path, engine="zarrkit", chunks={}, consolidated=False)
        for key in ("chunks", "preferred_chunks", "shards"):
            assert actual["t"].encoding[key] == expected["t"].encoding[key], key
        assert actual["t"].chunks == expected["t"].chunks
        assert actual["t"].chunks == (
            ((5,) * 7, (3, 3, 3)) if sharded else ((10, 20, 5), (4, 4, 1))
        )
        xr.testing.assert_identical(actual.compute(), expected.compute())
    np.testing.assert_array_equal(actual["t"].values, values)


def test_an_irregular_grid_of_a_million_chunks_is_not_listed(tmp_path: Path) -> None:
    """A rectilinear grid of 2**21 + 1 chunks, said in two runs: the encoding gives the first
    chunk's shape, as a regular grid's, rather than a tuple of two million lengths."""
    path = tmp_path / "h.zarr"
    many = 1 << 21
    group = zarrkit.open_group(str(path), mode="w")
    group.create_array("t", shape=(many + 2, 3), dtype="u1", dimension_names=("y", "x"))
    document = path / "t" / "zarr.json"
    metadata = json.loads(document.read_text())
    metadata["chunk_grid"] = {
        "name": "rectilinear",
        "configuration": {"kind": "inline", "chunk_shapes": [[[1, many], 2], 3]},
    }
    document.write_text(json.dumps(metadata))
    ds = xr.open_dataset(path, engine="zarrkit", consolidated=False)
    assert ds["t"].encoding["chunks"] == (1, 3)
    assert int(ds["t"][many, 0]) == 0


def test_open_mfdataset(tmp_path: Path) -> None:
    ds = dataset()
    paths = [tmp_path / "a.zarr", tmp_path / "b.zarr"]
    ds.isel(time=slice(0, 3)).to_zarr(paths[0], zarr_format=3, mode="w")
    ds.isel(time=slice(3, None)).to_zarr(paths[1], zarr_format=2, mode="w")
    combined = xr.open_mfdataset(
        paths,
        engine="zarrkit",
        combine="by_coords",
        data_vars="minimal",
        coords="minimal",
        compat="override",
    )
    expected = xr.open_mfdataset(
        paths,
        engine="zarr",
        combine="by_coords",
        data_vars="minimal",
        coords="minimal",
        compat="override",
    )
    xr.testing.assert_identical(combined.compute(), expected.compute())
    np.testing.assert_array_equal(combined["temp"].values, ds["temp"].values)


# -- groups -----------------------------------------------------------------------------------
def tree() -> Any:
    ds = dataset()
    return xr.DataTree.from_dict(
        {
            "/": ds[["count"]].assign_attrs(kind="root"),
            "/surface": ds[["temp", "lag"]].assign_attrs(level=0),
            "/surface/detail": ds[["packed", "name"]],
            "/other": xr.Dataset({"v": ("z", np.arange(3.0))}, attrs={"note": "ü"}),
        }
    )


@pytest.mark.parametrize("fmt", FORMATS)
def test_datatree_groups_and_group_argument(tmp_path: Path, fmt: int) -> None:
    path = tmp_path / "t.zarr"
    tree().to_zarr(path, zarr_format=fmt, mode="w")
    xr.testing.assert_identical(
        xr.open_datatree(path, engine="zarrkit").load(),
        xr.open_datatree(path, engine="zarr").load(),
    )
    ours, theirs = (xr.open_groups(path, engine=e) for e in ("zarrkit", "zarr"))
    assert sorted(ours) == sorted(theirs)
    for name in ours:
        xr.testing.assert_identical(ours[name].load(), theirs[name].load())
    for group in ("surface", "/surface/detail"):
        expected, actual = open_both(path, group=group)
        xr.testing.assert_identical(expected, actual)
    sub = xr.open_datatree(path, engine="zarrkit", group="surface")
    assert sorted(sub.children) == ["detail"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_datatree_written_by_zarrkit_opens_with_zarr_python(tmp_path: Path, fmt: int) -> None:
    path, theirs = tmp_path / "t.zarr", tmp_path / "theirs.zarr"
    datatree_to_zarrkit(tree(), str(path), zarr_format=fmt)
    tree().to_zarr(theirs, zarr_format=fmt)
    expected = xr.open_datatree(theirs, engine="zarr").load()
    xr.testing.assert_identical(xr.open_datatree(path, engine="zarr").load(), expected)
    xr.testing.assert_identical(xr.open_datatree(path, engine="zarrkit").load(), expected)
    assert xr.open_datatree(path, engine="zarr")["other"].attrs == {"note": "ü"}


# -- writing ----------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("consolidated", [None, False])
def test_zarr_python_reads_what_zarrkit_wrote(
    tmp_path: Path, fmt: int, consolidated: bool | None
) -> None:
    ours, theirs = tmp_path / "ours.zarr", tmp_path / "theirs.zarr"
    to_zarrkit(dataset(), str(ours), zarr_format=fmt, consolidated=consolidated)
    dataset().to_zarr(theirs, zarr_format=fmt, consolidated=consolidated)
    read_ours = xr.open_dataset(ours, engine="zarr", consolidated=consolidated).load()
    read_theirs = xr.open_dataset(theirs, engine="zarr", consolidated=consolidated).load()
    xr.testing.assert_identical(read_ours, read_theirs)
    assert_same_encodings(read_theirs, read_ours)
    # the stored metadata xarray depends on, as zarr-python sees it
    for name in ("temp", "packed", "name", "time"):
        a = zarr.open_array(ours, path=name, mode="r")
        b = zarr.open_array(theirs, path=name, mode="r")
        assert (a.metadata.zarr_format, a.shape, a.chunks, a.dtype) == (
            b.metadata.zarr_format,
            b.shape,
            b.chunks,
            b.dtype,
        ), name
        assert dict(a.attrs) == dict(b.attrs), name
        assert _same(a.fill_value, b.fill_value), name
    consolidated_root = zarr.open_group(ours, mode="r").metadata.consolidated_metadata
    assert (consolidated_root is not None) == (consolidated is None)


@pytest.mark.parametrize("fmt", FORMATS)
def test_dask_data_is_written_block_by_block(tmp_path: Path, fmt: int) -> None:
    path = tmp_path / "d.zarr"
    source = dataset().chunk({"time": 2})
    to_zarrkit(source, str(path), zarr_format=fmt)
    assert_back(xr.open_dataset(path, engine="zarr").load())
    bad = dataset().chunk({"time": 3})  # blocks of 3 over stored chunks of 2
    with pytest.raises(ValueError, match="chunk"):
        to_zarrkit(
            bad,
            str(tmp_path / "bad.zarr"),
            zarr_format=fmt,
            encoding={"temp": {"chunks": (2, 2, 5)}},
        )
    # align_chunks=True rechunks the blocks onto the stored chunks instead
    to_zarrkit(
        bad,
        str(tmp_path / "aligned.zarr"),
        zarr_format=fmt,
        align_chunks=True,
        encoding={"temp": {"chunks": (2, 2, 5)}},
    )
    assert_back(xr.open_dataset(tmp_path / "aligned.zarr", engine="zarr").load())


def test_append_to_sharded_arrays_through_dask(tmp_path: Path) -> None:
    """Appending grows sharded arrays; dask blocks are checked against the shards."""
    path = str(tmp_path / "s.zarr")
    ds = dataset()
    encoding = {"temp": {"chunks": (1, 2, 5), "shards": (2, 4, 5)}}
    to_zarrkit(ds.isel(time=slice(0, 2)), path, encoding=encoding)
    to_zarrkit(ds.isel(time=slice(2, None)).chunk({"time": 2}), path, append_dim="time")
    assert_back(xr.open_dataset(path, engine="zarr").load())
    assert zarr.open_array(path, path="temp").shards == (2, 4, 5)
    before = xr.open_dataset(path, engine="zarr").load()
    bad = ds.isel(time=slice(0, 2)).chunk({"time": 2})
    bad["lag"] = bad["lag"].chunk({"time": 1})  # blocks of 1 within stored chunks of 2
    with pytest.raises(ValueError, match="chunk"):
        to_zarrkit(bad, path, append_dim="time")
    # refused before anything grew: every array keeps its length
    xr.testing.assert_identical(xr.open_dataset(path, engine="zarr").load(), before)


def test_encoding_chunks_shards_codecs_and_fill_value(tmp_path: Path) -> None:
    path = tmp_path / "e.zarr"
    encoding = {
        "temp": {
            "chunks": (1, 2, 5),
            "shards": (2, 4, 5),
            "compressors": [
                {
                    "name": "blosc",
                    "configuration": {
                        "cname": "zstd",
                        "clevel": 3,
                        "shuffle": "shuffle",
                        "typesize": 4,
                        "blocksize": 0,
                    },
                }
            ],
        },
        "count": {"fill_value": -7, "compressors": None},
        "lag": {"compressors": "auto"},
        "packed": {"compressors": [{"name": "gzip", "configuration": {"level": 2}}]},
    }
    to_zarrkit(dataset(), str(path), zarr_format=3, encoding=encoding)
    temp = zarr.open_array(path, path="temp", mode="r")
    assert (temp.chunks, temp.shards) == ((1, 2, 5), (2, 4, 5))
    assert [c.to_dict()["name"] for c in temp.compressors] == ["blosc"]
    count = zarr.open_array(path, path="count", mode="r")
    assert count.fill_value == -7 and count.compressors == ()
    assert [c.to_dict()["name"] for c in zarr.open_array(path, path="lag").compressors] == ["zstd"]
    packed = zarr.open_array(path, path="packed")
    assert [c.to_dict()["name"] for c in packed.compressors] == ["gzip"]
    back = xr.open_dataset(path, engine="zarrkit")
    assert back["temp"].encoding["shards"] == (2, 4, 5)
    assert back["count"].encoding["fill_value"] == -7
    assert_back(back.load())
    assert_back(xr.open_dataset(path, engine="zarr").load())
    # what engine="zarrkit" reports as encoding is taken back by either writer
    again = xr.open_dataset(path, engine="zarrkit").load()
    to_zarrkit(again, str(tmp_path / "again.zarr"))
    again.to_zarr(tmp_path / "again-zarr.zarr")
    for out in ("again.zarr", "again-zarr.zarr"):
        shards = zarr.open_array(tmp_path / out, path="temp").shards
        assert shards == (2, 4, 5), out


def test_v2_encoding_compressor_and_filters(tmp_path: Path) -> None:
    import numcodecs

    path = tmp_path / "v2.zarr"
    encoding = {
        "temp": {"compressors": [numcodecs.Zlib(level=3)]},
        "count": {"filters": [{"id": "delta", "dtype": "<i2"}], "compressors": None},
    }
    to_zarrkit(dataset(), str(path), zarr_format=2, encoding=encoding)
    assert zarr.open_array(path, path="temp").compressors[0].get_config() == {
        "id": "zlib",
        "level": 3,
    }
    count = zarr.open_array(path, path="count")
    assert count.compressors == () and count.filters[0].get_config()["id"] == "delta"
    assert_back(xr.open_dataset(path, engine="zarr").load())
    with pytest.raises(MetadataError, match="one compressor"):
        to_zarrkit(
            dataset(),
            str(tmp_path / "two.zarr"),
            zarr_format=2,
            encoding={"temp": {"compressors": [numcodecs.Zlib(), numcodecs.Zstd()]}},
        )


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", [None, "temp", "x"])
def test_dataarrays_are_written_as_to_zarr_writes_them(
    tmp_path: Path, fmt: int, name: str | None
) -> None:
    """Unnamed, named, and named as a dimension (stored as `__xarray_dataarray_variable__`):
    the same store as `DataArray.to_zarr`, and `open_dataarray` gives the array back."""
    array = xr.DataArray(
        np.arange(6.0).reshape(2, 3), dims=("y", "x"), coords={"x": [10, 20, 30]}, name=name
    )
    ours, theirs = tmp_path / "ours.zarr", tmp_path / "theirs.zarr"
    to_zarrkit(array, ours, zarr_format=fmt)
    array.to_zarr(theirs, zarr_format=fmt)

    def members(path: Path) -> list[str]:  # zarr-python writes an empty v2 .zattrs, zarrkit not
        return sorted(p.name for p in path.iterdir() if p.is_dir())

    assert members(ours) == members(theirs)
    for engine in ("zarr", "zarrkit"):
        xr.testing.assert_identical(xr.open_dataarray(ours, engine=engine), array)


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_unnamed_variable_is_stored_as_xarray_names_it(tmp_path: Path, fmt: int) -> None:
    ds = xr.Dataset({None: ("x", [1, 2])})
    path = tmp_path / "d.zarr"
    to_zarrkit(ds, path, zarr_format=fmt)
    assert (path / "__values__").is_dir()
    xr.testing.assert_identical(xr.open_dataset(path, engine="zarrkit"), ds)
    xr.testing.assert_identical(xr.open_dataset(path, engine="zarr"), ds)


@pytest.mark.parametrize("fmt", FORMATS)
def test_modes(tmp_path: Path, fmt: int) -> None:
    path = str(tmp_path / "m.zarr")
    ds = dataset()
    to_zarrkit(ds, path, zarr_format=fmt)
    with pytest.raises(ContainsNodeError):
        to_zarrkit(ds, path)  # mode w- (the default) refuses an existing store
    to_zarrkit(ds.assign(temp=ds["temp"] * 2), path, mode="w", zarr_format=fmt)
    np.testing.assert_allclose(xr.open_dataset(path, engine="zarr")["temp"], ds["temp"] * 2)
    extra = xr.Dataset({"more": ("x", np.arange(5.0))}, attrs={"only": "this"})
    with pytest.raises(ValueError, match="non-pre-existing"):
        to_zarrkit(extra, path, mode="r+")
    to_zarrkit(extra, path, mode="a")
    got = xr.open_dataset(path, engine="zarr").load()
    xr.testing.assert_identical(got, xr.open_dataset(path, engine="zarrkit").load())
    assert got.attrs == {"only": "this"}  # mode a replaces the group's attributes, as to_zarr
    xr.testing.assert_identical(got["more"].variable, extra["more"].variable)
    xr.testing.assert_identical(got["temp"], ds["temp"] * 2)


@pytest.mark.parametrize("fmt", FORMATS)
def test_append_dim(tmp_path: Path, fmt: int) -> None:
    path = str(tmp_path / "a.zarr")
    ds = dataset()
    to_zarrkit(ds.isel(time=slice(0, 2)), path, zarr_format=fmt)
    to_zarrkit(ds.isel(time=slice(2, 4)), path, append_dim="time")
    to_zarrkit(ds.isel(time=slice(4, None)).chunk({"time": 2}), path, append_dim="time")
    for engine in ("zarr", "zarrkit"):
        assert_back(xr.open_dataset(path, engine=engine).load())
    # the same appends through zarr-python give the same store contents
    theirs = tmp_path / "theirs.zarr"
    ds.isel(time=slice(0, 2)).to_zarr(theirs, zarr_format=fmt)
    ds.isel(time=slice(2, None)).to_zarr(theirs, append_dim="time")
    assert (
        zarr.open_array(theirs, path="time")[:].tolist()
        == zarr.open_array(path, path="time")[:].tolist()
    )
    with pytest.raises(ValueError, match="append_dim"):
        to_zarrkit(ds, path, append_dim="nope")


@pytest.mark.parametrize("fmt", FORMATS)
def test_region_explicit_and_auto(tmp_path: Path, fmt: int) -> None:
    path = str(tmp_path / "r.zarr")
    ds = dataset()
    template = ds.copy()
    template["temp"] = template["temp"] * 0
    to_zarrkit(template, path, zarr_format=fmt)
    part = ds.isel(time=slice(2, 4))
    to_zarrkit(
        part.drop_vars(["y", "x", "count", "name", "fixed"]), path, region={"time": slice(2, 4)}
    )
    got = xr.open_dataset(path, engine="zarr")["temp"]
    np.testing.assert_array_equal(got.isel(time=slice(2, 4)), part["temp"])
    assert float(abs(got.isel(time=slice(0, 2))).max()) == 0
    # region="auto" finds the slices from the coordinate values
    to_zarrkit(ds.isel(time=slice(4, 6)), path, region="auto", mode="r+")
    got = xr.open_dataset(path, engine="zarrkit")["temp"]
    np.testing.assert_array_equal(got.isel(time=slice(4, 6)), ds["temp"].isel(time=slice(4, 6)))
    moved = ds.isel(time=slice(4, 6)).assign_coords(time=ds["time"][:2] - pd.Timedelta("1D"))
    with pytest.raises(KeyError, match="were found in the original store"):
        to_zarrkit(moved, path, region="auto", mode="r+")


# -- stores -----------------------------------------------------------------------------------
@pytest.mark.network
@pytest.mark.slow
def test_s3_with_storage_options(moto: Moto) -> None:
    url = f"s3://{BUCKET}/{uuid.uuid4().hex}.zarr"
    options = s3_options(moto.endpoint)
    to_zarrkit(dataset(), url, zarr_format=3, storage_options=options)
    ours = xr.open_dataset(url, engine="zarrkit", storage_options=options).load()
    theirs = xr.open_dataset(url, engine="zarr", storage_options=options).load()
    xr.testing.assert_identical(ours, theirs)
    assert_back(ours)


@pytest.mark.network
def test_http_through_consolidated_metadata(tmp_path: Path) -> None:
    dataset().to_zarr(tmp_path / "d.zarr", zarr_format=2, consolidated=True)
    with serving(FileServer(tmp_path)) as server:
        url = f"http://{address(server)}/d.zarr"
        assert_back(xr.open_dataset(url, engine="zarrkit").load())


@pytest.mark.parametrize("scheme", ["zip", "lmdb", "memory", "cache", "metrics"])
def test_container_memory_and_wrapper_urls(tmp_path: Path, scheme: str) -> None:
    if scheme == "lmdb":
        pytest.importorskip("lmdb")
    url = {
        "zip": f"zip://{tmp_path}/d.zip",
        "lmdb": f"lmdb://{tmp_path}/d.lmdb",
        "memory": f"memory://{uuid.uuid4().hex}",
        "cache": f"cache://{tmp_path}/d.zarr",
        "metrics": f"metrics://{tmp_path}/d.zarr",
    }[scheme]
    to_zarrkit(dataset(), url, zarr_format=3)  # (closes the store it opened: the zip is written)
    with xr.open_dataset(url, engine="zarrkit") as opened:
        assert_back(opened.load())
    if scheme == "zip":  # zarr-python reads the archive zarrkit wrote
        from zarr.storage import ZipStore

        with ZipStore(f"{tmp_path}/d.zip", mode="r") as store:
            assert_back(xr.open_dataset(store, engine="zarr").load())


def test_the_guide_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    guide = Path(__file__).resolve().parents[2] / "docs" / "guide" / "xarray.md"
    code = guide.read_text().split("```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "docs/guide/xarray.md", "exec"), {})
    assert xr.open_dataset(tmp_path / "weather.zarr", engine="zarr").sizes["time"] == 8


@pytest.mark.parametrize("compute", [True, False])
def test_write_empty_chunks(tmp_path: Path, compute: bool) -> None:
    """Chunks all equal to the fill value are stored only with write_empty_chunks=True (for the
    dataset, or per variable in its encoding), written at once or later through dask."""
    zeros = xr.Dataset({"a": ("x", np.zeros(8, dtype="i4")), "b": ("x", np.zeros(8, dtype="i4"))})
    stored = {}
    for label, kwargs, encoding in [
        ("none", {}, {}),
        ("all", {"write_empty_chunks": True}, {}),
        ("b only", {}, {"b": {"write_empty_chunks": True}}),
    ]:
        path = tmp_path / f"{label}.zarr"
        result = to_zarrkit(
            zeros.chunk({"x": 2}),
            str(path),
            zarr_format=3,
            compute=compute,
            encoding={v: {"chunks": (2,), **encoding.get(v, {})} for v in "ab"},
            **kwargs,
        )
        if not compute:
            result.compute()
        stored[label] = {
            v: len(list((path / v / "c").glob("*"))) if (path / v / "c").exists() else 0
            for v in "ab"
        }
        xr.testing.assert_identical(xr.open_dataset(path, engine="zarr").load(), zeros)
    assert stored == {"none": {"a": 0, "b": 0}, "all": {"a": 4, "b": 4}, "b only": {"a": 0, "b": 4}}


def test_v2_null_fill_chunks_are_skipped_as_zarr_python_skips_them(tmp_path: Path) -> None:
    """Without a `_FillValue` xarray writes v2 arrays with `fill_value: null`; chunks of the
    type's default are then erased by both writers (stored with write_empty_chunks=True)."""
    ds = xr.Dataset({"a": ("x", np.array([0, 0, 1, 1], dtype="i4"))})
    encoding = {"a": {"chunks": (2,)}}
    for write_empty in (None, True):
        ours, theirs = tmp_path / f"ours{write_empty}.zarr", tmp_path / f"theirs{write_empty}.zarr"
        kwargs = {"zarr_format": 2, "encoding": encoding, "write_empty_chunks": write_empty}
        to_zarrkit(ds, ours, **kwargs)
        ds.to_zarr(theirs, **kwargs)
        assert json.loads((ours / "a" / ".zarray").read_text())["fill_value"] is None
        chunks = sorted(p.name for p in (ours / "a").iterdir() if not p.name.startswith("."))
        assert chunks == sorted(p.name for p in (theirs / "a").iterdir() if p.name[0] != ".")
        assert chunks == (["1"] if write_empty is None else ["0", "1"])
        xr.testing.assert_identical(xr.open_dataset(ours, engine="zarr"), ds)


def test_an_invalid_attribute_is_reported_as_xarray_reports_it(tmp_path: Path) -> None:
    """xarray's words (which its users match on) for an attribute JSON cannot hold, on the
    dataset or on a variable, still a zarrkit NotJSONError (a TypeError)."""
    ds = xr.Dataset({"v": ("x", [1, 2])})
    for bad in (ds.assign_attrs(bad=xr.DataArray()), ds.assign(v=ds["v"].assign_attrs(b={1j}))):
        with pytest.raises(
            zarrkit.errors.NotJSONError, match=r"Invalid attribute in Dataset\.attrs"
        ):
            to_zarrkit(bad, tmp_path / f"{uuid.uuid4()}.zarr")


def test_a_writable_store_reads_what_was_written_through_it(tmp_path: Path) -> None:
    """As xarray's ZarrStore: `dump_to_store` then `decode_cf` on the same store object, and
    its group as `.ds`, whose changes the next read sees."""
    from zarrkit.xarray.write import writable_store

    store = writable_store(
        str(tmp_path / "d.zarr"),
        mode="w",
        consolidated=None,
        region=None,
        safe_chunks=True,
        align_chunks=False,
        storage_options=None,
        zarr_format=2,
        write_empty_chunks=None,
    )
    ds = xr.Dataset({"v": ("x", [1.5, 2.5])}, coords={"x": [10, 20]})
    ds.dump_to_store(store)
    xr.testing.assert_identical(xr.decode_cf(store), ds)
    attrs = dict(store.ds["v"].attrs)
    del attrs["_ARRAY_DIMENSIONS"]
    store.ds["v"].attrs.put(attrs)
    with pytest.raises(KeyError):
        xr.decode_cf(store)


def test_group_argument_when_writing(tmp_path: Path) -> None:
    path = str(tmp_path / "g.zarr")
    to_zarrkit(dataset(), path, group="deep/er", zarr_format=3)
    to_zarrkit(dataset().isel(time=[0]), path, group="other", mode="w")
    expected = xr.open_dataset(path, engine="zarr", group="deep/er").load()
    assert_back(expected)
    xr.testing.assert_identical(
        xr.open_dataset(path, engine="zarrkit", group="deep/er").load(), expected
    )
    assert sorted(zarr.open_group(path, mode="r").group_keys()) == ["deep", "other"]


# -- bad input ----------------------------------------------------------------------------------
def _corrupt(path: Path, case: str) -> None:
    """A store xarray cannot read as a dataset, or zarrkit cannot read at all, one way each."""
    import json

    fmt = 2 if case.startswith("v2") else 3
    dataset()[["temp", "count"]].to_zarr(path, zarr_format=fmt, consolidated=False)
    if case == "v2 dimension attribute not a list":
        attrs = json.loads((path / "temp/.zattrs").read_text())
        attrs["_ARRAY_DIMENSIONS"] = "time"
        (path / "temp/.zattrs").write_text(json.dumps(attrs))
    elif case == "v2 dimension names not strings":
        (path / "count/.zattrs").write_text(json.dumps({"_ARRAY_DIMENSIONS": [1]}))
    elif case in (
        "v3 no dimension names",
        "v3 fill attribute not base64",
        "v3 fill attribute a list",
        "v3 dimension lengths disagree",
        "v3 unknown codec",
    ):
        doc = json.loads((path / "temp/zarr.json").read_text())
        if case == "v3 no dimension names":
            doc["dimension_names"] = None
        elif case == "v3 fill attribute not base64":
            doc["attributes"]["_FillValue"] = "!!"
        elif case == "v3 fill attribute a list":
            doc["attributes"]["_FillValue"] = [1, 2]
        elif case == "v3 dimension lengths disagree":
            doc["dimension_names"] = ["time", "y", "y"]
        else:
            doc["codecs"].append({"name": "no-such-codec", "configuration": {}})
        (path / "temp/zarr.json").write_text(json.dumps(doc))
    elif case == "v3 consolidated metadata garbage":
        doc = json.loads((path / "zarr.json").read_text())
        doc["consolidated_metadata"] = {"kind": "inline", "metadata": {"temp": 7}}
        (path / "zarr.json").write_text(json.dumps(doc))


CORRUPT = [
    "v2 dimension attribute not a list",
    "v2 dimension names not strings",
    "v3 no dimension names",
    "v3 fill attribute not base64",
    "v3 fill attribute a list",
    "v3 dimension lengths disagree",
    "v3 unknown codec",
    "v3 consolidated metadata garbage",
]


@pytest.mark.parametrize("case", CORRUPT)
def test_corrupt_stores_give_zarrkit_errors(tmp_path: Path, case: str) -> None:
    path = tmp_path / "bad.zarr"
    _corrupt(path, case)
    before = sorted((p.relative_to(path), p.read_bytes()) for p in path.rglob("*") if p.is_file())
    with pytest.raises(zarrkit.errors.ZarrkitError):
        xr.open_dataset(path, engine="zarrkit", consolidated=False).load()
    after = sorted((p.relative_to(path), p.read_bytes()) for p in path.rglob("*") if p.is_file())
    assert before == after  # reading wrote nothing


def test_missing_store_group_and_array_as_group(tmp_path: Path) -> None:
    from zarrkit.errors import NodeNotFoundError

    with pytest.raises(NodeNotFoundError):
        xr.open_dataset(tmp_path / "nothing.zarr", engine="zarrkit")
    path = tmp_path / "d.zarr"
    dataset().to_zarr(path, zarr_format=3)
    with pytest.raises(NodeNotFoundError):
        xr.open_dataset(path, engine="zarrkit", group="nope")
    with pytest.raises(NodeNotFoundError, match="found an array"):
        xr.open_dataset(path, engine="zarrkit", group="temp")
    with pytest.raises(MetadataError, match="zarr format 2"):
        xr.open_dataset(path, engine="zarrkit", zarr_format=2)


def test_only_formats_xarray_writes(tmp_path: Path) -> None:
    with pytest.raises(MetadataError, match="zarr format 2 or 3"):
        to_zarrkit(dataset(), str(tmp_path / "d.zarr"), zarr_format="v3-draft-2020")
    assert not (tmp_path / "d.zarr").exists()
    draft = str(tmp_path / "draft.zarr")
    zarrkit.create_group(draft, zarr_format="v3-draft-2020")
    with pytest.raises(MetadataError, match="zarr format 2 or 3"):
        to_zarrkit(dataset(), draft, mode="a")
