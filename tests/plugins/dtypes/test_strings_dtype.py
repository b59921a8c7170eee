"""Variable-length strings read as numpy's StringDType (numpy >= 2), as zarr-python 3 reads
them, or as object arrays of str with the `string_dtype` setting; writes take either."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrkit as zk
from zarrkit import config
from zarrkit.errors import ValueCastError

zarr = pytest.importorskip("zarr")

pytestmark = pytest.mark.interop  # through zarr-python 3

if not hasattr(np.dtypes, "StringDType"):
    pytest.skip("numpy < 2 has no StringDType", allow_module_level=True)

STRING = np.dtypes.StringDType()
VALUES = ["", "a", "héllo wörld", "x" * 300, "\x00nul", "€"]


def _zarr_python_writes(path: Path, zarr_format: int) -> None:
    arr = zarr.create_array(
        zarr.storage.LocalStore(path), shape=(6,), chunks=(4,), dtype=str, zarr_format=zarr_format
    )
    arr[...] = np.array(VALUES, dtype=STRING)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_strings_zarr_python_wrote_read_as_zarr_python_reads_them(
    tmp_path: Path, zarr_format: int
) -> None:
    _zarr_python_writes(tmp_path, zarr_format)
    theirs = zarr.open_array(zarr.storage.LocalStore(tmp_path), mode="r")[...]
    ours = zk.open_array(tmp_path)
    got = ours[...]
    assert got.dtype == theirs.dtype == STRING
    assert not hasattr(got.dtype, "na_object")  # zarr-python's: no missing-value sentinel
    assert ours.dtype == STRING
    assert got.tolist() == VALUES == theirs.tolist()
    assert ours[1:5].dtype == STRING and ours[1:5].tolist() == VALUES[1:5]
    assert ours[2] == "héllo wörld"


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_the_setting_keeps_object_arrays(tmp_path: Path, zarr_format: int) -> None:
    _zarr_python_writes(tmp_path, zarr_format)
    with config.override(string_dtype="object"):
        arr = zk.open_array(tmp_path)
        got = arr[...]
    assert arr.dtype == got.dtype == np.dtype(object)
    assert [type(v) for v in got] == [str] * len(VALUES) and got.tolist() == VALUES
    # the choice is made when the array is opened: a handle keeps it
    assert arr[1:3].dtype == np.dtype(object)
    assert zk.open_array(tmp_path)[...].dtype == STRING


def test_the_setting_from_the_environment(tmp_path: Path) -> None:
    _zarr_python_writes(tmp_path, 3)
    script = (
        "import zarrkit as zk, sys; v = zk.open_array(sys.argv[1])[...]; "
        "print(v.dtype, all(type(x) is str for x in v), len(v))"
    )
    env = {**os.environ, "ZARRKIT_STRING_DTYPE": "object"}
    out = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.stdout.split() == ["object", "True", str(len(VALUES))], out.stderr
    env["ZARRKIT_STRING_DTYPE"] = "bogus"
    out = subprocess.run(
        [sys.executable, "-c", "import zarrkit.config"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode != 0 and "ZARRKIT_STRING_DTYPE" in out.stderr
    with pytest.raises(ValueError, match="string_dtype"), config.override(string_dtype="str"):
        pass


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize(
    "values",
    [
        np.array(VALUES, dtype=STRING),
        np.array(VALUES, dtype=object),
        np.array(VALUES[:3] * 2),  # numpy <U
    ],
    ids=["StringDType", "object", "U"],
)
def test_zarr_python_reads_strings_zarrkit_wrote(
    tmp_path: Path, zarr_format: int, values: Any
) -> None:
    arr = zk.create_array(tmp_path, shape=(6,), chunks=(4,), dtype=STRING, zarr_format=zarr_format)
    arr[...] = values
    theirs = zarr.open_array(zarr.storage.LocalStore(tmp_path), mode="r")
    assert theirs.dtype == STRING
    assert theirs[...].tolist() == values.tolist()
    assert zk.open_array(tmp_path)[...].tolist() == values.tolist()


@pytest.mark.parametrize("string_dtype", ["StringDType", "object"])
def test_writes_take_text_and_refuse_the_rest(tmp_path: Path, string_dtype: str) -> None:
    with config.override(string_dtype=string_dtype):
        arr = zk.create_array(tmp_path, shape=(4,), chunks=(2,), dtype="string", fill_value="-")
    arr[0:2] = np.array(["ab", "c"], dtype=object)
    arr[2:4] = np.array(["d", "é"], dtype=STRING)
    for bad in (
        np.array([1, "x"], dtype=object),  # numpy would store '1'
        np.array([None, "x"], dtype=object),  # numpy would store 'None'
        np.arange(2),
    ):
        with pytest.raises(ValueCastError):
            arr[0:2] = bad
    assert arr[...].tolist() == ["ab", "c", "d", "é"]
    arr[0:2] = "-"  # back to the fill value: the chunk is not kept
    assert not (tmp_path / "c" / "0").exists()
    assert arr[...].tolist() == ["-", "-", "d", "é"]


def test_dask_and_xarray_over_string_arrays(tmp_path: Path) -> None:
    xr = pytest.importorskip("xarray")
    pytest.importorskip("dask")
    from zarrkit.dask import from_zarrkit

    _zarr_python_writes(tmp_path / "s.zarr", 3)
    lazy = from_zarrkit(str(tmp_path / "s.zarr"))
    assert lazy.compute().tolist() == VALUES
    ds = xr.Dataset({"name": (("x",), np.array(VALUES, dtype=object))})
    ds.to_zarr(tmp_path / "d.zarr", mode="w")
    back = xr.open_dataset(tmp_path / "d.zarr", engine="zarrkit")
    assert back["name"].values.tolist() == VALUES
