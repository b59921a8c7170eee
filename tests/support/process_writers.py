"""A writer process for tests/plugins/stores/test_process_updates.py: opens the arrays by URL itself (array
handles need not pickle), waits for the go signal, then writes its own cells one at a time.

Also a script: `python process_writers.py '<json of the arguments of write_cells>'`.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

#: the arrays every writer writes into: one plain chunk, and one shard of 4 inner chunks
ARRAYS = ("chunked", "sharded")


def value(row: int, column: int) -> int:
    return row * 1000 + column + 1


def write_cells(
    url: str, options: dict[str, Any], row: int, columns: int, signals: str, safe: bool
) -> None:
    """Write cell (row, c) of each array for every column c, each write its own partial
    update of the one chunk (or shard) that every writer shares."""
    import zarrkit as zk
    from zarrkit import config

    config.set(safe_updates=safe)
    arrays = [zk.open_array(url, path=name, mode="r+", storage_options=options) for name in ARRAYS]
    folder = Path(signals)
    (folder / f"ready.{row}").touch()
    deadline = time.monotonic() + 60
    while not (folder / "go").exists():
        if time.monotonic() > deadline:
            raise TimeoutError("no go signal")
        time.sleep(0.001)
    for column in range(columns):
        for array in arrays:
            array[row, column] = value(row, column)


if __name__ == "__main__":
    write_cells(**json.loads(sys.argv[1]))
