"""Planning a batch of (key, byte range) reads as fewer, larger reads: one planner for the
chunk engine (which merges only ranges that touch or overlap, for every store) and for the
network stores (which also merge across small gaps, since a round trip costs more than the
bytes between two ranges: `zarrkit.helpers.NETWORK_MAX_GAP`). Plugins reach it as
`zarrkit.helpers.plan_reads`.

Per key: a whole-value read serves every range of that key; equal open-ended or suffix
ranges are read once (their place depends on the value's size, so they merge with nothing
else); bounded ranges no more than `max_gap` bytes apart merge while the span they cover
stays within `max_block` bytes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .abc.store import ByteRange, Range

Request = tuple[str, Range | None]


@dataclass(frozen=True)
class Part:
    """Where one request's answer is: in the answer to read `read`, `within` of it (None:
    all of it)."""

    read: int
    within: Range | None


@dataclass(frozen=True)
class ReadPlan:
    """`reads` to issue, and for each planned request the `Part` that answers it."""

    reads: list[Request]
    parts: list[Part]

    @property
    def merges(self) -> bool:
        """Whether the plan reads less often than it was asked to."""
        return len(self.reads) < len(self.parts)

    def answers(self, results: Sequence[Any]) -> list[bytes | None]:
        """Each request's answer as `bytes`, cut from the answers to the planned reads."""
        return [None if v is None else bytes(v) for v in self.views(results)]

    def views(self, results: Sequence[Any]) -> list[Any]:
        """Each request's answer without a copy: a part of a planned read's answer is a
        `memoryview` of it, a whole answer is that answer."""
        out: list[Any] = []
        for part in self.parts:
            data = results[part.read]
            if data is None or part.within is None:
                out.append(data)
            else:
                view = memoryview(data).cast("B")
                out.append(view[part.within.slice(len(view))])
        return out


def plan_reads(
    requests: Sequence[Request], *, max_gap: int = 0, max_block: int | None = None
) -> ReadPlan:
    """The reads that answer `requests` (see the module's docstring): ranges of one key at
    most `max_gap` bytes apart merge (0: only those that touch or overlap) into reads of at
    most `max_block` bytes (None: any length)."""
    reads: list[Request] = []
    parts: list[Part | None] = [None] * len(requests)
    by_key: dict[str, list[int]] = defaultdict(list)
    for i, (key, _) in enumerate(requests):
        by_key[key].append(i)
    for key, indices in by_key.items():
        if any(requests[i][1] is None for i in indices):
            reads.append((key, None))
            for i in indices:
                parts[i] = Part(len(reads) - 1, requests[i][1])
            continue
        bounded: list[int] = []
        unbounded: dict[Range | None, int] = {}
        for i in indices:
            rng = requests[i][1]
            if isinstance(rng, ByteRange) and rng.length is not None:
                bounded.append(i)
                continue
            if rng not in unbounded:
                unbounded[rng] = len(reads)
                reads.append((key, rng))
            parts[i] = Part(unbounded[rng], None)
        _merge(key, bounded, requests, reads, parts, max_gap, max_block)
    return ReadPlan(reads, [p for p in parts if p is not None])


def _merge(
    key: str,
    indices: list[int],
    requests: Sequence[Request],
    reads: list[Request],
    parts: list[Part | None],
    max_gap: int,
    max_block: int | None,
) -> None:
    """Group the bounded ranges `indices` of `key` into reads, in order of their offsets."""
    spans = sorted((_bounds(requests[i][1]), i) for i in indices)
    group: list[tuple[tuple[int, int], int]] = []
    start = stop = 0
    for (offset, end), i in spans:
        span_ok = max_block is None or max(stop, end) - start <= max_block
        if group and offset - stop <= max_gap and span_ok:
            group.append(((offset, end), i))
            stop = max(stop, end)
            continue
        _flush(key, group, start, stop, reads, parts)
        group, start, stop = [((offset, end), i)], offset, end
    _flush(key, group, start, stop, reads, parts)


def _flush(
    key: str,
    group: list[tuple[tuple[int, int], int]],
    start: int,
    stop: int,
    reads: list[Request],
    parts: list[Part | None],
) -> None:
    if not group:
        return
    if len(group) == 1:  # (alone: read as asked)
        (offset, end), i = group[0]
        reads.append((key, ByteRange(offset, end - offset)))
        parts[i] = Part(len(reads) - 1, None)
        return
    reads.append((key, ByteRange(start, stop - start)))
    for (offset, end), i in group:
        parts[i] = Part(len(reads) - 1, ByteRange(offset - start, end - offset))


def _bounds(rng: Range | None) -> tuple[int, int]:
    assert isinstance(rng, ByteRange) and rng.length is not None
    return rng.offset, rng.offset + rng.length
