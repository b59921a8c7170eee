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
    "Array": "array",
    "ArrayConfig": "array",
    "Group": "hierarchy",
    "open_consolidated": "api",
    "consolidate_metadata": "api",
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
}

__all__ = [*_API, "__version__"]

if TYPE_CHECKING:
    from .api import (
        array,
        consolidate_metadata,
        create,
        create_array,
        create_group,
        empty,
        empty_like,
        from_array,
        full,
        full_like,
        group,
        load,
        ones,
        ones_like,
        open,
        open_array,
        open_consolidated,
        open_group,
        open_like,
        save,
        save_array,
        save_group,
        zeros,
        zeros_like,
    )
    from .array import Array, ArrayConfig
    from .hierarchy import Group


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
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module 'zarrkit' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_API])
