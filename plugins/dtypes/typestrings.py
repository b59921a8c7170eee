"""numpy typestrings as data type names in Zarr v2 and the 2020 draft (`<f8`, `>i2`, `|b1`).

The first character is the byte order: '<' little, '>' big, '|' none. A data type built from
such a name remembers the order, so the same name is written back.
"""

from __future__ import annotations

from typing import Any

from zarrkit.errors import MetadataError

_ORDER = {"<": "little", ">": "big"}


def endian_of(name: str) -> str | None:
    """'little' / 'big' from a typestring's first character; None for '|' or no prefix."""
    return _ORDER.get(name[:1]) if name else None


def prefix(endian: str | None, has_endianness: bool) -> str:
    """The byte-order character to write: '|' for byte-free types, '<' unless told 'big'."""
    if not has_endianness:
        return "|"
    return ">" if endian == "big" else "<"


def endian_of_native(dtype: Any) -> str | None:
    """The byte order a numpy dtype spells out explicitly ('>' on a little-endian machine)."""
    return _ORDER.get(dtype.byteorder)


def no_configuration(name: str, configuration: Any) -> None:
    if configuration:
        raise MetadataError(
            f"{name!r} takes no configuration, got {dict(configuration)!r}", field="configuration"
        )
