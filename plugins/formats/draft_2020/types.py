"""Data types in the 2020 draft: core identifiers (`<f8`, `bool`, `r16`) and extension objects.

A core identifier is resolved as a registry name in the draft (the data type plugins declare
their typestrings as draft names; a type built from `>i4` remembers its byte order).

An extension object is `{"extension": URI, "type": ..., "fallback": core identifier | null}`.
It is resolved, in order:

1. by its URI: a plugin that declares the URI as a draft name, configured with the object's
   other fields (`type`, ...);
2. by its `type`, when that is a string a plugin declares as a draft name. zarr-python 2.x
   wraps the numpy types outside the draft's core (complex, datetime, ...) this way, with the
   numpy typestring as `type`, one URI per family and no fallback;
3. by its `fallback`, when neither is installed (the seed: "the implementation may proceed using
   the fallback value as the data type");
4. otherwise the URI is reported as an unknown data type.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from zarrkit.abc import V3_DRAFT_2020
from zarrkit.errors import (
    AmbiguousExtensionError,
    MetadataError,
    PluginConflictError,
    UnknownExtensionError,
)
from zarrkit.helpers import build, lookup

NAME = V3_DRAFT_2020


def parse_data_type(value: Any, where: str) -> Any:
    if isinstance(value, str):
        return _core(value, "data_type", where)
    if isinstance(value, Mapping) and "extension" in value:
        return _extension(value, where)
    raise MetadataError(
        f"expected a core data type identifier (like '<f8') or an extension "
        f"object with 'extension', 'type' and 'fallback', got {value!r}",
        field="data_type",
        where=where,
    )


def _core(name: str, key: str, where: str) -> Any:
    cls = lookup("data_type", name, NAME, where=where)
    return build(cls, name, {}, NAME, key=key, where=where)


def _extension(doc: Mapping[str, Any], where: str) -> Any:
    uri = doc["extension"]
    if not isinstance(uri, str) or not uri:
        raise MetadataError(
            f"'extension' must be a URI string, got {uri!r}",
            field="data_type.extension",
            where=where,
        )
    if "type" not in doc:
        raise MetadataError(
            "an extension data type needs a 'type'", field="data_type.type", where=where
        )
    fallback = doc.get("fallback")
    if fallback is not None and not isinstance(fallback, str):
        raise MetadataError(
            f"'fallback' must be a core data type identifier or null, got {fallback!r}",
            field="data_type.fallback",
            where=where,
        )
    try:
        cls = lookup("data_type", uri, NAME, where=where)
    except (UnknownExtensionError, PluginConflictError, AmbiguousExtensionError):
        pass  # a URI shared by a family (zarr-python's complex types): the type decides
    else:
        config = {k: v for k, v in doc.items() if k not in ("extension", "fallback")}
        return build(cls, uri, config, NAME, key="data_type", where=where)
    kind = doc["type"]
    if isinstance(kind, str):
        try:
            cls = lookup("data_type", kind, NAME, where=where)
        except UnknownExtensionError:
            pass
        else:
            return build(cls, kind, {}, NAME, key="data_type.type", where=where)
    if fallback is not None:
        return _core(fallback, "data_type.fallback", where)
    exc = UnknownExtensionError(
        "data_type",
        uri,
        NAME,
        where=where,
        hint=f"its type {kind!r} is not a draft name of any installed "
        f"data type either, and it gives no fallback",
    )
    raise exc.locate("data_type") from None


def data_type_json(data_type: Any, endian: str | None) -> Any:
    """The draft spelling of a data type whose bytes are in `endian` (from the layout)."""
    if endian is not None and data_type.endian != endian:
        data_type = data_type.with_endian(endian)
    try:
        return data_type.to_json(NAME)
    except MetadataError as exc:
        raise MetadataError(
            f"the data type {data_type.native} has no name in the 2020 draft ({exc.detail})",
            field="data_type",
        ) from None
