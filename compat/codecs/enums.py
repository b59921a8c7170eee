"""zarr-python 3.4's enum-like classes of codec options: `BloscShuffle`, `BloscCname`,
`Endian`, `ShardingCodecIndexLocation`. In zarr-python 3.4 these are deprecated shims: a member
(`BloscShuffle.bitshuffle`) is its literal string, with a `DeprecationWarning` saying to pass
the string. zarrkit keeps both the value and the warning, so code written for zarr-python
behaves the same and is told the same thing."""

from __future__ import annotations

import warnings
from typing import ClassVar, Literal


class _DeprecatedStrEnum(type):
    _members: dict[str, str]

    def __getattr__(cls, name: str) -> str:
        members: dict[str, str] = type.__getattribute__(cls, "_members")
        if name in members:
            warnings.warn(
                f"{cls.__name__}.{name} is deprecated; pass the string {members[name]!r} instead.",
                DeprecationWarning,
                stacklevel=2,
            )
            return members[name]
        raise AttributeError(name)


class BloscShuffle(metaclass=_DeprecatedStrEnum):
    """Deprecated (as in zarr-python): pass "noshuffle", "shuffle" or "bitshuffle"."""

    _members: ClassVar[dict[str, str]] = {
        "noshuffle": "noshuffle",
        "shuffle": "shuffle",
        "bitshuffle": "bitshuffle",
    }

    @staticmethod
    def from_int(num: int) -> Literal["noshuffle", "shuffle", "bitshuffle"]:
        """numcodecs' shuffle number as its name."""
        names: dict[int, Literal["noshuffle", "shuffle", "bitshuffle"]] = {
            0: "noshuffle",
            1: "shuffle",
            2: "bitshuffle",
        }
        if num not in names:
            raise ValueError(f"Value must be between 0 and 2. Got {num}.")
        return names[num]


class BloscCname(metaclass=_DeprecatedStrEnum):
    """Deprecated (as in zarr-python): pass the compressor's name as a string."""

    _members: ClassVar[dict[str, str]] = {
        name: name for name in ("lz4", "lz4hc", "blosclz", "snappy", "zstd", "zlib")
    }


class Endian(metaclass=_DeprecatedStrEnum):
    """Deprecated (as in zarr-python): pass "little" or "big"."""

    _members: ClassVar[dict[str, str]] = {"little": "little", "big": "big"}


class ShardingCodecIndexLocation(metaclass=_DeprecatedStrEnum):
    """Deprecated (as in zarr-python): pass "start" or "end"."""

    _members: ClassVar[dict[str, str]] = {"start": "start", "end": "end"}
