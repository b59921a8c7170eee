"""zarrkit as the command line uses it, in one place.

`Array`, `Group` and `open` are zarrkit's public `zarrkit.Array`, `zarrkit.Group` and
`zarrkit.open`, imported from their modules: `zarrkit/__init__.py` builds `__all__` at run time,
which a strict type checker cannot read, so `zarrkit.Array` is an error under mypy --strict.

Two things the command line needs are not public yet, and are used only here:

- the store key of a chunk: `Array._chunk_key` (zarr-python: `metadata.encode_chunk_key`);
- the kind of each codec (array -> array, array -> bytes, bytes -> bytes), read from the codec's
  `kind` until `Array.filters` / `serializer` / `compressors` exist, which are used when they do.
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
    filters = getattr(array, "filters", None)
    serializer = getattr(array, "serializer", None)
    compressors = getattr(array, "compressors", None)
    if filters is not None and compressors is not None:
        return (
            [_json(c, fmt) for c in filters],
            None if serializer is None else _json(serializer, fmt),
            [_json(c, fmt) for c in compressors],
        )
    return _split(array.codecs, fmt)


def _split(codecs: Sequence[Any], fmt: str) -> tuple[list[Any], Any, list[Any]]:
    before: list[Any] = []
    after: list[Any] = []
    serializer = None
    for codec in codecs:
        kind = str(getattr(getattr(codec, "kind", None), "value", ""))
        if kind == "array -> bytes":
            inner = getattr(codec, "codecs", None)  # sharding: the inner chunks' chain
            if isinstance(inner, tuple) and inner:
                return _split(inner, fmt)
            serializer = codec.to_json(fmt)
        elif kind == "array -> array":
            before.append(codec.to_json(fmt))
        else:
            after.append(codec.to_json(fmt))
    return before, serializer, after


def _json(codec: Any, fmt: str) -> Any:
    to_json = getattr(codec, "to_json", None)
    if to_json is None:
        return getattr(codec, "get_config", lambda: repr(codec))()
    return to_json(fmt)
