"""How an extension is spelled in each Zarr format.

An extension declares, per format, the one name it writes, the names it also reads (aliases),
and optionally a name pattern for a family (raw bits `r8`, `r16`, ...). The registry answers
"does this name match" from these declarations alone, so a plugin never has to parse names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from .errors import InvalidArgumentError

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
