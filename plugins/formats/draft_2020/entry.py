"""The 2020 draft's entry point, `zarr.json` at the store root: which protocol, how the other
documents are encoded, their key suffix, and the hierarchy's protocol extensions.

It is written once, when the first node of a hierarchy is created, and read before any node:
the suffix it names is part of every metadata key.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from zarrkit.abc import Store
from zarrkit.abc.format import load_document
from zarrkit.errors import MetadataError
from zarrkit.helpers import extension_list, unknown_fields
from zarrkit.plugins.formats.draft_2020.keys import DEFAULT_SUFFIX, ENTRY_POINT_KEY

#: the draft's core protocol URI (also the only metadata encoding it defines: JSON)
CORE_URI = "https://purl.org/zarr/spec/protocol/core/3.0"
#: "future versions that retain the same major version number (3) will be backwards-compatible"
_CORE_PATTERN = re.compile(r"https://purl\.org/zarr/spec/protocol/core/3\.\d+")
_SUFFIX_PATTERN = re.compile(r"[A-Za-z0-9._-]*")
FIELDS = ("zarr_format", "metadata_encoding", "metadata_key_suffix", "extensions")


@dataclass(frozen=True)
class EntryPoint:
    suffix: str
    document: dict


def default_document() -> dict[str, Any]:
    """Exactly the four fields zarr-python 2.x requires (it refuses any other key here)."""
    return {
        "zarr_format": CORE_URI,
        "metadata_encoding": CORE_URI,
        "metadata_key_suffix": DEFAULT_SUFFIX,
        "extensions": [],
    }


def looks_like_draft(raw: bytes) -> bool:
    """Whether a root `zarr.json` is meant as the draft's entry point (its `zarr_format` is a
    string, where v3 has the number 3), so that a broken one is reported by this format."""
    try:
        doc = json.loads(raw)
    except (ValueError, UnicodeDecodeError, TypeError, RecursionError):
        return False
    return isinstance(doc, dict) and isinstance(doc.get("zarr_format"), str)


def parse(raw: bytes, where: str) -> EntryPoint:
    doc = load_document(raw, where)
    unknown_fields(doc, FIELDS, where=where)
    fmt = doc.get("zarr_format")
    if not isinstance(fmt, str) or not _CORE_PATTERN.fullmatch(fmt):
        raise MetadataError(
            f"expected the core protocol URI {CORE_URI!r} (or another 3.x), got {fmt!r}",
            field="zarr_format",
            where=where,
        )
    encoding = doc.get("metadata_encoding", CORE_URI)
    if not isinstance(encoding, str) or not _CORE_PATTERN.fullmatch(encoding):
        raise MetadataError(
            f"only the JSON encoding of the core protocol ({CORE_URI!r}) is "
            f"supported, got {encoding!r}",
            field="metadata_encoding",
            where=where,
        )
    suffix = doc.get("metadata_key_suffix", DEFAULT_SUFFIX)
    if not isinstance(suffix, str) or not _SUFFIX_PATTERN.fullmatch(suffix):
        raise MetadataError(
            f"expected a string of key characters (a-z, A-Z, 0-9, '.', '-', '_'), got {suffix!r}",
            field="metadata_key_suffix",
            where=where,
        )
    extension_list(doc.get("extensions", []), key="extensions", where=where)
    return EntryPoint(suffix, doc)


def read(store: Store) -> EntryPoint | None:
    raw = store.get(ENTRY_POINT_KEY)
    if raw is None:
        return None
    return parse(raw, f"{ENTRY_POINT_KEY} in {store}")


def encode(doc: dict) -> bytes:
    return json.dumps(doc, indent=4, sort_keys=True).encode()
