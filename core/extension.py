"""What every extension (codec, data type, grid, key encoding, layout, transformer) shares.

An extension class declares `names` (per format) and builds itself from the JSON of metadata
with `from_json`; `to_json` gives it back in a format. Instances are immutable values.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from .errors import MetadataError
from .names import V3, ExtensionNames


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
