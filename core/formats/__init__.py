"""The storage protocols of the Zarr formats zarrkit speaks. Formats are part of the kernel;
everything they name (codecs, data types, grids, ...) comes from the registries."""

from __future__ import annotations

from types import ModuleType

from ..names import V3, check_format


def get_format(name: str) -> ModuleType:
    check_format(name)
    if name == V3:
        from . import v3

        return v3
    raise NotImplementedError(f"zarr format {name} is not supported yet")


def detect(store, path: str) -> ModuleType | None:
    """The format of the node at `path`, judged by which metadata key exists."""
    from . import v3

    if store.exists(v3.metadata_key(path)):
        return v3
    return None
