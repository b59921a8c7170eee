"""Consolidated metadata: a group's document holding the documents of every node below it, so a
hierarchy can be browsed with one read and on a store that cannot list (HTTP).

Two stored forms, as zarr-python writes them:

- v3: the group's `zarr.json` gets `"consolidated_metadata": {"kind": "inline",
  "must_understand": false, "metadata": {<path relative to the group>: <that node's zarr.json>}}`
  (member groups carry an empty `consolidated_metadata` of their own);
- v2: `.zmetadata` beside the group's `.zgroup`: `{"metadata": {".zgroup": ..., ".zattrs": ...,
  "a/.zarray": ..., "a/.zattrs": ...}, "zarr_consolidated_format": 1}`. The v2 format folds it
  into the group's document in the inline form (`v2.fold_zmetadata`) and writes it back
  (`v2.unfold_zmetadata`).

Semantics follow zarr-python 3. Opening a group uses its consolidated metadata when present
(`use_consolidated=None`), requires it (`True`, what `open_consolidated` does) or ignores it
(`False`). A group so opened is given its members by a `ConsolidatedMembers` source rather than
by the store's listing: members, `tree()`, `in` and `group[name]` come from the consolidated
documents alone, with no listing and no read of a member's own metadata. The documents are
trusted, not checked: nodes created after consolidating are not seen (`group[name]` raises
NodeNotFoundError, there is no fallback to the store), and a node changed since shows its old
metadata, until `consolidate_metadata` runs again or the group is opened with
`use_consolidated=False`. Deleting a member through such a group removes it from the
consolidated documents too, as zarr-python does. Writing consolidated metadata
(`consolidate_metadata`) is the API layer's (`zarrkit.api.consolidation`).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator, Mapping
from typing import Any, Protocol

from ..abc.extension import V2, V3
from ..abc.format import GroupMetadata, NodeMetadata, thaw, thaw_document
from ..documents import short_repr
from ..errors import MetadataError
from . import get_format

FIELD = "consolidated_metadata"
"""The top-level field of a group's document that holds consolidated metadata."""
_FORMAT_OF = {3: V3, 2: V2}


def inline(members: Mapping[str, Any]) -> dict[str, Any]:
    """The value of the consolidated-metadata field holding `members` (path -> document)."""
    return {"kind": "inline", "must_understand": False, "metadata": dict(members)}


def member_documents(doc: Mapping[str, Any], where: str) -> Mapping[str, Any]:
    """The member documents of a group document holding consolidated metadata, by path
    relative to the group; `MetadataError` naming the field when they are malformed."""
    value = doc.get(FIELD)
    if not isinstance(value, Mapping) or value.get("kind") != "inline":
        raise MetadataError(
            f'expected an object with "kind": "inline", got {short_repr(value)}',
            field=FIELD,
            where=where,
        )
    members = value.get("metadata")
    if not isinstance(members, Mapping) or not all(
        isinstance(v, Mapping) for v in members.values()
    ):
        raise MetadataError(
            f"expected an object of member documents, got {short_repr(members)}",
            field=f"{FIELD}.metadata",
            where=where,
        )
    return members


def has_consolidated(metadata: Any) -> bool:
    return isinstance(metadata, GroupMetadata) and metadata.document.get(FIELD) is not None


def member_order(path: str) -> tuple[int, str]:
    """zarr-python's order of consolidated members: by depth, then by name."""
    return path.count("/"), unicodedata.normalize("NFKC", path).casefold()


# -- a group's members from the documents -----------------------------------------------------
class GroupView(Protocol):
    """What a member source needs of the group it serves."""

    @property
    def store(self) -> Any: ...

    @property
    def path(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def metadata(self) -> GroupMetadata: ...

    def _replace_document(self, doc: dict[str, Any]) -> None: ...


class ConsolidatedMembers:
    """The members of a group as its consolidated metadata says (see the module docstring).

    The documents live in the group that holds them (`holder`, None: the group this source
    serves); a subgroup reached through it is given a source for the part under its own path
    (`relative`), reading the holder's current documents, so a deletion anywhere is seen
    everywhere. The holder is kept as a group, not as documents, so the source pickles with the
    group it serves and a deletion rewrites the holder's document through the holder itself."""

    def __init__(self, holder: GroupView | None = None, relative: str = ""):
        self._holder = holder
        self._relative = relative

    def __reduce__(self) -> tuple[Any, ...]:
        return ConsolidatedMembers, (self._holder, self._relative)

    def check(self, group: GroupView) -> None:
        """Refuse malformed consolidated metadata when a group is opened, not at first use."""
        holder = self._holder or group
        member_documents(holder.metadata.document, _where(holder))

    def _documents(self, group: GroupView) -> dict[str, Any]:
        """Member documents below the group served, by path relative to it."""
        holder = self._holder or group
        members = member_documents(holder.metadata.document, _where(holder))
        if not self._relative:
            return dict(members)
        prefix = self._relative + "/"
        return {k[len(prefix) :]: v for k, v in members.items() if k.startswith(prefix)}

    def names(self, group: GroupView) -> list[str]:
        return sorted(k for k in self._documents(group) if "/" not in k)

    def find(self, group: GroupView, relative: str) -> NodeMetadata | None:
        return self._parse(group, relative, self._documents(group).get(relative))

    def listing(self, group: GroupView) -> Iterator[tuple[str, NodeMetadata]]:
        docs = self._documents(group)
        for name in sorted(k for k in docs if "/" not in k):
            metadata = self._parse(group, name, docs[name])
            if metadata is not None:
                yield name, metadata

    def below(self, group: GroupView, relative: str) -> ConsolidatedMembers:
        """The source of the member group at `relative`: the same holder's documents."""
        return ConsolidatedMembers(
            self._holder or group, "/".join(p for p in (self._relative, relative) if p)
        )

    def forget(self, group: GroupView, relative: str) -> None:
        """Drop an erased member (and what is below it) from the consolidated documents,
        rewriting the group that holds them."""
        holder = self._holder or group
        dropped = "/".join(p for p in (self._relative, relative) if p)
        members = {
            k: v
            for k, v in member_documents(holder.metadata.document, _where(holder)).items()
            if k != dropped and not k.startswith(dropped + "/")
        }
        doc = holder.metadata.to_json()
        doc[FIELD] = inline(thaw(members))
        holder._replace_document(doc)

    def missing(self) -> str:
        """What a `NodeNotFoundError` says was looked for."""
        return "node in the consolidated metadata"

    def _parse(self, group: GroupView, relative: str, doc: Any) -> NodeMetadata | None:
        if doc is None:
            return None
        path = "/".join(p for p in (group.path, relative) if p)
        where = f"{path!r} in the consolidated metadata of {group.name!r} in {group.store}"
        zarr_format = doc.get("zarr_format")
        fmt = (
            _FORMAT_OF.get(zarr_format, group.metadata.format)
            if isinstance(zarr_format, int)
            else group.metadata.format
        )  # (a list: unhashable)
        stripped = {k: v for k, v in thaw_document(doc).items() if k != FIELD}
        return get_format(fmt).parse_node(stripped, where)


def _where(group: GroupView) -> str:
    return f"{get_format(group.metadata.format).metadata_key(group.path)} in {group.store}"
