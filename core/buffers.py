"""Buffers a thread keeps, so that chunk-sized work does not get fresh memory each time (a page
fault per 4 KiB page: glibc hands a big freed block back to the OS once the free space at the
top of a heap passes its trim threshold, so big values made and freed in turn keep coming back
as fresh pages). Two kinds:

- `scratch`: valid until this thread next asks for the same use, for work done with it at once
  (decoding a chunk before copying part of it out, putting a strided chunk in C order);
- `reusable`: for values handed out and passed on (a store's read, a shard being assembled),
  reused only when nothing holds it any more, which its reference count tells (a memoryview,
  a slice or an array made from it all keep a reference), so a value stays valid for as long
  as anyone keeps it.
"""

from __future__ import annotations

import sys
import threading

import numpy as np

#: a thread keeps a buffer for reuse only up to this size
KEPT_BYTES = 32 << 20
#: larger scratch buffers are fresh each time, so one huge chunk does not stay allocated
SCRATCH_MAX = 64 << 20

_kept = threading.local()
_scratch = threading.local()


def scratch(use: str, nbytes: int) -> np.ndarray:
    """`nbytes` of this thread's uint8 scratch buffer for `use`, grown as needed."""
    if nbytes > SCRATCH_MAX:
        return np.empty(nbytes, dtype=np.uint8)
    buf = getattr(_scratch, use, None)
    if buf is None or buf.nbytes < nbytes:
        buf = np.empty(nbytes, dtype=np.uint8)
        setattr(_scratch, use, buf)
    return buf[:nbytes]


def reusable(use: str, size: int) -> np.ndarray:
    """A uint8 buffer of at least `size` bytes: this thread's one for `use` (one per purpose,
    so two purposes in flight at once do not take each other's) when nothing holds it, else a
    new one with room to spare (values of one array differ a little in size), kept for next
    time when no larger than `KEPT_BYTES`."""
    held = getattr(_kept, use, None)
    # references when free: the thread's, `held`, and getrefcount's argument
    if held is not None and held.size >= size and sys.getrefcount(held) == 3:
        return held
    fresh = np.empty(size + size // 8, dtype=np.uint8)
    if fresh.size <= KEPT_BYTES:
        setattr(_kept, use, fresh)
    return fresh
