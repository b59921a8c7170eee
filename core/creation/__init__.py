"""Creating arrays and groups in the kernel: an array from its canonical spec (`ArraySpec`,
every extension built) and a group from its attributes, each written as a document of its
format with the room made for it (`writing`).

zarr-python's arguments (`filters`, `serializer`, `compressors`, `chunks="auto"`, `shards`,
...) are translated into a spec by the API layer (`zarrkit.api.creation`), whose
`create_array` is `zarrkit.create_array`. This package sits below `hierarchy` (which imports it
for `Group.create_group`) and above `array`, `formats` and the registries.
"""

from __future__ import annotations

from .writing import ArraySpec, format_name, prepare_path, write_array, write_group

__all__ = ["ArraySpec", "format_name", "prepare_path", "write_array", "write_group"]
