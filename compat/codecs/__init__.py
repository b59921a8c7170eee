"""zarr-python 3's `zarr.codecs` names, so its code names codecs unchanged:

    compressors=zarrkit.codecs.BloscCodec(cname="zstd", clevel=3, shuffle="bitshuffle")
    serializer=zarrkit.codecs.ShardingCodec(chunk_shape=(32, 32), codecs=[...])
    filters=[zarrkit.codecs.numcodecs.Delta(dtype="i4")]

Each name is a face, not a codec: calling it with zarr-python's arguments builds the codec
plugin registered for that name (through the codec registry, from the configuration zarr-python
would write), so what it returns is one of zarrkit's codecs, accepted wherever a codec is.
`isinstance(codec, zarrkit.codecs.GzipCodec)` asks the plugin's class. Options zarr-python leaves
to the data type (blosc's `typesize` and `shuffle` when not given) are left to the plugin's
`evolve`, as zarr-python's `evolve_from_array_spec` does. zarr-python's own codec objects are
accepted as arguments too (its bridge plugin adapts them). Differences: see
docs/zarr-python.md.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from zarrkit.abc import Codec

from . import numcodecs
from .enums import BloscCname, BloscShuffle, Endian, ShardingCodecIndexLocation
from .face import CodecFace, build, codec_of, literal

__all__ = [
    "BloscCname",
    "BloscCodec",
    "BloscShuffle",
    "BytesCodec",
    "CastValue",
    "Crc32cCodec",
    "Endian",
    "GzipCodec",
    "ScaleOffset",
    "ShardingCodec",
    "ShardingCodecIndexLocation",
    "TransposeCodec",
    "VLenBytesCodec",
    "VLenUTF8Codec",
    "ZstdCodec",
    "numcodecs",
]


class BloscCodec(metaclass=CodecFace):
    """zarr-python's `BloscCodec(*, typesize=None, cname="zstd", clevel=5, shuffle=None,
    blocksize=0)`: `typesize` and `shuffle` left out are chosen from the array's data type
    (its element size; "bitshuffle" for one-byte elements, else "shuffle")."""

    codec_name = "blosc"

    def __new__(  # type: ignore[misc]  # (a face returns the plugin's codec)
        cls,
        *,
        typesize: int | None = None,
        cname: str = "zstd",
        clevel: int = 5,
        shuffle: str | None = None,
        blocksize: int = 0,
    ) -> Codec:
        configuration: dict[str, Any] = {
            "cname": literal(cname),
            "clevel": clevel,
            "blocksize": blocksize,
        }
        if shuffle is not None:
            configuration["shuffle"] = literal(shuffle)
        if typesize is not None:
            configuration["typesize"] = typesize
        return build(cls.codec_name, configuration)


class BytesCodec(metaclass=CodecFace):
    """zarr-python's `BytesCodec(*, endian=sys.byteorder)`; `endian=None` for data types of
    one byte."""

    codec_name = "bytes"

    def __new__(cls, *, endian: str | None = sys.byteorder) -> Codec:  # type: ignore[misc]
        return build(cls.codec_name, {} if endian is None else {"endian": literal(endian)})


class GzipCodec(metaclass=CodecFace):
    """zarr-python's `GzipCodec(*, level=5)`."""

    codec_name = "gzip"

    def __new__(cls, *, level: int = 5) -> Codec:  # type: ignore[misc]
        return build(cls.codec_name, {"level": level})


class ZstdCodec(metaclass=CodecFace):
    """zarr-python's `ZstdCodec(*, level=0, checksum=False)`."""

    codec_name = "zstd"

    def __new__(cls, *, level: int = 0, checksum: bool = False) -> Codec:  # type: ignore[misc]
        return build(cls.codec_name, {"level": level, "checksum": checksum})


class TransposeCodec(metaclass=CodecFace):
    """zarr-python's `TransposeCodec(*, order)`."""

    codec_name = "transpose"

    def __new__(cls, *, order: Iterable[int]) -> Codec:  # type: ignore[misc]
        return build(cls.codec_name, {"order": list(order)})


class Crc32cCodec(metaclass=CodecFace):
    """zarr-python's `Crc32cCodec()`."""

    codec_name = "crc32c"

    def __new__(cls) -> Codec:  # type: ignore[misc]
        return build(cls.codec_name, {})


class VLenUTF8Codec(metaclass=CodecFace):
    """zarr-python's `VLenUTF8Codec()`."""

    codec_name = "vlen-utf8"

    def __new__(cls) -> Codec:  # type: ignore[misc]
        return build(cls.codec_name, {})


class VLenBytesCodec(metaclass=CodecFace):
    """zarr-python's `VLenBytesCodec()`."""

    codec_name = "vlen-bytes"

    def __new__(cls) -> Codec:  # type: ignore[misc]
        return build(cls.codec_name, {})


#: zarr-python's orders of inner chunks in a shard it writes (none is stored)
_SUBCHUNK_WRITE_ORDERS = ("morton", "unordered", "lexicographic", "colexicographic")


class ShardingCodec(metaclass=CodecFace):
    """zarr-python's `ShardingCodec(*, chunk_shape, codecs=(BytesCodec(endian="little"),),
    index_codecs=(BytesCodec(endian="little"), Crc32cCodec()), index_location="end",
    subchunk_write_order="morton")`. The inner codecs may be codecs from these faces,
    zarr-python's codec objects or JSON objects; `subchunk_write_order` is taken and has no
    effect (zarrkit writes the inner chunks in its own order; none is stored)."""

    codec_name = "sharding_indexed"

    def __new__(  # type: ignore[misc]
        cls,
        *,
        chunk_shape: int | Iterable[int],
        codecs: Iterable[Any] = ({"name": "bytes", "configuration": {"endian": "little"}},),
        index_codecs: Iterable[Any] = (
            {"name": "bytes", "configuration": {"endian": "little"}},
            {"name": "crc32c"},
        ),
        index_location: str = "end",
        subchunk_write_order: str = "morton",
    ) -> Codec:
        if subchunk_write_order not in _SUBCHUNK_WRITE_ORDERS:
            raise ValueError(
                f"subchunk_write_order must be one of {list(_SUBCHUNK_WRITE_ORDERS)}, "
                f"got {subchunk_write_order!r}"
            )
        shape = [chunk_shape] if isinstance(chunk_shape, int) else list(chunk_shape)
        inner = tuple(codec_of(c, f"codecs[{i}]") for i, c in enumerate(codecs))
        index = tuple(codec_of(c, f"index_codecs[{i}]") for i, c in enumerate(index_codecs))
        codec = build(
            cls.codec_name,
            {
                "chunk_shape": shape,
                "codecs": [c.to_json() for c in inner],
                "index_codecs": [c.to_json() for c in index],
                "index_location": literal(index_location),
            },
        )
        # the codecs themselves, not their JSON: an inner blosc whose typesize and shuffle
        # are still to be chosen from the data type writes placeholders as JSON
        return dataclasses.replace(codec, codecs=inner, index_codecs=index)  # type: ignore[type-var]


class ScaleOffset(metaclass=CodecFace):
    """zarr-python's `ScaleOffset(*, offset=0, scale=1)`."""

    codec_name = "scale_offset"

    def __new__(cls, *, offset: object = 0, scale: object = 1) -> Codec:  # type: ignore[misc]
        return build(cls.codec_name, {"offset": offset, "scale": scale})


class CastValue(metaclass=CodecFace):
    """zarr-python's `CastValue(*, data_type, rounding="nearest-even", out_of_range=None,
    scalar_map=None)`; `data_type` as its v3 name."""

    codec_name = "cast_value"

    def __new__(  # type: ignore[misc]
        cls,
        *,
        data_type: str,
        rounding: str = "nearest-even",
        out_of_range: str | None = None,
        scalar_map: Any = None,
    ) -> Codec:
        configuration: dict[str, Any] = {"data_type": data_type, "rounding": rounding}
        if out_of_range is not None:
            configuration["out_of_range"] = out_of_range
        if scalar_map is not None:
            configuration["scalar_map"] = scalar_map
        return build(cls.codec_name, configuration)
