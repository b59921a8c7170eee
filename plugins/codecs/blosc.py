"""The `blosc` codec (bytes -> bytes), through numcodecs' blosc, which releases the GIL.

Blosc's shuffle works on elements of `typesize` bytes; the v3 configuration names it, and
`evolve` fills it in from the data type when a user leaves it out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from numcodecs import blosc

from zarrkit.codec import ChunkSpec, Codec, CodecKind
from zarrkit.errors import MetadataError
from zarrkit.extension import check_known_fields, config_value
from zarrkit.names import V3, names

_SHUFFLES = {"noshuffle": 0, "shuffle": 1, "bitshuffle": 2}
_CNAMES = ("lz4", "lz4hc", "blosclz", "zstd", "snappy", "zlib")


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
            cname=config_value(configuration, "cname", str, owner=owner, choices=_CNAMES),
            clevel=config_value(configuration, "clevel", int, owner=owner, choices=tuple(range(10))),
            shuffle=config_value(configuration, "shuffle", str, owner=owner, choices=tuple(_SHUFFLES)),
            typesize=config_value(configuration, "typesize", int, owner=owner, default=None),
            blocksize=config_value(configuration, "blocksize", int, owner=owner, default=0),
        )
        if codec.shuffle != "noshuffle" and not codec.typesize:
            raise MetadataError("blosc codec: 'typesize' (a positive integer) is required "
                                "unless shuffle is 'noshuffle'", key="configuration.typesize")
        return codec

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
        return blosc.decompress(data)
