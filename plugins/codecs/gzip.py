"""The `gzip` codec (bytes -> bytes): deflate with a gzip wrapper, through Intel ISA-L (the
`isal` package, a dependency on the machines it has wheels for) or else the standard
library's zlib; both release the GIL.

ISA-L writes the same gzip format, readable by every peer, and decodes it in half zlib's CPU
time; it encodes levels 1-3 (its own levels 1-3, close to zlib's in ratio) several times
faster. Other levels stay with zlib so a user asking for a high level still gets zlib's
ratio. zlib-ng and libdeflate (the `zlib-ng` and `deflate` packages) were measured beside it
on the same chunks (bench/README.md): neither decodes faster, and neither encodes level 1 as
fast at a ratio as good.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from zarrkit.abc import (
    V3,
    BytesBytesCodec,
    ChunkSpec,
    check_known_fields,
    config_value,
    decoded_too_large,
    names,
)
from zarrkit.plugins.codecs.codec_ids import draft_uri

_GZIP_WBITS = 31  # 16 + 15: gzip header and trailer

_fast: Any
try:  # the fast path is optional
    from isal import isal_zlib as _fast
except ImportError:  # pragma: no cover - a machine isal has no wheel for
    _fast = None

#: levels that ISA-L encodes (its levels 1-3)
_FAST_LEVELS = (1, 2, 3)


@dataclass(frozen=True, eq=False)
class GzipCodec(BytesBytesCodec):
    names = names("gzip", v2="gzip", draft=draft_uri("gzip"))
    releases_gil = True
    level: int = 5

    @classmethod
    def from_json(cls, name: str, configuration: Mapping[str, Any], format: str = V3) -> GzipCodec:
        check_known_fields(configuration, {"level"}, owner="gzip codec")
        # v3 requires the level; numcodecs (v2, the draft) defaults it to 1
        default = ... if format == V3 else 1
        return cls(
            config_value(
                configuration,
                "level",
                int,
                owner="gzip codec",
                choices=tuple(range(10)),
                default=default,
            )
        )

    def configuration(self, format: str = V3) -> dict:
        return {"level": self.level}

    def encode(self, data: Any, spec: ChunkSpec) -> bytes:
        lib = _fast if _fast is not None and self.level in _FAST_LEVELS else zlib
        compressor = lib.compressobj(self.level, lib.DEFLATED, _GZIP_WBITS)
        out: bytes = compressor.compress(data) + compressor.flush()
        return out

    def decode(self, data: Any, spec: ChunkSpec) -> bytes:
        return self.decode_bounded(data, spec, None)

    def decode_bounded(self, data: Any, spec: ChunkSpec, max_size: int | None) -> bytes:
        # deflate declares no size up front (the trailer's is modulo 2**32), so the stream is
        # inflated with a limit: one byte past `max_size` shows it holds more
        limit = 0 if max_size is None else max_size + 1  # (0: no limit)
        decompressor = (_fast or zlib).decompressobj(_GZIP_WBITS)
        out: bytes = decompressor.decompress(data, limit)
        if max_size is not None and len(out) > max_size:
            raise decoded_too_large(self, max_size)
        if not decompressor.eof:
            raise zlib.error("gzip stream is truncated")
        return out

    def max_encoded_size(self, nbytes: int) -> int:
        # deflate's stored blocks cost 5 bytes per 16 KiB at worst; a margin of 1/64 and
        # 64 KiB leaves room for the gzip header's optional fields and flushes other writers make
        return nbytes + nbytes // 64 + (64 << 10)
