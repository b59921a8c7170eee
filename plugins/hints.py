"""Install hints for unknown-extension errors: a hook plugin, so the kernel names no extension.

It knows the extensions registered for Zarr (zarr-extensions) that zarrkit itself does not ship,
and says what to do about each; third-party plugins can answer the same hook for their names.
"""

from __future__ import annotations

import re

from zarrkit.hooks import hookimpl

_ML_DTYPES = re.compile(r"bfloat16|float8_\w+|float6_\w+|float4_\w+|u?int[24]")

_NOT_YET = {
    "codec": {"sharding_indexed", "vlen-utf8", "vlen-bytes", "packbits", "bitround",
              "scale_offset", "cast_value", "zfp", "pcodec", "squeeze"},
    "data_type": {"numpy.datetime64", "numpy.timedelta64", "string", "bytes",
                  "fixed_length_utf32", "struct", "structured", "complex_bfloat16",
                  "complex_float16", "complex_float32", "complex_float64"},
    "chunk_grid": {"rectilinear"},
}


@hookimpl
def zarrkit_install_hint(kind: str, name: str, format: str) -> str | None:
    if kind == "data_type" and _ML_DTYPES.fullmatch(name):
        return ("it is one of the ml_dtypes types, which need the `ml_dtypes` package and a "
                "zarrkit data type plugin that provides them")
    if name in _NOT_YET.get(kind, ()) or (kind == "codec" and name.startswith("numcodecs.")):
        return (f"{name!r} is a registered Zarr extension that this zarrkit version does not "
                f"ship yet; a plugin package declaring it in the entry-point group "
                f"'zarrkit.{kind}s' adds it")
    return None
