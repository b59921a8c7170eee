"""zarrkit: Zarr arrays and groups, as a small kernel plus entry-point plugins.

`import zarrkit` is cheap: it scans no entry point and imports no plugin, and the public API
(with numpy behind it) loads on first use. That matters because zarrkit's pytest plugin makes
every pytest run import this package.
"""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_API = {
    "create_array": "api",
    "create_group": "api",
    "open": "api",
    "open_array": "api",
    "open_group": "api",
    "Array": "api",
    "ArrayConfig": "array",
    "Group": "api",
    # the faces an event loop awaits (zarr-python 3.4 names them at its top level)
    "AsyncArray": "api.async_array",
    "AsyncGroup": "api.async_group",
    "open_consolidated": "api",
    "consolidate_metadata": "api",
    "create_hierarchy": "api",
    # zarr-python 3's other top-level functions, with its call shapes
    "array": "api",
    "create": "api",
    "empty": "api",
    "empty_like": "api",
    "from_array": "api",
    "full": "api",
    "full_like": "api",
    "group": "api",
    "load": "api",
    "ones": "api",
    "ones_like": "api",
    "open_like": "api",
    "save": "api",
    "save_array": "api",
    "save_group": "api",
    "zeros": "api",
    "zeros_like": "api",
    # lazy views (`array.lazy[...]`), read one at a time or many in one plan
    "LazyArray": "views",
    "read_many": "views",
    "read_many_async": "views",
}

#: submodules reached as attributes after a bare `import zarrkit`, as zarr-python's are
#: (`zarr.config.set(...)`, `zarr.storage.MemoryStore()`): imported on first access, so a
#: program that never touches them pays nothing for them
_SUBMODULES = frozenset({"abc", "codecs", "config", "dtype", "errors", "storage"})

__all__ = [*_API, "__version__"]

if TYPE_CHECKING:  # (`name as name`: re-exported, for type checkers; loaded lazily below)
    from . import abc as abc
    from . import config as config
    from . import errors as errors
    from .api import array as array
    from .api import consolidate_metadata as consolidate_metadata
    from .api import create as create
    from .api import create_array as create_array
    from .api import create_group as create_group
    from .api import create_hierarchy as create_hierarchy
    from .api import empty as empty
    from .api import empty_like as empty_like
    from .api import from_array as from_array
    from .api import full as full
    from .api import full_like as full_like
    from .api import group as group
    from .api import load as load
    from .api import ones as ones
    from .api import ones_like as ones_like
    from .api import open as open
    from .api import open_array as open_array
    from .api import open_consolidated as open_consolidated
    from .api import open_group as open_group
    from .api import open_like as open_like
    from .api import save as save
    from .api import save_array as save_array
    from .api import save_group as save_group
    from .api import zeros as zeros
    from .api import zeros_like as zeros_like
    from .api.arrays import Array as Array
    from .api.async_array import AsyncArray as AsyncArray
    from .api.async_group import AsyncGroup as AsyncGroup
    from .api.groups import Group as Group
    from .array import ArrayConfig as ArrayConfig
    from .views import LazyArray as LazyArray
    from .views import read_many as read_many
    from .views import read_many_async as read_many_async


class _Package(types.ModuleType):
    """`zarrkit.array` is zarr-python's `array()` function, while the module `zarrkit.array`
    (where `Array` lives) stays importable by its name: importing that submodule would
    otherwise set the package's attribute `array` to the module."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "array" and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def __getattr__(name: str) -> Any:
    from importlib import import_module

    if name in _SUBMODULES:  # (importing a submodule sets the package's attribute itself)
        return import_module(f".{name}", __name__)
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module 'zarrkit' has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_API, *_SUBMODULES})
