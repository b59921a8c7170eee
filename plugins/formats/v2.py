"""The storage protocol of Zarr v2: `.zarray` / `.zgroup` plus an optional `.zattrs` per node,
chunks under the node's prefix named by their indices joined with `dimension_separator`.

A node's keys are folded into one document (the `.zarray` or `.zgroup` object with the
`.zattrs` object under "attributes"; a group's `.zmetadata` under "consolidated_metadata" in
the inline form, see `consolidated.py`) and split again on write.

v2 names no grid and no key encoding: its `chunks` and `dimension_separator` fields are them.
The plugins that claim the v2 spellings "chunks" and "dimension_separator" are resolved through
the registry like any other extension, with configurations `{"chunk_shape": chunks}` and
`{"separator": dimension_separator}`. Data types are numpy typestrings (the whole string,
byte order included, is the registry name); `|O` takes its data type from the object codec
among the filters. The array -> bytes step is `order` (a memory layout plugin) plus the byte
order of the dtype string (`LayoutCodec`), unless an object codec does that job.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from zarrkit.abc import V2, V3, Codec, CodecKind, Store
from zarrkit.abc.format import (
    ArrayMetadata,
    Format,
    GroupMetadata,
    NodeMetadata,
    array_defaults,
    check_chunk_size,
    check_dimensions,
    fill_value_or_default,
    freeze,
    load_document,
    short_repr,
)
from zarrkit.errors import MetadataError
from zarrkit.helpers import (
    CONSOLIDATED_FIELD,
    build,
    extension_from_arg,
    inline,
    lookup,
    member_documents,
    member_order,
    require_known,
)
from zarrkit.plugins.formats.layout_codec import LayoutCodec, as_layout

NAME = V2
ZARRAY, ZGROUP, ZATTRS, ZMETADATA = ".zarray", ".zgroup", ".zattrs", ".zmetadata"

#: the `.zarray` fields, in the order zarr-python 3 writes them
ARRAY_FIELDS = (
    "shape",
    "chunks",
    "dtype",
    "fill_value",
    "order",
    "filters",
    "dimension_separator",
    "compressor",
    "zarr_format",
)
#: the v2 spellings of the grid and key encoding plugins, named after the fields they stand for
GRID_NAME, KEY_ENCODING_NAME = "chunks", "dimension_separator"
#: a typestring naming numpy's object dtype
_OBJECT = re.compile(r"[<>|=]?O\d*")
#: the folded document's keys that are not `.zarray` / `.zgroup` fields
_FOLDED = ("attributes", "consolidated_metadata")


# -- keys ---------------------------------------------------------------------------------
def node_prefix(path: str) -> str:
    return f"{path}/" if path else ""


def key(path: str, name: str) -> str:
    return f"{node_prefix(path)}{name}"


# -- reading ------------------------------------------------------------------------------


def _zarr_format(doc: Mapping[str, Any], where: str) -> None:
    value = doc.get("zarr_format")
    if value != 2 or isinstance(value, bool):
        raise MetadataError(f"expected 2, got {value!r}", field="zarr_format", where=where)


def _int_list(value: Any, field: str, where: str, *, minimum: int) -> list[int]:
    if not isinstance(value, list) or not all(
        isinstance(n, int) and not isinstance(n, bool) and n >= minimum for n in value
    ):
        what = "non-negative" if minimum == 0 else "positive"
        raise MetadataError(
            f"expected a list of {what} integers, got {short_repr(value)}", field=field, where=where
        )
    check_dimensions(value, field, where)
    return value


def _attributes(doc: Mapping[str, Any], where: str) -> dict[str, Any]:
    attributes = doc.get("attributes", {})
    if not isinstance(attributes, Mapping):
        raise MetadataError(
            f"expected an object, got {attributes!r}",
            field="attributes",
            where=where.replace(ZARRAY, ZATTRS).replace(ZGROUP, ZATTRS),
        )
    return dict(attributes)


def _resolved(kind: str, name: str, configuration: dict, field: str, where: str) -> Any:
    """The plugin standing for a v2 field (`chunks`, `dimension_separator`, `order`)."""
    try:
        cls = lookup(kind, name, NAME, where=where)
    except MetadataError as exc:
        raise exc.locate(field, where) from None
    return build(cls, name, configuration, NAME, key=field, where=where)


def _codec_ids(doc: Mapping[str, Any]) -> list[tuple[str, Any, str]]:
    """(kind, numcodecs id, field) of each codec a v2 array document names, for
    `require_known` (malformed entries are left to the parse, which says what is wrong)."""
    filters = doc.get("filters")
    items = list(enumerate(filters)) if isinstance(filters, list) else []
    named = [(f"filters[{i}]", item) for i, item in items]
    if doc.get("compressor") is not None:
        named.append(("compressor", doc["compressor"]))
    return [
        ("codec", item["id"], field)
        for field, item in named
        if isinstance(item, Mapping) and isinstance(item.get("id"), str)
    ]


def _codec(item: Any, field: str, where: str) -> Codec:
    """A numcodecs config (`{"id": ..., **configuration}`) as a codec plugin instance."""
    if not isinstance(item, Mapping) or not isinstance(item.get("id"), str):
        raise MetadataError(
            f"expected a numcodecs configuration with a string 'id', got {item!r}",
            field=field,
            where=where,
        )
    name = item["id"]
    configuration = {k: v for k, v in item.items() if k != "id"}
    codec: Codec = _resolved("codec", name, configuration, field, where)
    return codec


def _codec_list(value: Any, where: str) -> list[Codec]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise MetadataError(
            f"expected null or a list of numcodecs configurations, got {value!r}",
            field="filters",
            where=where,
        )
    return [_codec(item, f"filters[{i}]", where) for i, item in enumerate(value)]


def _data_type(value: Any, codecs: Sequence[Codec], where: str) -> Any:
    if isinstance(value, list):  # structured: a list of [name, typestring(, shape)] fields
        return _resolved("data_type", "structured", {"fields": value}, "dtype", where)
    if not isinstance(value, str) or not value:
        raise MetadataError(
            f"expected a typestring or a list of fields, got {value!r}", field="dtype", where=where
        )
    if _OBJECT.fullmatch(value):
        return _object_data_type(value, codecs, where)
    return _resolved("data_type", value, {}, "dtype", where)


def _object_data_type(value: str, codecs: Sequence[Codec], where: str) -> Any:
    """`|O`: the object codec among the filters (or the compressor) says what the objects are."""
    for codec in codecs:
        implied = getattr(codec, "implied_data_type", None)
        if implied:
            cls = lookup("data_type", implied, V3, where=where)
            return build(cls, implied, {}, V3, key="dtype", where=where)
    ids = [c.to_json(NAME).get("id") for c in codecs]
    raise MetadataError(
        f"the object dtype {value!r} needs an object codec (such as vlen-utf8 or "
        f"vlen-bytes) among the filters; found {ids or 'none'}",
        field="dtype",
        where=where,
    )


def _layout(value: Any, where: str) -> Any:
    if not isinstance(value, str):
        raise MetadataError(f"expected 'C' or 'F', got {value!r}", field="order", where=where)
    return _resolved("memory_layout", value, {}, "order", where)


def _chain(
    filters: Sequence[Codec],
    compressor: Codec | None,
    layout: Any,
    data_type: Any,
    ndim: int | None,
) -> list[Codec]:
    """The canonical chain: array -> array filters, then the array -> bytes step (an object
    codec among the filters, else the layout with the dtype's byte order), then the bytes ->
    bytes filters and the compressor."""
    codecs = list(filters)
    if not any(c.kind is CodecKind.ARRAY_BYTES for c in codecs):
        at = next(
            (i for i, c in enumerate(codecs) if c.kind is not CodecKind.ARRAY_ARRAY), len(codecs)
        )
        layout_codec = LayoutCodec(layout, getattr(data_type, "endian", None))
        if ndim is not None:  # None: a new array, checked when its document is parsed
            _check_filter_order(codecs[:at], layout_codec, data_type, ndim)
        codecs.insert(at, layout_codec)
    if compressor is not None:
        codecs.append(compressor)
    return codecs


def _check_filter_order(
    filters: Sequence[Codec], layout_codec: LayoutCodec, data_type: Any, ndim: int
) -> None:
    """zarr-python hands v2 filters the chunk already in the array's `order` and the dtype's
    byte order; zarrkit's chain runs array -> array codecs before the layout step, on the chunk
    in C order and native byte order. The two agree only for C order (or 1-d chunks) and
    little-endian (or byte-free) types, so other combinations are refused, not misread."""
    if not filters:
        return
    big = layout_codec.endian == "big" and data_type.has_endianness
    fortran = layout_codec.layout.numpy_order == "F" and ndim > 1
    if big or fortran:
        what = "a big-endian dtype" if big else "order 'F'"
        raise MetadataError(
            f"array -> array filters ({[c.to_json(NAME) for c in filters]}) "
            f"together with {what} are not supported: v2 filters see the chunk "
            f"in the stored byte order and memory order, zarrkit's see it in "
            f"native C order",
            field="filters",
        )


# -- writing ------------------------------------------------------------------------------
def _chunks_of(grid: Any, ndim: int) -> tuple[int, ...]:
    if _v2_name(grid) is None or grid.uniform_chunk_shape is None:
        raise MetadataError(
            f"zarr format 2 has only regular chunks (`chunks`); the chunk grid "
            f"{grid.to_json()!r} cannot be expressed",
            field="chunk_grid",
        )
    return tuple(int(n) for n in grid.uniform_chunk_shape)


def _separator_of(encoding: Any) -> str:
    if _v2_name(encoding) is None:
        raise MetadataError(
            f"zarr format 2 names chunks by their indices joined with "
            f"`dimension_separator`; the chunk key encoding {encoding.to_json()!r} "
            f"cannot be expressed",
            field="chunk_key_encoding",
        )
    separator: str = encoding.configuration(NAME).get("separator")
    if separator not in (".", "/"):
        raise MetadataError(
            f"dimension_separator must be '.' or '/', got {separator!r}", field="chunk_key_encoding"
        )
    return separator


def _split_chain(
    codecs: list[Codec], ndim: int
) -> tuple[list[Codec], LayoutCodec | None, Codec | None]:
    """(filters, layout, compressor) of a canonical chain: leading array -> array codecs and an
    object codec are filters; a `LayoutCodec` or a v3 `bytes` / `transpose` + `bytes` prefix
    equivalent to a memory layout is `order`; of the bytes -> bytes codecs the last is the
    compressor and the others are filters."""
    found = as_layout(codecs, ndim, NAME)
    head: list[Codec] = []
    if found is not None:
        layout_codec, used = found
    else:
        lead = 0
        while lead < len(codecs) and codecs[lead].kind is CodecKind.ARRAY_ARRAY:
            lead += 1
        found = as_layout(codecs[lead:], ndim, NAME)
        if found is not None:
            layout_codec, used = found[0], lead + found[1]
            head = codecs[:lead]
        elif lead < len(codecs) and _v2_name(codecs[lead]) is not None:
            layout_codec, used = None, lead + 1
            head = codecs[:used]
        else:
            step = codecs[lead].to_json() if lead < len(codecs) else None
            raise MetadataError(
                f"zarr format 2 lays chunks out by `order` and the dtype's byte order, or through "
                f"an object codec among the filters; the array -> bytes step {step!r} (with the "
                f"array -> array codecs before it) is neither",
                field="codecs",
            )
    tail = codecs[used:]
    for codec in head + tail:
        if _v2_name(codec) is None:
            raise MetadataError(
                f"the codec {codec.to_json()!r} has no name in zarr format 2 (numcodecs id)",
                field="codecs",
            )
    compressor = tail[-1] if tail else None
    return head + tail[:-1], layout_codec, compressor


def _v2_name(extension: Any) -> str | None:
    """The name an extension instance writes in v2 (a family plugin names each member itself)."""
    if isinstance(extension, LayoutCodec):
        return None
    try:
        name: str | None = extension.written_name(NAME)
    except (MetadataError, NotImplementedError):
        return None
    return name


def _with_byte_order(data_type: Any, layout_codec: LayoutCodec | None) -> Any:
    """The data type spelled with the byte order the chain lays its bytes out in (a v3 chain
    with `bytes(endian=big)` becomes `>f8`). A byte order the data type already names (`>f4`
    given by the user) wins over the one a default `bytes` codec filled in."""
    wanted = layout_codec.endian if layout_codec else None
    if (
        wanted is None
        or not data_type.has_endianness
        or getattr(data_type, "endian", None) is not None
    ):
        return data_type
    with_endian = getattr(data_type, "with_endian", None)
    if with_endian is None:
        raise MetadataError(
            f"the data type {data_type.describe()} cannot say its byte order in zarr format 2",
            field="dtype",
        )
    return with_endian(wanted)


def _dtype_json(data_type: Any) -> Any:
    try:
        name = data_type.to_json(NAME)
    except MetadataError:
        name = None
    if isinstance(name, Mapping):  # a configured v2 type gives its typestring or field list
        name = name.get("configuration", {}).get("fields", name)
    if name is None or isinstance(name, Mapping):
        raise MetadataError(
            f"the data type {data_type.describe()} has no name in zarr format 2", field="dtype"
        )
    return name


def _codec_json(codec: Codec, field: str) -> dict[str, Any]:
    try:
        out = codec.to_json(NAME)
    except MetadataError as exc:
        raise exc.locate(field) from None
    return dict(out)


def _defaults(data_type: Any) -> tuple[list[Codec], list[Codec], str]:
    """(filters, bytes -> bytes codecs, order) of the installed defaults for a new v2 array."""

    defaults = array_defaults(NAME, data_type, ())
    codecs = [_user_codec(c, "codecs") for c in defaults.get("codecs", [])]
    filters = [c for c in codecs if c.kind is not CodecKind.BYTES_BYTES]
    if as_layout(filters, 0, NAME) is not None or any(
        c.kind is CodecKind.ARRAY_BYTES and _v2_name(c) is None for c in filters
    ):
        filters = [c for c in filters if c.kind is CodecKind.ARRAY_ARRAY]
    tail = [c for c in codecs if c.kind is CodecKind.BYTES_BYTES]
    return filters, tail, defaults.get("order", "C")


def _user_codec(item: Any, field: str) -> Codec:
    """A codec as a user gives it: a zarrkit codec, a numcodecs codec object, a numcodecs
    config dict (`{"id": ...}`), or a v3-style `{"name": ...}` / bare name."""
    if isinstance(item, Codec):
        return item
    get_config = getattr(item, "get_config", None)
    if callable(get_config) and getattr(item, "codec_id", None):
        item = get_config()
    if isinstance(item, Mapping) and "id" in item:
        return _codec(item, field, "arguments")
    try:
        codec: Codec = extension_from_arg("codec", item, NAME, key=field)
    except MetadataError:
        codec = extension_from_arg("codec", item, V3, key=field)
    return codec


def split_document(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The stored objects of a folded document: {".zarray" or ".zgroup": ..., ".zattrs": ...}
    (`.zattrs` only when there are attributes; consolidated metadata is not included)."""
    body = {k: v for k, v in doc.items() if k not in _FOLDED}
    out = {ZARRAY if any(f in doc for f in ("shape", "chunks", "dtype")) else ZGROUP: body}
    attributes = doc.get("attributes") or {}
    if attributes:
        out[ZATTRS] = dict(attributes)
    return out


# -- consolidated metadata --------------------------------------------------------------
def fold_zmetadata(zmetadata: Mapping[str, Any], where: str) -> dict[str, Any]:
    """`.zmetadata` as the inline form of consolidated metadata (see `consolidated`): one
    folded v2 document per member path."""
    if zmetadata.get("zarr_consolidated_format") != 1:
        raise MetadataError(
            f"expected 1, got {zmetadata.get('zarr_consolidated_format')!r}",
            field="zarr_consolidated_format",
            where=where,
        )
    items = zmetadata.get("metadata")
    if not isinstance(items, Mapping):
        raise MetadataError(f"expected an object, got {items!r}", field="metadata", where=where)
    docs: dict[str, dict[str, Any]] = {}
    for stored_key, value in items.items():
        path, _, name = stored_key.rpartition("/")
        if name not in (ZARRAY, ZGROUP, ZATTRS) or not isinstance(value, Mapping):
            raise MetadataError(
                f"expected a '.zarray', '.zgroup' or '.zattrs' key holding an "
                f"object, got {stored_key!r}: {value!r}",
                field=f"metadata.{stored_key}",
                where=where,
            )
        if not path:
            continue  # the group's own objects: read from its keys
        doc = docs.setdefault(path, {})
        if name == ZATTRS:
            doc["attributes"] = dict(value)
        else:
            doc.update({k: v for k, v in value.items() if k != "attributes"})
    nodes = {p: d for p, d in docs.items() if "zarr_format" in d}
    return inline(dict(sorted(nodes.items(), key=lambda item: member_order(item[0]))))


def unfold_zmetadata(group_doc: Mapping[str, Any]) -> dict[str, Any]:
    """The `.zmetadata` object of a folded group document holding consolidated metadata."""
    out: dict[str, Any] = {}
    for path, doc in [("", group_doc), *member_documents(group_doc, "the group").items()]:
        prefix = f"{path}/" if path else ""
        objects = split_document(doc)
        objects.setdefault(ZATTRS, {})
        for name, value in objects.items():
            out[prefix + name] = value
    return {"metadata": out, "zarr_consolidated_format": 1}


class V2Format(Format):
    name: ClassVar[str] = NAME
    title: ClassVar[str] = "zarr format 2"

    # -- keys -------------------------------------------------------------------------------
    def metadata_key(self, path: str) -> str:
        return key(path, ZARRAY)

    def node_keys(self, path: str) -> tuple[str, ...]:
        return tuple(key(path, name) for name in (ZARRAY, ZGROUP, ZATTRS, ZMETADATA))

    def marker_keys(self, path: str) -> tuple[str, ...]:
        return (key(path, ZARRAY), key(path, ZGROUP))

    def probe(self, store: Store, path: str) -> bool:
        """A v2 node is at `path` when its `.zarray` or `.zgroup` exists."""
        return bool(store.exists(key(path, ZARRAY)) or store.exists(key(path, ZGROUP)))

    # -- reading ----------------------------------------------------------------------------
    def parse_node(self, doc: Mapping[str, Any], where: str) -> NodeMetadata:
        """A folded document: an array when it has the fields only `.zarray` has."""
        if any(f in doc for f in ("shape", "chunks", "dtype")):
            return self.parse_array(doc, where)
        return self.parse_group(doc, where)

    def parse_group(self, doc: Mapping[str, Any], where: str) -> GroupMetadata:
        _zarr_format(doc, where)
        attributes = _attributes(doc, where)
        extra = {k: v for k, v in doc.items() if k not in ("zarr_format", "attributes")}
        return GroupMetadata(NAME, freeze(attributes), freeze(extra), freeze(dict(doc)))

    def parse_array(self, doc: Mapping[str, Any], where: str) -> ArrayMetadata:
        _zarr_format(doc, where)
        for required in (
            "shape",
            "chunks",
            "dtype",
            "compressor",
            "fill_value",
            "order",
            "filters",
        ):
            if required not in doc:
                raise MetadataError("required field is missing", field=required, where=where)
        shape = _int_list(doc["shape"], "shape", where, minimum=0)
        chunks = _int_list(doc["chunks"], "chunks", where, minimum=1)
        if len(chunks) != len(shape):
            raise MetadataError(
                f"{chunks} has {len(chunks)} dimensions, the shape {shape} has {len(shape)}",
                field="chunks",
                where=where,
            )
        require_known(_codec_ids(doc), NAME, where=where)
        filters = _codec_list(doc["filters"], where)
        compressor = (
            None if doc["compressor"] is None else _codec(doc["compressor"], "compressor", where)
        )
        data_type = _data_type(doc["dtype"], filters + ([compressor] if compressor else []), where)
        grid = _resolved("chunk_grid", GRID_NAME, {"chunk_shape": list(chunks)}, "chunks", where)
        check_chunk_size(grid, data_type, "chunks", where)
        separator = doc.get("dimension_separator", ".")
        key_encoding = _resolved(
            "chunk_key_encoding",
            KEY_ENCODING_NAME,
            {"separator": separator},
            "dimension_separator",
            where,
        )
        layout = _layout(doc["order"], where)
        try:
            codecs = _chain(filters, compressor, layout, data_type, len(shape))
        except MetadataError as exc:
            raise exc.locate("filters", where) from None
        extra = {k: v for k, v in doc.items() if k not in ARRAY_FIELDS and k not in _FOLDED}
        return ArrayMetadata(
            format=NAME,
            shape=tuple(shape),
            data_type=data_type,
            chunk_grid=grid,
            chunk_key_encoding=key_encoding,
            fill_value=fill_value_or_default(data_type, doc["fill_value"], NAME, where),
            codecs=tuple(codecs),
            attributes=freeze(_attributes(doc, where)),
            dimension_names=None,
            extra_fields=freeze(extra),
            document=freeze(dict(doc)),
            # a `null` fill value reads as the type's default (zarr-python 3), and chunks
            # equal to it are erased as zarr-python 3 erases them: not kept for zarr-python
            # 2, which reads such missing chunks as undefined (write_empty_chunks=True keeps
            # them; docs/zarr-python.md)
        )

    # -- writing ----------------------------------------------------------------------------
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
        """The folded document of a new array; refuses, saying why, what v2 cannot express."""
        if storage_transformers:
            raise MetadataError(
                "zarr format 2 has no storage transformers", field="storage_transformers"
            )
        if dimension_names is not None and any(n is not None for n in dimension_names):
            raise MetadataError(
                "zarr format 2 has no dimension names (xarray keeps them in the "
                "attribute '_ARRAY_DIMENSIONS')",
                field="dimension_names",
            )
        chunks = _chunks_of(chunk_grid, len(shape))
        separator = _separator_of(chunk_key_encoding)
        filters, layout_codec, compressor = _split_chain(list(codecs), len(shape))
        data_type = _with_byte_order(data_type, layout_codec)
        doc: dict[str, Any] = {
            "shape": [int(n) for n in shape],
            "chunks": list(chunks),
            "dtype": _dtype_json(data_type),
            "fill_value": data_type.fill_to_json(fill_value, NAME),
            "order": layout_codec.layout.written_name(NAME) if layout_codec else "C",
            "filters": [_codec_json(c, "filters") for c in filters] or None,
            "dimension_separator": separator,
            "compressor": _codec_json(compressor, "compressor") if compressor else None,
            "zarr_format": 2,
        }
        doc["attributes"] = dict(attributes or {})
        return doc

    def group_document(self, attributes: Mapping[str, Any] | None) -> dict[str, Any]:
        return {"zarr_format": 2, "attributes": dict(attributes or {})}

    def creation_arguments(self, data_type: Any, options: Mapping[str, Any]) -> dict[str, Any]:
        """`compressor`, `filters`, `order`, `dimension_separator` as zarr-python takes them
        (numcodecs dicts or objects, or zarrkit codecs; `compressor=None` is none) -> canonical
        `codecs` / `chunk_key_encoding`. What is not given comes from `zarrkit_array_defaults`."""
        allowed = {"compressor", "filters", "order", "dimension_separator"}
        unknown = set(options) - allowed
        if unknown:
            raise TypeError(
                f"zarr format 2 takes no arguments {sorted(unknown)}; it takes {sorted(allowed)}"
            )
        out: dict[str, Any] = {}
        if options.get("dimension_separator") is not None:
            out["chunk_key_encoding"] = _resolved(
                "chunk_key_encoding",
                KEY_ENCODING_NAME,
                {"separator": options["dimension_separator"]},
                "dimension_separator",
                "arguments",
            )
        if not {"compressor", "filters", "order"} & set(options):
            return out
        default_filters, default_tail, default_order = _defaults(data_type)
        filters = (
            default_filters
            if "filters" not in options
            else [_user_codec(f, f"filters[{i}]") for i, f in enumerate(options["filters"] or ())]
        )
        if "compressor" in options:
            tail = (
                []
                if options["compressor"] is None
                else [_user_codec(options["compressor"], "compressor")]
            )
        else:
            tail = default_tail
        order = options.get("order") or default_order
        out["codecs"] = _chain(
            filters + tail[:-1],
            tail[-1] if tail else None,
            _layout(order, "arguments"),
            data_type,
            ndim=None,
        )
        return out

    def resize_edit(self, metadata: ArrayMetadata, shape: tuple[int, ...]) -> dict[str, Any]:
        return {}  # v2 chunks stay as they are

    # -- nodes in a store -------------------------------------------------------------------
    def read_metadata(self, store: Store, path: str) -> NodeMetadata | None:
        """The node at `path`, or None when there is none; one batched read of its keys."""
        keys = {name: key(path, name) for name in (ZARRAY, ZGROUP, ZATTRS, ZMETADATA)}
        found = store.get_many(list(keys.values()))
        main = ZARRAY if keys[ZARRAY] in found else ZGROUP if keys[ZGROUP] in found else None
        if main is None:
            return None
        where = f"{keys[main]} in {store}"
        doc = load_document(found[keys[main]], where)
        if keys[ZATTRS] in found:
            doc["attributes"] = load_document(found[keys[ZATTRS]], f"{keys[ZATTRS]} in {store}")
        else:
            doc.pop("attributes", None)
        if main == ZARRAY:
            return self.parse_array(doc, where)
        if keys[ZMETADATA] in found:
            doc[CONSOLIDATED_FIELD] = fold_zmetadata(
                load_document(found[keys[ZMETADATA]], f"{keys[ZMETADATA]} in {store}"),
                f"{keys[ZMETADATA]} in {store}",
            )
        return self.parse_group(doc, where)

    def write_metadata(self, store: Store, path: str, doc: Mapping[str, Any]) -> None:
        """Write the node's objects; an empty `.zattrs` is removed rather than written (as
        zarr-python 2 does; zarr-python 3 writes `{}`: both read either)."""
        items = {
            key(path, name): self.encode_document(value)
            for name, value in split_document(doc).items()
        }
        if doc.get(CONSOLIDATED_FIELD) is not None:
            zmetadata = unfold_zmetadata(doc)
            items[key(path, ZMETADATA)] = json.dumps(zmetadata, allow_nan=False).encode()
        store.set_many(items)
        if key(path, ZATTRS) not in items:
            store.erase(key(path, ZATTRS))

    def children(self, store: Store, path: str) -> list[str]:
        """Names of the nodes directly under `path` (folders holding a `.zarray` or `.zgroup`)."""
        store.require("list", f"list the members of group {path or '/'!r}")
        prefix = node_prefix(path)
        _keys, prefixes = store.list_dir(prefix)
        wanted = [f"{prefix}{p}/{name}" for p in prefixes for name in (ZARRAY, ZGROUP)]
        found = set(store.get_many(wanted))
        return [
            p
            for p in prefixes
            if f"{prefix}{p}/{ZARRAY}" in found or f"{prefix}{p}/{ZGROUP}" in found
        ]

    def erase_node(self, store: Store, path: str) -> None:
        """Remove a node and everything below it."""
        store.erase_prefix(node_prefix(path))
        if path:
            store.erase_many([key(path, name) for name in (ZARRAY, ZGROUP, ZATTRS, ZMETADATA)])


FORMAT = V2Format()
