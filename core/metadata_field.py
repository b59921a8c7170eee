"""Reading and writing the top-level document fields that metadata-field plugins understand
(`zarrkit.abc.metadata_field` is the contract and says what the kernel does with them).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from . import registry
from .abc.metadata_field import FieldSite, MetadataField
from .errors import MetadataError, MustUnderstandError


def _plugin(name: str, format: str, node_type: str) -> MetadataField | None:
    """The installed plugin that understands the field `name` here, or None."""
    cls = registry.get_registry("metadata_field").find(name, format)
    if cls is None or node_type not in cls.node_types:
        return None
    field: MetadataField = cls()
    return field


def read_fields(
    doc: Mapping[str, Any], known: Iterable[str], *, format: str, node_type: str, where: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the document with each understood field as its plugin read it, the fields nobody
    understands that may be skipped); a field nobody understands that must be understood is
    a `MustUnderstandError`."""
    known = set(known)
    out = dict(doc)
    extra: dict[str, Any] = {}
    for key, value in doc.items():
        if key in known:
            continue
        plugin = _plugin(key, format, node_type)
        if plugin is not None:
            out[key] = _called(plugin.read, value, key, FieldSite(format, node_type, where))
        elif isinstance(value, Mapping) and value.get("must_understand") is False:
            extra[key] = value
        else:
            raise MustUnderstandError(
                "this installation does not understand this field, and it is not marked "
                '"must_understand": false (a package can declare it understands the field: '
                "a zarrkit.metadata_fields plugin)",
                field=key,
                where=where,
            )
    return out, extra


def write_fields(
    doc: Mapping[str, Any], known: Iterable[str], *, format: str, node_type: str, where: str
) -> dict[str, Any]:
    """The document to store: each field a plugin understands as its `write` gives it; the
    others as they are (skippable ones kept as read)."""
    known = set(known)
    out = dict(doc)
    for key, value in doc.items():
        if key in known:
            continue
        plugin = _plugin(key, format, node_type)
        if plugin is not None:
            out[key] = _called(plugin.write, value, key, FieldSite(format, node_type, where))
    return out


def _called(hook: Any, value: Any, key: str, site: FieldSite) -> Any:
    """A plugin's hook, with its errors pointed at the field and the document."""
    try:
        return hook(value, site)
    except MetadataError as exc:
        raise exc.locate(key, site.where) from None
    except (TypeError, ValueError, KeyError) as exc:
        raise MetadataError(f"{type(exc).__name__}: {exc}", field=key, where=site.where) from None
