"""What every format does alike with its JSON documents: load one, check the common fields,
serialise one (`Format.load_document` and `encode_document` use them)."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from .errors import MetadataError, NotJSONError

#: The longest dimension (of an array or of a chunk): every position, chunk index and chunk
#: start must fit a signed 64-bit integer, the bound zarr-python and tensorstore put on
#: the spec's "non-negative integers", and what numpy indexes with.
MAX_DIMENSION = 2**63 - 1
#: The most dimensions an array may have: what a numpy array can have (numpy 2).
MAX_NDIM = 64
#: The most bytes one chunk may hold decoded: what a buffer can be addressed with.
MAX_CHUNK_BYTES = sys.maxsize
#: The deepest nesting of arrays and objects a metadata document may have. Python's JSON
#: reader and writer recurse once per level, so a document nested thousands deep would end
#: in a RecursionError; no real document comes near this.
MAX_NESTING = 200


def load_document(raw: Any, where: str) -> dict[str, Any]:
    try:
        doc = json.loads(raw)
    except (UnicodeDecodeError, ValueError, TypeError) as exc:
        raise MetadataError(f"not valid JSON: {exc}", where=where) from None
    except RecursionError:
        raise MetadataError(f"nested more than {MAX_NESTING} levels deep", where=where) from None
    if not isinstance(doc, dict):
        raise MetadataError(f"expected a JSON object, got {type(doc).__name__}", where=where)
    if not _shallow(raw):
        check_nesting(doc, where)
    return doc


def _shallow(raw: Any) -> bool:
    """Whether the text cannot nest `MAX_NESTING` deep: it opens fewer arrays and objects
    than that, counting brackets in strings too (a count at C speed, where walking the
    parsed document is Python, once per value)."""
    if isinstance(raw, str):
        return raw.count("[") + raw.count("{") < MAX_NESTING
    if isinstance(raw, bytes | bytearray):
        return raw.count(b"[") + raw.count(b"{") < MAX_NESTING
    return False


def check_nesting(doc: Any, where: str | None = None) -> None:
    """Refuse a document nested more than `MAX_NESTING` deep, naming the field where it goes
    too deep; iterative, so a deep one cannot exhaust the stack here either. Only depths are
    tracked on the way (every document read goes through here); the field is named by a
    second walk when one is too deep."""
    stack: list[tuple[Any, int]] = [(doc, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, (dict, Mapping)):
            children: Any = value.values()
        elif isinstance(value, (list, tuple)):
            children = value
        else:
            continue
        if depth >= MAX_NESTING:
            raise MetadataError(
                f"nested more than {MAX_NESTING} levels deep",
                field=_too_deep(doc) or None,
                where=where,
            )
        stack.extend((v, depth + 1) for v in children if not isinstance(v, _SCALARS))


#: the JSON values that nest nothing
_SCALARS = (str, int, float, type(None))


def _too_deep(doc: Any) -> str:
    """The path of the first value (in `check_nesting`'s order) nested `MAX_NESTING` deep."""
    stack: list[tuple[Any, int, str]] = [(doc, 0, "")]
    while stack:
        value, depth, path = stack.pop()
        if isinstance(value, Mapping):
            items: Any = ((f"{path}.{k}" if path else str(k), v) for k, v in value.items())
        elif isinstance(value, (list, tuple)):
            items = ((f"{path}[{i}]", v) for i, v in enumerate(value))
        else:
            continue
        if depth >= MAX_NESTING:
            return path
        stack.extend((v, depth + 1, p) for p, v in items if not isinstance(v, _SCALARS))
    return ""


def dump_document(doc: Mapping[str, Any], *, indent: int | None = 2) -> bytes:
    check_nesting(doc)
    try:
        return json.dumps(doc, indent=indent, allow_nan=False).encode()
    except TypeError as exc:  # a type JSON has none for: a TypeError, as zarr-python's
        raise NotJSONError(f"metadata is not representable as JSON: {exc}") from None
    except ValueError as exc:  # NaN or infinity outside a fill value, a circular reference
        raise MetadataError(f"metadata is not representable as JSON: {exc}") from None


def check_shape(value: Any, where: str, key: str = "shape") -> tuple[int, ...]:
    if not isinstance(value, list) or not all(
        isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in value
    ):
        raise MetadataError(
            f"expected a list of non-negative integers, got {short_repr(value)}",
            field=key,
            where=where,
        )
    check_dimensions(value, key, where)
    return tuple(value)


def check_dimensions(shape: Sequence[int], key: str, where: str | None) -> None:
    """At most `MAX_NDIM` lengths, each at most `MAX_DIMENSION`."""
    if len(shape) > MAX_NDIM:
        raise MetadataError(
            f"{len(shape)} dimensions; at most {MAX_NDIM} are supported (as in numpy)",
            field=key,
            where=where,
        )
    for i, n in enumerate(shape):
        if n > MAX_DIMENSION:
            raise MetadataError(
                f"dimension {i} is {n}; at most 2**63 - 1 is supported", field=key, where=where
            )


def check_chunk_size(grid: Any, data_type: Any, key: str, where: str | None) -> None:
    """Refuse chunks too large to address: a regular grid's chunk with a dimension beyond
    `MAX_DIMENSION` or more than `MAX_CHUNK_BYTES` decoded (an object or variable-size type
    counts a pointer per element, as numpy holds it). Exact integers: nothing wraps."""
    shape = grid.uniform_chunk_shape
    if shape is None:
        return
    check_dimensions(shape, key, where)
    nbytes = math.prod(shape) * max(1, data_type.native.itemsize)
    if nbytes > MAX_CHUNK_BYTES:
        raise MetadataError(
            f"a chunk of shape {list(shape)} holds {nbytes} bytes; at most "
            f"2**63 - 1 can be addressed",
            field=key,
            where=where,
        )


def short_repr(value: Any, limit: int = 200) -> str:
    """A value for a message, cut short: a fuzzed document may hold megabytes."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def check_attributes(doc: Mapping[str, Any], where: str) -> dict[str, Any]:
    attributes = doc.get("attributes", {})
    if not isinstance(attributes, dict):
        raise MetadataError(
            f"expected an object, got {attributes!r}", field="attributes", where=where
        )
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
