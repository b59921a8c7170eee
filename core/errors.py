"""One exception tree, so callers can catch "anything zarrkit refused" in one place.

Every error carries enough context (the key, the extension, the store path) to act on it
without a debugger; none of them is a bare KeyError or ValueError escaping from deep inside.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass


class ZarrkitError(Exception):
    """Base of every error zarrkit raises on purpose."""


class MetadataError(ZarrkitError):
    """A metadata document is malformed; `field` names the offending field (dotted, e.g.
    `codecs.0.configuration.level`) and `where` the node."""

    def __init__(
        self,
        message: str,
        *,
        field: str | None = None,
        where: str | None = None,
        key: str | None = None,
    ):
        if key is not None:  # (its name before 0.2, deprecated: `key` names store keys)
            _key_renamed()
            field = key if field is None else field
        self.detail = message
        self.field = field
        self.where = where
        super().__init__(self._text())

    def _text(self) -> str:
        prefix = f"{self.where}: " if self.where else ""
        if self.field:
            prefix += f"field {self.field!r}: "
        return prefix + self.detail

    @property
    def key(self) -> str | None:
        """Deprecated (removed in 0.3): `field`."""
        _key_renamed()
        return self.field

    def locate(
        self, field: str | None = None, where: str | None = None, *, key: str | None = None
    ) -> MetadataError:
        """Point the error at a field of a document (`field` is prefixed to the plugin's own);
        `key` is `field`'s deprecated name."""
        if key is not None:
            _key_renamed()
            field = field or key
        if field:
            if not self.field:
                self.field = field
            elif self.field != field and not self.field.startswith(f"{field}."):
                self.field = f"{field}.{self.field}"  # a plugin's own field, relative to its object
        if where and not self.where:
            self.where = where
        self.args = (self._text(),)
        return self


def _key_renamed() -> None:
    warnings.warn(
        "MetadataError's key is deprecated (removed in 0.3): use field",
        DeprecationWarning,
        stacklevel=3,
    )


class UnknownExtensionError(MetadataError):
    """No installed plugin provides an extension named in metadata (or asked for by a user)."""

    def __init__(
        self,
        kind: str,
        name: str,
        format: str | None = None,
        *,
        hint: str | None = None,
        where: str | None = None,
    ):
        self.kind = kind
        self.name = name
        self.format = format
        fmt = f" (zarr format {format})" if format else ""
        msg = f"no installed plugin provides the {kind.replace('_', ' ')} {name!r}{fmt}"
        if hint:
            msg += f"; {hint}"
        else:
            msg += (
                f"; install a package that registers it in the entry-point group "
                f"'zarrkit.{kind}s' (`zarrkit plugins` lists the plugins installed)"
            )
        super().__init__(msg, where=where)


class FormatNotInstalledError(UnknownExtensionError, NotImplementedError):
    """No installed plugin provides a Zarr format (the `zarrkit.formats` entry-point group).
    Also a NotImplementedError, as it was before it had a class of its own."""


class UnknownExtensionsError(UnknownExtensionError):
    """A document names several extensions no installed plugin provides: all of them, each
    with where it appears and what to install when that is known (`missing`), in one error.
    `kind` and `name` are the first one's."""

    def __init__(self, missing: list[MissingExtension], *, where: str | None = None):
        self.missing = missing
        first = missing[0]
        self.kind, self.name, self.format = first.kind, first.name, first.format
        listed = "; ".join(m.describe() for m in missing)
        MetadataError.__init__(
            self,
            f"no installed plugin provides {len(missing)} extensions of this document: "
            f"{listed}. `zarrkit plugins` lists the plugins installed",
            where=where,
        )


@dataclass(frozen=True)
class MissingExtension:
    """One unknown extension of a document: its kind, name, format, the field naming it, and
    the install hint the `zarrkit_install_hint` hook gave (None: none known)."""

    kind: str
    name: str
    format: str | None
    field: str
    hint: str | None = None

    def describe(self) -> str:
        text = f"the {self.kind.replace('_', ' ')} {self.name!r} ({self.field})"
        return f"{text}: {self.hint}" if self.hint else text


class PluginConflictError(ZarrkitError):
    """Two installed distributions provide one extension name and nothing says which to use."""

    def __init__(self, kind: str, name: str, providers: list[str]):
        self.kind = kind
        self.name = name
        self.providers = providers
        listed = ", ".join(providers)
        super().__init__(
            f"the {kind} {name!r} is provided by more than one distribution: {listed}. "
            f"Choose one with ZARRKIT_PREFER='{kind}:{name}=<distribution>' "
            f"(or zarrkit.config.prefer({kind!r}, {name!r}, '<distribution>')), "
            f"or register one at runtime with zarrkit.registry.register()."
        )


class AmbiguousExtensionError(MetadataError):
    """A name that several extensions of ONE distribution answer to (v2's `|O` is both
    `string` and `bytes`): not a clash of packages, but a name that needs the rest of the
    metadata (an object codec) or a more precise argument to say which is meant."""

    def __init__(
        self,
        kind: str,
        name: str,
        format: str | None,
        providers: list[str],
        classes: tuple[type, ...] = (),
        *,
        where: str | None = None,
        hint: str | None = None,
    ):
        self.kind = kind
        self.name = name
        self.format = format
        self.providers = providers
        #: the classes that answer the name, for a caller that can tell them apart
        self.classes = classes
        fmt = f" in zarr format {format}" if format else ""
        what = kind.replace("_", " ")
        message = f"{name!r} names several {what}s{fmt}: {', '.join(providers)}; " + (
            hint or f"give the {what} by a name only one of them has"
        )
        super().__init__(message, where=where)


class PluginLoadError(ZarrkitError):
    """An entry point was found but importing it failed; the original error is chained."""


class InvalidPluginError(PluginLoadError, TypeError):
    """A plugin loaded, but is not what its kind asks for: not a subclass of the kind's base
    (`zarrkit.abc`), or an extension class that declares no names."""


class MustUnderstandError(MetadataError):
    """Metadata names something this installation does not understand and may not skip."""


class ArgumentError(ZarrkitError, TypeError):
    """A call got a keyword it does not take, or a value of a kind the keyword does not take.
    Also a TypeError, as Python raises for an unexpected keyword."""


class InvalidArgumentError(ZarrkitError, ValueError):
    """An argument of the right kind whose value is out of range: an unknown mode, a negative
    depth or byte range, an order other than C or F. Also a ValueError, as Python raises."""


class UntranslatableOptionsError(InvalidArgumentError):
    """Store options in one library's spelling (s3fs's) that cannot go to another (obstore)
    with the meaning the first gives them; the message says which and why."""


class ConfigError(ZarrkitError, ValueError):
    """A setting (`zarrkit.config`, or the environment variable behind it) has a value it
    cannot take; the message names the setting and its variable."""


class UnknownConfigKeyError(ConfigError, KeyError):
    """A configuration key neither zarrkit nor zarr-python has. Also a KeyError, as
    zarr-python's configuration raises for one."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class ConflictingArgumentsError(ZarrkitError, ValueError):
    """Arguments that each are valid but together say two things (`chunks` and `chunk_grid`).
    Also a ValueError, as these were before they had a class of their own."""


class NodeNotFoundError(ZarrkitError, KeyError, FileNotFoundError):
    """No array or group at a path. Also a KeyError so `group[name]` behaves like a mapping,
    and a FileNotFoundError, as zarr-python's `GroupNotFoundError`/`ArrayNotFoundError` and
    xarray's engine="zarr" raise for a missing path or store. `reason` says what is there
    instead, when the store could tell (the subclasses below)."""

    def __init__(
        self,
        path: str,
        store: object | None = None,
        what: str = "node",
        *,
        reason: str | None = None,
    ):
        self.path = path
        self.reason = reason
        where = f" in {store}" if store is not None else ""
        because = f": {reason}" if reason else ""
        super().__init__(f"no {what} at path {path!r}{where}{because}")

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0])


class StoreNotFoundError(NodeNotFoundError):
    """Nothing at all where the store points: no such folder, prefix or bucket."""


class NotZarrError(NodeNotFoundError):
    """The place exists but holds no Zarr node: a folder of other files, or a plain file
    where a folder (a directory store) was expected."""


class PermissionDeniedError(NodeNotFoundError):
    """The backend refused access to where the node would be (file permissions, a bucket
    policy), so whether a node is there cannot be told."""


class ContainsNodeError(ZarrkitError, FileExistsError, ValueError):
    """Something already exists where a node was to be created (and overwrite was not asked).
    Also a FileExistsError, as zarr-python (and so xarray's engine="zarr") raises for
    `mode="w-"` on a store that holds data, and a ValueError, as zarr-python's
    `ContainsGroupError`/`ContainsArrayError` are for creating over a node."""

    def __str__(self) -> str:  # OSError would format (errno, strerror) pairs
        return str(self.args[0]) if self.args else ""


class ContainsArrayError(ContainsNodeError):
    """An array is where a group was wanted, or where a node was to be created (zarr-python's
    name for it)."""


class ContainsGroupError(ContainsNodeError):
    """A group is where an array was wanted, or where a node was to be created (zarr-python's
    name for it)."""


def contains_error(node_type: str) -> type[ContainsNodeError]:
    """The error for a node of `node_type` ("array", "group") in the way."""
    return ContainsArrayError if node_type == "array" else ContainsGroupError


class NodeNameError(ZarrkitError, ValueError):
    """A node name or path breaks the naming rules of the spec."""


class CapabilityError(ZarrkitError):
    """A store lacks a capability (read, write, list) an operation needs."""


class ReadOnlyError(CapabilityError):
    """A write was attempted on a read-only array, group or store."""


class InvalidKeyError(ZarrkitError, ValueError):
    """A store key or prefix breaks the key rules, or would reach outside the store's root."""


class StoreError(ZarrkitError):
    """The storage behind a store failed (I/O error, network fault, server error, corrupt
    container); `key` and `store` say where. Never turned into a missing key or a fill value."""

    def __init__(
        self,
        message: str,
        *,
        key: str | None = None,
        store: object | None = None,
        operation: str | None = None,
    ):
        self.key = key
        self.store = store
        self.operation = operation
        what = operation or "access"
        target = f" {key!r}" if key is not None else ""
        where = f" in {store}" if store is not None else ""
        super().__init__(f"cannot {what}{target}{where}: {message}")


class RedirectRefusedError(StoreError):
    """A redirect a store will not follow: from https to plain http, or to another scheme."""


class ValueTooLargeError(StoreError):
    """A stored value (or what it inflates to, or an answer's body) is longer than the read
    may hold (`zarrkit.abc.value_limit()`), or longer than its container says it is."""


class ChunkDecodeError(ZarrkitError):
    """A stored chunk could not be decoded: corrupt, truncated, or a checksum mismatch."""

    def __init__(self, message: str, *, key: str | None = None):
        self.key = key
        where = f"chunk {key!r}: " if key else ""
        super().__init__(where + message)


class SelectionError(ZarrkitError, IndexError):
    """An index or selection does not fit the array."""


class ValueCastError(ZarrkitError, ValueError):
    """A value cannot be stored in the array's data type, or does not fit the selection's shape."""


class CodecChainError(MetadataError):
    """The codecs of an array do not form a valid chain for its data type and chunk shape."""


class ShardShapeError(CodecChainError, ValueError):
    """A shard shape that is not a whole number of chunks in every dimension. Also a
    ValueError, as zarr-python raises for the same `shards=`."""


class NotJSONError(MetadataError, TypeError):
    """A value (an attribute, most often) that metadata cannot hold because JSON has no type
    for it. Also a TypeError, as `json.dumps`, and so zarr-python, raise for one."""


class DimensionNamesError(MetadataError, KeyError):
    """An array lacks the dimension names a caller needs (xarray names every dimension).
    Also a KeyError, as xarray's engine="zarr" raises for the missing names."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class TransferError(ZarrkitError):
    """A copy or conversion (`zarrkit.transfer`, `zarrkit copy` / `convert`) that cannot be
    done, found when it is planned, before anything is written, or that cannot be resumed."""


class UnsafeWriteError(ZarrkitError, ValueError):
    """A parallel write whose blocks would share a stored chunk or shard: tasks in different
    processes would each read, modify and write it back, and all but one update would be lost."""
