"""`zarrkit info`, `zarrkit tree` and `zarrkit ls`: what a node is and what lies below it.

`info` shows what zarr-python 3's `Array.info_complete()` / `Group.info_complete()` show (the
same labels, so output reads alike), plus the full codec chain, dimension names, attributes and
the chunks initialized out of all. Bytes stored are those of every key under the array's prefix,
documents included, as zarr-python counts them; for that each value is read once.
"""

from __future__ import annotations

import argparse
import json
from collections import deque
from collections.abc import Iterator
from typing import Any, TypeAlias

from zarrkit.errors import ZarrkitError

from . import chunks as chunk_store
from .common import (
    OK,
    add_url_arguments,
    default_jobs,
    fail,
    format_number,
    human_size,
    open_node,
    positive,
    print_json,
    printable,
)
from .nodes import Array, Group, codec_roles

Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def add_commands(commands: Commands) -> None:
    info = commands.add_parser(
        "info",
        help="what an array or group is: shapes, codecs, bytes stored, ratio",
        description="Describe the array or group at URL: format, data type, fill value, shape, "
        "shard and chunk shapes, codecs (filters, serializer, compressors), bytes, bytes stored, "
        "storage ratio and chunks initialized; for a group, its members.",
    )
    add_url_arguments(info)
    info.add_argument("--json", action="store_true", help="print a JSON object")
    info.add_argument(
        "--jobs",
        type=positive,
        default=default_jobs(),
        help="concurrent reads (default: %(default)s)",
    )
    info.set_defaults(run=run_info)

    tree = commands.add_parser(
        "tree",
        help="the hierarchy below a node",
        description="Print the hierarchy below the node at URL, one member a line, arrays with "
        "their shape and data type.",
    )
    add_url_arguments(tree)
    tree.add_argument("--depth", type=positive, default=None, help="levels below the node shown")
    tree.add_argument("--json", action="store_true", help="print a nested JSON object")
    tree.set_defaults(run=run_tree)

    ls = commands.add_parser(
        "ls",
        help="the members of a group",
        description="List the members of the group at URL, one a line: kind, shape, data type, "
        "name. An array lists itself.",
    )
    add_url_arguments(ls)
    ls.add_argument("-r", "--recursive", action="store_true", help="every member below, by path")
    ls.add_argument("--json", action="store_true", help="print a JSON list")
    ls.set_defaults(run=run_ls)


# -- info -----------------------------------------------------------------------------------------
def run_info(args: argparse.Namespace) -> int:
    try:
        node = open_node(args.url, args.path, args.storage_options)
        info = array_info(node, args.jobs) if isinstance(node, Array) else group_info(node)
    except ZarrkitError as exc:
        return fail(args, exc)
    if args.json:
        print_json(info)
    else:
        _print_info(info)
    return OK


def array_info(array: Array, jobs: int) -> dict[str, Any]:
    meta = array.metadata
    fmt = meta.format
    filters, serializer, compressors = codec_roles(array)
    held = [chunk.key for chunk in chunk_store.held(array)]
    keys = chunk_store.node_keys(array)
    counted = chunk_store.sizes(array.store, keys if keys is not None else held, jobs)
    stored_bytes = sum(counted.values())
    return {
        "name": array.name,
        "type": "Array",
        "zarr_format": format_number(fmt),
        "data_type": meta.data_type.to_json(fmt),
        "fill_value": meta.data_type.fill_to_json(meta.fill_value, fmt),
        "shape": list(array.shape),
        "shard_shape": None if array.shards is None else list(array.shards),
        "chunk_shape": None if array.chunks is None else list(array.chunks),
        "order": getattr(array, "order", None),
        "read_only": array.read_only,
        "store_type": type(array.store).__name__,
        "store": str(array.store),
        "filters": filters,
        "serializer": serializer,
        "compressors": compressors,
        "codecs": [c.to_json(fmt) for c in array.codecs],
        "dimension_names": None if array.dimension_names is None else list(array.dimension_names),
        "attributes": dict(array.attrs),
        "nbytes": array.nbytes,
        "nbytes_stored": stored_bytes,
        "storage_ratio": array.nbytes / stored_bytes if stored_bytes else None,
        "chunks_initialized": len(held),
        "nchunks": chunk_store.chunk_count(array),
    }


def group_info(group: Group) -> dict[str, Any]:
    arrays = groups = 0
    for _path, node in _walk(group):
        if isinstance(node, Array):
            arrays += 1
        else:
            groups += 1
    return {
        "name": group.name,
        "type": "Group",
        "zarr_format": format_number(group.metadata.format),
        "read_only": group.read_only,
        "store_type": type(group.store).__name__,
        "store": str(group.store),
        "attributes": dict(group.attrs),
        "members": arrays + groups,
        "arrays": arrays,
        "groups": groups,
    }


_ARRAY_LINES = (
    ("Name", "name"),
    ("Type", "type"),
    ("Zarr format", "zarr_format"),
    ("Data type", "data_type"),
    ("Fill value", "fill_value"),
    ("Shape", "shape"),
    ("Shard shape", "shard_shape"),
    ("Chunk shape", "chunk_shape"),
    ("Order", "order"),
    ("Read-only", "read_only"),
    ("Store type", "store_type"),
    ("Store", "store"),
    ("Filters", "filters"),
    ("Serializer", "serializer"),
    ("Compressors", "compressors"),
    ("Codecs", "codecs"),
    ("Dimension names", "dimension_names"),
    ("Attributes", "attributes"),
    ("No. bytes", "nbytes"),
    ("No. bytes stored", "nbytes_stored"),
    ("Storage ratio", "storage_ratio"),
)
_GROUP_LINES = (
    ("Name", "name"),
    ("Type", "type"),
    ("Zarr format", "zarr_format"),
    ("Read-only", "read_only"),
    ("Store type", "store_type"),
    ("Store", "store"),
    ("Attributes", "attributes"),
    ("No. members", "members"),
    ("No. arrays", "arrays"),
    ("No. groups", "groups"),
)


def _print_info(info: dict[str, Any]) -> None:
    """Label-aligned lines, as zarr-python prints `info_complete()`; codecs as their JSON."""
    is_array = info["type"] == "Array"
    rows: list[tuple[str, str]] = []
    for label, key in _ARRAY_LINES if is_array else _GROUP_LINES:
        value = info[key]
        if value is None and key in _SHOWN_WHEN_SET:
            continue
        if key == "codecs" and _split_codecs(info) == value:
            continue  # filters, serializer and compressors already show it
        rows.append((label, _cell(key, value)))
    if is_array:
        label = "Shards Initialized" if info["shard_shape"] is not None else "Chunks Initialized"
        rows.append((label, f"{info['chunks_initialized']}/{info['nchunks']}"))
    width = max(len(label) for label, _ in rows)
    for label, text in rows:
        print(f"{label:<{width}} : {printable(text)}")


_SHOWN_WHEN_SET = ("shard_shape", "order", "dimension_names", "storage_ratio", "serializer")


def _split_codecs(info: dict[str, Any]) -> list[Any]:
    serializer = [] if info["serializer"] is None else [info["serializer"]]
    return [*info["filters"], *serializer, *info["compressors"]]


def _cell(key: str, value: Any) -> str:
    if key == "chunk_shape" and value is None:
        return "<variable>"
    if key in ("nbytes", "nbytes_stored"):
        return human_size(value)
    if key == "storage_ratio":
        return f"{value:.1f}"
    if key in ("shape", "shard_shape", "chunk_shape", "dimension_names"):
        return str(tuple(value))
    if key in ("filters", "serializer", "compressors", "codecs", "data_type", "fill_value"):
        return value if isinstance(value, str) else json.dumps(value)
    if key == "attributes":
        names = sorted(value)
        more = ", ..." if len(names) > 8 else ""
        return f"{len(names)} ({', '.join(names[:8])}{more})" if names else "0"
    return str(value)


# -- tree and ls ----------------------------------------------------------------------------------
def _walk(group: Group, depth: int | None = None) -> Iterator[tuple[str, Array | Group]]:
    """(path below `group`, node) for every member `depth` levels down (None: all), parents
    first, members by name (`Group.members` walks without recursion)."""
    return group.members(max_depth=None if depth is None else depth - 1)


def _describe(node: Array | Group) -> dict[str, Any]:
    if isinstance(node, Array):
        return {
            "type": "array",
            "shape": list(node.shape),
            "dtype": str(node.dtype),
            "chunks": None if node.chunks is None else list(node.chunks),
        }
    return {"type": "group"}


def run_tree(args: argparse.Namespace) -> int:
    try:
        node = open_node(args.url, args.path, args.storage_options)
        if args.json:
            print_json(_tree_json(node, args.depth))
            return OK
        print(printable(node.name))
        if isinstance(node, Group):
            _print_tree(node, "", args.depth)
    except ZarrkitError as exc:
        return fail(args, exc)
    return OK


def _tree_json(node: Array | Group, depth: int | None) -> dict[str, Any]:
    out: dict[str, Any] = {"name": node.basename or "/", **_describe(node)}
    if not isinstance(node, Group) or depth == 0:
        return out
    # built from `members`' one walk, not by recursion: each entry finds its parent by path
    out["members"] = []
    by_path: dict[str, dict[str, Any]] = {"": out}
    for path, member in node.members(max_depth=None if depth is None else depth - 1):
        entry: dict[str, Any] = {"name": member.basename or "/", **_describe(member)}
        parent = path.rpartition("/")[0]
        by_path[parent]["members"].append(entry)
        if isinstance(member, Group) and (depth is None or path.count("/") + 1 < depth):
            entry["members"] = []
            by_path[path] = entry
    return out


def _print_tree(group: Group, indent: str, depth: int | None) -> None:
    """Lines are written as members are read, so a large hierarchy starts showing at once;
    a stack of member lists rather than recursion, so any depth prints."""
    stack = [(deque(group.members()), indent, depth)]
    while stack:
        members, indent, depth = stack[-1]
        if (depth is not None and depth < 1) or not members:
            stack.pop()
            continue
        name, node = members.popleft()
        last = not members
        branch = "└── " if last else "├── "
        if isinstance(node, Group):
            print(f"{indent}{branch}{printable(name)}", flush=True)
            deeper = None if depth is None else depth - 1
            stack.append((deque(node.members()), indent + ("    " if last else "│   "), deeper))
        else:
            print(f"{indent}{branch}{printable(name)} {node.shape} {node.dtype}", flush=True)


def run_ls(args: argparse.Namespace) -> int:
    try:
        node = open_node(args.url, args.path, args.storage_options)
        if isinstance(node, Array):
            members: Iterator[tuple[str, Array | Group]] = iter([(node.basename or "/", node)])
        else:
            members = _walk(node, depth=None if args.recursive else 1)
        if args.json:
            print_json([{"name": path, **_describe(m)} for path, m in members])
            return OK
        for path, member in members:
            print(printable(_ls_line(path, member)), flush=True)
    except ZarrkitError as exc:
        return fail(args, exc)
    return OK


def _ls_line(path: str, node: Array | Group) -> str:
    if isinstance(node, Group):
        return f"group  {path}/"
    shape = "x".join(str(n) for n in node.shape) or "()"
    return f"array  {path}  {shape}  {node.dtype}"
