"""A wrapper that counts what a store is asked: calls, keys, bytes and time per operation.

For finding out why a read is slow (how many round trips, how many bytes) without a profiler.
Every operation is also logged at DEBUG on the logger `zarrkit.store`. The numbers go to one
process-wide collector, summed per store and operation, which `summary()` / `report()` read.

Switched on for every store zarrkit opens by `ZARRKIT_STORE_METRICS=1` or
`zarrkit.config.set(store_metrics=True)`; `zarrkit.storage.metrics_report()` prints the table.
By hand: `MetricsStore(store)` or the URL `metrics://<url>`.

Numbers stay in the process that measured them: a pickled `MetricsStore` records into the
process-wide collector of the process that unpickles it (a collector of one's own pickles as a
new, empty one).
"""

from __future__ import annotations

import builtins
import logging
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

from zarrkit.abc import Range, Store, Update, lock, names
from zarrkit.plugins.stores.pickling import reopening
from zarrkit.plugins.stores.wrappers.wrapper import StoreWrapper

log = logging.getLogger("zarrkit.store")

T = TypeVar("T")


@dataclass
class OperationStats:
    calls: int = 0
    keys: int = 0
    bytes: int = 0
    seconds: float = 0.0
    errors: int = 0


class Collector:
    """Sums per (store, operation); thread-safe."""

    def __init__(self) -> None:
        self._lock = lock()
        self._stats: dict[tuple[str, str], OperationStats] = {}

    def __reduce__(self) -> tuple[Any, ...]:
        return Collector, ()

    def record(
        self, store: str, operation: str, keys: int, nbytes: int, seconds: float, failed: bool
    ) -> None:
        with self._lock:
            stats = self._stats.setdefault((store, operation), OperationStats())
            stats.calls += 1
            stats.keys += keys
            stats.bytes += nbytes
            stats.seconds += seconds
            stats.errors += failed

    def summary(self) -> dict[str, dict[str, dict[str, Any]]]:
        """{store: {operation: {calls, keys, bytes, seconds, errors}}}."""
        with self._lock:
            out: dict[str, dict[str, dict[str, Any]]] = {}
            for (store, operation), stats in sorted(self._stats.items()):
                out.setdefault(store, {})[operation] = asdict(stats)
            return out

    def reset(self) -> None:
        with self._lock:
            self._stats.clear()

    def report(self) -> str:
        """A table for people: one row per store and operation."""
        summary = self.summary()
        if not summary:
            return "store metrics: no store operations recorded"
        header = (
            f"{'operation':<14}{'calls':>8}{'keys':>10}{'bytes':>14}{'ms total':>11}"
            f"{'ms/call':>9}{'errors':>8}"
        )
        lines = ["store metrics:"]
        for store, operations in summary.items():
            lines += [f"  {store}", f"    {header}"]
            for operation, s in operations.items():
                ms = s["seconds"] * 1000
                lines.append(
                    f"    {operation:<14}{s['calls']:>8}{s['keys']:>10}{s['bytes']:>14}"
                    f"{ms:>11.1f}{ms / s['calls']:>9.2f}{s['errors']:>8}"
                )
        return "\n".join(lines)


COLLECTOR = Collector()


def _nbytes(value: Any) -> int:
    return memoryview(value).nbytes


class MetricsStore(StoreWrapper):
    names = names("metrics")

    def __init__(self, inner: Store, *, collector: Collector | None = None) -> None:
        super().__init__(inner)
        self.collector = collector or COLLECTOR
        self._label = repr(inner)

    def __reduce__(self) -> tuple[Any, ...]:
        if self.collector is COLLECTOR:
            return reopening(self, self.inner)
        return reopening(self, self.inner, collector=self.collector)

    # -- the process-wide numbers (what `zarrkit.store_opening.metrics_*` call) --------------------
    @classmethod
    def summary(cls) -> dict[str, dict[str, dict[str, Any]]]:
        return COLLECTOR.summary()

    @classmethod
    def report(cls) -> str:
        return COLLECTOR.report()

    @classmethod
    def reset(cls) -> None:
        COLLECTOR.reset()

    # -- measuring -------------------------------------------------------------------------------
    def _measure(
        self,
        operation: str,
        keys: int | Callable[[Any], int],
        run: Callable[[], T],
        size: Callable[[T], int] = lambda _: 0,
        sent: int = 0,
    ) -> T:
        """Run one operation and record it; `keys` may be counted from the result (listings)."""
        start = time.perf_counter()
        failed = True
        nbytes, nkeys = sent, keys if isinstance(keys, int) else 0
        try:
            result = run()
            nbytes += size(result)
            if not isinstance(keys, int):
                nkeys = keys(result)
            failed = False
            return result
        finally:
            seconds = time.perf_counter() - start
            self.collector.record(self._label, operation, nkeys, nbytes, seconds, failed)
            if log.isEnabledFor(logging.DEBUG):
                log.debug(
                    "%s %s keys=%d bytes=%d %.2f ms%s",
                    self._label,
                    operation,
                    nkeys,
                    nbytes,
                    seconds * 1000,
                    " FAILED" if failed else "",
                )

    def get(self, key: str, byte_range: Range | None = None) -> bytes | None:
        return self._measure(
            "get",
            1,
            lambda: self.inner.get(key, byte_range),
            lambda v: len(v) if v is not None else 0,
        )

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes]:
        keys = list(keys)
        return self._measure(
            "get_many",
            len(keys),
            lambda: self.inner.get_many(keys),
            lambda d: sum(len(v) for v in d.values()),
        )

    def get_ranges(self, requests: Sequence[tuple[str, Range | None]]) -> list[bytes | None]:
        return self._measure(
            "get_ranges",
            len(requests),
            lambda: self.inner.get_ranges(requests),
            lambda vs: sum(len(v) for v in vs if v is not None),
        )

    def exists(self, key: str) -> bool:
        return self._measure("exists", 1, lambda: self.inner.exists(key))

    def set(self, key: str, value: Any) -> None:
        self._measure("set", 1, lambda: self.inner.set(key, value), sent=_nbytes(value))

    def set_many(self, items: Mapping[str, bytes]) -> None:
        sent = sum(_nbytes(v) for v in items.values())
        self._measure("set_many", len(items), lambda: self.inner.set_many(items), sent=sent)

    def update_many(self, keys: Sequence[str], compute: Update) -> None:
        self._measure("update_many", len(keys), lambda: self.inner.update_many(keys, compute))

    def erase(self, key: str) -> None:
        self._measure("erase", 1, lambda: self.inner.erase(key))

    def erase_many(self, keys: Iterable[str]) -> None:
        keys = list(keys)
        self._measure("erase_many", len(keys), lambda: self.inner.erase_many(keys))

    def erase_prefix(self, prefix: str) -> None:
        self._measure("erase_prefix", 1, lambda: self.inner.erase_prefix(prefix))

    def list(self) -> Iterator[str]:
        return iter(self._measure("list", len, lambda: [*self.inner.list()]))

    def list_prefix(self, prefix: str) -> Iterator[str]:
        return iter(self._measure("list_prefix", len, lambda: [*self.inner.list_prefix(prefix)]))

    def list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        return self._measure(
            "list_dir", lambda kp: len(kp[0]) + len(kp[1]), lambda: self.inner.list_dir(prefix)
        )
