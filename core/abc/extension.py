"""What every extension shares: `Extension` (names per format, `from_json`, `to_json`), how it
is spelled (`names`, `ExtensionNames`, the formats `V3`, `V2`, `V3_DRAFT_2020`, `FORMATS`),
reading its configuration with errors that name the field (`config_value`,
`check_known_fields`, `parse_named_config`, `named_config`), and building an extension nested
in another's configuration through the registry (`extension_from_json`; `SkippedExtension` is
what an optional one that is not understood resolves to)."""

from __future__ import annotations

from typing import Any

from ..extension import (
    Extension,
    check_known_fields,
    config_value,
    named_config,
    parse_named_config,
)
from ..names import FORMATS, V2, V3, V3_DRAFT_2020, ExtensionNames, names
from ..negotiation import SkippedExtension
from ..negotiation import extension_from_json as _from_json

__all__ = [
    "FORMATS",
    "V2",
    "V3",
    "V3_DRAFT_2020",
    "Extension",
    "ExtensionNames",
    "SkippedExtension",
    "check_known_fields",
    "config_value",
    "extension_from_json",
    "named_config",
    "names",
    "parse_named_config",
]


def extension_from_json(kind: str, doc: Any, format: str, *, key: str) -> Any:
    """The extension of `kind` ("codec", "data_type", ...) that `doc` (a name or a
    `{"name", "configuration"}` object, as in metadata) describes, found through the registry
    as the kernel finds top-level ones; an extension instance is returned as it is. An unknown
    codec or storage transformer marked `"must_understand": false` gives `SkippedExtension`. Errors
    name `key`, the field of the outer configuration it came from."""
    if isinstance(doc, Extension):
        return doc
    return _from_json(kind, doc, format, key=key, where=None)
