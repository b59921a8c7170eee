"""Metadata-field extensions: top-level fields of a node's document that a package understands.

Zarr v3 lets a document carry fields beyond the spec's; an implementation must refuse one it
does not understand unless the field's value is an object with `"must_understand": false`
(`negotiation.unknown_fields`). A `MetadataField` plugin (entry-point group
`zarrkit.metadata_fields`, named by the field) declares that its package understands a field
in the formats its `names` spell and on the node types in `node_types`; the kernel then
accepts that field whatever its `must_understand`, and calls the plugin's `read` on every
document read and its `write` on every document written, so the package checks the field and
acts on it. Consolidated metadata (`plugins/fields/consolidated.py`) is the first-party one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from .extension import ExtensionNames

__all__ = ["NODE_TYPES", "FieldSite", "MetadataField"]

#: the node types a document can be of
NODE_TYPES = frozenset({"array", "group"})


@dataclass(frozen=True)
class FieldSite:
    """Where a field is being read or written: the format's name (`zarrkit.abc.V3`), the
    node's type ("array" or "group") and the document, as error messages name it."""

    format: str
    node_type: str
    where: str


class MetadataField:
    """A top-level document field that a package understands (see the module docstring).

    Subclasses set `names` (the field's name per format: `names("my_field")` is v3 only) and
    may narrow `node_types`; they override `read` and `write` to check the value (raising
    `zarrkit.errors.MetadataError`, whose `field` is taken relative to this one) and to act on
    it. Instances are made with no arguments, once per document; keep no state in them.
    """

    names: ClassVar[ExtensionNames]
    #: the node types whose documents may carry the field
    node_types: ClassVar[frozenset[str]] = NODE_TYPES
    #: see `zarrkit.abc.Extension.generic`
    generic: ClassVar[bool] = False

    @classmethod
    def matches_name(cls, name: str, format: str) -> bool:
        """Whether this class understands the field `name` in `format` (see
        `zarrkit.abc.Extension.matches_name`)."""
        return cls.names.matches(name, format)

    def read(self, value: Any, site: FieldSite) -> Any:
        """The field's value as read; what it returns is what the parsed document holds."""
        return value

    def write(self, value: Any, site: FieldSite) -> Any:
        """The field's value about to be written; what it returns is what is stored."""
        return value
