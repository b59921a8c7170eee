"""Chunk and shard shapes from arguments: zarr-python 3's guesses (`chunks="auto"`,
`shards="auto"`, inner chunks inside a shard), rectilinear edge lists, and the sharding codec
chain the `zarrkit_shard_codecs` hook builds around the user's codecs."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from zarrkit import codec_chain, hooks
from zarrkit.abc.codec import ChunkSpec, Codec
from zarrkit.abc.data_type import DataType
from zarrkit.api.creation.arguments import is_auto
from zarrkit.errors import (
    MetadataError,
    ShardShapeError,
)

#: zarr-python's upper bound for an inner chunk guessed inside a shard
SHARDED_INNER_MAX_BYTES = 1 << 20


def guess_chunks(
    shape: tuple[int, ...], itemsize: int, *, max_bytes: int = 64 * 1024 * 1024
) -> tuple[int, ...]:
    """zarr-python 3.4's `chunks="auto"` (h5py's heuristic: a target size that grows with the
    array's, reached by halving each dimension in turn), so both pick the same chunks."""
    chunks = [max(1, n) for n in shape]
    if itemsize == 0 or not shape:
        return tuple(chunks)
    increment, min_bytes = 256 * 1024, 128 * 1024
    target = increment * (2 ** math.log10(math.prod(chunks) * itemsize / (1024.0 * 1024)))
    target = min(max(target, min_bytes), max_bytes)
    index = 0
    while True:
        nbytes = math.prod(chunks) * itemsize
        near = nbytes < target or abs(nbytes - target) / target < 0.5
        if (near and nbytes < max_bytes) or math.prod(chunks) == 1:
            break
        d = index % len(chunks)
        chunks[d] = math.ceil(chunks[d] / 2.0)
        index += 1
    return tuple(chunks)


def guess_inner_chunks(shard_shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    """Chunks inside a given shard: each step divides the largest dimension by its smallest
    prime factor, so every chunk dimension still divides the shard's."""
    chunk = [max(1, n) for n in shard_shape]
    while math.prod(chunk) * itemsize > SHARDED_INNER_MAX_BYTES and max(chunk) > 1:
        i = chunk.index(max(chunk))
        chunk[i] //= next(p for p in range(2, chunk[i] + 1) if chunk[i] % p == 0)
    return tuple(chunk)


def auto_shards(shape: tuple[int, ...], chunks: tuple[int, ...]) -> tuple[int, ...]:
    """zarr-python 3.4's `shards="auto"`: two chunks per shard along each dimension that holds
    more than eight chunks."""
    return tuple(c * 2 if n // c > 8 else c for n, c in zip(shape, chunks))


def regular_chunks(chunks: Any, shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    if chunks is None or is_auto(chunks):
        return guess_chunks(shape, itemsize)
    if isinstance(chunks, str):
        raise MetadataError(
            f"chunks must be 'auto', an integer or one length per dimension, got {chunks!r}",
            field="chunk_grid",
        )
    if isinstance(chunks, (int, np.integer)) and not isinstance(chunks, bool):
        return tuple(int(chunks) if chunks > 0 else max(1, n) for n in shape)
    if len(tuple(chunks)) != len(shape):
        raise MetadataError(
            f"chunks {tuple(chunks)} must have {len(shape)} dimensions like shape {shape}",
            field="chunk_grid",
        )
    return tuple(int(c) if c not in (None, -1) else max(1, n) for c, n in zip(chunks, shape))


#: a chunk length per dimension, or the list of its chunks' edge lengths (an irregular grid)
GridChunks = tuple[int | tuple[int, ...], ...]


def _is_edge_list(value: Any) -> bool:
    return isinstance(value, (list, tuple)) or (isinstance(value, np.ndarray) and value.ndim == 1)


def _edges(value: Any, length: int, key: str) -> tuple[int, ...]:
    """One dimension's chunk edge lengths as given (zarr-python's rule: positive integers
    that sum to the dimension's length, any sum on a zero-length dimension)."""
    edges = tuple(value)
    if not edges or any(
        isinstance(e, bool) or not isinstance(e, (int, np.integer)) or e < 1 for e in edges
    ):
        raise MetadataError(
            f"chunk edge lengths must be positive integers, got {list(edges)!r}", field=key
        )
    if length > 0 and sum(int(e) for e in edges) != length:
        raise MetadataError(
            f"chunk edge lengths {[int(e) for e in edges]} sum to {sum(int(e) for e in edges)}, "
            f"not to the dimension's length {length}",
            field=key,
        )
    return tuple(int(e) for e in edges)


def grid_chunks(chunks: Any, shape: tuple[int, ...], itemsize: int, key: str) -> GridChunks:
    """`chunks` (or `shards`) as the default grid takes it: a length per dimension, or per
    dimension the list of edge lengths (`[[10, 20, 5], 4]`), for the grid plugin to keep."""
    if isinstance(chunks, (list, tuple)) and any(_is_edge_list(c) for c in chunks):
        if len(chunks) != len(shape):
            raise MetadataError(
                f"{key} {list(chunks)!r} must have {len(shape)} dimensions like shape {shape}",
                field=key,
            )
        return tuple(
            _edges(c, n, key) if _is_edge_list(c) else regular_chunks([c], (n,), itemsize)[0]
            for c, n in zip(chunks, shape)
        )
    return regular_chunks(chunks, shape, itemsize)


def _divides(outer: GridChunks, inner: tuple[int, ...]) -> bool:
    return all(
        all(e % c == 0 for e in (o if isinstance(o, tuple) else (o,))) for o, c in zip(outer, inner)
    )


def shards_from_arg(shards: Any, shape: tuple[int, ...]) -> tuple[GridChunks, dict[str, Any]]:
    """The shard shape and the options of `shards` (a shape, or a dict with "shape" and what
    the sharding plugin takes, e.g. "index_location"), checked against the array's shape."""
    options: dict[str, Any] = {}
    if isinstance(shards, Mapping):
        options = dict(shards)
        if "shape" not in options:
            raise MetadataError(f"shards {shards!r} needs a 'shape'", field="shards")
        shards = options.pop("shape")
    if isinstance(shards, (list, tuple)) and any(_is_edge_list(n) for n in shards):
        return grid_chunks(shards, shape, 1, "shards"), options
    try:
        shard_shape = tuple(int(n) for n in shards)
    except (TypeError, ValueError):
        raise MetadataError(
            f"shards must be a shape (a sequence of positive integers), 'auto' or a "
            f"dict with a shape, got {shards!r}",
            field="shards",
        ) from None
    if len(shard_shape) != len(shape) or any(n <= 0 for n in shard_shape):
        raise MetadataError(
            f"shards {shard_shape} must be {len(shape)} positive lengths, one "
            f"per dimension of shape {shape}",
            field="shards",
        )
    return shard_shape, options


def sharded_codecs(
    fmt: str,
    codecs: list[Codec],
    data_type: DataType,
    fill: Any,
    shard_shape: GridChunks,
    chunk_shape: tuple[int, ...],
    options: dict[str, Any],
) -> Any:
    """The codec chain storing chunks of `chunk_shape` (encoded with `codecs`) in shards of
    `shard_shape` (per dimension a length or edge lengths), as the installed plugin that shards
    for this format writes it."""
    inner = codec_chain.evolve(codecs, ChunkSpec(chunk_shape, data_type, fill))
    if not _divides(shard_shape, chunk_shape):
        raise ShardShapeError(
            f"shards {shard_shape} must be a multiple of the chunks "
            f"{chunk_shape} in every dimension",
            field="shards",
        )
    answer = hooks.manager().hook.zarrkit_shard_codecs(
        format=fmt,
        shard_shape=tuple(shard_shape),
        chunk_shape=tuple(chunk_shape),
        codecs=list(inner),
        options=options,
    )
    if answer is None:
        raise MetadataError(
            f"zarr format {fmt} arrays cannot have shards here: no installed "
            f"plugin stores chunks in shards for it (hook "
            f"zarrkit_shard_codecs)",
            field="shards",
        )
    return answer
