"""zarrkit: Zarr arrays and groups, as a small kernel plus entry-point plugins.

`import zarrkit` scans no entry point and imports no plugin: extensions are looked up, and
their modules imported, the first time metadata or a caller names them.
"""

from __future__ import annotations

from .api import create_array, create_group, open, open_array, open_group
from .array import Array
from .hierarchy import Group

__version__ = "0.1.0"

__all__ = ["create_array", "create_group", "open", "open_array", "open_group", "Array", "Group",
           "__version__"]
