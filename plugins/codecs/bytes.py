"""The `bytes` codec (array -> bytes): elements in C order, little or big endian.

Which types need an endian, and how a type is laid out in one, is the data type's business
(`DataType.has_endianness` / `encoded_dtype`), so a new data type works here untouched.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrkit.abc import (
    V3,
    ArrayBytesCodec,
    ChunkSpec,
    DataType,
    check_known_fields,
    config_value,
    names,
)
from zarrkit.errors import ChunkDecodeError, CodecChainError


@dataclass(frozen=True, eq=False)
class BytesCodec(ArrayBytesCodec):
    names = names("bytes", aliases=("endian",))
    reads_input_only = True
    endian: str | None = None

    @classmethod
    def from_json(cls, name: str, configuration: Mapping[str, Any], format: str = V3) -> BytesCodec:
        check_known_fields(configuration, {"endian"}, owner="bytes codec")
        return cls(
            config_value(
                configuration,
                "endian",
                str,
                owner="bytes codec",
                default=None,
                choices=("little", "big"),
            )
        )

    def configuration(self, format: str = V3) -> dict:
        return {} if self.endian is None else {"endian": self.endian}

    def evolve(self, spec: ChunkSpec) -> BytesCodec:
        if self.endian is None and spec.data_type.has_endianness:
            return BytesCodec("little")
        if self.endian is not None and not spec.data_type.has_endianness:
            # an endian means nothing for one-byte elements: zarr-python's
            # `evolve_from_array_spec` drops it, so the stored chain is the same in both
            return BytesCodec(None)
        return self

    def check_data_type(self, data_type: DataType) -> None:
        size = data_type.stored_size
        if size is None:
            raise self.refuse(data_type, "it is variable-length (use a vlen codec)")
        for endian in ("little", "big") if data_type.has_endianness else (None,):
            stored = data_type.encoded_dtype(endian).itemsize
            if stored != size:
                raise self.refuse(
                    data_type,
                    f"its stored layout in {endian or 'any'} byte order has {stored} bytes "
                    f"per element, its stored_size says {size}",
                )

    def validate(self, spec: ChunkSpec) -> None:
        if self.endian is None and spec.data_type.has_endianness:
            raise CodecChainError(
                f"the bytes codec needs an 'endian' for {spec.data_type.describe()}", field="codecs"
            )

    def encode(self, data: np.ndarray, spec: ChunkSpec) -> Any:
        data = spec.data_type.to_encoded(data, self.endian)
        return np.ascontiguousarray(data).reshape(-1).view(np.uint8)

    def max_encoded_chunk_size(self, spec: ChunkSpec) -> int | None:
        return spec.nbytes

    def raw_dtype(self, spec: ChunkSpec) -> np.dtype | None:
        stored = spec.data_type.encoded_dtype(self.endian)
        return stored if stored == spec.dtype and spec.data_type.stored_size else None

    def decode(self, data: Any, spec: ChunkSpec) -> np.ndarray:
        stored = spec.data_type.encoded_dtype(self.endian)
        expected = spec.nbytes
        size = memoryview(data).nbytes
        if size != expected:
            raise ChunkDecodeError(
                f"expected {expected} bytes for a chunk of shape {spec.shape} "
                f"{spec.dtype}, got {size} (truncated or corrupt)"
            )
        out = np.frombuffer(data, dtype=stored).reshape(spec.shape)
        return spec.data_type.from_encoded(out, self.endian)
