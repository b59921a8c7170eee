"""`must_understand` negotiation (Zarr v3.1): what metadata this installation may skip.

- An unknown top-level field is allowed only when its value is an object carrying
  `"must_understand": false`; it is kept as read and written back unchanged.
- An unknown codec or storage transformer marked `"must_understand": false` is skipped; the
  array is then read-only, since writing without it would produce data others misread.
- A data type, chunk grid or chunk key encoding can never be skipped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from . import hooks, registry
from .abc.extension import Extension, SkippedExtension, parse_named_config
from .errors import (
    MetadataError,
    MissingExtension,
    MustUnderstandError,
    UnknownExtensionError,
    UnknownExtensionsError,
)

#: kinds whose unknown members may be skipped when marked must_understand: false
SKIPPABLE_KINDS = frozenset({"codec", "storage_transformer"})


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
            '"must_understand": false',
            field=key,
            where=where,
        )
    return extra


def extension_list(
    items: Any, *, key: str, where: str, understood: Iterable[str] = ()
) -> list[Mapping[str, Any]]:
    """The 2020 draft's `extensions` list (entry point and array metadata): objects naming a
    protocol extension by URI with a `must_understand` flag. One this installation does not
    understand is refused when it must be understood, else ignored; the ignored ones are
    returned (they stay in the document as read)."""
    if not isinstance(items, list):
        raise MetadataError(
            f"expected a list of extension objects, got {items!r}", field=key, where=where
        )
    understood = set(understood)
    ignored = []
    for i, item in enumerate(items):
        at = f"{key}[{i}]"
        if not isinstance(item, Mapping) or not isinstance(item.get("extension"), str):
            raise MetadataError(
                f"expected an object with a string 'extension', got {item!r}", field=at, where=where
            )
        flag = item.get("must_understand", True)
        if not isinstance(flag, bool):
            raise MetadataError(
                f"'must_understand' must be true or false, got {flag!r}", field=at, where=where
            )
        if item["extension"] in understood:
            continue
        if flag:
            raise MustUnderstandError(
                f"this installation does not understand the extension {item['extension']!r}, "
                'and it is not marked "must_understand": false',
                field=at,
                where=where,
            )
        ignored.append(item)
    return ignored


#: configuration fields of an extension that hold more extensions of the same kind (the
#: sharding codec's inner chains), looked into for unknown names
_NESTED = ("codecs", "index_codecs")


def require_known(
    fields: Iterable[tuple[str, Any, str]],
    format: str,
    *,
    where: str,
    spelled_in: Mapping[str, str] | None = None,
) -> None:
    """Refuse, in one `UnknownExtensionsError`, a document that names two or more extensions
    no installed plugin provides: `fields` are (kind, JSON, field name) of its extensions (a
    list of them for codecs and storage transformers), each `{"name": ...}` in `format`'s
    spelling, or in the format `spelled_in` gives for its field. So a user installs all they
    need at once, not one per attempt. A single unknown one, or a malformed field, is left to
    the parse that follows, whose error says more of it (plugins that failed to load)."""
    missing: list[MissingExtension] = []
    for kind, doc, key in fields:
        fmt = (spelled_in or {}).get(key, format)
        items = list(enumerate(doc)) if isinstance(doc, list) else [(None, doc)]
        for i, item in items:
            _find_missing(kind, item, key if i is None else f"{key}[{i}]", fmt, missing)
    if len(missing) > 1:
        raise UnknownExtensionsError(missing, where=where)


def _find_missing(
    kind: str, doc: Any, key: str, format: str, missing: list[MissingExtension]
) -> None:
    try:
        name, configuration, must_understand = parse_named_config(doc, key=key)
    except MetadataError:
        return
    if not must_understand and kind in SKIPPABLE_KINDS:
        return
    if registry.get_registry(kind).find(name, format) is None:
        hint = hooks.install_hint(kind, name, format)
        missing.append(MissingExtension(kind, name, format, key, hint))
        return
    for field in _NESTED:
        inner = configuration.get(field)
        if kind == "codec" and isinstance(inner, list):
            for i, item in enumerate(inner):
                _find_missing(kind, item, f"{key}.configuration.{field}[{i}]", format, missing)


def extension_from_json(kind: str, doc: Any, format: str, *, key: str, where: str | None) -> Any:
    """Build an extension instance from its metadata JSON, or SkippedExtension when allowed.

    `where` is the document, None for an extension nested in another's configuration (the
    outer one's error handling names the document)."""
    name, configuration, must_understand = parse_named_config(doc, key=key, where=where)
    try:
        cls = registry.lookup(kind, name, format, where=where)
    except UnknownExtensionError:
        if not must_understand and kind in SKIPPABLE_KINDS:
            return SkippedExtension(kind, name)
        raise
    return build(cls, name, configuration, format, key=key, where=where)


def build(
    cls: type[Extension],
    name: str,
    configuration: Mapping[str, Any],
    format: str,
    *,
    key: str,
    where: str | None,
) -> Any:
    """`cls.from_json`, with errors re-pointed at the metadata field they came from."""
    try:
        return cls.from_json(name, configuration, format)
    except MetadataError as exc:
        raise exc.locate(key, where) from None
    except (TypeError, ValueError) as exc:
        raise MetadataError(
            f"invalid configuration for {name!r}: {exc}", field=key, where=where
        ) from None


def extension_from_arg(kind: str, value: Any, fmt: str, *, key: str) -> Any:
    """A plugin instance from what a caller passes: a bare name, a JSON object, an extension
    class or an instance already (the arguments of `create_array`, `convert`, a codec's
    configuration naming another extension)."""
    if isinstance(value, Extension):
        return value
    if isinstance(value, type) and issubclass(value, Extension):
        return value()
    if not isinstance(value, (str, Mapping)):
        adapted = _adapted(kind, value, fmt)
        if adapted is not None:
            return adapted
    name, configuration, _ = parse_named_config(value, key=key)
    cls = registry.lookup(kind, name, fmt)
    return build(cls, name, configuration, fmt, key=key, where="arguments")


def _adapted(kind: str, value: object, fmt: str) -> Extension | None:
    """`value` as an extension of the first class of `kind` that adapts it (see
    `Extension.adapt`): runtime registrations first, then entry points as installed. Only an
    argument of a foreign type gets here, so loading every class of the kind is paid once,
    where the call would otherwise fail."""
    for _provider, cls, _error in registry.get_registry(kind).load_all():
        if cls is None or not issubclass(cls, Extension):
            continue  # (one that failed to load cannot have made the object)
        adapted = cls.adapt(value, fmt)
        if adapted is not None:
            return adapted
    return None
