"""Byte ranges for partial decodes: driving many decodes in lockstep, one store call per round,
merging adjacent ranges of a key, and keeping the answers that last (shard indexes)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Generator, Sequence
from typing import Any

from .. import config, forksafe
from ..abc.codec import CacheableRange, RangeReads, lockstep
from ..abc.store import Range, Store
from ..errors import ConfigError
from ..read_plan import plan_reads

# -- answers that last (shard indexes) -------------------------------------------------------------
#: bytes of `CacheableRange` answers one array handle keeps
_LASTING_BYTES = 16 << 20


class RangeCache:
    """The answers to `CacheableRange` reads (shard indexes) one array handle has fetched, so a
    shard's index is read once however many windows touch it. A read that finds another
    thread fetching the same range waits for that answer instead of asking again, so many
    selections read at once (`Array.get_many`) fetch each index once too. Writes through the
    handle call `invalidate`; an answer fetched across an invalidation is not kept. Only
    values that exist are kept (an absent shard may be written by someone else)."""

    def __init__(self, max_bytes: int = _LASTING_BYTES) -> None:
        self._lock = forksafe.lock()
        self._answers: OrderedDict[tuple[str, Range], bytes] = OrderedDict()
        self._fetching: dict[tuple[str, Range], threading.Event] = {}
        self._bytes = 0
        self._max = max_bytes
        self._generation = 0

    def claim(
        self, wanted: Sequence[tuple[str, Range]]
    ) -> tuple[dict[tuple[str, Range], bytes], list, list, int]:
        """(answers known, ranges this caller must fetch, events of ranges being fetched by
        others, the generation its fetches belong to)."""
        known, mine, waits = {}, [], []
        with self._lock:
            for item in dict.fromkeys(wanted):
                if item in self._answers:
                    self._answers.move_to_end(item)
                    known[item] = self._answers[item]
                elif item in self._fetching:
                    waits.append((item, self._fetching[item]))
                else:
                    self._fetching[item] = threading.Event()
                    mine.append(item)
            return known, mine, waits, self._generation

    def settle(
        self,
        fetched: dict[tuple[str, Range], Any],
        claimed: Sequence[tuple[str, Range]],
        generation: int,
    ) -> None:
        """Keep what was fetched (unless invalidated meanwhile) and wake whoever waits; called
        with an empty `fetched` when the fetch failed, so the waiters fetch for themselves."""
        with self._lock:
            for item in claimed:
                value = fetched.get(item)
                if value is not None and generation == self._generation:
                    value = bytes(value)
                    if item not in self._answers:
                        self._bytes += len(value)
                    self._answers[item] = value
                event = self._fetching.pop(item, None)
                if event is not None:
                    event.set()
            while self._bytes > self._max and self._answers:
                _, dropped = self._answers.popitem(last=False)
                self._bytes -= len(dropped)

    def get(self, item: tuple[str, Range]) -> bytes | None:
        with self._lock:
            return self._answers.get(item)

    def invalidate(self) -> None:
        with self._lock:
            self._generation += 1
            self._answers.clear()
            self._bytes = 0


_INDEX_CACHE = ("remote", "always", "never")


def range_cache(store: Store) -> RangeCache | None:
    """A cache for an array handle on `store`, per the `index_cache` setting: by default only
    where a read is a round trip (the store asks for big calls), since a kept index does not
    see a shard rewritten by another writer until the array is opened again."""
    choice = config.get().index_cache
    if choice not in _INDEX_CACHE:
        raise ConfigError(
            f"the index_cache setting (ZARRKIT_INDEX_CACHE) must be one of "
            f"{_INDEX_CACHE}, got {choice!r}"
        )
    if choice == "always" or (choice == "remote" and store.capabilities.preferred_fetch_bytes):
        return RangeCache()
    return None


def _lasting_answers(
    store: Store, requests: list[tuple[str, Any]], cache: RangeCache | None
) -> list[Any]:
    """`fetch_ranges` for a round holding `CacheableRange` requests: those come from `cache` when
    it has them (or from the thread already fetching them), the rest from the store."""
    plain = [(key, rng.range if isinstance(rng, CacheableRange) else rng) for key, rng in requests]
    if cache is None:
        return fetch_ranges(store, plain)
    lasting = [(key, rng.range) for key, rng in requests if isinstance(rng, CacheableRange)]
    known, mine, waits, generation = cache.claim(lasting)
    others = [r for r, (_, rng) in zip(plain, requests) if not isinstance(rng, CacheableRange)]
    fetched: dict[tuple[str, Range], Any] = {}
    try:
        answers = fetch_ranges(store, [*mine, *others])
        fetched = dict(zip(mine, answers[: len(mine)]))
        by_request = dict(zip(others, answers[len(mine) :]))
    finally:
        cache.settle(fetched, mine, generation)
    late = []
    for item, event in waits:
        event.wait()
        value = cache.get(item)
        if value is None:  # that fetch failed, the value was absent, or a write cleared it
            late.append(item)
        else:
            fetched[item] = value
    if late:
        fetched.update(zip(late, fetch_ranges(store, late)))
    out = []
    for (_key, rng), item in zip(requests, plain):
        if isinstance(rng, CacheableRange):
            out.append(known[item] if item in known else fetched[item])
        else:
            out.append(by_request[item])
    return out


# -- partial decodes --------------------------------------------------------------------------------
def drive(
    store: Store, reads: Sequence[tuple[str, RangeReads[Any]]], cache: RangeCache | None = None
) -> list[Any]:
    """Run partial decodes of several stored values in lockstep (`codec.lockstep`): each
    round's byte ranges of every value go to the store in one `get_ranges` call. Returns each
    decode's result. `CacheableRange` requests are answered from `cache` where it can (see
    `RangeCache`)."""
    rounds = lockstep([_keyed(key, gen) for key, gen in reads])
    try:
        requests: list[Any] = next(rounds)
        while True:
            requests = rounds.send(_answers(store, requests, cache))
    except StopIteration as done:
        results: list[Any] = done.value
        return results


def _keyed(key: str, gen: RangeReads[Any]) -> Generator[list[Any], list[Any], Any]:
    """A partial decode whose range requests name the stored value they are of, as the store
    needs them: (key, range)."""
    try:
        ranges = next(gen)
        while True:
            answers = yield [(key, r) for r in ranges]
            ranges = gen.send(answers)
    except StopIteration as stop:
        return stop.value


def _answers(store: Store, requests: list[tuple[str, Any]], cache: RangeCache | None) -> list[Any]:
    """One round's answers, through `cache` when the round asks for a `CacheableRange` range."""
    if any(isinstance(r, CacheableRange) for _, r in requests):
        return _lasting_answers(store, requests, cache)
    return fetch_ranges(store, requests)


def fetch_ranges(store: Store, requests: Sequence[tuple[str, Range | None]]) -> list[Any]:
    """`store.read_ranges`, with byte ranges of one key that touch or overlap merged into one
    read (inner chunks stored side by side in a shard come back in one request)."""
    plan = plan_reads(requests)
    if not plan.merges:
        return store.read_ranges(list(requests))
    return plan.views(store.read_ranges(plan.reads))
