"""How `run_batched` shares chunk work among threads: each thread gets a run of neighbouring
items, whole or with `min_part` in parts; every item is worked on once, the threads start far
apart, and a thread that is held up leaves the rest to the others rather than being waited
for."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from zarrkit import config
from zarrkit.abc import run_batched
from zarrkit.executor import run_in_parts


@pytest.mark.parametrize("min_part", [None, 1, 4])
@pytest.mark.parametrize("threads", [2, 3, 4])
@pytest.mark.parametrize("total", [2, 5, 31, 128, 1000])
def test_every_item_is_worked_on_once_in_runs_of_neighbours(
    threads: int, total: int, min_part: int | None
) -> None:
    calls: list[list[int]] = []
    lock = threading.Lock()

    def work(part: list[int]) -> None:
        with lock:
            calls.append(list(part))

    with config.override(threads=threads):
        run_batched(work, list(range(total)), min_part=min_part)
    assert sorted(i for part in calls for i in part) == list(range(total))
    for part in calls:  # each call gets neighbouring items
        assert part == list(range(part[0], part[0] + len(part)))
    if min_part is None:  # a thread's whole run in one call
        assert len(calls) == min(threads, total)
    else:
        # no part smaller than `min_part` but the last of a thread's run
        assert len(calls) <= -(-total // min_part) + threads - 1
        if total >= 16 * threads * min_part:  # a few items at a time, not the whole run
            assert len(calls) > threads


@pytest.mark.parametrize("min_part", [None, 1, 4])
def test_the_threads_start_far_apart(min_part: int | None) -> None:
    """The pool's thread starts at the middle of the items, not next to the caller: two
    threads writing neighbouring chunks of a fresh output fault in the same pages at once."""
    caller = threading.get_ident()
    started = threading.Event()
    firsts: dict[str, int] = {}
    lock = threading.Lock()

    def work(part: list[int]) -> None:
        mine = "caller" if threading.get_ident() == caller else "pool"
        with lock:
            firsts.setdefault(mine, part[0])
        if mine == "pool":
            started.set()
        else:  # the caller waits for the pool's first part before it takes another
            started.wait(timeout=10)

    with config.override(threads=2):
        run_batched(work, list(range(128)), min_part=min_part)
    assert firsts["pool"] == 64
    assert firsts.get("caller", 0) == 0  # (the pool may have done it all before the caller began)


def test_a_held_up_thread_leaves_the_rest_to_the_others() -> None:
    """The calling thread stops on its first items until another thread has worked on items
    of the first half, which one fixed batch per thread would have left to the caller."""
    caller = threading.get_ident()
    taken_over = threading.Event()
    first = True

    def work(part: list[int]) -> None:
        nonlocal first
        if threading.get_ident() == caller:
            if first:
                first = False
                taken_over.wait(timeout=10)
        elif part[0] < 50:
            taken_over.set()

    with config.override(threads=2):
        run_batched(work, list(range(100)), min_part=1)
    assert taken_over.is_set()


def test_an_error_stops_the_handing_out_and_is_raised() -> None:
    done: list[int] = []
    lock = threading.Lock()

    def work(part: list[int]) -> None:
        if 0 in part:
            raise ValueError("chunk 0 is bad")
        with lock:
            done.extend(part)

    with config.override(threads=2), pytest.raises(ValueError, match="chunk 0 is bad"):
        run_batched(work, list(range(1000)), min_part=1)
    # nothing more was handed out once the first part failed
    assert len(done) < 500


def test_run_in_parts_sets_up_once_per_thread_for_all_its_parts() -> None:
    """What a share sets up (a store's `reading()`, folder handles) serves every part it is
    handed: `work` is called once per thread, and the parts it iterates cover the items."""
    shares: list[list[list[int]]] = []
    lock = threading.Lock()

    def work(parts: Iterator[list[int]]) -> None:
        mine = [list(part) for part in parts]
        with lock:
            shares.append(mine)

    with config.override(threads=2):
        run_in_parts(work, list(range(256)), min_part=4)
    assert len(shares) == 2
    assert sorted(i for share in shares for part in share for i in part) == list(range(256))
    assert sum(len(share) for share in shares) > 2  # handed out in parts, not whole runs
