"""Progress of a long command in bytes, with rate and time left, on stderr.

Drawn by tqdm when it is installed (`pip install 'zarrkit[cli]'`: small, pure Python, no
dependencies of its own, and it already does rate smoothing and terminal widths well), else by a
plain line of the same content. Off unless stderr is a terminal, or asked for with --progress.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from types import TracebackType
from typing import Any, TextIO

_FORMAT = "{desc} [{bar}] {n_fmt}B/{total_fmt}B {rate_fmt} {remaining} left{postfix}"


def add_arguments(cmd: argparse.ArgumentParser) -> None:
    bar = cmd.add_mutually_exclusive_group()
    bar.add_argument(
        "--progress",
        dest="progress",
        action="store_true",
        default=None,
        help="show a progress bar (default: when stderr is a terminal)",
    )
    bar.add_argument("--no-progress", dest="progress", action="store_false")


def wanted(flag: bool | None, stream: TextIO | None = None) -> bool:
    """--progress / --no-progress when given, else whether the bar's stream is a terminal."""
    return (stream or sys.stderr).isatty() if flag is None else flag


class Progress:
    """A bar over `total` bytes; `update` adds bytes done and may rename the current item and
    set a note (`9/9 chunks`). Does nothing when not `enabled`."""

    def __init__(self, total: int, *, enabled: bool, stream: TextIO | None = None) -> None:
        self._bar: Any = None
        self._desc: str | None = None
        if not enabled:
            return
        stream = stream or sys.stderr
        try:
            from tqdm import tqdm
        except ImportError:
            self._bar = _PlainBar(total, stream)
        else:
            self._bar = tqdm(
                total=total,
                file=stream,
                unit="B",
                unit_scale=True,
                unit_divisor=1024,
                bar_format=_FORMAT,
                ascii=" #",
                leave=True,
                **_width(stream),
            )

    def update(self, nbytes: int, *, desc: str | None = None, note: str | None = None) -> None:
        bar = self._bar
        if bar is None:
            return
        if desc is not None and desc != self._desc:
            if self._desc is not None:
                # the item just finished, drawn in its last state however fast it went (the
                # bar otherwise redraws at most every few tenths of a second)
                bar.refresh()
            self._desc = desc
            bar.set_description_str(desc, refresh=False)
        if note is not None:
            bar.set_postfix_str(note, refresh=False)
        bar.update(nbytes)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _width(stream: TextIO) -> dict[str, Any]:
    """Follow the terminal's width; a terminal that reports none (0 columns: some containers'
    pseudo-terminals) gets 100 rather than an empty bar."""
    try:
        columns = os.get_terminal_size(stream.fileno()).columns
    except (OSError, ValueError, AttributeError):
        columns = 0
    return {"dynamic_ncols": True} if columns > 0 else {"ncols": 100}


class _PlainBar:
    """tqdm's line without tqdm: `/a [####----] 1.2MB/4.0MB 3.1MB/s 00:01 left, 3/9 chunks`."""

    WIDTH = 20

    def __init__(self, total: int, out: TextIO, min_interval: float = 0.1) -> None:
        self._total, self._out, self._interval = total, out, min_interval
        self._done, self._desc, self._note = 0, "", ""
        self._start = self._last = time.monotonic()

    def set_description_str(self, desc: str, refresh: bool = False) -> None:
        self._desc = desc

    def set_postfix_str(self, note: str, refresh: bool = False) -> None:
        self._note = note

    def update(self, nbytes: int) -> None:
        self._done += nbytes
        now = time.monotonic()
        if now - self._last >= self._interval:
            self._last = now
            self._draw(now)

    def refresh(self) -> None:
        self._draw(time.monotonic())

    def close(self) -> None:
        self._draw(time.monotonic())
        self._out.write("\n")
        self._out.flush()

    def _draw(self, now: float) -> None:
        total, done = max(self._total, 0), self._done
        filled = self.WIDTH if total == 0 else min(self.WIDTH, self.WIDTH * done // total)
        elapsed = max(now - self._start, 1e-9)
        rate = done / elapsed
        left = (total - done) / rate if rate > 0 and total >= done else 0.0
        note = f", {self._note}" if self._note else ""
        self._out.write(
            f"\r{self._desc} [{'#' * filled}{' ' * (self.WIDTH - filled)}] "
            f"{_size(done)}B/{_size(total)}B {_size(int(rate))}B/s "
            f"{int(left) // 60:02d}:{int(left) % 60:02d} left{note}"
        )
        self._out.flush()


def _size(n: int) -> str:
    value = float(n)
    for unit in ("", "k", "M", "G", "T"):
        if value < 1000 or unit == "T":
            return f"{value:.0f}{unit}" if not unit else f"{value:.1f}{unit}"
        value /= 1024
    return f"{value:.1f}P"
