"""What every extension shares: how it is spelled in each format (`names`, `ExtensionNames`,
the formats `V3`, `V2`, `V3_DRAFT_2020`, `FORMATS`), `Extension` (names per format,
`from_json`, `to_json`), reading its configuration with errors that name the field
(`config_value`, `check_known_fields`, `parse_named_config`, `named_config`), and
`SkippedExtension`, what an optional extension that is not understood resolves to.

An extension declares, per format, the one name it writes, the names it also reads (aliases),
and optionally a name pattern for a family (raw bits `r8`, `r16`, ...). The registry answers
"does this name match" from these declarations alone, so a plugin never has to parse names.
An extension class builds itself from the JSON of metadata with `from_json`; `to_json` gives
it back in a format. Instances are immutable values.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..errors import InvalidArgumentError, MetadataError

__all__ = [
    "FORMATS",
    "V2",
    "V3",
    "V3_DRAFT_2020",
    "Extension",
    "ExtensionNames",
    "SkippedExtension",
    "Spelling",
    "check_format",
    "check_known_fields",
    "config_value",
    "named_config",
    "names",
    "parse_named_config",
]

#: The Zarr formats zarrkit speaks; every per-format table is keyed by these.
V3 = "v3"
"""Zarr v3, the kernel's own format."""
V2 = "v2"
"""Zarr v2."""
V3_DRAFT_2020 = "v3-draft-2020"
"""The 2020 draft of v3, as zarr-python 2's experimental v3 support wrote it."""
FORMATS = (V3, V2, V3_DRAFT_2020)
"""Every format's name, v3 first."""


def check_format(fmt: str) -> str:
    if fmt not in FORMATS:
        raise InvalidArgumentError(
            f"unknown zarr format {fmt!r}; expected one of {', '.join(FORMATS)}"
        )
    return fmt


@dataclass(frozen=True)
class Spelling:
    """The names of one extension in one format."""

    name: str | None = None
    aliases: tuple[str, ...] = ()
    pattern: str | None = None  # full-match regular expression naming a family

    def matches(self, name: str) -> bool:
        if name == self.name or name in self.aliases:
            return True
        return self.pattern is not None and re.fullmatch(self.pattern, name) is not None


@dataclass(frozen=True)
class ExtensionNames:
    """Spellings of one extension per format; a format missing here has no such extension."""

    per_format: dict = field(default_factory=dict)

    def get(self, fmt: str) -> Spelling | None:
        return self.per_format.get(fmt)

    def matches(self, name: str, fmt: str) -> bool:
        spelling = self.per_format.get(fmt)
        return spelling is not None and spelling.matches(name)

    def written(self, fmt: str) -> str | None:
        spelling = self.per_format.get(fmt)
        return spelling.name if spelling else None

    def formats(self) -> tuple[str, ...]:
        return tuple(f for f in FORMATS if f in self.per_format)


def names(
    v3: str | None = None,
    *,
    v2: str | None = None,
    draft: str | None = None,
    aliases: Iterable[str] = (),
    v2_aliases: Iterable[str] = (),
    draft_aliases: Iterable[str] = (),
    pattern: str | None = None,
    v2_pattern: str | None = None,
    draft_pattern: str | None = None,
) -> ExtensionNames:
    """Shorthand for the common case: `names("bytes", aliases=["endian"])`."""
    table = {}
    for fmt, name, als, pat in (
        (V3, v3, aliases, pattern),
        (V2, v2, v2_aliases, v2_pattern),
        (V3_DRAFT_2020, draft, draft_aliases, draft_pattern),
    ):
        als = tuple(als)
        if name or als or pat:
            table[fmt] = Spelling(name, als, pat)
    return ExtensionNames(table)


class Extension:
    """What every extension (codec, data type, grid, key encoding, layout, store, storage
    transformer) shares: its names per format, and reading and writing its configuration."""

    names: ClassVar[ExtensionNames]
    #: True for a provider that answers for extensions it does not own, such as a bridge to
    #: another library's registry (the numcodecs bridge): any provider that names the
    #: extension itself (its name or an alias) is chosen over it, so installing a package
    #: for one codec never turns data the bridge read into a conflict. A match through a
    #: name pattern (`names(pattern=...)`) or `matches_name` counts as generic anyway.
    generic: ClassVar[bool] = False

    @classmethod
    def matches_name(cls, name: str, format: str) -> bool:
        """Whether this class answers for the extension `name` in `format`: by default what
        its `names` declare. A class that answers for names it cannot list (a bridge to
        another library's registry) overrides it; a match so made counts as generic."""
        return cls.names.matches(name, format)

    @classmethod
    def adapt(cls, obj: object, format: str = V3) -> Extension | None:
        """An instance standing for `obj`, an object of another library that this class
        recognises (zarr-python's codec objects, for its bridge), or None when it does not.
        Asked, class by class of the kind, for an argument that is neither a name, a JSON
        object nor a zarrkit extension; so a class recognises objects cheaply and without
        importing their library (an object of a library not in `sys.modules` cannot be one)."""
        return None

    @classmethod
    def from_json(cls, name: str, configuration: Mapping[str, Any], format: str = V3) -> Extension:
        """Build from a name (as written, maybe an alias) and its configuration object."""
        if configuration:
            raise MetadataError(
                f"{name!r} takes no configuration, got {dict(configuration)!r}",
                field="configuration",
            )
        return cls()

    def configuration(self, format: str = V3) -> dict[str, Any]:
        return {}

    def written_name(self, format: str = V3) -> str:
        name = type(self).names.written(format)
        if name is None:
            raise MetadataError(f"{type(self).__name__} has no name in zarr format {format}")
        return name

    def to_json(self, format: str = V3) -> Any:
        return named_config(self.written_name(format), self.configuration(format))


def named_config(name: str, configuration: Mapping[str, Any] | None) -> dict[str, Any]:
    """The v3 `{"name": ..., "configuration": ...}` form; configuration left out when empty."""
    if configuration:
        return {"name": name, "configuration": dict(configuration)}
    return {"name": name}


def parse_named_config(doc: Any, *, key: str, where: str | None = None) -> tuple[str, dict, bool]:
    """Split a v3 extension JSON (a bare name or an object) into (name, configuration, must_understand)."""
    if isinstance(doc, str):
        return doc, {}, True
    if not isinstance(doc, Mapping):
        raise MetadataError(
            f"expected an extension name or an object with 'name', got {doc!r}",
            field=key,
            where=where,
        )
    name = doc.get("name")
    if not isinstance(name, str) or not name:
        raise MetadataError(
            f"extension object lacks a string 'name': {doc!r}", field=key, where=where
        )
    configuration = doc.get("configuration", {})
    if configuration is None:
        configuration = {}
    if not isinstance(configuration, Mapping):
        raise MetadataError(
            f"'configuration' of {name!r} must be an object, got {configuration!r}",
            field=key,
            where=where,
        )
    must_understand = doc.get("must_understand", True)
    if not isinstance(must_understand, bool):
        raise MetadataError(
            f"'must_understand' of {name!r} must be true or false, got {must_understand!r}",
            field=key,
            where=where,
        )
    extra = set(doc) - {"name", "configuration", "must_understand"}
    if extra:
        raise MetadataError(
            f"extension object {name!r} has unexpected fields {sorted(extra)}",
            field=key,
            where=where,
        )
    return name, dict(configuration), must_understand


def config_value(
    configuration: Mapping[str, Any],
    field: str,
    types: type | tuple,
    *,
    owner: str,
    default: Any = ...,
    choices: tuple | None = None,
) -> Any:
    """Read one configuration field with a type check that names the field on failure."""
    if field not in configuration:
        if default is ...:
            raise MetadataError(
                f"{owner}: configuration lacks required field {field!r}",
                field=f"configuration.{field}",
            )
        return default
    value = configuration[field]
    if isinstance(value, bool) and bool not in (types if isinstance(types, tuple) else (types,)):
        ok = False
    else:
        ok = isinstance(value, types)
    if not ok or (choices is not None and value not in choices):
        expected = f"one of {list(choices)}" if choices else getattr(types, "__name__", str(types))
        raise MetadataError(
            f"{owner}: {field!r} must be {expected}, got {value!r}", field=f"configuration.{field}"
        )
    return value


def check_known_fields(configuration: Mapping[str, Any], allowed: set[str], *, owner: str) -> None:
    """Refuse configuration fields outside `allowed` (`owner` names the extension in the
    message) with a `MetadataError`."""
    extra = set(configuration) - allowed
    if extra:
        raise MetadataError(
            f"{owner}: unknown configuration fields {sorted(extra)}", field="configuration"
        )


@dataclass(frozen=True)
class SkippedExtension:
    """An extension that was not understood and, being optional, was left out."""

    kind: str
    name: str
