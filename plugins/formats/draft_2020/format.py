"""The storage protocol of the 2020 draft of Zarr v3 (seed 001), a format plugin, as zarr-python 2.x's
experimental v3 mode writes and reads it.

A hierarchy has one entry point (`zarr.json` at the store root, see `entry`); nodes are
documents under `meta/root` (`foo/bar.array.json`, `foo.group.json`, the root as
`meta/root.array.json` or `meta/root.group.json`); chunks live under `data/root/<path>/` (see
`keys`). A path with no document but with documents below it is an implicit group.

The canonical chain of a draft array is `[filters] + [LayoutCodec(chunk_memory_layout, byte
order of the data type)] + [compressor]`. Where zarr-python 2.x departs from the seed, zarrkit
reads and writes what zarr-python 2.x does (docs/architecture.md lists each case): filters are
numcodecs configurations in `attributes["filters"]`, a 0-d array's chunk is `c0`, a
`dimension_separator` key may sit next to the grid's separator, numpy types outside the core are
extension objects, and `+Infinity` is also read as `Infinity`.

Creation defaults come from the `zarrkit_array_defaults` hook like every format's; the draft's
answer speaks the draft: `{"compressor": ..., "chunk_grid": ...}`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from zarrkit.abc import V2, V3_DRAFT_2020, Codec, CodecKind, MemoryLayout, Store
from zarrkit.abc.format import (
    ArrayMetadata,
    Format,
    GroupMetadata,
    NodeMetadata,
    array_defaults,
    check_chunk_size,
    check_fits,
    fill_value_or_default,
    freeze,
    load_document,
    thaw_document,
)
from zarrkit.abc.format import check_attributes as _attributes
from zarrkit.abc.format import check_shape as _shape
from zarrkit.errors import MetadataError
from zarrkit.helpers import build, extension_list, lookup, require_known, unknown_fields
from zarrkit.plugins.formats.draft_2020 import entry as draft_entry
from zarrkit.plugins.formats.draft_2020.keys import (
    DEFAULT_SUFFIX,
    ENTRY_POINT_KEY,
    SEPARATORS,
    DraftChunkKeys,
    array_key,
    data_prefix,
    group_key,
    meta_base,
    meta_prefix,
    separator_of,
)
from zarrkit.plugins.formats.draft_2020.types import data_type_json, parse_data_type
from zarrkit.plugins.formats.layout_codec import LayoutCodec, as_layout

NAME = V3_DRAFT_2020

ARRAY_FIELDS = (
    "shape",
    "data_type",
    "chunk_grid",
    "chunk_memory_layout",
    "fill_value",
    "extensions",
    "attributes",
    "compressor",
    # written by zarr-python 2.x, not in the seed
    "dimension_separator",
    "storage_transformers",
)
GROUP_FIELDS = ("attributes",)
#: the attribute under which zarr-python 2.x keeps an array's filters
FILTERS_ATTRIBUTE = "filters"
CREATION_OPTIONS = ("compressor", "filters", "order", "chunk_memory_layout", "dimension_separator")


# -- keys ---------------------------------------------------------------------------------
def _suffix(store: Store) -> str:
    entry = draft_entry.read(store)
    return entry.suffix if entry is not None else DEFAULT_SUFFIX


# -- finding nodes --------------------------------------------------------------------------
def _find(store: Store, path: str, suffix: str) -> tuple[str, bytes | None] | None:
    """The seed's order: the array document, the group document, then list_dir of the
    path's folder under `meta/root` (non-empty: an implicit group). A store that cannot list
    cannot tell an implicit group from nothing, so it gets a CapabilityError, not an answer."""
    for kind, key in (("array", array_key(path, suffix)), ("group", group_key(path, suffix))):
        raw = store.get(check_fits(store, key))
        if raw is not None:
            return kind, raw
    store.require("list", f"check for an implicit group at {path or '/'!r} (2020 draft)")
    keys, prefixes = store.list_dir(meta_prefix(path))
    return ("implicit", None) if keys or prefixes else None


# -- reading ------------------------------------------------------------------------------


def _is_array_document(doc: Mapping[str, Any]) -> bool:
    """Draft documents carry no node type (the key does); array documents have a shape."""
    return any(k in doc for k in ("shape", "data_type", "chunk_grid"))


def _chain(filters: list[Codec], layout: LayoutCodec, compressor: Codec | None) -> list[Codec]:
    """Filters that are array -> bytes (zarr-python's object codecs, which it lists first)
    take the layout's place; the others run before it."""
    serializers = [f for f in filters if f.kind is CodecKind.ARRAY_BYTES]
    rest = [f for f in filters if f.kind is not CodecKind.ARRAY_BYTES]
    chain = rest + (serializers[:1] if serializers else [layout])
    return chain + ([compressor] if compressor is not None else [])


def _grid(value: Any, shape: tuple[int, ...], where: str) -> tuple[Any, DraftChunkKeys]:
    """`{"type": "regular", "chunk_shape": [...], "separator": "/"}`, or an extension grid
    `{"extension": URI, "type": ..., ...}`. The separator is the format's (chunk keys); the
    rest goes to the grid plugin as its configuration."""
    if not isinstance(value, Mapping):
        raise MetadataError(
            f"expected an object with 'type' and 'chunk_shape', got {value!r}",
            field="chunk_grid",
            where=where,
        )
    separator = value.get("separator", "/")
    if separator not in SEPARATORS:
        raise MetadataError(
            f"expected one of {list(SEPARATORS)}, got {separator!r}",
            field="chunk_grid.separator",
            where=where,
        )
    if "extension" in value:
        name, config = (
            value["extension"],
            {k: v for k, v in value.items() if k not in ("extension", "separator")},
        )
    else:
        name = value.get("type")
        config = {k: v for k, v in value.items() if k not in ("type", "separator")}
    if not isinstance(name, str):
        raise MetadataError(
            f"expected a string 'type' (or 'extension'), got {name!r}",
            field="chunk_grid.type",
            where=where,
        )
    cls = lookup("chunk_grid", name, NAME, where=where)
    grid = build(cls, name, config, NAME, key="chunk_grid", where=where)
    try:
        grid.validate(shape)
    except MetadataError as exc:
        raise exc.locate("chunk_grid", where) from None
    return grid, DraftChunkKeys(separator)


def _extension_names(
    doc: Mapping[str, Any], filters: Any, filters_key: str
) -> list[tuple[str, Any, str]]:
    """The extensions a draft array document names, as `require_known` takes them (by name,
    each in its field): the chunk grid, the memory layout, the compressor and the filters (v2
    ids). Malformed fields are left out: their parse says what is wrong. (A data type is not
    among them: the draft's extension types carry a fallback, so none is unknown alone.)"""
    named: list[tuple[str, Any, str]] = []
    grid = doc.get("chunk_grid")
    if isinstance(grid, Mapping):
        name = grid.get("extension", grid.get("type"))
        if isinstance(name, str):
            named.append(("chunk_grid", {"name": name}, "chunk_grid"))
    layout = doc.get("chunk_memory_layout")
    if isinstance(layout, Mapping):
        layout = layout.get("extension")
    if isinstance(layout, str):
        named.append(("memory_layout", {"name": layout}, "chunk_memory_layout"))
    compressor = doc.get("compressor")
    if isinstance(compressor, Mapping) and isinstance(compressor.get("codec"), str):
        named.append(("codec", {"name": compressor["codec"]}, "compressor"))
    if isinstance(filters, list) and all(
        isinstance(f, Mapping) and isinstance(f.get("id"), str) for f in filters
    ):
        named.append(("codec", [{"name": f["id"]} for f in filters], filters_key))
    return named


def _check_dimension_separator(doc: Mapping[str, Any], keys: DraftChunkKeys, where: str) -> None:
    """zarr-python 2.x writes `dimension_separator` when its creator gave one, and reads the
    grid's separator; two different ones would leave the chunk keys ambiguous."""
    if "dimension_separator" not in doc or doc["dimension_separator"] is None:
        return
    if doc["dimension_separator"] != keys.separator:
        raise MetadataError(
            f"{doc['dimension_separator']!r} differs from the chunk grid's "
            f"separator {keys.separator!r}",
            field="dimension_separator",
            where=where,
        )


def _layout(value: Any, where: str) -> MemoryLayout:
    """'C', 'F', or an extension object `{"extension": URI, "type": ..., ...}`."""
    if isinstance(value, str):
        name, config = value, {}
    elif isinstance(value, Mapping) and isinstance(value.get("extension"), str):
        name, config = value["extension"], {k: v for k, v in value.items() if k != "extension"}
    else:
        raise MetadataError(
            f"expected 'C', 'F' or an extension object, got {value!r}",
            field="chunk_memory_layout",
            where=where,
        )
    try:
        cls = lookup("memory_layout", name, NAME, where=where)
    except MetadataError as exc:
        raise exc.locate("chunk_memory_layout", where) from None
    layout: MemoryLayout = build(cls, name, config, NAME, key="chunk_memory_layout", where=where)
    return layout


def _compressor(value: Any, where: str) -> Codec | None:
    if value is None:
        return None
    if not isinstance(value, Mapping) or not isinstance(value.get("codec"), str):
        raise MetadataError(
            f"expected an object with a codec URI 'codec', got {value!r}",
            field="compressor",
            where=where,
        )
    extra = set(value) - {"codec", "configuration"}
    if extra:
        raise MetadataError(f"unexpected fields {sorted(extra)}", field="compressor", where=where)
    config = value.get("configuration") or {}
    if not isinstance(config, Mapping):
        raise MetadataError(
            f"'configuration' must be an object, got {config!r}",
            field="compressor.configuration",
            where=where,
        )
    uri = value["codec"]
    try:
        cls = lookup("codec", uri, NAME, where=where)
    except MetadataError as exc:
        raise exc.locate("compressor", where) from None
    codec: Codec = build(cls, uri, dict(config), NAME, key="compressor", where=where)
    if codec.kind is not CodecKind.BYTES_BYTES:
        raise MetadataError(
            f"{uri!r} is not a bytes -> bytes codec, so it cannot be the compressor",
            field="compressor",
            where=where,
        )
    return codec


def _filters(value: Any, where: str) -> list[Codec]:
    """zarr-python 2.x keeps filters as numcodecs configurations (`{"id": ..., ...}`) in the
    attributes, so they are resolved by their numcodecs ids: the codecs' v2 names."""
    if value is None:
        return []
    key = f"attributes.{FILTERS_ATTRIBUTE}"
    if not isinstance(value, list):
        raise MetadataError(
            f"expected a list of numcodecs configurations, got {value!r}", field=key, where=where
        )
    out = []
    for i, item in enumerate(value):
        if not isinstance(item, Mapping) or not isinstance(item.get("id"), str):
            raise MetadataError(
                f"expected an object with a string 'id', got {item!r}",
                field=f"{key}[{i}]",
                where=where,
            )
        config = {k: v for k, v in item.items() if k != "id"}
        try:
            cls = lookup("codec", item["id"], V2, where=where)
        except MetadataError as exc:
            raise exc.locate(f"{key}[{i}]", where) from None
        codec = build(cls, item["id"], config, V2, key=f"{key}[{i}]", where=where)
        if codec.kind is CodecKind.BYTES_BYTES:
            raise MetadataError(
                f"{item['id']!r} is a bytes -> bytes codec; zarrkit runs "
                f"filters before the memory layout",
                field=f"{key}[{i}]",
                where=where,
            )
        out.append(codec)
    return out


# -- writing ------------------------------------------------------------------------------
def _split_chain(codecs: list[Codec], ndim: int) -> tuple[list[Codec], Any, Codec | None]:
    """(filters, LayoutCodec or an object codec, compressor or None) of a canonical chain."""
    at = next((i for i, c in enumerate(codecs) if c.kind is CodecKind.ARRAY_BYTES), None)
    if at is None:
        raise MetadataError("the codec chain has no array -> bytes codec", field="codecs")
    tail = codecs[at + 1 :]
    if len(tail) > 1:
        raise MetadataError(
            f"the 2020 draft has one compressor, the chain has {len(tail)} "
            f"bytes -> bytes codecs ({[c.to_json() for c in tail]})",
            field="codecs",
        )
    compressor = tail[0] if tail else None
    serializer = codecs[at]
    if isinstance(serializer, LayoutCodec):
        return codecs[:at], serializer, compressor
    # a v3 chain: find the longest tail of the array -> array codecs that, with the array ->
    # bytes codec, is a memory layout (`bytes`; `transpose` + `bytes` for F); the rest are filters
    for start in range(at + 1):
        found = as_layout(codecs[start : at + 1], ndim, NAME)
        if found is not None:
            return codecs[:start], found[0], compressor
    if _has_name(serializer, V2):
        return codecs[:at] + [serializer], None, compressor  # an object codec, listed first
    raise MetadataError(
        f"the array -> bytes step {serializer.to_json()!r} (with the codecs "
        f"before it) has no memory layout in the 2020 draft",
        field="codecs",
    )


def _has_name(ext: Any, fmt: str) -> bool:
    try:
        ext.to_json(fmt)
    except MetadataError:
        return False
    return True


def _grid_json(grid: Any, separator: str) -> dict[str, Any]:
    name = grid.written_name(NAME) if type(grid).names.written(NAME) else None
    if name is None:
        raise MetadataError(
            f"the chunk grid {grid.to_json()!r} has no name in the 2020 draft", field="chunk_grid"
        )
    return {"type": name, **grid.configuration(NAME), "separator": separator}


def _layout_json(layout: Any) -> Any:
    if layout is None:  # an object codec does the array -> bytes step; zarr-python writes C
        return "C"
    name = type(layout.layout).names.written(NAME)
    if name is None:
        raise MetadataError(
            f"the memory layout {layout.to_json()!r} has no name in the 2020 draft",
            field="chunk_memory_layout",
        )
    config = layout.layout.configuration(NAME)
    return {"extension": name, **config} if config else name


def _codec_json(codec: Codec, key: str) -> dict[str, Any]:
    try:
        doc: dict[str, Any] = codec.to_json(NAME)
    except MetadataError:
        raise MetadataError(
            f"the codec {codec.to_json()!r} has no name (URI) in the 2020 draft", field=key
        ) from None
    return doc


def _filter_json(codec: Codec) -> dict[str, Any]:
    try:
        doc: dict[str, Any] = codec.to_json(V2)
    except MetadataError:
        raise MetadataError(
            f"the codec {codec.to_json()!r} has no numcodecs id, which a "
            f"filter needs in the 2020 draft (zarr-python 2.x keeps filters as "
            f"numcodecs configurations)",
            field="codecs",
        ) from None
    return doc


def _default_chain(data_type: Any, options: Mapping[str, Any]) -> list[Codec]:
    order = options.get("order", options.get("chunk_memory_layout")) or "C"
    layout = order if isinstance(order, MemoryLayout) else _layout(order, "arguments")
    if "compressor" in options:
        compressor = options["compressor"]
    else:
        compressor = array_defaults(NAME, data_type, ()).get("compressor")
    filters = [_codec_arg(f, f"filters[{i}]") for i, f in enumerate(options.get("filters") or ())]
    chain = filters + [LayoutCodec(layout, data_type.endian)]
    if compressor is not None:
        chain.append(_codec_arg(compressor, "compressor"))
    return chain


def _codec_arg(value: Any, key: str) -> Codec:
    """A codec from what a user of zarr-python 2.x would pass: a zarrkit codec, a numcodecs
    codec object or configuration (`{"id": ...}`, resolved by numcodecs id), the draft's
    `{"codec": URI, "configuration": ...}`, or a name with an optional configuration."""
    if isinstance(value, Codec):
        return value
    if hasattr(value, "get_config") and not isinstance(value, Mapping):
        value = value.get_config()
    if isinstance(value, Mapping) and "id" in value:
        name, config, fmt = value["id"], {k: v for k, v in value.items() if k != "id"}, V2
    elif isinstance(value, Mapping) and "codec" in value:
        name, config, fmt = value["codec"], dict(value.get("configuration") or {}), NAME
    elif isinstance(value, Mapping) and "name" in value:
        name, config, fmt = value["name"], dict(value.get("configuration") or {}), NAME
    elif isinstance(value, str):
        name, config, fmt = value, {}, NAME
    else:
        raise MetadataError(f"expected a codec, got {value!r}", field=key, where="arguments")
    if not isinstance(name, str):
        raise MetadataError(f"expected a codec name, got {name!r}", field=key, where="arguments")
    try:
        cls = lookup("codec", name, fmt)
    except MetadataError:
        if fmt != NAME:
            raise
        cls, fmt = lookup("codec", name, V2), V2  # a bare numcodecs id: 'gzip'
    codec: Codec = build(cls, name, config, fmt, key=key, where="arguments")
    return codec


# -- nodes in a store ---------------------------------------------------------------------
def _entry_point_for_writing(store: Store) -> draft_entry.EntryPoint:
    raw = store.get(ENTRY_POINT_KEY)
    if raw is None:
        doc = draft_entry.default_document()
        store.set(ENTRY_POINT_KEY, draft_entry.encode(doc))
        return draft_entry.EntryPoint(doc["metadata_key_suffix"], doc)
    where = f"{ENTRY_POINT_KEY} in {store}"
    if not draft_entry.looks_like_draft(raw):
        raise MetadataError(
            "the store root holds a zarr v3 node, not the 2020 draft's entry "
            "point; a draft hierarchy needs a store of its own",
            where=where,
        )
    return draft_entry.parse(raw, where)


class DraftFormat(Format):
    name: ClassVar[str] = NAME
    title: ClassVar[str] = "the 2020 draft"
    #: the draft is a hierarchy with implicit groups: a new node's ancestors need no documents
    implicit_groups: ClassVar[bool] = True
    #: zarr-python 2.x writes the draft's documents with an indent of 4
    indent: ClassVar[int] = 4

    def metadata_key(self, path: str) -> str:
        """Names the node in errors: `meta/root/foo` + `.array.json` or `.group.json`."""
        return f"{meta_base(path)}.{{array,group}}.json"

    def node_keys(self, path: str) -> tuple[str, ...]:
        return (array_key(path), group_key(path))

    def chunk_key(self, path: str, encoded: str) -> str:
        return data_prefix(path) + encoded

    entry_keys: ClassVar[tuple[str, ...]] = (ENTRY_POINT_KEY,)

    def holds_hierarchy(self, found: Mapping[str, bytes]) -> bool:
        """A store holds a draft hierarchy when its root has the draft's entry point (a v3
        root's `zarr.json` is no entry point)."""
        raw = found.get(ENTRY_POINT_KEY)
        return raw is not None and draft_entry.looks_like_draft(raw)

    def probe(self, store: Store, path: str) -> bool:
        """A draft node is at `path` when the store root holds the draft's entry point and the
        seed's existence check finds an array, an explicit group or an implicit group there."""
        raw = store.get(ENTRY_POINT_KEY)
        if raw is None or not draft_entry.looks_like_draft(raw):
            return False
        try:
            entry = draft_entry.parse(raw, f"{ENTRY_POINT_KEY} in {store}")
        except MetadataError:
            return True  # let read_metadata say what is wrong with it
        return _find(store, path, entry.suffix) is not None

    def read_metadata(self, store: Store, path: str) -> ArrayMetadata | GroupMetadata | None:
        entry = draft_entry.read(store)
        if entry is None:
            return None
        found = _find(store, path, entry.suffix)
        if found is None:
            return None
        kind, raw = found
        if kind == "implicit":
            return GroupMetadata(NAME, freeze({}), freeze({}), freeze({}))
        key = array_key(path, entry.suffix) if kind == "array" else group_key(path, entry.suffix)
        where = f"{key} in {store}"
        doc = load_document(raw, where)
        return self.parse_array(doc, where) if kind == "array" else self.parse_group(doc, where)

    def parse_node(self, doc: Mapping[str, Any], where: str) -> ArrayMetadata | GroupMetadata:
        return (
            self.parse_array(doc, where)
            if _is_array_document(doc)
            else self.parse_group(doc, where)
        )

    def parse_group(self, doc: Mapping[str, Any], where: str) -> GroupMetadata:
        """An empty document is an implicit group's (it has none); `write_metadata` writes none
        for it, so copying an implicit group keeps it implicit."""
        extra = unknown_fields(doc, GROUP_FIELDS, where=where)
        if doc and "attributes" not in doc:
            raise MetadataError("required field is missing", field="attributes", where=where)
        attributes = _attributes(doc, where)
        return GroupMetadata(NAME, freeze(attributes), freeze(extra), freeze(dict(doc)))

    def parse_array(self, doc: Mapping[str, Any], where: str) -> ArrayMetadata:
        extra = unknown_fields(doc, ARRAY_FIELDS, where=where)
        for required in (
            "shape",
            "data_type",
            "chunk_grid",
            "chunk_memory_layout",
            "fill_value",
            "attributes",
        ):
            if required not in doc:
                raise MetadataError("required field is missing", field=required, where=where)
        extension_list(doc.get("extensions", []), key="extensions", where=where)
        if doc.get("storage_transformers"):
            raise MetadataError(
                "zarr-python 2.x's experimental storage transformers (sharding) are not supported",
                field="storage_transformers",
                where=where,
            )
        shape = _shape(doc["shape"], where)
        attributes = _attributes(doc, where)
        filters_key = f"attributes.{FILTERS_ATTRIBUTE}"
        require_known(
            _extension_names(doc, attributes.get(FILTERS_ATTRIBUTE), filters_key),
            NAME,
            where=where,
            spelled_in={filters_key: V2},
        )
        data_type = parse_data_type(doc["data_type"], where)
        grid, keys = _grid(doc["chunk_grid"], shape, where)
        check_chunk_size(grid, data_type, "chunk_grid.chunk_shape", where)
        _check_dimension_separator(doc, keys, where)
        layout = _layout(doc["chunk_memory_layout"], where)
        fill_value = fill_value_or_default(data_type, doc["fill_value"], NAME, where)
        filters = _filters(attributes.get(FILTERS_ATTRIBUTE), where)
        compressor = _compressor(doc.get("compressor"), where)
        chain = _chain(filters, LayoutCodec(layout, data_type.endian), compressor)
        return ArrayMetadata(
            format=NAME,
            shape=shape,
            data_type=data_type,
            chunk_grid=grid,
            chunk_key_encoding=keys,
            fill_value=fill_value,
            codecs=tuple(chain),
            attributes=freeze({k: v for k, v in attributes.items() if k != FILTERS_ATTRIBUTE}),
            dimension_names=None,
            extra_fields=freeze(extra),
            document=freeze(dict(doc)),
        )

    def array_document(
        self,
        *,
        shape: Sequence[int],
        data_type: Any,
        chunk_grid: Any,
        chunk_key_encoding: Any,
        fill_value: Any,
        codecs: Sequence[Any],
        attributes: Mapping[str, Any] | None,
        dimension_names: Sequence[str | None] | None,
        storage_transformers: Sequence[Any] = (),
    ) -> dict[str, Any]:
        """A draft array document from canonical pieces; MetadataError says what the draft cannot
        express (storage transformers, dimension names, two compressors, a codec with no draft
        name, a codec chain with no equivalent memory layout)."""
        if storage_transformers:
            raise MetadataError(
                "the 2020 draft has no storage transformers", field="storage_transformers"
            )
        if dimension_names is not None and any(n is not None for n in dimension_names):
            raise MetadataError(
                f"the 2020 draft cannot store dimension names ({list(dimension_names)})",
                field="dimension_names",
            )
        attributes = thaw_document(attributes or {})
        if FILTERS_ATTRIBUTE in attributes:
            raise MetadataError(
                f"the attribute {FILTERS_ATTRIBUTE!r} is where zarr-python 2.x "
                f"keeps a draft array's filters; rename it",
                field=f"attributes.{FILTERS_ATTRIBUTE}",
            )
        filters, layout, compressor = _split_chain(list(codecs), len(shape))
        if filters:
            attributes[FILTERS_ATTRIBUTE] = [_filter_json(c) for c in filters]
        endian = layout.endian if isinstance(layout, LayoutCodec) else None
        doc: dict[str, Any] = {
            "shape": [int(n) for n in shape],
            "data_type": data_type_json(data_type, endian),
            "chunk_grid": _grid_json(chunk_grid, separator_of(chunk_key_encoding)),
            "chunk_memory_layout": _layout_json(layout),
            "fill_value": data_type.fill_to_json(fill_value, NAME),
            "extensions": [],
            "attributes": attributes,
        }
        if compressor is not None:
            doc["compressor"] = _codec_json(compressor, "compressor")
        return doc

    def group_document(self, attributes: Mapping[str, Any] | None) -> dict[str, Any]:
        return {"attributes": thaw_document(attributes or {})}

    def creation_arguments(self, data_type: Any, options: Mapping[str, Any]) -> dict[str, Any]:
        """zarr-python 2.x's v3 arguments: `compressor` (None: none; default from the
        `zarrkit_array_defaults` hook, Blosc like zarr-python 2.x), `filters`, `order` (alias
        `chunk_memory_layout`; 'C', 'F' or a memory layout), `dimension_separator` ('/' default,
        or '.'). The draft's chunk keys are its own, so a chunk key encoding always comes from here."""
        unknown = set(options) - set(CREATION_OPTIONS)
        if unknown:
            raise TypeError(
                f"the 2020 draft takes no arguments {sorted(unknown)}; it takes "
                f"{', '.join(CREATION_OPTIONS)}"
            )
        if "order" in options and "chunk_memory_layout" in options:
            raise TypeError("give order or chunk_memory_layout, not both")
        separator = options.get("dimension_separator") or "/"
        if separator not in SEPARATORS:
            raise ValueError(
                f"dimension_separator must be one of {list(SEPARATORS)}, got {separator!r}"
            )
        return {
            "chunk_key_encoding": DraftChunkKeys(separator),
            "codecs": _default_chain(data_type, options),
        }

    def attributes_edit(
        self, metadata: NodeMetadata, doc: Mapping[str, Any], attributes: dict[str, Any]
    ) -> Any:
        """An array's filters live in its attributes (as zarr-python 2.x keeps them): they
        stay, and no user attribute may take their name."""
        if not isinstance(metadata, ArrayMetadata):
            return attributes
        if FILTERS_ATTRIBUTE in attributes:
            raise MetadataError(
                f"the attribute {FILTERS_ATTRIBUTE!r} is where zarr-python "
                f"2.x keeps a draft array's filters; use another name",
                field=f"attributes.{FILTERS_ATTRIBUTE}",
            )
        kept = doc.get("attributes", {})
        if FILTERS_ATTRIBUTE in kept:
            attributes[FILTERS_ATTRIBUTE] = kept[FILTERS_ATTRIBUTE]
        return attributes

    def resize_edit(self, metadata: ArrayMetadata, shape: tuple[int, ...]) -> dict[str, Any]:
        grid = metadata.chunk_grid.resized(shape)
        return {"chunk_grid": _grid_json(grid, separator_of(metadata.chunk_key_encoding))}

    def write_metadata(self, store: Store, path: str, doc: Mapping[str, Any]) -> None:
        """Write a node's document; the hierarchy's entry point first, when there is none yet."""
        entry = _entry_point_for_writing(store)
        if not doc:
            return  # an implicit group: nothing to write
        key = (array_key if _is_array_document(doc) else group_key)(path, entry.suffix)
        store.set(key, self.encode_document(doc))

    def children(self, store: Store, path: str) -> list[str]:
        """The seed's "discover children": list_dir of the group's folder under `meta/root`;
        `x.array.json` / `x.group.json` are explicit children, a sub-folder an implicit group (or
        the folder of an explicit one)."""
        store.require("list", f"list the members of group {path or '/'!r} (2020 draft)")
        suffix = _suffix(store)
        keys, prefixes = store.list_dir(meta_prefix(path))
        names = set(prefixes)
        for key in keys:
            for ending in (f".array{suffix}", f".group{suffix}"):
                if key.endswith(ending) and len(key) > len(ending):
                    names.add(key[: -len(ending)])
        return sorted(names)

    def erase_node(self, store: Store, path: str) -> None:
        """The seed's erase: an array's document, then its chunks; an explicit group's document,
        then every document and chunk below it; an implicit group's documents and chunks below.
        The entry point stays (the hierarchy remains, even if empty)."""
        store.require("list", f"erase {path or '/'!r} (2020 draft: erase_prefix needs listing)")
        suffix = _suffix(store)
        if store.get(array_key(path, suffix)) is not None:
            store.erase(array_key(path, suffix))
            store.erase_prefix(data_prefix(path))
            return
        if store.get(group_key(path, suffix)) is not None:
            store.erase(group_key(path, suffix))
        store.erase_prefix(meta_prefix(path))
        store.erase_prefix(data_prefix(path))


FORMAT = DraftFormat()
