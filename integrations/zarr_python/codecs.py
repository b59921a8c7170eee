"""zarrkit codecs as zarr-python 3 codecs (`zarr.abc.codec`), so a codec plugin written for
zarrkit works in zarr-python too, with nothing but an entry point in its package:

    [project.entry-points."zarr.codecs"]
    "example.lz4" = "zarrkit.zarr_python.codecs:ZarrkitCodec"

The entry point's name is the codec's v3 name, as in `zarrkit.codecs`. zarr-python then builds
`ZarrkitCodec.from_dict({"name": "example.lz4", "configuration": {...}})`, which finds the
codec through zarrkit's registry as zarrkit reads metadata and returns an instance of the
class of its kind (`ZarrkitArrayArrayCodec`, `ZarrkitArrayBytesCodec`,
`ZarrkitBytesBytesCodec`, each a zarr-python codec base), and writes `to_dict()` as zarrkit
writes the codec. `as_zarr_codec(codec)` gives one for a zarrkit codec in hand.

The zarrkit codec runs synchronously (zarr-python calls `_encode_sync`/`_decode_sync` when every
codec of an array has them, else the coroutines, which run the codec in a worker thread).
What zarr-python does not tell a codec, the adapter cannot: `evolve` gets the array's spec
(zarr-python hands every codec that one), and `validate` is left to encoding, where a codec
that cannot take the data raises its own error.
"""

from __future__ import annotations

import asyncio
import functools
from dataclasses import dataclass, replace
from typing import Any, Self

import numpy as np
from zarr.abc.codec import ArrayArrayCodec as ZarrArrayArrayCodec
from zarr.abc.codec import ArrayBytesCodec as ZarrArrayBytesCodec
from zarr.abc.codec import BytesBytesCodec as ZarrBytesBytesCodec
from zarr.abc.metadata import Metadata
from zarr.core.array_spec import ArraySpec
from zarr.core.buffer import Buffer, NDBuffer
from zarr.core.dtype import get_data_type_from_native_dtype

from zarrkit.abc import (
    V3,
    ArrayArrayCodec,
    ArrayBytesCodec,
    BytesBytesCodec,
    ChunkSpec,
    Codec,
    as_bytes_view,
)
from zarrkit.errors import MetadataError
from zarrkit.helpers import data_type_from_native, extension_from_json

__all__ = [
    "ZarrkitArrayArrayCodec",
    "ZarrkitArrayBytesCodec",
    "ZarrkitBytesBytesCodec",
    "ZarrkitCodec",
    "as_zarr_codec",
]


@dataclass(frozen=True)
class ZarrkitCodec(Metadata):
    """A zarrkit codec as zarr-python's codec: the value of a `zarr.codecs` entry point."""

    codec: Codec

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        name = data.get("name")
        if not isinstance(name, str):
            raise MetadataError(f"expected a codec's {{'name', 'configuration'}}, got {data!r}")
        codec = extension_from_json("codec", dict(data), V3, key="codecs")
        if not isinstance(codec, Codec):
            raise MetadataError(f"zarrkit has no codec {name!r} here")
        adapted = as_zarr_codec(codec)
        if not isinstance(adapted, cls):
            raise MetadataError(
                f"{name!r} is a zarrkit {codec.kind.value} codec, not {cls.__name__}"
            )
        return adapted

    def to_dict(self) -> dict[str, Any]:
        written = self.codec.to_json(V3)
        return {"name": written, "configuration": {}} if isinstance(written, str) else written

    def evolve_from_array_spec(self, array_spec: ArraySpec) -> Self:
        evolved = self.codec.evolve(zarrkit_spec(array_spec))
        return self if evolved is self.codec else replace(self, codec=evolved)

    def compute_encoded_size(self, input_byte_length: int, chunk_spec: ArraySpec) -> int:
        raise NotImplementedError(f"{self.codec.written_name()}: encoded size varies")


class ZarrkitArrayArrayCodec(ZarrkitCodec, ZarrArrayArrayCodec):
    """A zarrkit array -> array codec in zarr-python."""

    @property
    def _aa(self) -> ArrayArrayCodec:
        codec = self.codec
        assert isinstance(codec, ArrayArrayCodec)
        return codec

    def resolve_metadata(self, chunk_spec: ArraySpec) -> ArraySpec:
        encoded = self._aa.encoded_spec(zarrkit_spec(chunk_spec))
        dtype = get_data_type_from_native_dtype(encoded.dtype)
        return ArraySpec(
            encoded.shape,
            dtype,
            dtype.cast_scalar(encoded.fill_value),
            chunk_spec.config,
            chunk_spec.prototype,
        )

    def compute_encoded_size(self, input_byte_length: int, chunk_spec: ArraySpec) -> int:
        encoded = self._aa.encoded_spec(zarrkit_spec(chunk_spec)).nbytes
        if encoded is None:
            raise NotImplementedError(f"{self.codec.written_name()}: encoded size varies")
        return encoded

    def _encode_sync(self, chunk_data: NDBuffer, chunk_spec: ArraySpec) -> NDBuffer:
        spec = zarrkit_spec(chunk_spec)
        out = self._aa.encode(np.ascontiguousarray(chunk_data.as_numpy_array()), spec)
        return chunk_spec.prototype.nd_buffer.from_numpy_array(out)

    def _decode_sync(self, chunk_data: NDBuffer, chunk_spec: ArraySpec) -> NDBuffer:
        spec = zarrkit_spec(chunk_spec)
        encoded = self._aa.encoded_spec(spec)
        data = np.ascontiguousarray(chunk_data.as_numpy_array()).reshape(encoded.shape)
        return chunk_spec.prototype.nd_buffer.from_numpy_array(self._aa.decode(data, spec))

    async def _encode_single(self, chunk_data: NDBuffer, chunk_spec: ArraySpec) -> NDBuffer:
        return await asyncio.to_thread(self._encode_sync, chunk_data, chunk_spec)

    async def _decode_single(self, chunk_data: NDBuffer, chunk_spec: ArraySpec) -> NDBuffer:
        return await asyncio.to_thread(self._decode_sync, chunk_data, chunk_spec)


class ZarrkitArrayBytesCodec(ZarrkitCodec, ZarrArrayBytesCodec):
    """A zarrkit array -> bytes codec in zarr-python."""

    @property
    def _ab(self) -> ArrayBytesCodec:
        codec = self.codec
        assert isinstance(codec, ArrayBytesCodec)
        return codec

    def _encode_sync(self, chunk_data: NDBuffer, chunk_spec: ArraySpec) -> Buffer | None:
        spec = zarrkit_spec(chunk_spec)
        out = self._ab.encode(np.ascontiguousarray(chunk_data.as_numpy_array()), spec)
        return None if out is None else chunk_spec.prototype.buffer.from_bytes(as_bytes_view(out))

    def _decode_sync(self, chunk_data: Buffer, chunk_spec: ArraySpec) -> NDBuffer:
        spec = zarrkit_spec(chunk_spec)
        out = self._ab.decode(as_bytes_view(chunk_data.as_numpy_array()), spec)
        return chunk_spec.prototype.nd_buffer.from_numpy_array(out)

    async def _encode_single(self, chunk_data: NDBuffer, chunk_spec: ArraySpec) -> Buffer | None:
        return await asyncio.to_thread(self._encode_sync, chunk_data, chunk_spec)

    async def _decode_single(self, chunk_data: Buffer, chunk_spec: ArraySpec) -> NDBuffer:
        return await asyncio.to_thread(self._decode_sync, chunk_data, chunk_spec)


class ZarrkitBytesBytesCodec(ZarrkitCodec, ZarrBytesBytesCodec):
    """A zarrkit bytes -> bytes codec in zarr-python."""

    @property
    def _bb(self) -> BytesBytesCodec:
        codec = self.codec
        assert isinstance(codec, BytesBytesCodec)
        return codec

    def compute_encoded_size(self, input_byte_length: int, chunk_spec: ArraySpec) -> int:
        size = self._bb.encoded_size(input_byte_length)
        if size is None:
            raise NotImplementedError(f"{self.codec.written_name()}: encoded size varies")
        return size

    def _encode_sync(self, chunk_data: Buffer, chunk_spec: ArraySpec) -> Buffer:
        spec = zarrkit_spec(chunk_spec)
        out = self._bb.encode(as_bytes_view(chunk_data.as_numpy_array()), spec)
        return chunk_spec.prototype.buffer.from_bytes(as_bytes_view(out))

    def _decode_sync(self, chunk_data: Buffer, chunk_spec: ArraySpec) -> Buffer:
        spec = zarrkit_spec(chunk_spec)
        out = self._bb.decode(as_bytes_view(chunk_data.as_numpy_array()), spec)
        return chunk_spec.prototype.buffer.from_bytes(as_bytes_view(out))

    async def _encode_single(self, chunk_data: Buffer, chunk_spec: ArraySpec) -> Buffer:
        return await asyncio.to_thread(self._encode_sync, chunk_data, chunk_spec)

    async def _decode_single(self, chunk_data: Buffer, chunk_spec: ArraySpec) -> Buffer:
        return await asyncio.to_thread(self._decode_sync, chunk_data, chunk_spec)


def as_zarr_codec(codec: Codec) -> ZarrkitCodec:
    """`codec`, a zarrkit codec, as a zarr-python codec of its kind (for `zarr.create_array`'s
    `filters`, `serializer` or `compressors`)."""
    if isinstance(codec, ArrayArrayCodec):
        return ZarrkitArrayArrayCodec(codec)
    if isinstance(codec, ArrayBytesCodec):
        return ZarrkitArrayBytesCodec(codec)
    if isinstance(codec, BytesBytesCodec):
        return ZarrkitBytesBytesCodec(codec)
    raise TypeError(f"expected a zarrkit codec, got {type(codec).__name__}")


@functools.lru_cache(maxsize=256)
def zarrkit_spec(array_spec: ArraySpec) -> ChunkSpec:
    """zarr-python's chunk spec as zarrkit's (once per spec: zarr-python hands the same one for
    every chunk of a shape)."""
    data_type = data_type_from_native(array_spec.dtype.to_native_dtype())
    fill = np.asarray(array_spec.fill_value, dtype=data_type.native)[()]
    return ChunkSpec(tuple(int(n) for n in array_spec.shape), data_type, fill)
