"""What every command that takes a URL shares: its arguments, opening the node it names, the
way errors are reported, and sizes written for people."""

from __future__ import annotations

import argparse
import json
import os
import sys
import unicodedata
from collections.abc import Callable
from typing import Any

from zarrkit.errors import ZarrkitError

from .nodes import Array, Group, open_group
from .nodes import open as open_node_at

#: what a command's `run` returns: the process exit code
Run = Callable[[argparse.Namespace], int]

#: exit codes: 0 all well, 1 the command found a problem (check, verify), 2 it could not run
OK, FOUND, FAILED = 0, 1, 2


def add_url_arguments(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument(
        "url",
        metavar="URL",
        help="path or URL of the store, optionally followed by the node's path inside it "
        "(data.zarr/group/array, s3://bucket/data.zarr/array)",
    )
    cmd.add_argument(
        "--path", default=None, help="the node's path inside the store at URL (default: found)"
    )
    add_storage_options(cmd, "--storage-options", "the store")


def add_storage_options(cmd: argparse.ArgumentParser, flag: str, what: str) -> None:
    cmd.add_argument(
        flag,
        type=json_object,
        default=None,
        metavar="JSON",
        help=f"options for {what}, as a JSON object (e.g. "
        '\'{"endpoint_url": "http://127.0.0.1:9000", "anon": true}\' for s3://)',
    )


def json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"expected a JSON object, got {text!r}")
    return value


def open_node(url: str, path: str | None, storage_options: dict[str, Any] | None) -> Array | Group:
    """The node a user named. With no `--path`, URL may run on into the hierarchy
    (`data.zarr/g/a`): the longest leading part of URL that opens is the store and the rest the
    path, so an array's own folder opens too. The first error is the one reported."""
    if path is not None:
        return _open(url, path, storage_options)
    head, rest = url.rstrip("/") or url, ""
    first: ZarrkitError | None = None
    while True:
        try:
            return _open(head, rest, storage_options)
        except ZarrkitError as exc:
            first = first or exc
        scheme, sep, location = head.rpartition("://")
        parent, slash, name = location.rpartition("/")
        if not slash or not parent or not name:
            raise first
        head, rest = scheme + sep + parent, "/".join(p for p in (name, rest) if p)


def _open(url: str, path: str, storage_options: dict[str, Any] | None) -> Array | Group:
    """A group on a store that cannot list (HTTP) is read through its consolidated metadata,
    the only way to find its members there; elsewhere members are listed, so that what was
    written after consolidating is seen too."""
    node = open_node_at(url, path=path, mode="r", storage_options=storage_options)
    if isinstance(node, Group) and not getattr(node.store, "listable", True):
        return open_group(url, path=path, mode="r", storage_options=storage_options)
    return node


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def default_jobs() -> int:
    """Concurrent reads: enough to keep an object store's latency hidden, few on a laptop."""
    return min(32, 4 * (os.cpu_count() or 1))


#: characters that reorder how a terminal shows the text around them (bidirectional
#: overrides and isolates), escaped like control characters
_REORDERING = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def printable(text: str, *, newlines: bool = False) -> str:
    """`text` safe to print on a terminal: control characters (C0, DEL, C1 such as the CSI
    0x9b) and bidirectional overrides escaped as Python writes them (`\\x1b`, `\\u202e`), so
    a name read from a store can neither send escape sequences nor forge a line of output.
    `newlines`: keep line breaks (a message of several lines), escaping every other."""
    return "".join(
        ch
        if (ch == "\n" and newlines) or not (ch in _REORDERING or unicodedata.category(ch) == "Cc")
        else ch.encode("unicode_escape").decode("ascii")
        for ch in text
    )


def fail(args: argparse.Namespace, exc: BaseException) -> int:
    message = printable(str(exc), newlines=True)
    print(f"zarrkit {args.command_name}: error: {message}", file=sys.stderr)
    return FAILED


#: the deepest nesting `print_json` writes: `tree --json` nests a level per group, and a
#: hierarchy may be deeper than Python's recursion limit, which json's encoder recurses into
_MAX_JSON_DEPTH = 20_000


def print_json(value: Any) -> None:
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 4 * _MAX_JSON_DEPTH))
    try:
        json.dump(value, sys.stdout, indent=2, default=str)
    finally:
        sys.setrecursionlimit(limit)
    sys.stdout.write("\n")


def human_size(size: int) -> str:
    """`1234567 (1.2M)`, as zarr-python's `info_complete` writes sizes."""
    if size < 1024:
        return str(size)
    value, unit = float(size), ""
    for unit in "KMGTP":  # noqa: B007 (the last unit is the one used)
        value /= 1024
        if value < 1024:
            break
    return f"{size} ({value:.1f}{unit})"


def format_number(fmt: str) -> str:
    """zarrkit's format names as zarr-python's `zarr_format` numbers them."""
    return {"v3": "3", "v2": "2", "v3-draft-2020": "3 (2020 draft)"}.get(fmt, fmt)
