"""`vlen-utf8` and `vlen-bytes` (array -> bytes): variable-length strings and byte strings.

The encoding is numcodecs' (the same bytes zarr-python writes in v2 and v3): a little-endian
u32 element count, then per element a u32 length and its bytes (UTF-8 for strings), in C
order. numcodecs' implementation does the work; this module checks what goes in and out.
In v2 the codec is an object codec in `filters`; `implied_data_type` is what it tells the v2
format about an `|O` array.
"""

from __future__ import annotations

import math
import struct
from typing import Any, ClassVar

import numpy as np

from zarrkit.abc import V3, ArrayBytesCodec, ChunkSpec, DataType, as_bytes_view, names
from zarrkit.errors import ChunkDecodeError, ValueCastError


class _VLen(ArrayBytesCodec):
    _element: ClassVar[type]
    _numcodecs_class: ClassVar[str]

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"  # (zarr-python's text: `VLenUTF8Codec()`)

    def _impl(self) -> Any:
        import numcodecs

        return getattr(numcodecs, self._numcodecs_class)()

    def check_data_type(self, data_type: DataType) -> None:
        if data_type.written_name(V3) != self.implied_data_type:
            raise self.refuse(data_type, f"it encodes the {self.implied_data_type!r} data type")

    def encode(self, data: np.ndarray, spec: ChunkSpec) -> Any:
        flat = np.ascontiguousarray(data, dtype=object).reshape(-1)
        if data.dtype.kind == "T":  # numpy's StringDType: every element is a str
            return self._impl().encode(flat)
        element = self._element
        for i, value in enumerate(flat):
            if type(value) is not element and not isinstance(value, element):
                raise ValueCastError(
                    f"{self.written_name()}: element {i} of the chunk is "
                    f"{value!r}, not {element.__name__}"
                )
        return self._impl().encode(flat)

    def decode(self, data: Any, spec: ChunkSpec) -> np.ndarray:
        view = as_bytes_view(data)
        expected = math.prod(spec.shape)
        if view.nbytes < 4:
            raise ChunkDecodeError(
                f"{self.written_name()}: {view.nbytes} bytes is too short "
                f"for the element count (truncated or corrupt)"
            )
        (count,) = struct.unpack_from("<I", view, 0)
        if count != expected:
            raise ChunkDecodeError(
                f"{self.written_name()}: the chunk holds {count} elements, "
                f"its shape {spec.shape} needs {expected}"
            )
        try:
            out = self._impl().decode(view)
        except (ValueError, RuntimeError, UnicodeDecodeError) as exc:
            raise ChunkDecodeError(
                f"{self.written_name()}: cannot decode the chunk (truncated or corrupt): {exc}"
            ) from None
        decoded = np.asarray(out, dtype=object).reshape(spec.shape)
        native = spec.dtype  # object, or numpy's StringDType (the `string_dtype` setting)
        return decoded if native == decoded.dtype else decoded.astype(native)


class VLenUTF8Codec(_VLen):
    names = names("vlen-utf8", v2="vlen-utf8")
    implied_data_type = "string"
    _element = str
    _numcodecs_class = "VLenUTF8"


class VLenBytesCodec(_VLen):
    names = names("vlen-bytes", v2="vlen-bytes")
    implied_data_type = "bytes"
    _element = bytes
    _numcodecs_class = "VLenBytes"
