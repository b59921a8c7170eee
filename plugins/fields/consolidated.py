"""`consolidated_metadata` in a v3 group's `zarr.json`: the documents of every node below the
group, inline, as zarr-python 3 writes them (`{"kind": "inline", "must_understand": false,
"metadata": {...}}`).

Declaring the field means a group carrying it is read whatever its `must_understand` (and
`null`, which zarr-python reads as absent). On reading, its form is checked, so a malformed
one is refused naming the field when the group is opened; on writing, it is written with
`"must_understand": false` whatever it said, so that implementations which do not understand
it (zarr-python's readers of other formats, older zarrkit) still open the group. The group's
members are served from these documents by the kernel's hierarchy (`use_consolidated`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from zarrkit.abc import FieldSite, MetadataField, names
from zarrkit.errors import MetadataError


class ConsolidatedMetadata(MetadataField):
    names = names("consolidated_metadata")
    node_types = frozenset({"group"})  # zarr-python consolidates into groups only

    def read(self, value: Any, site: FieldSite) -> Any:
        _check(value)
        return value

    def write(self, value: Any, site: FieldSite) -> Any:
        _check(value)
        if value is None or value.get("must_understand") is False:
            return value
        return {**value, "must_understand": False}


def _check(value: Any) -> None:
    if value is None:  # zarr-python reads null as no consolidated metadata
        return
    if not isinstance(value, Mapping) or value.get("kind") != "inline":
        raise MetadataError(f'expected an object with "kind": "inline", got {_short(value)}')
    flag = value.get("must_understand", False)
    if not isinstance(flag, bool):
        raise MetadataError(f"expected true or false, got {_short(flag)}", field="must_understand")
    members = value.get("metadata")
    if not isinstance(members, Mapping) or not all(
        isinstance(v, Mapping) for v in members.values()
    ):
        raise MetadataError(
            f"expected an object of member documents, got {_short(members)}", field="metadata"
        )


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
