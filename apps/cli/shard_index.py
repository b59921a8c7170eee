"""Reading a shard's index as the sharding spec lays it out, to judge it entry by entry.

The kernel's sharding codec refuses a bad index with the first bad entry; a check wants every
bad entry, and which inner chunks an intact index says are there. The index is the spec's table
of (offset, nbytes) uint64 pairs in C order over the inner chunks, at the shard's start or end,
encoded by `index_codecs`: `bytes` (either endian) and optionally `crc32c`, the encoding every
implementation writes. Other index codecs are not read here; the shard is then judged by
decoding alone.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from crc32c import crc32c

#: offset and nbytes of an absent inner chunk
EMPTY = 2**64 - 1


@dataclass(frozen=True)
class Layout:
    """Where a shard's index is and how it is encoded."""

    per_shard: tuple[int, ...]
    inner_shape: tuple[int, ...]
    at_end: bool
    big_endian: bool
    checksummed: bool
    inner_checksummed: bool

    @property
    def index_size(self) -> int:
        return 16 * math.prod(self.per_shard) + (4 if self.checksummed else 0)


@dataclass(frozen=True)
class Entry:
    coords: tuple[int, ...]
    offset: int
    nbytes: int


@dataclass(frozen=True)
class Problem:
    coords: tuple[int, ...] | None  # None: the shard as a whole
    kind: str  # "index", "checksum" or "missing"
    message: str


def layout(sharding: Mapping[str, Any], shard_shape: Sequence[int]) -> Layout | None:
    """The layout from the codec's v3 JSON; None for index codecs not read here."""
    config = sharding.get("configuration") or {}
    inner = tuple(int(n) for n in config["chunk_shape"])
    per_shard = tuple(-(-int(s) // i) for s, i in zip(shard_shape, inner))
    index_codecs = config.get(
        "index_codecs", [{"name": "bytes", "configuration": {"endian": "little"}}, "crc32c"]
    )
    names = [_name(c) for c in index_codecs]
    if names not in (["bytes"], ["bytes", "crc32c"]):
        return None
    endian = (_config(index_codecs[0]) or {}).get("endian", "little")
    inner_names = [_name(c) for c in config.get("codecs", [])]
    return Layout(
        per_shard,
        inner,
        config.get("index_location", "end") == "end",
        endian == "big",
        names[-1] == "crc32c",
        bool(inner_names) and inner_names[-1] == "crc32c",
    )


def _name(codec: Any) -> str:
    return codec if isinstance(codec, str) else str(codec.get("name"))


def _config(codec: Any) -> dict[str, Any] | None:
    return None if isinstance(codec, str) else codec.get("configuration")


def read(shard: memoryview, lay: Layout) -> tuple[list[Entry], list[Problem]]:
    """The inner chunks the index says are stored, and every problem with the index: a shard
    shorter than its index, an index whose checksum fails (then nothing in it is trusted), an
    entry with only one half marked absent, or one whose bytes reach outside the shard's data
    (the inner chunk is missing: the index says it is there, the bytes are not)."""
    size = lay.index_size
    total = len(shard)
    if total < size:
        return [], [
            Problem(None, "index", f"shard of {total} bytes is shorter than its {size}-byte index")
        ]
    raw = shard[total - size :] if lay.at_end else shard[:size]
    if lay.checksummed:
        body, stored = raw[:-4], int.from_bytes(raw[-4:], "little")
        actual = crc32c(body)
        if actual != stored:
            return [], [
                Problem(
                    None,
                    "checksum",
                    f"shard index checksum mismatch: stored {stored:#010x}, computed "
                    f"{actual:#010x} (a truncated or overwritten shard)",
                )
            ]
        raw = body
    table = np.frombuffer(raw, dtype=">u8" if lay.big_endian else "<u8").reshape(
        (*lay.per_shard, 2)
    )
    data_start, data_end = (0, total - size) if lay.at_end else (size, total)
    entries, problems = [], []
    for coords, offset, nbytes in _entries(table):
        if offset == EMPTY and nbytes == EMPTY:
            continue
        if EMPTY in (offset, nbytes):
            problems.append(
                Problem(coords, "index", "index entry has only one of offset and nbytes absent")
            )
        elif offset < data_start or offset + nbytes > data_end:
            problems.append(
                Problem(
                    coords,
                    "missing",
                    f"index places it at bytes [{offset}, {offset + nbytes}), outside the "
                    f"shard's data [{data_start}, {data_end})",
                )
            )
        else:
            entries.append(Entry(coords, offset, nbytes))
    return entries, problems


def _entries(table: np.ndarray) -> Iterator[tuple[tuple[int, ...], int, int]]:
    pairs: list[list[int]] = table.reshape(-1, 2).tolist()
    for coords, (offset, nbytes) in zip(inner_coords(table.shape[:-1]), pairs):
        yield coords, offset, nbytes


def inner_coords(per_shard: Sequence[int]) -> Iterator[tuple[int, ...]]:
    """Every inner chunk's coordinates in C order, the order of the index table."""
    return itertools.product(*(range(n) for n in per_shard))


def checksum_problem(data: memoryview) -> str | None:
    """Why an encoded value whose last codec is crc32c fails its checksum (None: it passes)."""
    if len(data) < 4:
        return f"{len(data)} bytes is too short to hold a crc32c checksum"
    stored, actual = int.from_bytes(data[-4:], "little"), crc32c(data[:-4])
    if stored != actual:
        return f"crc32c checksum mismatch: stored {stored:#010x}, computed {actual:#010x}"
    return None
