"""The one event loop per process every obstore store's requests run on (uvloop's where it is
installed), started on first use, and what a fork does to it: obstore's runtime (tokio) does
not survive a fork, so a process forked after this one made requests gets a clear error
instead of requests that wait forever, and `forks()` counts the forks a process came through.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import threading
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from zarrkit.abc import at_fork
from zarrkit.errors import StoreError

T = TypeVar("T")

_loop_lock = threading.Lock()
_loop: tuple[int, asyncio.AbstractEventLoop] | None = None


def event_loop() -> asyncio.AbstractEventLoop:
    """The loop every obstore store's requests run on, started on first use.

    Not in a process forked after this one made requests: obstore's runtime (tokio) does not
    survive a fork, and its requests there would wait forever; a clear error instead."""
    global _loop
    with _loop_lock:
        if _loop is not None and _loop[0] != os.getpid():
            raise StoreError(
                "obstore cannot make requests in a process forked after its parent made "
                "some (its runtime does not survive a fork): start processes with 'spawn' "
                "or 'forkserver', or open the store with the fsspec backend (fsspec+s3://)",
                store="obstore",
                operation="request",
            )
        if _loop is None:
            loop = _new_loop()
            thread = threading.Thread(target=loop.run_forever, name="zarrkit-obstore", daemon=True)
            thread.start()
            atexit.register(_stop, loop, thread)
            _loop = (os.getpid(), loop)
        return _loop[1]


def _new_loop() -> asyncio.AbstractEventLoop:
    """uvloop's loop where it is installed (the `obstore` extra brings it, but on Windows):
    each request's answer reaches Python as a callback from obstore's runtime thread, and
    uvloop spends less of the client's CPU on that than asyncio's own loop."""
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    loop: asyncio.AbstractEventLoop = uvloop.new_event_loop()
    return loop


#: forks this process came through (counted in each child): a store opened before the last one
#: may hold a client that cannot make requests here
_forks = 0


def _forked() -> None:
    global _forks
    _forks += 1


at_fork(_forked)


def forks() -> int:
    """How many forks this process came through (counted in each child)."""
    return _forks


def usable_here() -> bool:
    """Whether this process can make obstore requests: not if it was forked after its parent
    made some (see `event_loop`). Plain `s3://` goes to fsspec where this is False."""
    with _loop_lock:
        return _loop is None or _loop[0] == os.getpid()


def _stop(loop: asyncio.AbstractEventLoop, thread: threading.Thread) -> None:
    """At exit: stop the loop, and let obstore's runtime threads finish what they still do
    after a request's answer was delivered (they take the GIL to release its buffers); one
    that takes it while the interpreter finalizes aborts the process (SIGABRT after all
    work is done, about one exit in twenty with obstore 0.12)."""
    if thread.is_alive():
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
    _wait_for_idle_runtime()


def _wait_for_idle_runtime(limit: float = 2.0) -> None:
    """Until no tokio thread of this process is running (Linux: its state in /proc) for a
    few looks in a row, at most `limit` seconds; elsewhere a short pause."""
    tasks = f"/proc/{os.getpid()}/task"
    if not os.path.isdir(tasks):
        time.sleep(0.1)
        return
    deadline = time.monotonic() + limit
    quiet = 0
    while quiet < 3 and time.monotonic() < deadline:
        quiet = quiet + 1 if not _runtime_busy(tasks) else 0
        time.sleep(0.005)


def _runtime_busy(tasks: str) -> bool:
    for tid in os.listdir(tasks):
        try:
            with open(f"{tasks}/{tid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        name, _, rest = stat.partition("(")[2].rpartition(")")
        if name.startswith("tokio") and rest.split()[0] == "R":
            return True
    return False


def run(make: Callable[[], Awaitable[T]]) -> T:
    async def run() -> T:
        return await make()

    return asyncio.run_coroutine_threadsafe(run(), event_loop()).result()
