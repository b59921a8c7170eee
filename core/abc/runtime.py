"""What the runtime offers plugins: the current `settings()` (`Settings`: threads,
`write_empty_chunks`, `io_concurrency`, ...), the shared thread pool (`run_batched`), locks
that a forked child gets fresh (`lock`, `rlock`) with hooks to reset state after a fork
(`at_fork`, `after_fork_in_child`) and a lock a fork waits for (`fork_waits_for`), and
buffers a thread keeps between chunks (`thread_buffer` for work done at once, `reusable` for
values handed on), so that a plugin's per-chunk work costs no fresh memory and runs on the
same threads as the engine's."""

from __future__ import annotations

from ..buffers import reusable, thread_buffer
from ..config import Settings
from ..config import get as settings
from ..executor import run_batched
from ..forksafe import after_fork_in_child, at_fork, fork_waits_for, lock, rlock

__all__ = [
    "Settings",
    "after_fork_in_child",
    "at_fork",
    "fork_waits_for",
    "lock",
    "reusable",
    "rlock",
    "run_batched",
    "settings",
    "thread_buffer",
]
