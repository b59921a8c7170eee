"""The storage protocols of the Zarr formats: the kernel's own (v3) and the format plugins.

Each format is one instance of a `Format` subclass (`format.py` says what a format provides,
`zarrkit.abc.format` is what a format plugin may use), looked up by name with `get_format`;
`detect` and `read_node` find which format a node has. v3 is the kernel's; every other format
(v2 and the 2020 draft among them) is a plugin in the `zarrkit.formats` entry-point group,
whose entry-point name is the format's name and whose object is the format instance.
"""

from __future__ import annotations

from .. import entry_points, forksafe
from ..abc.extension import FORMATS, V2, V3, V3_DRAFT_2020, check_format
from ..abc.format import Format, NodeMetadata
from ..abc.store import Store, check_fits
from ..errors import FormatNotInstalledError, PluginLoadError

#: the entry-point group of the format plugins
GROUP = "zarrkit.formats"

_loaded: dict[str, Format] = {}
_lock = forksafe.lock()

#: Names no node may have, in any format: the names of metadata documents. A node so named
#: would put its folder where a document is looked for (or its document inside a node's
#: folder), which a file-system store cannot hold and every reader would misread.
RESERVED_NAMES = frozenset({"zarr.json", ".zarray", ".zgroup", ".zattrs", ".zmetadata"})

#: the order in which `detect` asks each format whether a node is at a path
DETECTION_ORDER = (V3, V2, V3_DRAFT_2020)


def get_format(name: str) -> Format:
    """The format named `name`; `FormatNotInstalledError` when no installed plugin provides it."""
    check_format(name)
    if name == V3:
        from .v3 import FORMAT

        return FORMAT
    with _lock:
        found = _loaded.get(name)
    if found is None:
        found = _load(name)
        with _lock:
            found = _loaded.setdefault(name, found)
    return found


def _load(name: str) -> Format:
    """The format object of the one installed entry point named `name` in `GROUP`."""
    rows = [row for row in entry_points.in_group(GROUP) if row[0].name == name]
    if not rows:
        raise FormatNotInstalledError(
            "format", name, hint=f"no distribution declares it in the {GROUP!r} entry-point group"
        )
    entry, distribution, _version = rows[0]
    try:
        found = entry.load()
    except Exception as exc:
        raise PluginLoadError(
            f"the format plugin {entry.value!r} ({distribution or 'unknown distribution'}) "
            f"failed to load: {type(exc).__name__}: {exc}"
        ) from exc
    if not isinstance(found, Format) or found.name != name:
        raise PluginLoadError(
            f"the entry point {name!r} in {GROUP!r} ({entry.value!r}) is not a zarrkit Format "
            f"named {name!r}: {found!r}"
        )
    return found


def available() -> tuple[str, ...]:
    """The formats this installation implements."""
    out: list[str] = []
    for name in FORMATS:
        try:
            get_format(name)
        except FormatNotInstalledError:
            continue
        out.append(name)
    return tuple(out)


def _in_detection_order() -> list[Format]:
    out = []
    for name in DETECTION_ORDER:
        try:
            out.append(get_format(name))
        except FormatNotInstalledError:
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
