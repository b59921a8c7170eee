"""A second zarrkit in the peers harness: an older build of zarrkit, run beside the current one.

A change that must "slow nothing down" is judged by one run that measures both builds on the
same data, interleaved, so machine drift hits both alike. The harness runs every operation in
its own subprocess; in those of this adapter, the older build (a plain `pip install --target`
of an older checkout, named by `ZARRKIT_BEFORE`) comes first on `sys.path`, so `import zarrkit`
and zarrkit's entry points resolve to it. See bench/README.md for the command.
"""

from __future__ import annotations

import os
import sys

_BEFORE = os.environ.get("ZARRKIT_BEFORE")
if _BEFORE:
    sys.path.insert(0, os.path.abspath(_BEFORE))

# the harness runs this in its worker, where the harness itself is the __main__ module
from __main__ import ZarrkitAdapter  # type: ignore[attr-defined]  # noqa: E402


class ZarrkitBefore(ZarrkitAdapter):  # type: ignore[misc]
    """zarrkit's public API, as the harness drives it, on the build named by ZARRKIT_BEFORE."""

    name = "zarrkit-before"

    @classmethod
    def available(cls) -> tuple[bool, str]:
        if not _BEFORE:
            return False, "set ZARRKIT_BEFORE to the folder of an older zarrkit build"
        import zarrkit

        where = os.path.dirname(zarrkit.__file__)
        if not where.startswith(os.path.abspath(_BEFORE)):
            return False, f"zarrkit imports from {where}, not from ZARRKIT_BEFORE"
        return True, ""
