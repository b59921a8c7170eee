"""Lazy views against tensorstore's: the same chain of selections (numpy's indexing, oindex,
vindex with the points' dimensions first, transpose) on the same stored array gives the same
values through zarrkit's views and tensorstore's index transforms, and a write through a
zarrkit view is what tensorstore reads back."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrkit as zk

ts = pytest.importorskip("tensorstore")
pytestmark = pytest.mark.interop

#: each chain twice: on a zarrkit view and on a tensorstore (whose slices keep their origin,
#: so each of its steps is followed by a move of the origin to 0, as a numpy view has it)
CHAINS: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {
    "slices with steps": (
        lambda v: v[1:7:2, ::-1][:, 3:],
        lambda t: t[1:7:2].translate_to[0][:, ::-1].translate_to[0][:, 3:].translate_to[0],
    ),
    "oindex then transpose": (
        lambda v: v.oindex[[4, 0, 4], :, [1, 3]].T,
        lambda t: t.oindex[[4, 0, 4], :, [1, 3]].translate_to[0].T.translate_to[0],
    ),
    "vindex with a slice": (
        lambda v: v[2:].vindex[[0, 3], :, [4, 1]],
        lambda t: t[2:].translate_to[0].vindex[[0, 3], :, [4, 1]].translate_to[0],
    ),
    "numpy's advanced indexing": (
        lambda v: v[:, [5, 0, 2]][[1, 2], 1],
        lambda t: t[:, [5, 0, 2]].translate_to[0][[1, 2], 1].translate_to[0],
    ),
}


def _tensorstore(path: Path) -> Any:
    return ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)}}).result()


@pytest.fixture
def stored(tmp_path: Path) -> tuple[zk.Array, Path]:
    path = tmp_path / "a.zarr"
    a = zk.create_array(
        str(path), shape=(8, 6, 5), dtype="int32", shards=(4, 6, 5), chunks=(2, 3, 5)
    )
    a[...] = np.arange(a.size, dtype="int32").reshape(a.shape)
    return a, path


@pytest.mark.parametrize("chain", CHAINS)
def test_a_chain_reads_what_tensorstore_reads(stored: tuple[zk.Array, Path], chain: str) -> None:
    a, path = stored
    on_view, on_tensorstore = CHAINS[chain]
    theirs = on_tensorstore(_tensorstore(path)).read().result()
    np.testing.assert_array_equal(on_view(a.lazy).result(), theirs)


# (not "oindex then transpose": it names row 4 twice, and which value stays is each library's)
@pytest.mark.parametrize("chain", [c for c in CHAINS if c != "oindex then transpose"])
def test_a_write_through_a_view_is_what_tensorstore_reads(
    stored: tuple[zk.Array, Path], chain: str
) -> None:
    a, path = stored
    on_view, on_tensorstore = CHAINS[chain]
    view = on_view(a.lazy)
    value = -np.arange(view.size, dtype="int32").reshape(view.shape) - 1
    view[...] = value
    np.testing.assert_array_equal(on_tensorstore(_tensorstore(path)).read().result(), value)
