"""The storage transformer contract: a layer between an array and its store that changes how
keys map to stored bytes. The array asks each transformer, in order, to wrap the store."""

from __future__ import annotations

from .extension import Extension
from .store import Store

__all__ = ["StorageTransformer"]


class StorageTransformer(Extension):
    """A v3 `storage_transformers` entry: named and configured in metadata like any extension
    (`from_json` / `to_json`; a bad configuration is a `MetadataError` naming the field).

    What the array relies on, and `zarrkit_testing.StorageTransformerTests` checks:

    - The wrapped store is given whole store keys, node path included: for the array at
      `"group/temp"`, chunk (0, 1) arrives as `"group/temp/c/0/1"`, never `"c/0/1"`. Several
      arrays in one store each wrap it with their own `node_path` ('' for an array at the
      root), so a transformer that keyed on the part after the node path alone would mix
      their chunks.
    - What it writes to the inner store stays under `node_path + "/"` (the whole store at the
      root), so erasing or replacing the array removes it, and it leaves `zarr.json` alone.
    - A value set through the wrapped store reads back the same, whole and by byte range;
      an absent key reads as None (never an error, never empty bytes); listing and erasing
      through it see exactly the keys set through it.
    - The wrapped store has the capabilities of the store it wraps, and reports a backend
      failure as the store does (a `StoreError`), never as a missing key.

    Only chunk reads and writes go through the wrapped store; the array's metadata does not.
    An unknown transformer refuses the array unless the metadata marks it
    `"must_understand": false`, in which case it is skipped and the array is read-only.
    """

    def wrap(self, store: Store, node_path: str) -> Store:
        """Return a store that the array's chunk reads and writes go through: `node_path` is
        the array's path in `store` ('' at the root), the prefix of every key it is given."""
        raise NotImplementedError
