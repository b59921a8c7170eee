"""zarr-python's view of a node's metadata: what `array.metadata` and `group.metadata` of the
API layer's `zarrkit.Array` / `zarrkit.Group` are.

The kernel keeps a node's metadata as its own `ArrayMetadata` / `GroupMetadata` (the document
and what it parses to). The classes here are those, with what zarr-python's `ArrayV3Metadata`,
`ArrayV2Metadata` and `GroupMetadata` also show: `zarr_format`, `to_dict()`, and a group's
`consolidated_metadata` (the metadata of its members, nested by group). `zarrkit.Array` and
`zarrkit.Group` keep their metadata in these classes (`shown`), so the kernel works with them
as with its own.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, overload

from zarrkit.abc.extension import V2, V3
from zarrkit.abc.format import ArrayMetadata as KernelArrayMetadata
from zarrkit.abc.format import GroupMetadata as KernelGroupMetadata
from zarrkit.abc.format import NodeMetadata, thaw, thaw_document
from zarrkit.formats import get_format
from zarrkit.formats.consolidated import FIELD as CONSOLIDATED_FIELD

__all__ = ["ArrayMetadata", "ConsolidatedMetadata", "GroupMetadata", "shown"]

#: a member document's `zarr_format` -> the format it is parsed in
_FORMAT_OF = {3: V3, 2: V2}


class _Shown:
    """What zarr-python shows of either kind of metadata."""

    format: str
    attributes: Mapping[str, Any]
    document: Mapping[str, Any]

    @property
    def zarr_format(self) -> int:
        """The `zarr_format` number of the node's format (the 2020 draft is a version 3)."""
        return 2 if self.format == V2 else 3

    def to_dict(self) -> dict[str, Any]:
        """The stored document as plain JSON (zarr-python's `to_dict`); v2's attributes, kept
        beside the document in `.zattrs`, in it as `attributes`."""
        doc = thaw_document(self.document)
        if self.format == V2 and "attributes" not in doc:
            doc["attributes"] = thaw(self.attributes)
        return doc


class ArrayMetadata(_Shown, KernelArrayMetadata):
    """An array's metadata as zarr-python shows it (`ArrayV3Metadata`, `ArrayV2Metadata`)."""


class GroupMetadata(_Shown, KernelGroupMetadata):
    """A group's metadata as zarr-python shows it (its `GroupMetadata`)."""

    @property
    def consolidated_metadata(self) -> ConsolidatedMetadata | None:
        """The consolidated metadata this group's document holds, as zarr-python shows it: the
        metadata of the group's direct members by name, each member group holding its own
        members likewise (the stored form is flat, by path); None when it holds none."""
        value = self.document.get(CONSOLIDATED_FIELD)
        if not isinstance(value, Mapping):
            return None
        return ConsolidatedMetadata(
            _nested_members(self, value.get("metadata") or {}),
            kind=str(value.get("kind", "inline")),
            must_understand=bool(value.get("must_understand", False)),
        )


@dataclass(frozen=True)
class ConsolidatedMetadata:
    """zarr-python's `ConsolidatedMetadata`: member metadata by name (direct members only;
    a member group's own are in its `consolidated_metadata`)."""

    metadata: Mapping[str, Any]
    kind: str = "inline"
    must_understand: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "must_understand": self.must_understand,
            "metadata": {name: m.to_dict() for name, m in self.metadata.items()},
        }


@overload
def shown(metadata: KernelArrayMetadata) -> ArrayMetadata: ...
@overload
def shown(metadata: KernelGroupMetadata) -> GroupMetadata: ...
def shown(metadata: NodeMetadata) -> ArrayMetadata | GroupMetadata:
    """`metadata` (the kernel's) as zarr-python shows it; metadata already so is returned."""
    if isinstance(metadata, ArrayMetadata | GroupMetadata):
        return metadata
    cls = ArrayMetadata if isinstance(metadata, KernelArrayMetadata) else GroupMetadata
    fields = {f.name: getattr(metadata, f.name) for f in dataclasses.fields(metadata)}
    return cls(**fields)


def _nested_members(group: GroupMetadata, flat: Mapping[str, Any]) -> dict[str, Any]:
    """The flat `{path: document}` of stored consolidated metadata as zarr-python's nested
    objects: direct members, a member group given the documents below it as its own."""
    members: dict[str, Any] = {}
    for path in sorted(p for p in flat if "/" not in p):
        doc = dict(flat[path])
        below = {p[len(path) + 1 :]: d for p, d in flat.items() if p.startswith(path + "/")}
        if doc.get("node_type", "group") == "group" and (below or CONSOLIDATED_FIELD in doc):
            doc[CONSOLIDATED_FIELD] = {
                "kind": "inline",
                "must_understand": False,
                "metadata": below,
            }
        members[path] = _member(group, path, doc)
    return members


def _member(group: GroupMetadata, relative: str, doc: Mapping[str, Any]) -> Any:
    """One member document as its metadata (a member group keeps the consolidated documents
    below it, to show them in turn)."""
    zarr_format = doc.get("zarr_format")
    fmt = (
        _FORMAT_OF.get(zarr_format, group.format) if isinstance(zarr_format, int) else group.format
    )  # (a list: unhashable)
    where = f"{relative!r} in the consolidated metadata"
    return shown(get_format(fmt).parse_node(thaw_document(doc), where))
