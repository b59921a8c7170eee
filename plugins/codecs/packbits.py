"""`packbits` (zarr-extensions, array -> bytes): only the meaningful bits of each element.

Which bits a type has is the data type's `bit_layout` (bits per component, components,
signed), so int4, float6_e2m3fn or a plugin's own sub-byte type work here without this codec
naming them. Element i occupies bits [i*k, (i+1)*k) of the stream, least significant bit
first; stream bit j is bit j % 8 of byte j // 8. Signed values are sign-extended on decode.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrkit.abc import (
    V3,
    ArrayBytesCodec,
    ChunkSpec,
    DataType,
    as_bytes_view,
    check_known_fields,
    config_value,
    names,
)
from zarrkit.errors import ChunkDecodeError, CodecChainError, MetadataError

_PADDING = ("none", "first_byte", "last_byte")


@dataclass(frozen=True, eq=False)
class PackBitsCodec(ArrayBytesCodec):
    names = names("packbits")
    padding_encoding: str = "none"
    first_bit: int | None = None
    last_bit: int | None = None

    @classmethod
    def from_json(
        cls, name: str, configuration: Mapping[str, Any], format: str = V3
    ) -> PackBitsCodec:
        owner = "packbits codec"
        check_known_fields(
            configuration, {"padding_encoding", "first_bit", "last_bit"}, owner=owner
        )
        padding = config_value(
            configuration, "padding_encoding", str, owner=owner, default="none", choices=_PADDING
        )
        first = config_value(
            configuration, "first_bit", (int, type(None)), owner=owner, default=None
        )
        last = config_value(configuration, "last_bit", (int, type(None)), owner=owner, default=None)
        if (first is not None and first < 0) or (last is not None and last < (first or 0)):
            raise MetadataError(
                f"{owner}: need 0 <= first_bit <= last_bit, got {first}, {last}",
                field="configuration",
            )
        return cls(padding, first, last)

    def configuration(self, format: str = V3) -> dict:
        out: dict[str, Any] = {"padding_encoding": self.padding_encoding}
        if self.first_bit is not None:
            out["first_bit"] = self.first_bit
        if self.last_bit is not None:
            out["last_bit"] = self.last_bit
        return out

    # -- layout ------------------------------------------------------------------------------
    def check_data_type(self, data_type: DataType) -> None:
        self._type_layout(data_type)

    def _type_layout(self, data_type: DataType) -> tuple[int, int, bool, int]:
        """(bits per component, components, signed, stored bytes per component), or the
        refusal of a type whose stored layout this codec cannot pack."""
        layout = data_type.bit_layout
        size = data_type.stored_size
        if layout is None or size is None:
            raise self.refuse(data_type, "the type declares no bit_layout")
        bits, components, signed = layout
        if components < 1 or bits < 1 or size % components:
            raise self.refuse(
                data_type, f"its bit_layout {layout} does not divide its {size} stored bytes"
            )
        comp_bytes = size // components
        if comp_bytes > 8 or bits > 8 * comp_bytes:
            raise self.refuse(
                data_type,
                f"{bits} bits per component do not fit its stored components of "
                f"{comp_bytes} bytes (at most 8)",
            )
        if data_type.encoded_dtype("little").itemsize != size:
            raise self.refuse(data_type, f"its stored layout is not {size} bytes per element")
        return bits, components, signed, comp_bytes

    def _layout(self, spec: ChunkSpec) -> tuple[int, int, int, bool, int]:
        """(first bit, bits kept per component, components, signed, bytes per component)."""
        bits, components, signed, comp_bytes = self._type_layout(spec.data_type)
        first = self.first_bit or 0
        last = bits - 1 if self.last_bit is None else self.last_bit
        if last >= bits:
            raise CodecChainError(
                f"packbits: last_bit {last} is beyond the {bits} bits of "
                f"{spec.data_type.describe()}",
                field="codecs",
            )
        return first, last - first + 1, components, signed, comp_bytes

    def validate(self, spec: ChunkSpec) -> None:
        self._layout(spec)

    def max_encoded_chunk_size(self, spec: ChunkSpec) -> int:
        _first, width, components, _signed, _bytes = self._layout(spec)
        count = math.prod(spec.shape) * components
        return -(-count * width // 8) + (self.padding_encoding != "none")

    def encode(self, data: np.ndarray, spec: ChunkSpec) -> Any:
        first, width, _components, _signed, comp_bytes = self._layout(spec)
        raw = np.ascontiguousarray(spec.data_type.to_encoded(data, "little"))
        values = _read_components(raw, comp_bytes)
        values = (values >> np.uint64(first)) & np.uint64((1 << width) - 1)
        shifts = np.arange(width, dtype=np.uint64)
        bits = ((values[:, None] >> shifts) & np.uint64(1)).astype(np.uint8).reshape(-1)
        packed = np.packbits(bits, bitorder="little")
        padding = (-bits.size) % 8
        if self.padding_encoding == "first_byte":
            return np.concatenate([np.array([padding], np.uint8), packed])
        if self.padding_encoding == "last_byte":
            return np.concatenate([packed, np.array([padding], np.uint8)])
        return packed

    def decode(self, data: Any, spec: ChunkSpec) -> np.ndarray:
        first, width, components, signed, comp_bytes = self._layout(spec)
        count = math.prod(spec.shape) * components
        view = np.frombuffer(as_bytes_view(data), dtype=np.uint8)
        if self.padding_encoding == "first_byte":
            view = view[1:]
        elif self.padding_encoding == "last_byte":
            view = view[:-1]
        expected = -(-count * width // 8)
        if view.size != expected:
            raise ChunkDecodeError(
                f"packbits: expected {expected} bytes for {count} values of "
                f"{width} bits, got {view.size} (truncated or corrupt)"
            )
        bits = np.unpackbits(view, bitorder="little")[: count * width].reshape(count, width)
        values = (bits.astype(np.uint64) << np.arange(width, dtype=np.uint64)).sum(
            axis=1, dtype=np.uint64
        )
        values = values << np.uint64(first)
        top = first + width
        if signed and top < 64:  # sign-extend from the highest kept bit
            sign = (values >> np.uint64(top - 1)) & np.uint64(1)
            fill = np.uint64(((1 << 64) - 1) ^ ((1 << top) - 1))
            values = np.where(sign == 1, values | fill, values)
        stored = _write_components(values, comp_bytes)  # the low bytes (two's complement)
        stored = stored.view(spec.data_type.encoded_dtype("little")).reshape(spec.shape)
        return spec.data_type.from_encoded(stored, "little")


def _read_components(raw: np.ndarray, width: int) -> np.ndarray:
    """The little-endian components (`width` bytes each, 1 to 8) of a stored layout, as
    uint64: numpy has integer dtypes only for widths 1, 2, 4 and 8 (an int24 stores 3)."""
    flat = raw.reshape(-1).view(np.uint8)
    if width in (1, 2, 4, 8):
        return flat.view(f"<u{width}").astype(np.uint64)
    wide = np.zeros((flat.size // width, 8), dtype=np.uint8)
    wide[:, :width] = flat.reshape(-1, width)
    return wide.view("<u8").reshape(-1)


def _write_components(values: np.ndarray, width: int) -> np.ndarray:
    """uint64 values as their low `width` little-endian bytes each, as one flat buffer."""
    if width in (1, 2, 4, 8):
        return values.astype(f"<u{width}").view(np.uint8)
    return np.ascontiguousarray(
        values.astype("<u8").view(np.uint8).reshape(-1, 8)[:, :width]
    ).reshape(-1)
