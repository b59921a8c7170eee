"""The `blosc` codec (bytes -> bytes), through numcodecs' blosc, which releases the GIL.

Blosc's shuffle works on elements of `typesize` bytes. Stored metadata must name it; when a
user leaves it (or the shuffle) out, `evolve` fills it in from the data type.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from numcodecs import blosc

from zarrkit.codec import ChunkSpec, Codec, CodecKind, as_bytes_view
from zarrkit.errors import ChunkDecodeError, CodecChainError, MetadataError
from zarrkit.extension import check_known_fields, config_value
from zarrkit.names import V3, names

_SHUFFLES = {"noshuffle": 0, "shuffle": 1, "bitshuffle": 2}
_CNAMES = ("lz4", "lz4hc", "blosclz", "zstd", "snappy", "zlib")
_HEADER_SIZE = 16  # version, versionlz, flags, typesize, then nbytes, blocksize, cbytes (u32 LE)


@dataclass(frozen=True, eq=False)
class BloscCodec(Codec):
    names = names("blosc")
    kind = CodecKind.BYTES_BYTES
    releases_gil = True
    cname: str = "zstd"
    clevel: int = 5
    shuffle: str | None = None
    typesize: int | None = None
    blocksize: int = 0

    @classmethod
    def from_json(cls, name: str, configuration: Mapping[str, Any], format: str = V3):
        owner = "blosc codec"
        check_known_fields(configuration, {"cname", "clevel", "shuffle", "typesize", "blocksize"},
                           owner=owner)
        codec = cls(
            cname=config_value(configuration, "cname", str, owner=owner, choices=_CNAMES,
                               default="zstd"),
            clevel=config_value(configuration, "clevel", int, owner=owner, choices=tuple(range(10)),
                                default=5),
            shuffle=config_value(configuration, "shuffle", str, owner=owner,
                                 choices=tuple(_SHUFFLES), default=None),
            typesize=config_value(configuration, "typesize", int, owner=owner, default=None),
            blocksize=config_value(configuration, "blocksize", int, owner=owner, default=0),
        )
        if codec.typesize is not None and codec.typesize < 1:
            raise MetadataError(f"blosc codec: 'typesize' must be a positive integer, got "
                                f"{codec.typesize}", key="configuration.typesize")
        return codec

    def validate(self, spec: ChunkSpec) -> None:
        # a stored chain must say how it shuffles, and how wide the elements are; a new one
        # gets both from evolve()
        if self.shuffle is None:
            raise CodecChainError("blosc codec: 'shuffle' is required", key="codecs")
        if self.shuffle != "noshuffle" and not self.typesize:
            raise CodecChainError("blosc codec: 'typesize' is required unless shuffle is "
                                  "'noshuffle'", key="codecs")

    def configuration(self, format: str = V3) -> dict:
        out = {"cname": self.cname, "clevel": self.clevel, "shuffle": self.shuffle or "noshuffle"}
        if self.typesize is not None:
            out["typesize"] = self.typesize
        out["blocksize"] = self.blocksize
        return out

    def evolve(self, spec: ChunkSpec) -> "BloscCodec":
        item = spec.data_type.item_size or 1
        typesize = self.typesize or item
        shuffle = self.shuffle or ("bitshuffle" if item == 1 else "shuffle")
        return BloscCodec(self.cname, self.clevel, shuffle, typesize, self.blocksize)

    def encode(self, data: Any, spec: ChunkSpec) -> bytes:
        return blosc.compress(data, self.cname.encode(), self.clevel,
                              _SHUFFLES[self.shuffle or "noshuffle"], self.blocksize,
                              typesize=self.typesize or 1)

    def decode(self, data: Any, spec: ChunkSpec) -> bytes:
        # blosc trusts the sizes in its 16-byte header and would read past a truncated buffer
        view = as_bytes_view(data)
        if len(view) < _HEADER_SIZE:
            raise ChunkDecodeError(f"blosc: {len(view)} bytes is too short for a blosc header")
        cbytes = int.from_bytes(view[12:16], "little")
        if cbytes != len(view):
            raise ChunkDecodeError(f"blosc: the header gives {cbytes} compressed bytes, the chunk "
                                   f"has {len(view)} (truncated or corrupt)")
        return blosc.decompress(view)
