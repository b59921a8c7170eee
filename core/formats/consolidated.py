"""Consolidated metadata: a group's document holding the documents of every node below it, so a
hierarchy can be browsed with one read and on a store that cannot list (HTTP).

Two stored forms, as zarr-python writes them:

- v3: the group's `zarr.json` gets `"consolidated_metadata": {"kind": "inline",
  "must_understand": false, "metadata": {<path relative to the group>: <that node's zarr.json>}}`
  (member groups carry an empty `consolidated_metadata` of their own);
- v2: `.zmetadata` beside the group's `.zgroup`: `{"metadata": {".zgroup": ..., ".zattrs": ...,
  "a/.zarray": ..., "a/.zattrs": ...}, "zarr_consolidated_format": 1}`. The v2 format folds it
  into the group's document in the inline form (`fold_v2`) and writes it back (`unfold_v2`).

Semantics follow zarr-python 3. Opening a group uses its consolidated metadata when present
(`use_consolidated=None`), requires it (`True`, what `open_consolidated` does) or ignores it
(`False`). Through such a group, members, `tree()`, `in` and `group[name]` come from the
consolidated documents alone: no listing and no read of a member's own metadata. The documents are
trusted, not checked: nodes created after consolidating are not seen (`group[name]` raises
NodeNotFoundError, there is no fallback to the store), and a node changed since shows its old
metadata, until `consolidate_metadata` runs again or the group is opened with
`use_consolidated=False`. Deleting a member through such a group removes it from the
consolidated documents too, as zarr-python does.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator, Mapping
from typing import Any

from .. import hooks
from ..errors import MetadataError, NodeNotFoundError
from ..hierarchy import Group, node_from_metadata, normalize_path, read_metadata
from ..metadata import ArrayMetadata, GroupMetadata
from ..names import V2, V3
from . import get_format
from .documents import short_repr

FIELD = "consolidated_metadata"
_FORMAT_OF = {3: V3, 2: V2}


def inline(members: Mapping[str, Any]) -> dict[str, Any]:
    return {"kind": "inline", "must_understand": False, "metadata": dict(members)}


# -- the v2 form ----------------------------------------------------------------------------
def fold_v2(zmetadata: Mapping[str, Any], where: str) -> dict[str, Any]:
    """`.zmetadata` as the inline form: one folded v2 document per member path."""
    if zmetadata.get("zarr_consolidated_format") != 1:
        raise MetadataError(
            f"expected 1, got {zmetadata.get('zarr_consolidated_format')!r}",
            key="zarr_consolidated_format",
            where=where,
        )
    items = zmetadata.get("metadata")
    if not isinstance(items, Mapping):
        raise MetadataError(f"expected an object, got {items!r}", key="metadata", where=where)
    v2 = get_format(V2)
    docs: dict[str, dict[str, Any]] = {}
    for stored_key, value in items.items():
        path, _, name = stored_key.rpartition("/")
        if name not in (v2.ZARRAY, v2.ZGROUP, v2.ZATTRS) or not isinstance(value, Mapping):
            raise MetadataError(
                f"expected a '.zarray', '.zgroup' or '.zattrs' key holding an "
                f"object, got {stored_key!r}: {value!r}",
                key=f"metadata.{stored_key}",
                where=where,
            )
        if not path:
            continue  # the group's own objects: read from its keys
        doc = docs.setdefault(path, {})
        if name == v2.ZATTRS:
            doc["attributes"] = dict(value)
        else:
            doc.update({k: v for k, v in value.items() if k != "attributes"})
    nodes = {p: d for p, d in docs.items() if "zarr_format" in d}
    return inline(dict(sorted(nodes.items(), key=lambda item: _order(item[0]))))


def unfold_v2(group_doc: Mapping[str, Any]) -> dict[str, Any]:
    """The `.zmetadata` object of a folded v2 group document that holds consolidated metadata."""
    v2 = get_format(V2)
    out: dict[str, Any] = {}
    for path, doc in [("", group_doc), *_members_of(group_doc, "the group").items()]:
        prefix = f"{path}/" if path else ""
        objects = v2.split_document(doc)
        objects.setdefault(v2.ZATTRS, {})
        for name, value in objects.items():
            out[prefix + name] = value
    return {"metadata": out, "zarr_consolidated_format": 1}


# -- reading ----------------------------------------------------------------------------------
def _members_of(doc: Mapping[str, Any], where: str) -> Mapping[str, Any]:
    value = doc.get(FIELD)
    if not isinstance(value, Mapping) or value.get("kind") != "inline":
        raise MetadataError(
            f'expected an object with "kind": "inline", got {short_repr(value)}',
            key=FIELD,
            where=where,
        )
    members = value.get("metadata")
    if not isinstance(members, Mapping) or not all(
        isinstance(v, Mapping) for v in members.values()
    ):
        raise MetadataError(
            f"expected an object of member documents, got {short_repr(members)}",
            key=f"{FIELD}.metadata",
            where=where,
        )
    return members


def has_consolidated(metadata: Any) -> bool:
    return isinstance(metadata, GroupMetadata) and metadata.document.get(FIELD) is not None


def group_for(store: Any, path: str, metadata: GroupMetadata, read_only: bool) -> Any:
    """The group object for a group's metadata: consolidated when its document holds members."""
    if has_consolidated(metadata):
        return ConsolidatedGroup(store, path, metadata, read_only=read_only)
    return Group(store, path, metadata, read_only=read_only)


def choose(group: Any, use_consolidated: bool | None) -> Any:
    """Apply `use_consolidated` to a group just opened: None keeps what the store has, True
    requires consolidated metadata, False ignores it."""
    if use_consolidated is None:
        return group
    if use_consolidated is False:
        if isinstance(group, ConsolidatedGroup):
            return Group(group.store, group.path, group.metadata, read_only=group.read_only)
        return group
    if not isinstance(group, ConsolidatedGroup):
        where = f"{get_format(group.metadata.format).metadata_key(group.path)} in {group.store}"
        raise MetadataError(
            f"group {group.name!r} has no consolidated metadata; create it with "
            f"zarrkit.consolidate_metadata()",
            key=FIELD,
            where=where,
        )
    return group


def _order(path: str) -> tuple:
    """zarr-python's order of consolidated members: by depth, then by name."""
    return path.count("/"), unicodedata.normalize("NFKC", path).casefold()


class ConsolidatedGroup(Group):
    """A group whose members come from consolidated metadata (see the module docstring).

    The documents live in the group that holds them (`holder`); a subgroup reached through
    it sees the part under its own path, so a deletion anywhere is seen everywhere."""

    def __init__(
        self,
        store: Any,
        path: str,
        metadata: Any,
        *,
        read_only: bool = False,
        holder: ConsolidatedGroup | None = None,
        relative: str = "",
    ):
        self._holder = holder if holder is not None else self
        self._relative = relative
        super().__init__(store, path, metadata, read_only=read_only)
        if holder is None:
            _members_of(metadata.document, self._where())

    def _pickled_options(self) -> dict[str, Any]:
        if self._holder is self:
            return {}
        return {"holder": self._holder, "relative": self._relative}

    # -- what the consolidated documents say --------------------------------------------
    def _all(self) -> dict[str, Any]:
        """Member documents below this group, by path relative to it."""
        members = _members_of(self._holder.metadata.document, self._holder._where())
        if not self._relative:
            return dict(members)
        prefix = self._relative + "/"
        return {k[len(prefix) :]: v for k, v in members.items() if k.startswith(prefix)}

    def _node(self, relative: str, docs: Mapping[str, Any] | None = None) -> Any:
        doc = (self._all() if docs is None else docs).get(relative)
        path = self._child_path(relative)
        if doc is None:
            raise NodeNotFoundError(path, self._store, what="node in the consolidated metadata")
        where = f"{path!r} in the consolidated metadata of {self.name!r} in {self._store}"
        zarr_format = doc.get("zarr_format")
        fmt = (
            _FORMAT_OF.get(zarr_format, self._meta.format)
            if isinstance(zarr_format, int)
            else self._meta.format
        )  # (a list: unhashable)
        stripped = {k: v for k, v in _thaw(doc).items() if k != FIELD}
        metadata = get_format(fmt).parse_node(stripped, where)
        if isinstance(metadata, ArrayMetadata):
            return node_from_metadata(self._store, path, metadata, self._read_only)
        return ConsolidatedGroup(
            self._store,
            path,
            metadata,
            read_only=self._read_only,
            holder=self._holder,
            relative="/".join(p for p in (self._relative, relative) if p),
        )

    def keys(self) -> list[str]:
        return sorted(k for k in self._all() if "/" not in k)

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        relative = name.strip("/")
        return bool(relative) and relative in self._all()

    def __getitem__(self, name: str) -> Any:
        relative = self._child_path(name)[len(self._path) + 1 if self._path else 0 :]
        node = self._node(relative)
        hooks.metadata_loaded(node)
        return node

    def _members(self) -> Iterator[tuple[str, Any]]:
        docs = self._all()
        for name in sorted(k for k in docs if "/" not in k):
            yield name, self._node(name, docs)

    def __delitem__(self, name: str) -> None:
        """Erase the member and drop it (and what is below it) from the consolidated
        documents, rewriting the group that holds them."""
        self._check_writeable()
        relative = self._child_path(name)[len(self._path) + 1 if self._path else 0 :]
        node = self._node(relative)
        get_format(node.metadata.format).erase_node(self._store, node.path)
        self._holder._forget("/".join(p for p in (self._relative, relative) if p))

    def _forget(self, relative: str) -> None:
        members = {
            k: v
            for k, v in _members_of(self._meta.document, self._where()).items()
            if k != relative and not k.startswith(relative + "/")
        }
        doc = self._meta.to_json()
        doc[FIELD] = inline(_thaw(members))
        metadata = self._format.parse_node(doc, self._where())
        self._format.write_metadata(self._store, self._path, doc)
        self._set_metadata(metadata)

    def __repr__(self) -> str:
        return f"<zarrkit.Group {self.name!r} store={self._store} (consolidated)>"


def _thaw(doc: Any) -> Any:
    if isinstance(doc, Mapping):
        return {k: _thaw(v) for k, v in doc.items()}
    if isinstance(doc, (list, tuple)):
        return [_thaw(v) for v in doc]
    return doc


# -- writing ----------------------------------------------------------------------------------
def consolidate_metadata(store: Any, path: str = "", *, storage_options: dict | None = None) -> Any:
    """Gather the metadata of every node below the group at `path` into that group's document
    (v3 inline `consolidated_metadata`, v2 `.zmetadata`) and return the group, consolidated.

    Needs a store that can list (to find the nodes) and be written."""
    from ..storage import open_store

    opened = open_store(store, mode="a", storage_options=storage_options)
    path = normalize_path(path)
    metadata = read_metadata(opened, path)
    if not isinstance(metadata, GroupMetadata):
        what = "nothing" if metadata is None else "an array"
        raise NodeNotFoundError(path or "/", opened, what=f"group (found {what})")
    opened.require("write", f"consolidate the metadata of group {path or '/'!r}")
    fmt = get_format(metadata.format)
    members = dict(sorted(_collect(opened, path, fmt).items(), key=lambda item: _order(item[0])))
    doc = metadata.to_json()
    doc[FIELD] = inline(members)
    where = f"{fmt.metadata_key(path)} in {opened}"
    consolidated = fmt.parse_group(doc, where)
    fmt.write_metadata(opened, path, doc)
    return group_for(opened, path, consolidated, read_only=False)


def _collect(store: Any, path: str, fmt: Any) -> dict[str, Any]:
    """Every node's document below `path`, read from the store (never from older consolidated
    metadata), by path relative to `path`."""
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
                if fmt.NAME == V3:  # zarr-python marks each member group as holding no members
                    doc[FIELD] = inline({})
                pending.append(child_relative)
            out[child_relative] = doc
    return out
