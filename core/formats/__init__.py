"""The storage protocols of the Zarr formats zarrkit speaks. Formats are part of the kernel;
everything they name (codecs, data types, grids, ...) comes from the registries.

Each format is one instance of a `Format` subclass (`format.py` says what a format provides),
looked up by name with `get_format`; `detect` and `read_node` find which format a node has.
"""

from __future__ import annotations

from importlib import import_module

from ..metadata import NodeMetadata
from ..names import FORMATS, V2, V3, V3_DRAFT_2020, check_format
from ..store import Store, check_fits
from .format import Format

_MODULES = {V3: "v3", V2: "v2", V3_DRAFT_2020: "v3_draft_2020"}

#: Names no node may have, in any format: the names of metadata documents. A node so named
#: would put its folder where a document is looked for (or its document inside a node's
#: folder), which a file-system store cannot hold and every reader would misread.
RESERVED_NAMES = frozenset({"zarr.json", ".zarray", ".zgroup", ".zattrs", ".zmetadata"})

#: the order in which `detect` asks each format whether a node is at a path
DETECTION_ORDER = (V3, V2, V3_DRAFT_2020)


def get_format(name: str) -> Format:
    """The format named `name`; NotImplementedError when this installation lacks it."""
    check_format(name)
    try:
        module = import_module(f".{_MODULES[name]}", __name__)
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{_MODULES[name]}":
            raise
        raise NotImplementedError(f"zarr format {name} is not supported yet") from None
    found: Format = module.FORMAT
    return found


def available() -> tuple[str, ...]:
    """The formats this installation implements."""
    out: list[str] = []
    for name in FORMATS:
        try:
            get_format(name)
        except NotImplementedError:
            continue
        out.append(name)
    return tuple(out)


def _in_detection_order() -> list[Format]:
    out = []
    for name in DETECTION_ORDER:
        try:
            out.append(get_format(name))
        except NotImplementedError:
            continue
    return out


def detect(store: Store, path: str) -> Format | None:
    """The format of the node at `path`, judged by which metadata key exists."""
    for fmt in _in_detection_order():
        if fmt.probe(store, path):
            return fmt
    return None


def read_node(store: Store, path: str, expected: Format | None = None) -> NodeMetadata | None:
    """The metadata of the node at `path` in whichever format it has, or None. `expected`:
    the format the node most likely has (a group's member usually has the group's format),
    read first without probing the others, so that on an object store opening a member costs
    one request rather than one per probe."""
    tried = None
    if expected is not None and path:
        found = expected.read_metadata(store, path)
        if found is not None:
            return found
        tried = expected
    for fmt in _in_detection_order():
        if fmt is tried:
            continue
        if fmt.read_probes:  # its read is its probe: one request
            found = fmt.read_metadata(store, path)
            if found is not None:
                return found
        elif fmt.probe(store, path):
            return fmt.read_metadata(store, path)
    return None


def check_node_fits(store: Store, path: str, fmt: Format) -> None:
    """Refuse a node path whose metadata keys in format `fmt` have a segment longer than the
    store can hold, before anything is written there."""
    for key in fmt.node_keys(path):
        check_fits(store, key)
