"""What the installed distributions declare: their entry points, read once per process.

The registries (one entry-point group per extension kind) and the hooks (the hook group) both
read from here, so the first lookup of any kind parses each distribution's METADATA once for
all of them. This module owns that reading; `forget()` drops it after a distribution is
installed or removed at run time.
"""

from __future__ import annotations

import importlib.metadata as md

from . import forksafe

#: (entry point, distribution name, distribution version) of one installed entry point
Row = tuple[md.EntryPoint, str | None, str | None]


class _Installed:
    """One reading of the installed distributions' entry points, with each distribution's name
    and version parsed from its METADATA once (not once per entry point)."""

    def __init__(self) -> None:
        self._all = md.entry_points()
        self._about: dict[int, tuple[str | None, str | None]] = {}  # by id of the distribution

    def group(self, group: str) -> list[Row]:
        out: list[Row] = []
        for ep in self._all.select(group=group):
            dist = ep.dist
            if dist is None:
                out.append((ep, None, None))
                continue
            about = self._about.get(id(dist))  # (the entry points keep each distribution alive)
            if about is None:
                meta = dist.metadata
                about = self._about[id(dist)] = (meta["Name"], meta["Version"])
            out.append((ep, *about))
        return out


_now: _Installed | None = None
_lock = forksafe.lock()


def in_group(group: str) -> list[Row]:
    """(entry point, distribution name, version) of every installed entry point in `group`."""
    global _now
    with _lock:
        if _now is None:
            _now = _Installed()
        installed = _now
    return installed.group(group)


def forget() -> None:
    """Read the installed distributions afresh on the next lookup."""
    global _now
    with _lock:
        _now = None
