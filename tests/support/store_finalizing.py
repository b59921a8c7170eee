"""A check for stores whose handles share one open resource per path (zip archive, LMDB
environment) and give it back from a `weakref.finalize`: the garbage collector may run that
finalizer at any allocation, also while the same thread holds the lock of the open resources
to open another store."""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable
from typing import Any


def opens_while_collecting(lock: Any, open_another: Callable[[], None]) -> bool:
    """Collect garbage and open another store with `lock` held, as inside the store's own
    `acquire`; False when that does not finish in 30 s (a deadlock)."""

    def run() -> None:
        with lock:
            gc.collect()
            open_another()

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout=30)
    return not worker.is_alive()
