"""What a new array gets where its creator names nothing, as a hook plugin so the kernel names
no extension. The choices are zarr-python 3's: bytes + zstd (level 0), a regular grid, and the
default chunk key encoding with '/'. A site plugin can answer the same hook first."""

from __future__ import annotations

from typing import Any

from zarrkit.hooks import hookimpl
from zarrkit.names import V3


@hookimpl(trylast=True)
def zarrkit_array_defaults(format: str, data_type: Any, chunk_shape: tuple[int, ...]) -> dict | None:
    if format != V3:
        return None
    return {
        "codecs": [{"name": "bytes"},
                   {"name": "zstd", "configuration": {"level": 0, "checksum": False}}],
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunk_shape)}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
    }
