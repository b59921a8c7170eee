"""The `transpose` codec (array -> array): permutes the chunk's dimensions before encoding."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrkit.abc import (
    V3,
    ArrayArrayCodec,
    ArrayArrayPartialEncode,
    ChunkSpec,
    Region,
    check_known_fields,
    names,
)
from zarrkit.errors import CodecChainError, MetadataError


@dataclass(frozen=True, eq=False)
class TransposeCodec(ArrayArrayCodec, ArrayArrayPartialEncode):
    names = names("transpose")
    reads_input_only = True  # encode is a transposed view
    order: tuple[int, ...]

    @classmethod
    def from_json(
        cls, name: str, configuration: Mapping[str, Any], format: str = V3
    ) -> TransposeCodec:
        check_known_fields(configuration, {"order"}, owner="transpose codec")
        order = configuration.get("order")
        if not isinstance(order, list) or not all(
            isinstance(i, int) and not isinstance(i, bool) for i in order
        ):
            raise MetadataError(
                f"transpose codec: 'order' must be a list of integers, got {order!r}",
                field="configuration.order",
            )
        if sorted(order) != list(range(len(order))):
            raise MetadataError(
                f"transpose codec: 'order' {order} is not a permutation of 0..{len(order) - 1}",
                field="configuration.order",
            )
        return cls(tuple(order))

    def configuration(self, format: str = V3) -> dict:
        return {"order": list(self.order)}

    def validate(self, spec: ChunkSpec) -> None:
        if len(self.order) != len(spec.shape):
            raise CodecChainError(
                f"transpose order {list(self.order)} has {len(self.order)} axes, "
                f"chunks have {len(spec.shape)}",
                field="codecs",
            )

    def encoded_spec(self, spec: ChunkSpec) -> ChunkSpec:
        return spec.with_shape(tuple(spec.shape[i] for i in self.order))

    def encode(self, data: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        return data.transpose(self.order)

    def decode(self, data: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        return data.transpose(np.argsort(self.order))

    def encoded_region(self, region: Region, spec: ChunkSpec) -> Region:
        return region.permuted(self.order)

    def decode_partial(self, data: np.ndarray, region: Region, spec: ChunkSpec) -> np.ndarray:
        return data.transpose(np.argsort(self.order))  # a box decodes as the whole chunk does

    def decoded_view(self, encoded: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        return encoded.transpose(np.argsort(self.order))
