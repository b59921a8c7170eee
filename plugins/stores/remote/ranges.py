"""Planning a batch of (key, byte range) reads as fewer, larger reads.

Remote stores pay per request, so reads of one key that lie close together (inner chunks of a
shard, a shard index and the chunk after it) are worth merging into one read of the span that
covers them; the few bytes of gap read for nothing cost less than a round trip. Every store that
overrides `get_ranges` for a network backend plans its reads here, so they all merge alike.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from zarrkit.abc import ByteRange, Range, SuffixRange

#: merge two reads of one key when at most this many unwanted bytes lie between them
DEFAULT_MAX_GAP = 64 * 1024
#: ... and the merged read stays at most this long
DEFAULT_MAX_BLOCK = 16 * 1024 * 1024


@dataclass(frozen=True)
class Plan:
    """`reads` to issue; request i is answered by `part_range[i]` of the answer to
    `reads[part_read[i]]` (None: the whole answer)."""

    reads: list[tuple[str, Range | None]]
    part_read: list[int]
    part_range: list[Range | None]

    def answers(self, results: Sequence[bytes | None]) -> list[bytes | None]:
        """Each request's answer, cut from the answers to the planned reads."""
        out: list[bytes | None] = []
        for which, rng in zip(self.part_read, self.part_range):
            data = results[which]
            if data is None or rng is None:
                out.append(data)
            else:
                out.append(bytes(memoryview(data)[rng.slice(len(data))]))
        return out


def plan(
    requests: Sequence[tuple[str, Range | None]],
    *,
    max_gap: int = DEFAULT_MAX_GAP,
    max_block: int = DEFAULT_MAX_BLOCK,
) -> Plan:
    """Merge the requests' reads: per key, a whole-value read serves every range of that key;
    bounded ranges closer than `max_gap` merge while the span stays within `max_block`;
    open-ended and suffix ranges are read as asked (their position depends on the size)."""
    reads: list[tuple[str, Range | None]] = []
    part_read = [0] * len(requests)
    part_range: list[Range | None] = [None] * len(requests)
    by_key: dict[str, list[int]] = defaultdict(list)
    for i, (key, _) in enumerate(requests):
        by_key[key].append(i)

    def add(key: str, rng: Range | None) -> int:
        reads.append((key, rng))
        return len(reads) - 1

    for key, indices in by_key.items():
        if any(requests[i][1] is None for i in indices):
            whole = add(key, None)
            for i in indices:
                part_read[i], part_range[i] = whole, requests[i][1]
            continue
        bounded = []
        for i in indices:
            rng = requests[i][1]
            if isinstance(rng, ByteRange) and rng.length is not None:
                bounded.append(i)
            else:  # open-ended or suffix: read as asked
                part_read[i], part_range[i] = add(key, rng), None
        _merge(key, bounded, requests, add, part_read, part_range, max_gap, max_block)
    return Plan(reads, part_read, part_range)


def _merge(
    key: str,
    indices: list[int],
    requests: Sequence[tuple[str, Range | None]],
    add: Callable[[str, Range | None], int],
    part_read: list[int],
    part_range: list[Range | None],
    max_gap: int,
    max_block: int,
) -> None:
    ordered = sorted(indices, key=lambda i: requests[i][1].offset)  # type: ignore[union-attr]
    group: list[int] = []
    start = stop = 0

    def flush() -> None:
        if group:
            which = add(key, ByteRange(start, stop - start))
            for i in group:
                rng = requests[i][1]
                assert isinstance(rng, ByteRange) and rng.length is not None
                part_read[i], part_range[i] = which, ByteRange(rng.offset - start, rng.length)

    for i in ordered:
        rng = requests[i][1]
        assert isinstance(rng, ByteRange) and rng.length is not None
        end = rng.offset + rng.length
        if group and rng.offset - stop <= max_gap and max(stop, end) - start <= max_block:
            group.append(i)
            stop = max(stop, end)
            continue
        flush()
        group, start, stop = [i], rng.offset, end
    flush()


def is_empty_read(rng: Range | None) -> bool:
    """A read of zero bytes: answered by an existence check, since HTTP has no way to ask
    for an empty range."""
    return (isinstance(rng, ByteRange) and rng.length == 0) or (
        isinstance(rng, SuffixRange) and rng.length == 0
    )
