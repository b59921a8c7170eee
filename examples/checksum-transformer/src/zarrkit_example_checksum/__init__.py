"""A storage transformer that stores a checksum after every chunk and checks it on reading,
as a third-party package would write it.

In a v3 array's metadata:

    "storage_transformers": [{"name": "example.checksum", "configuration": {"algorithm": "crc32"}}]

A stored value is the chunk's bytes followed by 4 bytes of checksum (big endian), so a chunk
damaged at rest is reported as a `ChunkDecodeError` naming it instead of decoding to wrong
values. Keys are not changed. A byte range reads the whole value, because only the whole value
can be checked.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from zarrkit.abc import (
    V3,
    Range,
    StorageTransformer,
    Store,
    check_known_fields,
    config_value,
    names,
)
from zarrkit.errors import ChunkDecodeError

_ALGORITHMS: dict[str, Callable[[bytes], int]] = {"crc32": zlib.crc32, "adler32": zlib.adler32}
_SUM_BYTES = 4


@dataclass(frozen=True)
class ChecksumTransformer(StorageTransformer):
    names = names("example.checksum")

    algorithm: str = "crc32"

    @classmethod
    def from_json(
        cls, name: str, configuration: Mapping[str, Any], format: str = V3
    ) -> ChecksumTransformer:
        owner = f"storage transformer {name!r}"
        check_known_fields(configuration, {"algorithm"}, owner=owner)
        algorithm = config_value(
            configuration,
            "algorithm",
            str,
            owner=owner,
            default="crc32",
            choices=tuple(_ALGORITHMS),
        )
        return cls(algorithm)

    def configuration(self, format: str = V3) -> dict[str, Any]:
        return {"algorithm": self.algorithm}

    def wrap(self, store: Store, node_path: str) -> Store:
        # keys arrive whole ("group/array/c/0/1") and are kept as they are, so every value
        # stays under the array's node path
        return ChecksummedStore(store, _ALGORITHMS[self.algorithm])


class ChecksummedStore(Store):
    """`inner`, with a checksum stored after each value and checked on every read."""

    def __init__(self, inner: Store, checksum: Callable[[bytes], int]) -> None:
        self.inner = inner
        self.checksum = checksum
        self.capabilities = inner.capabilities  # (what it wraps can do, it can)

    def _sum(self, data: bytes) -> bytes:
        return (self.checksum(data) & 0xFFFFFFFF).to_bytes(_SUM_BYTES, "big")

    def get(self, key: str, byte_range: Range | None = None) -> bytes | None:
        stored = self.inner.get(key)
        if stored is None:
            return None  # absent stays absent: the array reads fill values
        data, stored_sum = stored[:-_SUM_BYTES], stored[-_SUM_BYTES:]
        if len(stored) < _SUM_BYTES or self._sum(data) != stored_sum:
            raise ChunkDecodeError("the stored checksum does not match the value", key=key)
        return data if byte_range is None else data[byte_range.slice(len(data))]

    def exists(self, key: str) -> bool:
        return self.inner.exists(key)

    def set(self, key: str, value: Any) -> None:
        data = memoryview(value).tobytes()  # any buffer, in C order, copied
        self.inner.set(key, data + self._sum(data))

    def erase(self, key: str) -> None:
        self.inner.erase(key)

    def erase_many(self, keys: Iterable[str]) -> None:
        self.inner.erase_many(keys)

    def list(self) -> Iterator[str]:
        return self.inner.list()

    def list_prefix(self, prefix: str) -> Iterator[str]:
        return self.inner.list_prefix(prefix)

    def __repr__(self) -> str:
        return f"ChecksummedStore({self.inner!r})"
