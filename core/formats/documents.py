"""What every format does alike with its JSON documents: load one, check the common fields,
serialise one. Each format module re-exports `load_document` as part of its interface."""

from __future__ import annotations

import json
from typing import Any, Mapping

from ..errors import MetadataError


def load_document(raw: bytes, where: str) -> dict[str, Any]:
    try:
        doc = json.loads(raw)
    except (UnicodeDecodeError, ValueError) as exc:
        raise MetadataError(f"not valid JSON: {exc}", where=where) from None
    if not isinstance(doc, dict):
        raise MetadataError(f"expected a JSON object, got {type(doc).__name__}", where=where)
    return doc


def dump_document(doc: Mapping[str, Any], *, indent: int = 2) -> bytes:
    try:
        return json.dumps(doc, indent=indent, allow_nan=False).encode()
    except (TypeError, ValueError) as exc:
        raise MetadataError(f"metadata is not representable as JSON: {exc}") from None


def check_shape(value: Any, where: str, key: str = "shape") -> tuple[int, ...]:
    if not isinstance(value, list) or not all(
            isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in value):
        raise MetadataError(f"expected a list of non-negative integers, got {value!r}",
                            key=key, where=where)
    return tuple(value)


def check_attributes(doc: Mapping[str, Any], where: str) -> dict[str, Any]:
    attributes = doc.get("attributes", {})
    if not isinstance(attributes, dict):
        raise MetadataError(f"expected an object, got {attributes!r}", key="attributes",
                            where=where)
    return attributes


def fill_value_or_default(data_type: Any, value: Any, fmt: str, where: str) -> Any:
    """A fill value read in `fmt`; JSON `null` (v2, the draft: "any value") reads as the type's
    default, while the document keeps the null so it is written back."""
    if value is None:
        return data_type.default_fill()
    try:
        return data_type.fill_from_json(value, fmt)
    except MetadataError as exc:
        raise exc.locate("fill_value", where) from None
