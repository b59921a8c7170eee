"""A storage transformer that keeps every chunk under another key, as the storage-transformer
guide allows: what an array reads as `<node>/c/0/1` is stored at `<node>/moved/c.0.1`. Code
that lists or copies chunks on the raw store instead of through the array's transformers sees
none of them; run it against this to find out (zarrkit's own tests do, and
`StorageTransformerTests` passes on it).

    zarrkit_register("storage_transformer", MovingTransformer)
    zarrkit.create_array(store, ..., storage_transformers=["zarrkit_testing.moving"])
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from zarrkit.abc import V3, Range, StorageTransformer, Store, check_known_fields, names

#: the folder, under the array's node, where the moved chunks live
MOVED = "moved/"


@dataclass(frozen=True)
class MovingTransformer(StorageTransformer):
    """Stores chunk `<node>/c/0/1` at `<node>/moved/c.0.1` (no configuration)."""

    names = names("zarrkit_testing.moving")

    @classmethod
    def from_json(
        cls, name: str, configuration: Mapping[str, Any], format: str = V3
    ) -> MovingTransformer:
        check_known_fields(configuration, set(), owner=name)
        return cls()

    def configuration(self, format: str = V3) -> dict[str, Any]:
        return {}

    def wrap(self, store: Store, node_path: str) -> Store:
        return MovedStore(store, f"{node_path}/" if node_path else "")


class MovedStore(Store):
    """The store an array with `MovingTransformer` reads and writes its chunks through."""

    def __init__(self, inner: Store, prefix: str) -> None:
        self.inner, self.prefix = inner, prefix
        self.read_only, self.writeable = inner.read_only, inner.writeable
        self.listable = inner.listable

    def _out(self, key: str) -> str:
        rest = key[len(self.prefix) :]
        return f"{self.prefix}{MOVED}{rest.replace('/', '.')}"

    def _in(self, stored: str) -> str:
        rest = stored[len(self.prefix) + len(MOVED) :]
        return self.prefix + rest.replace(".", "/")

    def get(self, key: str, byte_range: Range | None = None) -> bytes | None:
        return self.inner.get(self._out(key), byte_range)

    def set(self, key: str, value: Any) -> None:
        self.inner.set(self._out(key), value)

    def erase(self, key: str) -> None:
        self.inner.erase(self._out(key))

    def list(self) -> Iterator[str]:
        return (self._in(k) for k in self.inner.list_prefix(f"{self.prefix}{MOVED}"))
