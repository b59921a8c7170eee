"""The C and F memory layouts (v2 `order`, the 2020 draft's `chunk_memory_layout`)."""

from __future__ import annotations

from zarrkit.abc import MemoryLayout, names


def _bytes_codec(endian: str | None) -> dict:
    return {"name": "bytes", "configuration": {"endian": endian}} if endian else {"name": "bytes"}


class COrder(MemoryLayout):
    names = names(v2="C", draft="C")
    numpy_order = "C"

    def v3_codecs(self, ndim: int, endian: str | None) -> list[dict]:
        return [_bytes_codec(endian)]


class FOrder(MemoryLayout):
    names = names(v2="F", draft="F")
    numpy_order = "F"

    def v3_codecs(self, ndim: int, endian: str | None) -> list[dict]:
        # F order is C order of the transposed chunk
        order = list(range(ndim))[::-1]
        return [{"name": "transpose", "configuration": {"order": order}}, _bytes_codec(endian)]
