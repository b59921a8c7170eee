"""`zarrkit convert` and `zarrkit copy`: whole hierarchies between stores and formats.

Both plan every node before writing (a node the target format cannot express stops the command
with exit code 2 and the reason), stream chunks in bounded batches, and can `--verify` values
(exit code 1 on a difference) and `--resume` an interrupted run.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any, TextIO

from .errors import ZarrkitError

FORMAT_CHOICES = ("v3", "v2", "v3-draft-2020")


def add_commands(commands: Any) -> None:
    convert = commands.add_parser(
        "convert",
        help="convert a hierarchy to another zarr format",
        description="Convert the hierarchy (or array) at SRC into zarr format --to at DST. "
        "Encoded chunks are copied untouched where the codec chains are equivalent, "
        "re-encoded otherwise.",
    )
    convert.add_argument("--to", required=True, choices=FORMAT_CHOICES, help="target format")
    convert.add_argument(
        "--codecs",
        type=_json_list,
        default=None,
        metavar="JSON",
        help='new codecs for every array, as v3 JSON (e.g. \'["bytes", '
        '{"name": "zstd", "configuration": {"level": 3}}]\'); chunks are '
        "re-encoded",
    )
    _common(convert)
    convert.set_defaults(run=_run_convert)
    copy = commands.add_parser(
        "copy",
        help="copy a hierarchy to another store, same format",
        description="Copy the hierarchy (or array) at SRC to DST: documents and encoded chunks "
        "byte for byte.",
    )
    _common(copy)
    copy.set_defaults(run=_run_copy)


def _common(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument("source", metavar="SRC", help="path or URL of the source store")
    cmd.add_argument("target", metavar="DST", help="path or URL of the target store")
    cmd.add_argument("--path", default="", help="node to start from in SRC (default: the root)")
    cmd.add_argument("--target-path", default=None, help="where it goes in DST (default: --path)")
    cmd.add_argument(
        "--verify",
        action="store_true",
        help="compare every value afterwards; exit code 1 on a difference",
    )
    cmd.add_argument(
        "--resume", action="store_true", help="finish an interrupted run: keep what DST already has"
    )
    cmd.add_argument("--overwrite", action="store_true", help="replace what DST holds at the path")
    bar = cmd.add_mutually_exclusive_group()
    bar.add_argument(
        "--progress",
        dest="progress",
        action="store_true",
        default=None,
        help="show a progress bar (default: when stderr is a terminal)",
    )
    bar.add_argument("--no-progress", dest="progress", action="store_false")


def _run_convert(args: argparse.Namespace) -> int:
    from .transfer import convert

    return _run(
        args, lambda **kw: convert(args.source, args.target, to=args.to, codecs=args.codecs, **kw)
    )


def _json_list(text: str) -> list:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not JSON: {exc}") from None
    if not isinstance(value, list):
        raise argparse.ArgumentTypeError("expected a JSON list of codecs")
    return value


def _run_copy(args: argparse.Namespace) -> int:
    from .transfer import copy

    return _run(args, lambda **kw: copy(args.source, args.target, **kw))


def _run(args: argparse.Namespace, transfer: Any) -> int:
    show = sys.stderr.isatty() if args.progress is None else args.progress
    bar = ProgressBar(sys.stderr) if show else None
    try:
        report = transfer(
            path=args.path,
            target_path=args.target_path,
            verify=args.verify,
            resume=args.resume,
            overwrite=args.overwrite,
            progress=bar,
        )
    except (ZarrkitError, ValueError, NotImplementedError) as exc:
        if bar is not None:
            bar.finish()
        print(f"zarrkit {args.command_name}: error: {exc}", file=sys.stderr)
        return 2
    if bar is not None:
        bar.finish()
    for plan in report.nodes:
        if plan.is_array and not plan.raw:
            print(f"re-encoded /{plan.path}: {plan.why_reencode}", file=sys.stderr)
    for problem in report.mismatches:
        print(f"verify: {problem}", file=sys.stderr)
    print(report.summary())
    return 1 if report.mismatches else 0


class ProgressBar:
    """One line per array on a stream, redrawn in place: `/path [#####-----] 120/240 chunks`."""

    WIDTH = 30

    def __init__(self, out: TextIO, min_interval: float = 0.1):
        self._out = out
        self._current: str | None = None
        self._last = 0.0
        self._interval = min_interval

    def __call__(self, path: str, done: int, total: int) -> None:
        now = time.monotonic()
        new = path != self._current
        if new and self._current is not None:
            self._out.write("\n")
        if not new and done < total and now - self._last < self._interval:
            return
        self._current, self._last = path, now
        filled = self.WIDTH if total == 0 else self.WIDTH * done // total
        self._out.write(
            f"\r{path} [{'#' * filled}{'-' * (self.WIDTH - filled)}] {done}/{total} chunks"
        )
        self._out.flush()

    def finish(self) -> None:
        if self._current is not None:
            self._out.write("\n")
            self._out.flush()
            self._current = None
