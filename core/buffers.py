"""Buffers a thread keeps, so that chunk-sized work does not get fresh memory each time (a page
fault per 4 KiB page: glibc hands a big freed block back to the OS once the free space at the
top of a heap passes its trim threshold, so big values made and freed in turn keep coming back
as fresh pages). Two kinds:

- `thread_buffer`: valid until this thread next asks for the same use, for work done with it at once
  (decoding a chunk before copying part of it out, putting a strided chunk in C order);
- `reusable`: for values handed out and passed on (a store's read, a shard being assembled),
  reused only when nothing holds it any more, which its reference count tells (a memoryview,
  a slice or an array made from it all keep a reference), so a value stays valid for as long
  as anyone keeps it.

The big ones a thread keeps (not the one-offs `reusable` hands out while its kept one is
busy) start 64 bytes past a page boundary. `memcpy` implemented with `rep movsb` (as on many
x86 CPUs) slows down several times when the destination lies a few bytes past the source
within a page, which is exactly where a file read (file data starts on a page) into a numpy
array (which numpy puts 16 bytes past a page: the allocator's header) lands. 64 bytes past is
clear of both page-aligned file data and numpy's arrays, in either direction.
"""

from __future__ import annotations

import mmap
import sys
import threading

import numpy as np

#: a thread keeps a buffer for reuse only up to this size
KEPT_BYTES = 32 << 20
#: larger thread buffers are fresh each time, so one huge chunk does not stay allocated
THREAD_BUFFER_MAX = 64 << 20

#: smaller buffers come from numpy's allocator (a mapping each would cost more than it saves)
PLACED_FROM = 64 << 10
#: where big buffers start within a page (see above)
_PHASE = 64
#: buffers from this size get transparent huge pages, as numpy asks for its own big arrays
HUGE_FROM = 4 << 20

#: private anonymous memory, as malloc's (Python's default on POSIX is shared memory)
_PRIVATE = (
    {"flags": mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS}
    if hasattr(mmap, "MAP_PRIVATE") and hasattr(mmap, "MAP_ANONYMOUS")
    else {}
)

_kept = threading.local()
_thread_buffers = threading.local()


def placed(nbytes: int) -> np.ndarray:
    """A new uint8 buffer of `nbytes`, `_PHASE` bytes past a page boundary when big enough to
    matter. It owns its memory through an anonymous mapping, so views of it keep it (and not
    some base array) referenced, which `reusable`'s reference count relies on."""
    if nbytes < PLACED_FROM:
        return np.empty(nbytes, dtype=np.uint8)
    try:
        mapping = mmap.mmap(-1, nbytes + _PHASE, **_PRIVATE)
    except (OverflowError, OSError):  # as numpy says it for its own arrays
        raise MemoryError(f"cannot map a buffer of {nbytes} bytes") from None
    if nbytes >= HUGE_FROM and hasattr(mapping, "madvise") and hasattr(mmap, "MADV_HUGEPAGE"):
        try:
            mapping.madvise(mmap.MADV_HUGEPAGE)
        except OSError:  # a kernel without transparent huge pages
            pass
    return np.frombuffer(mapping, dtype=np.uint8, count=nbytes, offset=_PHASE)


def thread_buffer(use: str, nbytes: int) -> np.ndarray:
    """`nbytes` of this thread's uint8 buffer for `use`, grown as needed: valid until this
    thread next asks for `use`, so for work done with it at once (a value handed on takes
    `reusable`)."""
    if nbytes > THREAD_BUFFER_MAX:
        return np.empty(nbytes, dtype=np.uint8)
    buf = getattr(_thread_buffers, use, None)
    if buf is None or buf.nbytes < nbytes:
        buf = placed(nbytes)
        setattr(_thread_buffers, use, buf)
    return buf[:nbytes]


def reusable(use: str, size: int) -> np.ndarray:
    """A uint8 buffer of at least `size` bytes: this thread's one for `use` (one per purpose,
    so two purposes in flight at once do not take each other's) when nothing holds it. Else a
    new one with room to spare (values of one array differ a little in size): the kept one
    when there is none yet or it is too small (kept up to `KEPT_BYTES`); while the kept one is
    in use, a one-off from numpy's allocator, which hands out memory freed before (a mapping
    of its own would be fresh pages, faulted in, every time)."""
    held: np.ndarray | None = getattr(_kept, use, None)
    if held is not None and held.size >= size:
        # references when free: the thread's, `held`, and getrefcount's argument
        if sys.getrefcount(held) == 3:
            return held
        return np.empty(size + size // 8, dtype=np.uint8)
    fresh = placed(size + size // 8)
    if fresh.size <= KEPT_BYTES:
        setattr(_kept, use, fresh)
    return fresh
