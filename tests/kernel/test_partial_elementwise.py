"""Partial decoding through array -> array codecs: a window of a sharded array whose element-wise
filters (scale_offset, cast_value, bitround, numcodecs' fixedscaleoffset, astype, quantize)
sit before the shard, or inside its inner chain, reads the shard's index and the inner chunks
the window touches, no more (counted by the metrics store wrapper); values are those of a whole
read and of zarr-python 3.4's read. A codec whose decoding depends on where an element sits
takes part too, as the contract tells it the region's place in the chunk."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from zarrkit_testing import CodecTests

import zarrkit as zk
from zarrkit.abc import (
    V3,
    ArrayArrayCodec,
    ArrayArrayElementwise,
    ArrayArrayPartialDecode,
    ChunkSpec,
    Region,
    names,
)
from zarrkit.helpers import data_type_from_native
from zarrkit.plugins.codecs.scale_offset import ScaleOffsetCodec
from zarrkit.plugins.stores.local.local import LocalStore
from zarrkit.plugins.stores.wrappers.metrics import Collector, MetricsStore

BYTES = {"name": "bytes", "configuration": {"endian": "little"}}
INDEX = [BYTES, {"name": "crc32c"}]


def shard(chunk_shape: tuple[int, ...], codecs: list[Any]) -> dict[str, Any]:
    return {
        "name": "sharding_indexed",
        "configuration": {
            "chunk_shape": list(chunk_shape),
            "codecs": codecs,
            "index_codecs": INDEX,
        },
    }


#: element-wise filter stacks on float64 data (values with two decimals in 0..20), and the
#: item size they store
STACKS: dict[str, tuple[list[Any], int]] = {
    "scale_offset+cast_value": (
        [
            {"name": "scale_offset", "configuration": {"offset": 10, "scale": 100}},
            {"name": "cast_value", "configuration": {"data_type": "int16"}},
        ],
        2,
    ),
    "numcodecs.fixedscaleoffset": (
        [
            {
                "name": "numcodecs.fixedscaleoffset",
                "configuration": {"offset": 10, "scale": 100, "dtype": "<f8", "astype": "<i2"},
            }
        ],
        2,
    ),
    "numcodecs.quantize+astype+bitround": (
        [
            {"name": "numcodecs.quantize", "configuration": {"digits": 3, "dtype": "<f8"}},
            {
                "name": "numcodecs.astype",
                "configuration": {"encode_dtype": "<f4", "decode_dtype": "<f8"},
            },
            {"name": "numcodecs.bitround", "configuration": {"keepbits": 12}},
        ],
        4,
    ),
}

SHAPE, SHARDS = (64, 64), (32, 32)
WINDOW = np.s_[10:14, 20:30]  # in shard (0, 0): rows 10-13, columns 20-29
INDEX_4X4 = 16 * 16 + 4  # a shard of 4 x 4 inner chunks: 16 (offset, nbytes) and a crc32c
INDEX_2X2 = 4 * 16 + 4


def placed(stack: list[Any], placement: str) -> tuple[list[Any], int]:
    """The array's codecs with the stack at `placement`, and the inner chunks (8 x 8) plus
    indexes the window needs, as (codecs, index bytes)."""
    if placement == "before the shard":
        return [*stack, shard((8, 8), [BYTES])], INDEX_4X4
    if placement == "inner chain, before bytes":
        return [shard((8, 8), [*stack, BYTES])], INDEX_4X4
    # inner chain, before a nested shard: 16 x 16 inner chunks, each a shard of 8 x 8 ones
    return [shard((16, 16), [*stack, shard((8, 8), [BYTES])])], INDEX_2X2 + INDEX_2X2


PLACEMENTS = ["before the shard", "inner chain, before bytes", "inner chain, before a nested shard"]
CASES = [(name, "before the shard") for name in STACKS] + [
    ("scale_offset+cast_value", p) for p in PLACEMENTS[1:]
]


def data() -> np.ndarray:
    rng = np.random.default_rng(5)
    return np.round(rng.uniform(0, 20, SHAPE), 2)


def written(path: Path, codecs: list[Any]) -> np.ndarray:
    a = zk.create_array(str(path), shape=SHAPE, chunks=SHARDS, dtype="float64", codecs=codecs)
    a[...] = data()
    return np.asarray(zk.open_array(str(path))[...])


def counted(path: Path) -> tuple[Any, Collector]:
    collector = Collector()
    array = zk.open_array(MetricsStore(LocalStore(path, mode="r"), collector=collector))
    collector.reset()  # what opening read (zarr.json) is not the window's
    return array, collector


def bytes_read(collector: Collector) -> int:
    return sum(op["bytes"] for ops in collector.summary().values() for op in ops.values())


@pytest.mark.parametrize(("stack", "placement"), CASES)
def test_a_window_reads_the_index_and_the_inner_chunks_it_touches(
    tmp_path: Path, stack: str, placement: str
) -> None:
    codecs, index_bytes = placed(STACKS[stack][0], placement)
    whole = written(tmp_path, codecs)
    array, collector = counted(tmp_path)
    window = array[WINDOW]
    np.testing.assert_array_equal(window, whole[WINDOW])
    np.testing.assert_allclose(window, data()[WINDOW], atol=0.01)
    inner_chunk = 8 * 8 * STACKS[stack][1]
    assert bytes_read(collector) == index_bytes + 2 * inner_chunk  # 2 of the shard's 16
    # an orthogonal selection whose box spans inner chunks it does not touch
    rows, cols = [1, 9, 30], [3, 4, 5, 6, 7, 8, 9, 25]
    np.testing.assert_array_equal(array.oindex[rows, cols], whole[np.ix_(rows, cols)])
    np.testing.assert_array_equal(array.vindex[rows, cols[:3]], whole[rows, cols[:3]])


@pytest.mark.interop
@pytest.mark.parametrize(("stack", "placement"), CASES)
def test_windows_equal_zarr_python_reads(tmp_path: Path, stack: str, placement: str) -> None:
    zarr = pytest.importorskip("zarr")
    codecs, _ = placed(STACKS[stack][0], placement)
    whole = written(tmp_path, codecs)
    array = zk.open_array(str(tmp_path))
    with warnings.catch_warnings():  # numcodecs.zarr3 warns that its codecs are unstable
        warnings.simplefilter("ignore")
        theirs = zarr.open_array(str(tmp_path), mode="r")
        np.testing.assert_array_equal(theirs[...], whole)
        for window in (WINDOW, np.s_[30:34, 1:40], np.s_[63, :]):
            np.testing.assert_array_equal(array[window], theirs[window])


def test_transpose_and_an_element_wise_codec_before_a_shard(tmp_path: Path) -> None:
    """A permutation and an element-wise codec in one chain: the window is mapped through
    both on the way in and decoded through both on the way out."""
    codecs = [
        {"name": "transpose", "configuration": {"order": [1, 0]}},
        *STACKS["scale_offset+cast_value"][0],
        shard((8, 8), [BYTES]),
    ]
    whole = written(tmp_path, codecs)
    array, collector = counted(tmp_path)
    np.testing.assert_array_equal(array[WINDOW], whole[WINDOW])
    np.testing.assert_allclose(whole, data(), atol=0.01)
    # transposed, the window's 10 columns (20-29) span inner rows 2 and 3, its 4 rows inner
    # column 1: 2 inner chunks of int16
    assert bytes_read(collector) == INDEX_4X4 + 2 * 8 * 8 * 2


# -- the contract, as a plugin author sees it -------------------------------------------------------
@dataclass(frozen=True, eq=False)
class RowRampCodec(ArrayArrayCodec, ArrayArrayPartialDecode):
    """Adds each element's row number: decoding part of a chunk needs to know where it sits."""

    names = names("test.row_ramp")

    @classmethod
    def from_json(
        cls, name: str, configuration: Mapping[str, Any], format: str = V3
    ) -> RowRampCodec:
        return cls()

    def configuration(self, format: str = V3) -> dict[str, Any]:
        return {}

    def encode(self, data: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        return data + _rows(0, data.shape[0], data)

    def decode(self, data: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        return data - _rows(0, data.shape[0], data)

    def encoded_region(self, region: Region, spec: ChunkSpec) -> Region:
        return region

    def decode_partial(self, data: np.ndarray, region: Region, spec: ChunkSpec) -> np.ndarray:
        (top, bottom), *_ = region.bounds()
        return data - _rows(top, bottom, data)


def _rows(top: int, bottom: int, like: np.ndarray) -> np.ndarray:
    return np.arange(top, bottom, dtype=like.dtype).reshape((-1,) + (1,) * (like.ndim - 1))


def test_a_codec_is_told_where_the_region_sits(tmp_path: Path, zarrkit_register: Any) -> None:
    zarrkit_register("codec", RowRampCodec)
    codecs = [{"name": "test.row_ramp"}, shard((8, 8), [BYTES])]
    a = zk.create_array(str(tmp_path), shape=SHAPE, chunks=SHARDS, dtype="int32", codecs=codecs)
    values = np.arange(64 * 64, dtype=np.int32).reshape(SHAPE)
    a[...] = values
    array, collector = counted(tmp_path)
    for window in (WINDOW, np.s_[33:47, 5:9], np.s_[20:40, 20:40]):
        np.testing.assert_array_equal(array[window], values[window])
    collector.reset()
    array[WINDOW]
    assert bytes_read(collector) == INDEX_4X4 + 2 * 8 * 8 * 4


def test_an_element_wise_decode_of_a_region_ignores_what_lies_outside_it() -> None:
    """Outside the region's positions a box may hold any bits (inner chunks a fancy
    selection skips): a checked decode (scale_offset on integers must divide exactly) must
    not look at them."""
    codec = ScaleOffsetCodec(offset=0, scale=3)
    spec = ChunkSpec((8, 8), data_type_from_native(np.dtype("int32")), 0)
    region = Region((np.array([1, 6]), slice(2, 5)))
    box = np.full((6, 3), 7, dtype=np.int32)  # 7 is not a multiple of 3
    box[[0, 5], :] = [[3, 6, 9], [12, 15, 18]]
    out = codec.decode_partial(box, region, spec)
    assert out.shape == (6, 3)
    np.testing.assert_array_equal(out[[0, 5], :], [[1, 2, 3], [4, 5, 6]])


def test_a_filter_that_is_not_element_wise_reads_the_whole_shard(tmp_path: Path) -> None:
    """numcodecs' delta is a running sum: part of a chunk needs all that precedes it, so it
    does not declare partial decoding, and a window decodes the whole shard."""
    codecs = [
        {"name": "numcodecs.delta", "configuration": {"dtype": "<f8"}},
        shard((8, 8), [BYTES]),
    ]
    whole = written(tmp_path, codecs)
    array, collector = counted(tmp_path)
    np.testing.assert_array_equal(array[WINDOW], whole[WINDOW])
    assert bytes_read(collector) == INDEX_4X4 + 16 * 8 * 8 * 8


@dataclass(frozen=True, eq=False)
class RunningSumCodec(ArrayArrayCodec, ArrayArrayElementwise):
    """Declares element-wise decoding it does not have: a running sum needs what precedes."""

    names = names("test.running_sum")

    @classmethod
    def from_json(
        cls, name: str, configuration: Mapping[str, Any], format: str = V3
    ) -> RunningSumCodec:
        return cls()

    def configuration(self, format: str = V3) -> dict[str, Any]:
        return {}

    def encode(self, data: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        flat = data.reshape(-1)
        return np.diff(flat, prepend=flat.dtype.type(0)).astype(data.dtype).reshape(data.shape)

    def decode(self, data: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        return np.cumsum(data.reshape(-1), dtype=data.dtype).reshape(data.shape)


class RunningSumSuite(CodecTests):
    dtypes = ("int16", "int32")  # wrapping integer sums invert exactly


def test_the_codec_suite_catches_a_false_element_wise_declaration() -> None:
    suite = RunningSumSuite()
    suite.test_round_trip(RunningSumCodec())  # whole chunks are fine
    with pytest.raises(AssertionError, match="not equal"):
        suite.test_part_of_a_chunk_decodes_as_the_whole_does(RunningSumCodec())
