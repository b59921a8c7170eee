"""Testing support for zarrkit plugin authors (the `zarrkit-testing` distribution).

- `StoreTests`: the conformance suite a store plugin's test class subclasses
  (`ReadableStoreTests` for stores that cannot be written through themselves).
- `DataTypeTests`: the same for a data type plugin.
- `CodecTests`: the same for codecs.
- `StorageTransformerTests`: the same for a storage transformer.
- `ChunkGridTests`, `ChunkKeyEncodingTests`, `MemoryLayoutTests`: the same for chunk grids,
  chunk key encodings and memory layouts.
- `make_distribution` / `installed`: write and install a real fake distribution.
- The pytest plugin (`zarrkit_testing.pytest_plugin`, loaded automatically wherever this
  distribution is installed) adds the fixtures
  `fake_distribution` and `zarrkit_register`.

Everything loads on first use, because pytest imports this package in every run.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "StoreTests": "store_tests",
    "ReadableStoreTests": "store_tests",
    "DataTypeTests": "dtype_tests",
    "CodecTests": "codec_tests",
    "StorageTransformerTests": "storage_transformer_tests",
    "ChunkGridTests": "grid_tests",
    "ChunkKeyEncodingTests": "key_encoding_tests",
    "MemoryLayoutTests": "layout_tests",
    "make_distribution": "fake_dist",
    "installed": "fake_dist",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'zarrkit_testing' has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f".{module}", __name__), name)
