"""User attributes of a node: a mutable mapping whose every change is written through."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, MutableMapping
from typing import Any

from .abc.format import thaw, thaw_document


class Attributes(MutableMapping):
    """Reads come from the node's current metadata; each write rewrites the metadata once."""

    def __init__(self, read: Callable[[], Mapping[str, Any]], write: Callable[[dict], None]):
        self._read = read
        self._write = write

    def __getitem__(self, key: str) -> Any:
        # a JSON copy (lists, dicts) like the value written, not the metadata's frozen view
        return thaw(self._read()[key])

    def __iter__(self) -> Iterator[str]:
        return iter(self._read())

    def __len__(self) -> int:
        return len(self._read())

    def __setitem__(self, key: str, value: Any) -> None:
        self.update({key: value})

    def __delitem__(self, key: str) -> None:
        current = self.asdict()
        del current[key]
        self._write(current)

    def update(self, other: Any = (), /, **kwargs: Any) -> None:  # one write, not one per key
        current = self.asdict()
        current.update(other, **kwargs)
        self._write(current)

    def put(self, attributes: Mapping[str, Any]) -> None:
        """Replace all attributes at once."""
        self._write(dict(attributes))

    def asdict(self) -> dict[str, Any]:
        return thaw_document(self._read())

    def __repr__(self) -> str:
        return f"Attributes({self.asdict()!r})"
