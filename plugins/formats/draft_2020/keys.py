"""The storage keys of the 2020 draft (seed 001, "Storage keys"), as zarr-python 2.x writes them.

Metadata lives under `meta/root`, chunks under `data/root`, and the node's path joins the two.
A chunk's identifier comes from the regular grid: `c` followed by the grid indices joined by the
grid's separator (`c1/23/45`). The separator is part of the draft's `chunk_grid` object, not a
chunk key encoding, so the format turns it into this encoding (it is not a registered plugin,
like `LayoutCodec`: it has no name in any format).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from zarrkit.abc import ChunkKeyEncoding, ExtensionNames
from zarrkit.errors import MetadataError

ENTRY_POINT_KEY = "zarr.json"
META_ROOT = "meta/root"
DATA_ROOT = "data/root"
DEFAULT_SUFFIX = ".json"
SEPARATORS = ("/", ".")


def meta_base(path: str) -> str:
    """`meta/root/foo/bar` for the node `foo/bar`; `meta/root` for the root."""
    return f"{META_ROOT}/{path}" if path else META_ROOT


def array_key(path: str, suffix: str = DEFAULT_SUFFIX) -> str:
    return f"{meta_base(path)}.array{suffix}"


def group_key(path: str, suffix: str = DEFAULT_SUFFIX) -> str:
    return f"{meta_base(path)}.group{suffix}"


def meta_prefix(path: str) -> str:
    """The folder holding the documents of a group's descendants (`meta/root/foo/`)."""
    return f"{meta_base(path)}/"


def data_prefix(path: str) -> str:
    """The folder holding an array's chunks (`data/root/foo/`; `data/root/` for the root)."""
    return f"{DATA_ROOT}/{path}/" if path else f"{DATA_ROOT}/"


@dataclass(frozen=True)
class DraftChunkKeys(ChunkKeyEncoding):
    """`c` + indices joined by the grid's separator. A 0-d array's only chunk is `c0`, as
    zarr-python 2.x writes it (the seed says `c`; zarr-python 2.x addresses the single chunk of
    a 0-d array as grid index (0,), and no other implementation of the draft exists)."""

    names = ExtensionNames({})  # the format's own keys, never named in metadata
    separator: str = "/"

    def __post_init__(self) -> None:
        if self.separator not in SEPARATORS:
            raise MetadataError(
                f"the chunk grid separator must be one of {list(SEPARATORS)}, "
                f"got {self.separator!r}",
                field="chunk_grid.separator",
            )

    def encode(self, coords: Sequence[int]) -> str:
        return "c" + (self.separator.join(map(str, coords)) if coords else "0")

    def decode(self, key: str) -> tuple[int, ...]:
        if not key.startswith("c"):
            raise ValueError(f"{key!r} is not a chunk key of the 2020 draft")
        return tuple(int(p) for p in key[1:].split(self.separator))

    def to_json(self, format: str = "v3") -> Any:
        """A description for messages; the draft writes the separator into `chunk_grid`."""
        return {"separator": self.separator}


def separator_of(encoding: Any) -> str:
    """The separator a chunk key encoding from any format uses, for writing it as the draft's
    grid separator. Keys are re-made by the draft (`c` prefix, no separator after it), so only
    the separator carries over; an encoding that names none gets the draft's default `/`."""
    if isinstance(encoding, DraftChunkKeys):
        return encoding.separator
    separator = getattr(encoding, "separator", None)
    if separator is None:
        try:
            config = encoding.configuration()
        except Exception:
            config = {}
        separator = config.get("separator", "/") if isinstance(config, dict) else "/"
    if separator not in SEPARATORS:
        raise MetadataError(
            f"the 2020 draft separates chunk indices with '/' or '.', the chunk "
            f"key encoding uses {separator!r}",
            field="chunk_key_encoding",
        )
    return separator
