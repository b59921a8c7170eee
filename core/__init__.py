"""zarrkit: Zarr arrays and groups, as a small kernel plus entry-point plugins.

`import zarrkit` is cheap: it scans no entry point and imports no plugin, and the public API
(with numpy behind it) loads on first use. That matters because zarrkit's pytest plugin makes
every pytest run import this package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_API = {
    "create_array": "api",
    "create_group": "api",
    "open": "api",
    "open_array": "api",
    "open_group": "api",
    "Array": "array",
    "Group": "hierarchy",
    "open_consolidated": "api",
    "consolidate_metadata": "api",
}

__all__ = [*_API, "__version__"]

if TYPE_CHECKING:  # (`name as name`: re-exported, for type checkers; loaded lazily below)
    from .api import consolidate_metadata as consolidate_metadata
    from .api import create_array as create_array
    from .api import create_group as create_group
    from .api import open as open
    from .api import open_array as open_array
    from .api import open_consolidated as open_consolidated
    from .api import open_group as open_group
    from .array import Array as Array
    from .hierarchy import Group as Group


def __getattr__(name: str) -> Any:
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module 'zarrkit' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_API])
