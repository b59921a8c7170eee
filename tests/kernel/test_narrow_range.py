"""Issue 47: a narrow data type (24 bits held in int32) behind an array -> array codec whose
results leave its range (a delta codec). The kernel checks the range before the array -> bytes
codec: the write is refused with a ValueCastError naming the chunk and the codecs, and what was
stored stays as it was (it used to be cut to 3 bytes, and read back wrong without an error)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from zarrkit_testing.narrow import HIGH, LOW, Int24

import zarrkit
from zarrkit.abc import V3, ArrayArrayCodec, ChunkSpec, names
from zarrkit.errors import ValueCastError


@dataclass(frozen=True, eq=False)
class Delta(ArrayArrayCodec):
    """Differences along the flattened chunk, in the chunk's numpy type."""

    names = names("test.narrow-delta")

    @classmethod
    def from_json(cls, name: str, configuration: Mapping[str, Any], format: str = V3) -> Any:
        return cls()

    def configuration(self, format: str = V3) -> dict:
        return {}

    def encode(self, data: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        flat = np.ascontiguousarray(data).reshape(-1)
        return np.diff(flat, prepend=flat.dtype.type(0)).reshape(data.shape)

    def decode(self, data: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        return np.cumsum(data.reshape(-1), dtype=data.dtype).reshape(data.shape)


@pytest.fixture(autouse=True)
def registered(zarrkit_register: Any) -> None:
    zarrkit_register("data_type", Int24)
    zarrkit_register("codec", Delta)


@pytest.mark.parametrize("serializer", ["bytes", "packbits"])
def test_a_codec_leaving_a_narrow_range_is_refused(serializer: str) -> None:
    store: dict = {}
    array = zarrkit.create_array(
        store,
        shape=(8,),
        chunks=(4,),
        dtype=Int24(),
        fill_value=0,
        filters=[Delta()],
        serializer={"name": serializer},
        compressors=None,
    )
    first = np.array([1, -2, 3, HIGH, 5, 6, 7, 8], dtype=np.int32)
    array[:] = first  # differences within 24 bits: stored
    np.testing.assert_array_equal(array[:], first)
    before = dict(store)
    with pytest.raises(ValueCastError) as info:
        array[:4] = [LOW, HIGH, LOW, HIGH]  # differences of 2**24 - 1: not 24 bits
    message = str(info.value)
    assert "chunk 'c/0'" in message
    assert "'test.narrow-delta'" in message and "zarrkit_testing.int24" in message
    assert f"{LOW}..{HIGH}" in message
    assert dict(store) == before, "a refused write changed what was stored"
    np.testing.assert_array_equal(array[:], first)


def test_values_in_range_round_trip_through_delta() -> None:
    array = zarrkit.create_array(
        {}, shape=(6,), chunks=(6,), dtype=Int24(), fill_value=0, filters=[Delta()]
    )
    data = np.array([LOW, LOW + 5, -3, 0, HIGH - 7, HIGH], dtype=np.int32)
    array[:4] = data[:4]
    array[4:] = data[4:]
    np.testing.assert_array_equal(array[:], data)
