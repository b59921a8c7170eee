"""The storage transformer contract: a layer between an array and its store that changes how keys
map to stored bytes."""

from __future__ import annotations

from ..storage_transformer import StorageTransformer

__all__ = ["StorageTransformer"]
