"""The storage protocols of the Zarr formats zarrkit speaks. Formats are part of the kernel;
everything they name (codecs, data types, grids, ...) comes from the registries.

A format module provides, with the same names and signatures in each:

- ``NAME``; ``metadata_key(path)`` (the key that names the node in errors);
  ``node_keys(path)`` (the keys its metadata may be stored under, checked against the store's
  name limit before a node is created);
  ``chunk_key(path, encoded)`` (where a chunk lives, from the key encoding's string);
- ``probe(store, path) -> bool``: whether a node of this format is at `path`;
- ``read_metadata(store, path) -> ArrayMetadata | GroupMetadata | None``;
- ``parse_node(doc, where)``, ``parse_array(doc, where)``, ``parse_group(doc, where)``,
  ``load_document(raw, where)``, ``encode_document(doc)``: one "document" per node (a dict; a
  format that stores a node in several keys, like v2's `.zarray` + `.zattrs`, folds them into one
  and splits them again in ``write_metadata``);
- ``array_document(*, shape, data_type, chunk_grid, chunk_key_encoding, fill_value, codecs,
  attributes, dimension_names, storage_transformers=())`` and ``group_document(attributes)``:
  a new node's document from the canonical pieces; raise `MetadataError` saying why when the
  pieces cannot be expressed in this format (a codec with no name here, ...);
- ``creation_arguments(data_type, options) -> dict``: turn format-specific arguments of
  `create_array` (v2: compressor, filters, order, dimension_separator) into canonical ones
  (codecs, chunk_key_encoding, ...); refuse unknown ones with TypeError;
- ``edit_document(metadata, *, attributes=..., shape=...) -> dict``: the document after a change;
- ``write_metadata(store, path, doc)``, ``children(store, path)``, ``erase_node(store, path)``.

Optional, for fewer requests on object stores: ``READ_PROBES = True`` when ``read_metadata``
answers None exactly where ``probe`` answers False (then reading is the probe: one request);
``child_metadata(store, path) -> {name: metadata}``, the children with their metadata from
one listing and one batched read.
"""

from __future__ import annotations

from importlib import import_module
from types import ModuleType

from ..names import FORMATS, V2, V3, V3_DRAFT_2020, check_format
from ..store import check_fits

_MODULES = {V3: "v3", V2: "v2", V3_DRAFT_2020: "v3_draft_2020"}

#: Names no node may have, in any format: the names of metadata documents. A node so named
#: would put its folder where a document is looked for (or its document inside a node's
#: folder), which a file-system store cannot hold and every reader would misread.
RESERVED_NAMES = frozenset({"zarr.json", ".zarray", ".zgroup", ".zattrs", ".zmetadata"})

#: the order in which `detect` asks each format whether a node is at a path
DETECTION_ORDER = (V3, V2, V3_DRAFT_2020)


def get_format(name: str) -> ModuleType:
    check_format(name)
    try:
        return import_module(f".{_MODULES[name]}", __name__)
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{_MODULES[name]}":
            raise
        raise NotImplementedError(f"zarr format {name} is not supported yet") from None


def available() -> tuple[str, ...]:
    """The formats this installation implements."""
    out = []
    for name in FORMATS:
        try:
            get_format(name)
        except NotImplementedError:
            continue
        out.append(name)
    return tuple(out)


def detect(store, path: str) -> ModuleType | None:
    """The format of the node at `path`, judged by which metadata key exists."""
    for name in DETECTION_ORDER:
        try:
            module = get_format(name)
        except NotImplementedError:
            continue
        if module.probe(store, path):
            return module
    return None


def check_node_fits(store, path: str, module: ModuleType) -> None:
    """Refuse a node path whose metadata keys in `module`'s format have a segment longer than
    the store can hold, before anything is written there."""
    for key in module.node_keys(path):
        check_fits(store, key)
