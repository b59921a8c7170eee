"""`zarrkit convert` / `copy` of xarray data: dimension names move between v2's
`_ARRAY_DIMENSIONS` attribute and v3's `dimension_names`, consolidated metadata is carried
over, and `--verify` passes on a correct copy of a consolidated source."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import zarrkit
from zarrkit import transfer
from zarrkit.cli import main as cli_main

xr = pytest.importorskip("xarray")
zarr = pytest.importorskip("zarr")

pytestmark = [
    pytest.mark.interop,  # every dataset is compared with what xarray's zarr engine makes of it
    pytest.mark.filterwarnings("ignore:Consolidated metadata is currently not part:UserWarning"),
]


def dataset() -> Any:
    temp = np.random.default_rng(1).random((4, 3)).astype("f4")
    temp[0, 0] = np.nan
    return xr.Dataset(
        {
            "temp": (("time", "x"), temp, {"units": "K"}),
            "label": (("x",), np.array(["a", "bb", "ccc"], dtype=object)),
            "lag": (("time",), pd.to_timedelta(np.arange(4), unit="D")),
        },
        coords={"time": pd.date_range("2001-01-01", periods=4), "x": [10, 20, 30]},
        attrs={"title": "convert me"},
    )


def inner() -> Any:
    """Integers packed with a mask (-1), and flags that are mostly 0 (zarr-python's v3 fill
    value for integers, so v3 stores no chunk of them), each one value per chunk."""
    packed = xr.Variable("z", [0.5, np.nan, 0.0, 2.5], {"long_name": "packed"})
    packed.encoding = {"dtype": "i2", "scale_factor": 0.5, "_FillValue": -1, "chunks": (1,)}
    flags = xr.Variable("z", np.array([0, 1, 0, 0], dtype="i1"))
    flags.encoding = {"chunks": (1,)}
    return xr.Dataset({"packed": packed, "flags": flags}, attrs={"depth": 1})


def tree() -> Any:
    return xr.DataTree.from_dict({"/": dataset(), "/inner": inner()})


def _convert(src: Path, dst: Path, to: str, capsys: pytest.CaptureFixture) -> None:
    code = cli_main(["convert", str(src), str(dst), "--to", to, "--verify", "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "verified: all values equal" in out, out


def _open_all(path: Path) -> list[Any]:
    """The tree as zarr-python's engine (through its consolidated metadata) and zarrkit's see it."""
    return [
        xr.open_datatree(path, engine="zarr", consolidated=True).load(),
        xr.open_datatree(path, engine="zarrkit", consolidated=True).load(),
    ]


def test_v2_to_v3_and_back_opens_identically(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    v2, v3, back = tmp_path / "v2.zarr", tmp_path / "v3.zarr", tmp_path / "back.zarr"
    tree().to_zarr(v2, zarr_format=2, consolidated=True)
    expected = xr.open_datatree(v2, engine="zarr").load()
    _convert(v2, v3, "v3", capsys)
    for opened in _open_all(v3):
        xr.testing.assert_identical(opened, expected)
    temp = zarr.open_array(v3, path="temp", mode="r")
    assert temp.metadata.dimension_names == ("time", "x")
    assert "_ARRAY_DIMENSIONS" not in temp.attrs
    _convert(v3, back, "v2", capsys)
    for opened in _open_all(back):
        xr.testing.assert_identical(opened, expected)
    assert zarr.open_array(back, path="inner/packed", mode="r").attrs["_ARRAY_DIMENSIONS"] == ["z"]
    assert zarr.open_array(back, path="inner/packed", mode="r").fill_value == -1
    assert (back / ".zmetadata").is_file()


@pytest.mark.parametrize("node", ["/", "/inner"])
def test_v3_written_by_zarr_python_converts_to_v2(
    tmp_path: Path, node: str, capsys: pytest.CaptureFixture
) -> None:
    """v3 masks through the `_FillValue` attribute and fills missing chunks with its fill
    value (0 here); in v2 the fill value is the mask: chunks v3 left out are written."""
    v3, v2 = tmp_path / "v3.zarr", tmp_path / "v2.zarr"
    tree()[node].to_dataset().to_zarr(v3, zarr_format=3, consolidated=False)
    _convert(v3, v2, "v2", capsys)
    for engine in ("zarr", "zarrkit"):
        xr.testing.assert_identical(
            xr.open_dataset(v2, engine=engine, consolidated=False).load(),
            xr.open_dataset(v3, engine="zarr", consolidated=False).load(),
        )
    assert not (v2 / ".zmetadata").exists()  # the source had none: none is made up


def test_copy_verify_passes_on_a_consolidated_source(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    for fmt in (2, 3):
        src, dst = tmp_path / f"src{fmt}.zarr", tmp_path / f"dst{fmt}.zarr"
        tree().to_zarr(src, zarr_format=fmt, consolidated=True)
        code = cli_main(["copy", str(src), str(dst), "--verify", "--no-progress"])
        out, err = capsys.readouterr()
        assert code == 0 and "verified: all values equal" in out, err
        assert "became" not in err
        for opened in _open_all(dst):
            xr.testing.assert_identical(opened, xr.open_datatree(src, engine="zarr").load())


def test_verify_still_sees_a_changed_dimension_name(tmp_path: Path) -> None:
    src, dst = str(tmp_path / "src.zarr"), str(tmp_path / "dst.zarr")
    dataset().to_zarr(src, zarr_format=2, consolidated=False)
    transfer.convert(src, dst, to="v3")
    zarrkit.open_array(dst, path="temp", mode="r+").attrs["note"] = "changed"
    problems = transfer.compare(
        zarrkit.store_opening.open_store(src), "", zarrkit.store_opening.open_store(dst), ""
    )
    assert problems == ["/temp: attributes differ"]


def test_names_v2_cannot_hold_are_refused(tmp_path: Path) -> None:
    src = str(tmp_path / "src.zarr")
    zarrkit.create_array(src, path="partly", shape=(2, 2), dtype="i1", dimension_names=("x", None))
    with pytest.raises(transfer.TransferError, match="dimension"):
        transfer.convert(src, str(tmp_path / "dst.zarr"), to="v2")
    zarrkit.open_group(src, mode="r+")["partly"]  # (the source is untouched)
    clash = str(tmp_path / "clash.zarr")
    zarrkit.create_array(
        clash,
        path="a",
        shape=(2,),
        dtype="i1",
        dimension_names=("x",),
        attributes={"_ARRAY_DIMENSIONS": ["y"]},
    )
    with pytest.raises(transfer.TransferError, match="disagree"):
        transfer.convert(clash, str(tmp_path / "dst2.zarr"), to="v2")
    assert not (tmp_path / "dst2.zarr").exists()


@pytest.mark.parametrize("fmt", [2, 3])
def test_nodes_written_after_consolidating_are_transferred(
    tmp_path: Path, fmt: int, capsys: pytest.CaptureFixture
) -> None:
    """Consolidated metadata may be older than the store: the transfer walks what the store
    holds, and the target's consolidated metadata names everything."""
    src = tmp_path / "src.zarr"
    dataset().to_zarr(src, zarr_format=fmt, consolidated=True)
    late = zarrkit.open_group(str(src), mode="r+", use_consolidated=False)
    late.create_array(
        "late",
        shape=(3,),
        dtype="i4",
        attributes={"_ARRAY_DIMENSIONS": ["x"]} if fmt == 2 else None,
        dimension_names=("x",) if fmt == 3 else None,
    )[:] = 7
    to = "v3" if fmt == 2 else "v2"
    _convert(src, tmp_path / "converted.zarr", to, capsys)
    code = cli_main(["copy", str(src), str(tmp_path / "copied.zarr"), "--verify", "--no-progress"])
    assert code == 0, capsys.readouterr().err
    converted = xr.open_dataset(tmp_path / "converted.zarr", engine="zarr", consolidated=True)
    assert converted["late"].values.tolist() == [7, 7, 7]
    copied = zarrkit.open_group(str(tmp_path / "copied.zarr"), use_consolidated=False)
    assert "late" in copied  # (the copy keeps the source's documents, consolidated ones too)
