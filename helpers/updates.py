"""`optimistic_update`: `Store.update_many` by compare-and-swap, for store plugins whose backend
can write a key only if it is unchanged (a transaction, a conditional PUT)."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from zarrkit.abc import Store, Update
from zarrkit.errors import StoreError

__all__ = ["optimistic_update"]


#: how often `optimistic_update` computes again after a conflict, and its pauses in between
_UPDATE_ATTEMPTS = 64
_FIRST_PAUSE = 0.001
_LONGEST_PAUSE = 0.25


def optimistic_update(
    store: Store,
    keys: Sequence[str],
    compute: Update,
    read: Callable[[Sequence[str]], tuple[Mapping[str, Any], Mapping[str, Any]]],
    swap: Callable[[Mapping[str, Any], Mapping[str, Any]], Sequence[str]],
) -> None:
    """`Store.update_many` by compare-and-swap, for stores that can write a key only if it is
    unchanged (a transaction, a conditional PUT) but should not hold anything while `compute`
    runs. `read(keys)` gives the keys' current values and a version token for each key
    (absent keys too, e.g. None); `swap(tokens, new)` writes, each in one step against
    every other writer, the new values of the keys whose token still holds, and returns the
    keys it did not write; those are read and computed again after a growing random pause."""
    store.require("write", "update keys")
    pending = list(keys)
    pause = _FIRST_PAUSE
    for _ in range(_UPDATE_ATTEMPTS):
        values, tokens = read(pending)
        pending = list(swap(tokens, compute(pending, values)))
        if not pending:
            return
        time.sleep(random.uniform(0, pause))
        pause = min(_LONGEST_PAUSE, pause * 2)
    raise StoreError(
        f"other writers kept changing {len(pending)} key(s) while this one "
        f"updated them ({_UPDATE_ATTEMPTS} attempts)",
        key=pending[0],
        store=store,
        operation="update",
    )
