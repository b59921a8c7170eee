"""The `crc32c` codec (bytes -> bytes): appends a CRC32C checksum (4 bytes, little endian)
and verifies it on decode, so corruption is reported instead of decoded."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from crc32c import crc32c

from zarrkit.abc import V3, BytesBytesCodec, ChunkSpec, as_bytes_view, names
from zarrkit.errors import ChunkDecodeError, MetadataError
from zarrkit.plugins.codecs.codec_ids import draft_uri


@dataclass(frozen=True, eq=False)
class Crc32cCodec(BytesBytesCodec):
    names = names("crc32c", v2="crc32c", draft=draft_uri("crc32c"))
    releases_gil = True

    @classmethod
    def from_json(
        cls, name: str, configuration: Mapping[str, Any], format: str = V3
    ) -> Crc32cCodec:
        # numcodecs' CRC32C (v2) may say where its checksum goes; only "end" is this format
        config = dict(configuration)
        if format != V3 and config.get("location", "end") == "end":
            config.pop("location", None)
        if config:
            raise MetadataError(
                f"crc32c codec: unsupported configuration {config!r} (only a "
                f"checksum at the end is this codec)",
                field="configuration",
            )
        return cls()

    def encode(self, data: Any, spec: ChunkSpec) -> bytes:
        view = as_bytes_view(data)
        return b"".join((view, crc32c(view).to_bytes(4, "little")))

    def decode(self, data: Any, spec: ChunkSpec) -> memoryview:
        view = as_bytes_view(data)
        if len(view) < 4:
            raise ChunkDecodeError(f"crc32c: {len(view)} bytes is too short to hold a checksum")
        body, stored = view[:-4], int.from_bytes(view[-4:], "little")
        actual = crc32c(body)
        if actual != stored:
            raise ChunkDecodeError(
                f"crc32c checksum mismatch: stored {stored:#010x}, computed {actual:#010x}"
            )
        return body

    def encoded_size(self, nbytes: int) -> int:
        return nbytes + 4
