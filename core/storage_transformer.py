"""The storage transformer contract: a layer between an array and its store that changes how
keys map to stored bytes. The array asks each transformer, in order, to wrap the store."""

from __future__ import annotations

from .extension import Extension
from .store import Store


class StorageTransformer(Extension):
    def wrap(self, store: Store, node_path: str) -> Store:
        """Return a store that the array's chunk reads and writes go through."""
        raise NotImplementedError
