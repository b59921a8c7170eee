"""zarr-python's consolidation: `consolidate_metadata` gathers the documents of every node
below a group into the group's own document (v3: an inline `consolidated_metadata` field; v2:
`.zmetadata`, which the v2 format writes from it), and `use_consolidated` picks whether a group
opened reads its members from there or from the store's listing.

Reading a group's consolidated members is the kernel's (`zarrkit.formats.consolidated`, which
says what the documents mean); writing them is here.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, TypeVar

from zarrkit.abc.extension import V3
from zarrkit.abc.format import Format, GroupMetadata
from zarrkit.abc.store import Store
from zarrkit.api.groups import Group
from zarrkit.errors import MetadataError, NodeNotFoundError
from zarrkit.formats import get_format
from zarrkit.formats.consolidated import FIELD, ConsolidatedMembers, inline, member_order
from zarrkit.hierarchy import Group as KernelGroup
from zarrkit.hierarchy import node_from_metadata, read_metadata
from zarrkit.paths import normalize_path
from zarrkit.store_opening import open_store

__all__ = ["apply_use_consolidated", "consolidate_group", "consolidated_document"]

#: a group of the kernel's class or the API layer's
G = TypeVar("G", bound=KernelGroup)


def apply_use_consolidated(group: G, use_consolidated: bool | None) -> G:
    """A group just opened, as `use_consolidated` asks: None keeps what the store has, True
    requires consolidated metadata, False ignores it (members come from the store's listing)."""
    consolidated = isinstance(group._members, ConsolidatedMembers)
    if use_consolidated is None or bool(use_consolidated) == consolidated:
        return group
    if use_consolidated is False:  # (its metadata as if unconsolidated, as zarr-python shows it)
        meta = group.metadata
        plain = {k: v for k, v in meta.document.items() if k != FIELD}
        unconsolidated = replace(meta, document=plain)
        return type(group)(group.store, group.path, unconsolidated, read_only=group.read_only)
    raise MetadataError(
        f"group {group.name!r} has no consolidated metadata; create it with "
        f"zarrkit.consolidate_metadata()",
        field="consolidated_metadata",
        where=group._where(),
    )


def consolidate_group(store: Any, path: str = "", *, storage_options: dict | None = None) -> Group:
    """Gather the metadata of every node below the group at `path` into that group's document
    (v3 inline `consolidated_metadata`, v2 `.zmetadata`) and return the group, consolidated.

    Needs a store that can list (to find the nodes) and be written."""
    opened = open_store(store, mode="a", storage_options=storage_options)
    path = normalize_path(path)
    metadata = read_metadata(opened, path)
    if not isinstance(metadata, GroupMetadata):
        what = "nothing" if metadata is None else "an array"
        raise NodeNotFoundError(path or "/", opened, what=f"group (found {what})")
    opened.require("write", f"consolidate the metadata of group {path or '/'!r}")
    fmt = get_format(metadata.format)
    where = f"{fmt.metadata_key(path)} in {opened}"
    doc = fmt.written_document(consolidated_document(metadata, opened, path), where)
    consolidated = fmt.parse_group(doc, where)
    fmt.write_metadata(opened, path, doc)
    group = node_from_metadata(opened, path, consolidated, read_only=False)
    assert isinstance(group, Group)
    return group


def consolidated_document(metadata: GroupMetadata, store: Store, path: str) -> dict[str, Any]:
    """The group's document holding the documents of every node below it, read from the
    store (never from older consolidated metadata). Needs a store that can list."""
    fmt = get_format(metadata.format)
    members = dict(sorted(_collect(store, path, fmt).items(), key=lambda i: member_order(i[0])))
    doc = metadata.to_json()
    doc[FIELD] = inline(members)
    return doc


def _collect(store: Store, path: str, fmt: Format) -> dict[str, Any]:
    """Every node's document below `path`, by path relative to `path`."""
    out: dict[str, Any] = {}
    pending = [""]
    while pending:
        relative = pending.pop()
        here = "/".join(p for p in (path, relative) if p)
        for name in fmt.children(store, here):
            child_relative = f"{relative}/{name}" if relative else name
            child = fmt.read_metadata(store, f"{here}/{name}" if here else name)
            if child is None:
                continue
            doc = {k: v for k, v in child.to_json().items() if k != FIELD}
            if isinstance(child, GroupMetadata):
                if fmt.name == V3:  # zarr-python marks each member group as holding no members
                    doc[FIELD] = inline({})
                pending.append(child_relative)
            out[child_relative] = doc
    return out
