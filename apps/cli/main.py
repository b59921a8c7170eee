"""The parser and the entry point: one subcommand per module, each with an `add_command`
that registers its arguments and the function that runs it."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from . import check_command, inspect_commands, plugins_command, transfer_commands


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `zarrkit` console script; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.run is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        code = _run(args)
        sys.stdout.flush()  # here, where a closed pipe is caught, not at exit
        return code
    except BrokenPipeError:
        return _closed_pipe()
    except KeyboardInterrupt:
        print(f"zarrkit {args.command_name}: interrupted", file=sys.stderr)
        return 130  # 128 + SIGINT


def _run(args: argparse.Namespace) -> int:
    code: int
    if not args.store_metrics:
        code = args.run(args)
        return code
    from zarrkit import config, storage

    # the report is of this command's stores, also when called in a process that counted
    # others before (`main([...])` from Python)
    storage.reset_metrics()
    with config.override(store_metrics=True):
        try:
            code = args.run(args)
        finally:
            print(storage.metrics_report(), file=sys.stderr)
    return code


def _closed_pipe() -> int:
    """The reader went away (`zarrkit ls URL | head`): stop quietly, as `ls | head` does.
    Python would still flush stdout at exit and print a second BrokenPipeError; pointing stdout
    at /dev/null first is the documented way to stop that (docs.python.org, "signal", note on
    SIGPIPE)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return 141  # 128 + SIGPIPE, what a shell reports for a process ended by a closed pipe


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="zarrkit", description="Zarr arrays and groups.")
    parser.set_defaults(run=None)
    parser.add_argument(
        "--store-metrics",
        action="store_true",
        help="count every store operation (calls, keys, bytes, seconds) and "
        "print a table to stderr at the end",
    )
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")
    inspect_commands.add_commands(commands)
    check_command.add_command(commands)
    plugins_command.add_command(commands)
    transfer_commands.add_commands(commands)
    for name, sub in commands.choices.items():
        sub.set_defaults(command_name=name)
    return parser
