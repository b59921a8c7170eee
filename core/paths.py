"""Node names and paths: the spec's naming rules, and paths normalized to 'a/b' ('' is the root).

Below every module that creates or opens nodes, so creation and the hierarchy share the rules
without importing each other."""

from __future__ import annotations

from .errors import InvalidKeyError, NodeNameError
from .formats import RESERVED_NAMES


def check_name(name: str) -> str:
    """A node name per the spec (not empty, no '/', not only periods), valid Unicode, and not
    the name of a metadata document (which no store can hold as a node: `InvalidKeyError`).

    Names starting with '__' are taken in every format. The v3 spec reserves that prefix for
    its own extensions, but zarr-python writes such names in both formats, the v2 spec
    reserves nothing, and xarray writes `__xarray_dataarray_variable__` for an unnamed
    DataArray: refusing them made zarrkit unable to write, or reopen, what they write
    (docs/zarr-python.md)."""
    if not isinstance(name, str):
        raise NodeNameError(f"node names are strings, got {name!r}")
    if not name:
        raise NodeNameError("a node name must not be empty")
    if "/" in name:
        raise NodeNameError(f"node name {name!r} must not contain '/'")
    if set(name) == {"."}:
        raise NodeNameError(f"node name {name!r} must not consist of periods only")
    if not name.isascii():
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:
            raise NodeNameError(
                f"node name {name!r} is not valid Unicode (a lone surrogate)"
            ) from None
    if name in RESERVED_NAMES:
        raise InvalidKeyError(
            f"node name {name!r} is the name of a metadata document; a "
            f"store cannot hold a node there"
        )
    return name


def normalize_path(path: str | None) -> str:
    """'/a/b/' -> 'a/b'; '' is the root. Each segment must be a valid node name."""
    if path is None:
        return ""
    if not isinstance(path, str):
        raise NodeNameError(f"node paths are strings, got {path!r}")
    stripped = path.strip("/")
    if not stripped:
        return ""
    for segment in stripped.split("/"):
        check_name(segment)
    return stripped


def join(parent: str, name: str) -> str:
    return f"{parent}/{name}" if parent else name
