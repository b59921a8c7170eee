"""`must_understand` negotiation (Zarr v3.1): what metadata this installation may skip.

- An unknown top-level field is allowed only when its value is an object carrying
  `"must_understand": false`; it is kept as read and written back unchanged.
- An unknown codec or storage transformer marked `"must_understand": false` is skipped; the
  array is then read-only, since writing without it would produce data others misread.
- A data type, chunk grid or chunk key encoding can never be skipped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from . import registry
from .errors import MetadataError, MustUnderstandError, UnknownExtensionError
from .extension import parse_named_config

#: kinds whose unknown members may be skipped when marked must_understand: false
SKIPPABLE_KINDS = frozenset({"codec", "storage_transformer"})


@dataclass(frozen=True)
class Skipped:
    """An extension that was not understood and, being optional, was left out."""

    kind: str
    name: str


def unknown_fields(doc: Mapping[str, Any], known: Iterable[str], *, where: str) -> dict[str, Any]:
    """The unknown-but-allowed top-level fields of a document; refuse the others."""
    known = set(known)
    extra = {}
    for key, value in doc.items():
        if key in known:
            continue
        if isinstance(value, Mapping) and value.get("must_understand") is False:
            extra[key] = value
            continue
        raise MustUnderstandError(
            "this installation does not understand this field, and it is not marked "
            '"must_understand": false', key=key, where=where)
    return extra


def resolve_extension(kind: str, doc: Any, format: str, *, key: str, where: str) -> Any:
    """Build an extension instance from its metadata JSON, or Skipped when allowed."""
    name, configuration, must_understand = parse_named_config(doc, key=key, where=where)
    try:
        cls = registry.resolve(kind, name, format, where=where)
    except UnknownExtensionError:
        if not must_understand and kind in SKIPPABLE_KINDS:
            return Skipped(kind, name)
        raise
    return build(cls, name, configuration, format, key=key, where=where)


def build(cls: type, name: str, configuration: Mapping[str, Any], format: str, *,
          key: str, where: str) -> Any:
    """`cls.from_json`, with errors re-pointed at the metadata field they came from."""
    try:
        return cls.from_json(name, configuration, format)
    except MetadataError as exc:
        raise exc.locate(key, where) from None
    except (TypeError, ValueError) as exc:
        raise MetadataError(f"invalid configuration for {name!r}: {exc}", key=key, where=where) from None
