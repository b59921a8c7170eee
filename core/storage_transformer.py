"""The storage transformer contract: a layer between an array and its store that changes how
keys map to stored bytes. The array asks each transformer, in order, to wrap the store."""

from __future__ import annotations

from typing import Any

from .extension import Extension


class StorageTransformer(Extension):
    def wrap(self, store: Any, node_path: str) -> Any:
        """Return a store that the array's chunk reads and writes go through."""
        raise NotImplementedError
