"""What network stores add to the kernel's read planner (`plan_reads`): how far apart two
reads of one key may be to merge, how long a merged read may grow, and which reads ask for
no bytes at all."""

from __future__ import annotations

from zarrkit.abc import ByteRange, Range, SuffixRange

__all__ = ["NETWORK_MAX_BLOCK", "NETWORK_MAX_GAP", "is_empty_read"]

NETWORK_MAX_GAP = 64 * 1024
"""A network store merges two reads of one key when at most this many unwanted bytes lie
between them (a round trip costs more than they do)."""
NETWORK_MAX_BLOCK = 16 * 1024 * 1024
"""The longest read a network store merges reads of one key into."""


def is_empty_read(rng: Range | None) -> bool:
    """A read of zero bytes: answered by an existence check, since HTTP has no way to ask
    for an empty range."""
    return isinstance(rng, ByteRange | SuffixRange) and rng.length == 0
