"""What a new array gets where its creator names nothing, as a hook plugin so the kernel names
no extension. The choices are zarr-python 3's:

- v3: the data type's own serializer if it needs one (vlen-utf8 for strings) else `bytes`, then
  zstd (level 0); a regular grid, or a rectilinear one where a dimension is given its chunks'
  edge lengths (`chunks=[[10, 20, 5], 4]`); the default chunk key encoding with '/'.
- v2 (`zarr.create_array(..., zarr_format=2)`): no filters but the object codec a variable-length
  type needs, C order, the zstd compressor (level 0, no checksum), and '.' as the
  dimension separator. The codecs are given as a v3-style chain; the v2 format writes the
  `bytes` step as `order` plus the dtype's byte order.

A site plugin can answer the same hook first.
"""

from __future__ import annotations

from typing import Any

from zarrkit.abc import V2, V3, V3_DRAFT_2020, hookimpl
from zarrkit.errors import MetadataError

_ZSTD = {"name": "zstd", "configuration": {"level": 0, "checksum": False}}
_DRAFT_BLOSC = {
    "codec": "https://purl.org/zarr/spec/codec/blosc/1.0",
    "configuration": {"cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0},
}


def _serializer(data_type: Any) -> Any:
    own = getattr(data_type, "default_serializer", lambda: None)()
    return own if own is not None else {"name": "bytes"}


def _grid(chunk_shape: tuple[int | tuple[int, ...], ...]) -> dict:
    if all(isinstance(n, int) for n in chunk_shape):
        return {"name": "regular", "configuration": {"chunk_shape": list(chunk_shape)}}
    shapes = [n if isinstance(n, int) else list(n) for n in chunk_shape]
    return {"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": shapes}}


@hookimpl(trylast=True)
def zarrkit_array_defaults(
    format: str, data_type: Any, chunk_shape: tuple[int | tuple[int, ...], ...]
) -> dict | None:
    grid = _grid(chunk_shape)
    if format != V3 and grid["name"] != "regular":
        raise MetadataError(
            f"zarr format {format} has only regular chunk grids: chunks of varying edge "
            f"lengths need zarr format 3",
            field="chunks",
        )
    if format == V3:
        return {
            "codecs": [_serializer(data_type), _ZSTD],
            "chunk_grid": grid,
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        }
    if format == V2:
        return {
            "codecs": [_serializer(data_type), _ZSTD],
            "chunk_grid": grid,
            "chunk_key_encoding": {"name": "v2", "configuration": {"separator": "."}},
            "order": "C",
        }
    if format == V3_DRAFT_2020:
        # zarr-python 2.18's experimental v3 mode: numcodecs' Blosc() (lz4, level 5, byte
        # shuffle), C order, '/' (the draft format supplies the order and separator itself)
        return {"compressor": _DRAFT_BLOSC, "chunk_grid": grid}
    return None
