"""zarr-python 3's `zarr.codecs.numcodecs` names: numcodecs' codecs under their v3 names
`numcodecs.<id>`, each built with numcodecs' own keyword arguments (`Zlib(level=1)`,
`Delta(dtype="i4")`). Each is a face over zarrkit's numcodecs bridge plugin (`numcodecs.*`),
which fills options zarr-python fills from the data type (`Shuffle`'s `elementsize`,
`FixedScaleOffset`'s and `Quantize`'s `dtype`, `AsType`'s `decode_dtype`) the same way."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from zarrkit.abc import Codec

from .face import CodecFace, build


class _NumcodecsFace(CodecFace):
    def __call__(cls, **codec_config: Any) -> Codec:
        # (zarr-python takes numcodecs' `id` in the configuration too, and drops it)
        codec_config.pop("id", None)
        return build(cls.codec_name, codec_config)


def _face(class_name: str, codec_id: str) -> type:
    return _NumcodecsFace(
        class_name,
        (),
        {
            "codec_name": f"numcodecs.{codec_id}",
            "__module__": __name__,
            "__qualname__": class_name,
            "__doc__": f"zarr-python's `{class_name}(**codec_config)`: numcodecs' "
            f"{codec_id!r} codec as the v3 codec 'numcodecs.{codec_id}'.",
        },
    )


BZ2 = _face("BZ2", "bz2")
CRC32 = _face("CRC32", "crc32")
CRC32C = _face("CRC32C", "crc32c")
LZ4 = _face("LZ4", "lz4")
LZMA = _face("LZMA", "lzma")
ZFPY = _face("ZFPY", "zfpy")
Adler32 = _face("Adler32", "adler32")
AsType = _face("AsType", "astype")
BitRound = _face("BitRound", "bitround")
Blosc = _face("Blosc", "blosc")
Delta = _face("Delta", "delta")
FixedScaleOffset = _face("FixedScaleOffset", "fixedscaleoffset")
Fletcher32 = _face("Fletcher32", "fletcher32")
GZip = _face("GZip", "gzip")
JenkinsLookup3 = _face("JenkinsLookup3", "jenkins_lookup3")
PackBits = _face("PackBits", "packbits")
PCodec = _face("PCodec", "pcodec")
Quantize = _face("Quantize", "quantize")
Shuffle = _face("Shuffle", "shuffle")
Zlib = _face("Zlib", "zlib")
Zstd = _face("Zstd", "zstd")

__all__ = [
    "BZ2",
    "CRC32",
    "CRC32C",
    "LZ4",
    "LZMA",
    "ZFPY",
    "Adler32",
    "AsType",
    "BitRound",
    "Blosc",
    "Delta",
    "FixedScaleOffset",
    "Fletcher32",
    "GZip",
    "JenkinsLookup3",
    "PCodec",
    "PackBits",
    "Quantize",
    "Shuffle",
    "Zlib",
    "Zstd",
]
