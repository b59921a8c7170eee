"""zarrkit's user API in zarr-python 3's shapes, above the kernel: `synchronous` (opening and
creating arrays and groups in any store) and `shortcuts` (`zeros`, `full`, `*_like`, ...).
`import zarrkit` re-exports these names at the top level, loading them on first use."""

from __future__ import annotations

from zarrkit.api.hierarchies import create_hierarchy
from zarrkit.api.synchronous import *  # noqa: F403
from zarrkit.api.synchronous import __all__ as _synchronous

__all__ = [*_synchronous, "create_hierarchy"]
