"""`create_hierarchy`: zarr-python's way of creating a whole hierarchy from metadata objects.

zarr-python takes its own metadata classes (`GroupMetadata(attributes=...)`,
`ArrayV3Metadata(...)`); zarrkit takes those (anything with zarr-python's `to_dict()`), its
own (`array.metadata` of an existing node) and plain documents (the JSON of `zarr.json`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from zarrkit.abc.format import ArrayMetadata, GroupMetadata
from zarrkit.api.arrays import Array
from zarrkit.api.groups import Group, public_node
from zarrkit.api.metadata import shown
from zarrkit.creation import format_name, prepare_path
from zarrkit.errors import InvalidArgumentError, MetadataError, contains_error
from zarrkit.formats import get_format
from zarrkit.hierarchy import node_from_metadata, read_metadata
from zarrkit.paths import normalize_path
from zarrkit.store_opening import open_store

__all__ = ["create_hierarchy"]


def create_hierarchy(
    *, store: Any, nodes: Mapping[str, Any], overwrite: bool = False
) -> Iterator[tuple[str, Array | Group]]:
    """Create every node of `nodes` (path -> metadata, as zarr-python's `create_hierarchy`),
    and the groups above them that `nodes` leaves out, yielding `(path, node)` for each, parents
    before their members (an implicit group only when it was created). A node already at a path named in `nodes` is refused
    (`ContainsArrayError` / `ContainsGroupError`) unless `overwrite`; a group already where an
    implicit one would go is kept. All the nodes must have one `zarr_format`."""
    opened = open_store(store, mode="a")
    documents = {normalize_path(path.lstrip("/")): _document(m, path) for path, m in nodes.items()}
    formats = {int(doc.get("zarr_format", 3)) for doc in documents.values()}
    if len(formats) > 1:
        raise InvalidArgumentError(
            f"the nodes of a hierarchy have one zarr_format, got {sorted(formats)}"
        )
    fmt = format_name(formats.pop() if formats else 3)
    format_module = get_format(fmt)
    implicit = {
        "/".join(p.split("/")[:i]) for p in documents if p for i in range(p.count("/") + 1)
    } - set(documents)
    for path in sorted({*documents, *implicit}, key=_depth):  # (parents first)
        if path in implicit:  # (kept when there, an array in the way refused)
            found = read_metadata(opened, path)
            if found is None:
                prepare_path(opened, path, fmt, overwrite=False)
                format_module.write_metadata(opened, path, format_module.group_document(None))
                created = read_metadata(opened, path)
                assert created is not None
                yield path, public_node(node_from_metadata(opened, path, created, False))
            elif not isinstance(found, GroupMetadata):
                raise contains_error(found.node_type)(
                    f"cannot create the hierarchy: {path or '/'!r} is an array"
                )
            continue
        where = f"create_hierarchy: the node {path or '/'!r}"
        parsed = format_module.parse_node(documents[path], where)  # (refused before writing)
        prepare_path(opened, path, fmt, overwrite=overwrite)
        written = format_module.written_document(parsed.to_json(), where)
        format_module.write_metadata(opened, path, written)
        yield path, public_node(node_from_metadata(opened, path, parsed, False))


def _depth(path: str) -> tuple[int, str]:
    return (path.count("/") + 1 if path else 0, path)


def _document(metadata: Any, path: str) -> dict[str, Any]:
    """A node's document from its metadata: zarr-python's or zarrkit's object (`to_dict()`)
    or the document itself."""
    if isinstance(metadata, ArrayMetadata | GroupMetadata):  # (the kernel's: no `to_dict`)
        metadata = shown(metadata)
    to_dict = getattr(metadata, "to_dict", None)
    doc = to_dict() if callable(to_dict) else metadata
    if not isinstance(doc, Mapping):
        raise MetadataError(
            f"create_hierarchy: the node {path!r} must be metadata (an object with to_dict(), "
            f"or its document), got {type(metadata).__name__}"
        )
    out: dict[str, Any] = _plain(doc)
    if out.get("zarr_format") == 3:
        out.setdefault("node_type", "group" if "shape" not in out else "array")
        if out.get("consolidated_metadata", ...) is None:  # (zarr-python's "none")
            del out["consolidated_metadata"]
    return out


def _plain(value: Any) -> Any:
    """zarr-python's `to_dict()` (tuples, numpy scalars) as plain JSON values."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value
