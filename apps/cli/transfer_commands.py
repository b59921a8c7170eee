"""`zarrkit convert` and `zarrkit copy`: whole hierarchies between stores and formats.

Both plan every node before writing (a node the target format cannot express stops the command
with exit code 2 and the reason), stream chunks in bounded batches, and can `--verify` values
(exit code 1 on a difference) and `--resume` an interrupted run.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeAlias

from zarrkit.errors import ZarrkitError

from . import progress
from .common import FOUND, OK, add_storage_options, fail, printable
from .nodes import Array
from .nodes import open as open_node_at

if TYPE_CHECKING:
    from zarrkit.transfer import TransferReport

Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"

FORMAT_CHOICES = ("v3", "v2", "v3-draft-2020")


def add_commands(commands: Commands) -> None:
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
    add_storage_options(cmd, "--storage-options", "the source store")
    add_storage_options(cmd, "--target-storage-options", "the target store")
    progress.add_arguments(cmd)


def _run_convert(args: argparse.Namespace) -> int:
    from zarrkit.transfer import convert

    def run(**options: Any) -> TransferReport:
        return convert(args.source, args.target, to=args.to, codecs=args.codecs, **options)

    return _run(args, run)


def _json_list(text: str) -> list[Any]:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not JSON: {exc}") from None
    if not isinstance(value, list):
        raise argparse.ArgumentTypeError("expected a JSON list of codecs")
    return value


def _run_copy(args: argparse.Namespace) -> int:
    from zarrkit.transfer import copy

    def run(**options: Any) -> TransferReport:
        return copy(args.source, args.target, **options)

    return _run(args, run)


def _run(args: argparse.Namespace, transfer: Callable[..., TransferReport]) -> int:
    try:
        sizes = _array_sizes(args) if progress.wanted(args.progress) else []
        with progress.Progress(sum(sizes), enabled=progress.wanted(args.progress)) as bar:
            report = transfer(
                path=args.path,
                target_path=args.target_path,
                verify=args.verify,
                resume=args.resume,
                overwrite=args.overwrite,
                progress=_ChunkProgress(bar, sizes),
                storage_options=args.storage_options,
                target_storage_options=args.target_storage_options,
            )
    except (ZarrkitError, ValueError, NotImplementedError) as exc:
        return fail(args, exc)
    for plan in report.nodes:
        if plan.is_array and not plan.raw:
            print(printable(f"re-encoded /{plan.path}: {plan.why_reencode}"), file=sys.stderr)
    for problem in report.mismatches:
        print(printable(f"verify: {problem}"), file=sys.stderr)
    print(printable(report.summary(), newlines=True))
    return FOUND if report.mismatches else OK


def _array_sizes(args: argparse.Namespace) -> list[int]:
    """Decoded bytes of each source array, in the order the transfer visits them."""
    from zarrkit.transfer import walk

    root = open_node_at(args.source, path=args.path, mode="r", storage_options=args.storage_options)
    return [node.nbytes for node in walk(root) if isinstance(node, Array)]


class _ChunkProgress:
    """A transfer's per-array chunk counts, drawn as bytes: an array's share of its decoded
    bytes for each chunk done (transfer visits arrays in `walk` order, as `sizes` lists them)."""

    def __init__(self, bar: progress.Progress, sizes: list[int]) -> None:
        self._bar, self._sizes = bar, iter(sizes)
        self._path: str | None = None
        self._nbytes = self._shown = 0

    def __call__(self, path: str, done: int, total: int) -> None:
        if path != self._path:
            self._path, self._nbytes, self._shown = path, next(self._sizes, 0), 0
        now = self._nbytes * done // total if total else self._nbytes
        self._bar.update(now - self._shown, desc=path, note=f"{done}/{total} chunks")
        self._shown = now
