"""The storage protocol of Zarr v3 (2023 final spec): one `zarr.json` per node, chunks under
the node's prefix by the chunk key encoding. No implicit groups."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar

from ..abc.chunk_grid import ChunkGrid
from ..abc.chunk_key_encoding import ChunkKeyEncoding
from ..abc.codec import Codec
from ..abc.data_type import DataType
from ..abc.extension import V3, SkippedExtension
from ..abc.format import ArrayMetadata, Format, GroupMetadata, NodeMetadata, freeze, read_in_units
from ..abc.store import Store
from ..documents import check_attributes as _attributes
from ..documents import check_chunk_size, load_document
from ..documents import check_shape as _shape
from ..errors import MetadataError
from ..metadata_field import read_fields, write_fields
from ..negotiation import extension_from_json, require_known

NAME = V3
METADATA_KEY = "zarr.json"

ARRAY_FIELDS = (
    "zarr_format",
    "node_type",
    "shape",
    "data_type",
    "chunk_grid",
    "chunk_key_encoding",
    "fill_value",
    "codecs",
    "attributes",
    "dimension_names",
    "storage_transformers",
)
GROUP_FIELDS = ("zarr_format", "node_type", "attributes")


def node_prefix(path: str) -> str:
    return f"{path}/" if path else ""


class V3Format(Format):
    name: ClassVar[str] = NAME
    title: ClassVar[str] = "zarr format 3"
    read_probes: ClassVar[bool] = True

    # -- keys -----------------------------------------------------------------------------
    def metadata_key(self, path: str) -> str:
        return f"{path}/{METADATA_KEY}" if path else METADATA_KEY

    def node_keys(self, path: str) -> tuple[str, ...]:
        return (self.metadata_key(path),)

    def probe(self, store: Store, path: str) -> bool:
        """A v3 node is at `path` when its zarr.json exists (the 2020 draft's root entry point
        is also `zarr.json`, but only at the root, and with a URI as `zarr_format`: any other
        root zarr.json is this format's, its errors this format's to report)."""
        key = self.metadata_key(path)
        if path:
            return bool(store.exists(key))
        raw = store.get(key)
        if raw is None:
            return False
        try:
            return not isinstance(json.loads(raw).get("zarr_format"), str)
        except (ValueError, AttributeError, UnicodeDecodeError, TypeError, RecursionError):
            return True  # malformed: let read_metadata say what is wrong with it

    # -- reading ----------------------------------------------------------------------------
    def parse_node(self, doc: Mapping[str, Any], where: str) -> NodeMetadata:
        if "zarr_format" not in doc:
            raise MetadataError(
                "expected 3: required field is missing", field="zarr_format", where=where
            )
        zarr_format = doc.get("zarr_format")
        if zarr_format != 3 or isinstance(zarr_format, bool):
            raise MetadataError(
                f"expected 3, got {zarr_format!r}", field="zarr_format", where=where
            )
        node_type = doc.get("node_type")
        if node_type == "array":
            return self.parse_array(doc, where)
        if node_type == "group":
            return self.parse_group(doc, where)
        raise MetadataError(
            f"expected 'array' or 'group', got {node_type!r}", field="node_type", where=where
        )

    def parse_group(self, doc: Mapping[str, Any], where: str) -> GroupMetadata:
        doc, extra = read_fields(doc, GROUP_FIELDS, format=NAME, node_type="group", where=where)
        attributes = _attributes(doc, where)
        return GroupMetadata(NAME, freeze(attributes), freeze(extra), freeze(dict(doc)))

    def parse_array(self, doc: Mapping[str, Any], where: str) -> ArrayMetadata:
        doc, extra = read_fields(doc, ARRAY_FIELDS, format=NAME, node_type="array", where=where)
        for required in (
            "shape",
            "data_type",
            "chunk_grid",
            "chunk_key_encoding",
            "fill_value",
            "codecs",
        ):
            if required not in doc:
                raise MetadataError("required field is missing", field=required, where=where)
        shape = _shape(doc["shape"], where)
        require_known(
            [(kind, doc[field], field) for kind, field in _EXTENSION_FIELDS if field in doc],
            NAME,
            where=where,
        )
        data_type = extension_from_json(
            "data_type", doc["data_type"], NAME, key="data_type", where=where
        )
        grid = extension_from_json(
            "chunk_grid", doc["chunk_grid"], NAME, key="chunk_grid", where=where
        )
        try:
            grid.validate(shape)
        except MetadataError as exc:
            raise exc.locate("chunk_grid", where) from None
        check_chunk_size(grid, data_type, "chunk_grid.configuration.chunk_shape", where)
        key_encoding = extension_from_json(
            "chunk_key_encoding",
            doc["chunk_key_encoding"],
            NAME,
            key="chunk_key_encoding",
            where=where,
        )
        try:
            fill_value = data_type.fill_from_json(doc["fill_value"], NAME)
        except MetadataError as exc:
            raise exc.locate("fill_value", where) from None
        codecs, skipped = _extensions("codec", doc["codecs"], "codecs", where, required=True)
        transformers, skipped_t = _extensions(
            "storage_transformer",
            doc.get("storage_transformers", []),
            "storage_transformers",
            where,
        )
        return ArrayMetadata(
            format=NAME,
            shape=shape,
            data_type=data_type,
            chunk_grid=grid,
            chunk_key_encoding=key_encoding,
            fill_value=fill_value,
            codecs=tuple(codecs),
            attributes=freeze(_attributes(doc, where)),
            dimension_names=_dimension_names(doc.get("dimension_names"), len(shape), where),
            storage_transformers=tuple(transformers),
            skipped=tuple(skipped + skipped_t),
            extra_fields=freeze(extra),
            document=freeze(dict(doc)),
        )

    # -- writing ----------------------------------------------------------------------------
    def array_document(
        self,
        *,
        shape: Sequence[int],
        data_type: DataType,
        chunk_grid: ChunkGrid,
        chunk_key_encoding: ChunkKeyEncoding,
        fill_value: Any,
        codecs: Sequence[Codec],
        attributes: Mapping[str, Any] | None,
        dimension_names: Sequence[str | None] | None,
        storage_transformers: Sequence[Any] = (),
    ) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "zarr_format": 3,
            "node_type": "array",
            "shape": [int(n) for n in shape],
            "data_type": data_type.to_json(NAME),
            "chunk_grid": chunk_grid.to_json(NAME),
            "chunk_key_encoding": chunk_key_encoding.to_json(NAME),
            "fill_value": data_type.fill_to_json(fill_value, NAME),
            "codecs": [c.to_json(NAME) for c in codecs],
            "attributes": dict(attributes or {}),
        }
        if dimension_names is not None:
            doc["dimension_names"] = list(dimension_names)
        # written even when empty, as zarr-python writes it: the same document byte for byte
        doc["storage_transformers"] = [t.to_json(NAME) for t in storage_transformers]
        return doc

    def group_document(self, attributes: Mapping[str, Any] | None) -> dict[str, Any]:
        return {"zarr_format": 3, "node_type": "group", "attributes": dict(attributes or {})}

    # -- nodes in a store -------------------------------------------------------------------
    def read_metadata(self, store: Store, path: str) -> NodeMetadata | None:
        """The node at `path`, or None when there is none (at the root also when `zarr.json`
        is the 2020 draft's entry point, as `probe` says). Reading is this format's probe: one
        request, where `probe` and then a read are two."""
        key = self.metadata_key(path)
        raw = store.get(key)
        if raw is None:
            return None
        where = f"{key} in {store}"
        doc = load_document(raw, where)
        if not path and isinstance(doc.get("zarr_format"), str):  # (the draft's entry point)
            return None
        return self.parse_node(doc, where)

    def written_document(self, doc: Mapping[str, Any], where: str) -> dict[str, Any]:
        """The fields a metadata-field plugin understands, as its `write` gives them."""
        node_type = doc.get("node_type")
        if node_type not in ("array", "group"):
            return dict(doc)
        known = ARRAY_FIELDS if node_type == "array" else GROUP_FIELDS
        return write_fields(doc, known, format=NAME, node_type=node_type, where=where)

    def write_metadata(self, store: Store, path: str, doc: Mapping[str, Any]) -> None:
        store.set(self.metadata_key(path), self.encode_document(doc))

    def children(self, store: Store, path: str) -> list[str]:
        """Names of the nodes directly under `path` (folders holding a zarr.json)."""
        store.require("list", f"list the members of group {path or '/'!r}")
        prefix = node_prefix(path)
        _keys, prefixes = store.list_dir(prefix)
        found = store.get_many([f"{prefix}{p}/{METADATA_KEY}" for p in prefixes])
        return [p for p in prefixes if f"{prefix}{p}/{METADATA_KEY}" in found]

    def child_metadata(self, store: Store, path: str) -> Iterator[tuple[str, NodeMetadata]]:
        """The nodes directly under `path` in name order, from one listing and one batched
        read of their `zarr.json` (what `children` reads anyway), so a group's members cost
        one request each, all in flight together; each is parsed once its document is in."""
        store.require("list", f"list the members of group {path or '/'!r}")
        prefix = node_prefix(path)
        _keys, prefixes = store.list_dir(prefix)
        names = {f"{prefix}{name}/{METADATA_KEY}": name for name in sorted(prefixes)}
        for keys, found in read_in_units(store, list(names)):
            for key in keys:
                if key in found:
                    where = f"{key} in {store}"
                    yield names[key], self.parse_node(load_document(found[key], where), where)

    def erase_node(self, store: Store, path: str) -> None:
        """Remove a node and everything below it."""
        store.erase_prefix(node_prefix(path))
        store.erase(self.metadata_key(path))


# -- reading helpers ----------------------------------------------------------------------
def _dimension_names(value: Any, ndim: int, where: str) -> tuple[str | None, ...] | None:
    if value is None:
        return None
    if (
        not isinstance(value, list)
        or len(value) != ndim
        or not all(v is None or isinstance(v, str) for v in value)
    ):
        raise MetadataError(
            f"expected a list of {ndim} strings or nulls, got {value!r}",
            field="dimension_names",
            where=where,
        )
    return tuple(value)


#: (kind, field) of every extension an array document names
_EXTENSION_FIELDS = (
    ("data_type", "data_type"),
    ("chunk_grid", "chunk_grid"),
    ("chunk_key_encoding", "chunk_key_encoding"),
    ("codec", "codecs"),
    ("storage_transformer", "storage_transformers"),
)


def _extensions(
    kind: str, items: Any, key: str, where: str, required: bool = False
) -> tuple[list[Any], list[SkippedExtension]]:
    if not isinstance(items, list) or (required and not items):
        raise MetadataError(
            f"expected a {'non-empty ' if required else ''}list, got {items!r}",
            field=key,
            where=where,
        )
    used: list[Any] = []
    skipped: list[SkippedExtension] = []
    for i, item in enumerate(items):
        ext = extension_from_json(kind, item, NAME, key=f"{key}[{i}]", where=where)
        (skipped if isinstance(ext, SkippedExtension) else used).append(ext)
    return used, skipped


FORMAT = V3Format()
