"""The nodes the command line works on, and what it needs of them beyond the public API.

- the store key of a chunk: `Array._chunk_key` (zarr-python has `metadata.encode_chunk_key`;
  zarrkit has no public name for it yet);
- the codecs by role (filters, serializer, compressors) as JSON in the array's format, for a
  sharded array those of the inner chunks, as zarr-python's `info` shows them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from zarrkit import Array, Group
from zarrkit.api import open, open_group

__all__ = ["Array", "Group", "chunk_key", "codec_roles", "open", "open_group"]


def chunk_key(array: Array, coords: Sequence[int]) -> str:
    key: str = array._chunk_key(coords)
    return key


def codec_roles(array: Array) -> tuple[list[Any], Any, list[Any]]:
    """(filters, serializer, compressors) as JSON in the array's format; for a sharded array
    those of the inner chunks, as zarr-python's `info` shows them."""
    fmt = array.metadata.format
    serializer = array.serializer
    return (
        [_json(c, fmt) for c in array.filters],
        None if serializer is None else _json(serializer, fmt),
        [_json(c, fmt) for c in array.compressors],
    )


def _json(codec: Any, fmt: str) -> Any:
    to_json = getattr(codec, "to_json", None)
    if to_json is None:  # a foreign codec object (zarr-python's, numcodecs')
        return getattr(codec, "get_config", lambda: repr(codec))()
    return to_json(fmt)
