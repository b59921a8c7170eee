"""Creating arrays from what users pass, by job: `arguments` resolves zarr-python 3's call
shapes (or zarrkit's canonical `codecs=` / `chunk_grid=`), `chunking` guesses chunk and shard
shapes, `arrays` (`create_array`) turns them into one canonical `ArraySpec`, which the kernel
writes (`zarrkit.creation.write_array`). zarr-python's shortcut functions (`zeros`, `full`,
`*_like`, ...) are `zarrkit.api.shortcuts`.

zarr-python's arguments and defaults, when omitted, are zarr-python 3.4's: chunks guessed as
zarr-python guesses them (`chunks="auto"`), the data type's serializer (`bytes` unless it needs
its own), zstd level 0 for v3; `codecs=` naming no array -> bytes codec gets `bytes` inserted,
as zarr-python does. A bare codec name in arguments is the plugin with its own defaults
(`"gzip"`: level 5, as zarr-python's `GzipCodec()`); a codec that has no default for a field
(`"transpose"` needs an `order`) is refused naming the field.
"""

from __future__ import annotations

from zarrkit.api.creation.arguments import (
    ARRAY_ARGUMENTS,
    check_arguments,
    data_type_from_arg,
    is_auto,
    unknown_argument,
)
from zarrkit.api.creation.arrays import create_array
from zarrkit.api.creation.chunking import guess_chunks
from zarrkit.creation import format_name, prepare_path, write_group
from zarrkit.negotiation import extension_from_arg

__all__ = [
    "ARRAY_ARGUMENTS",
    "check_arguments",
    "create_array",
    "data_type_from_arg",
    "extension_from_arg",
    "format_name",
    "guess_chunks",
    "is_auto",
    "prepare_path",
    "unknown_argument",
    "write_group",
]
