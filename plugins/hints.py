"""Install hints for unknown-extension errors: a hook plugin, so the kernel names no extension.

It knows the extensions registered for Zarr (zarr-extensions) that zarrkit itself does not ship,
and says what to do about each; third-party plugins can answer the same hook for their names.
"""

from __future__ import annotations

import re

from zarrkit.abc import hookimpl

#: ml_dtypes formats zarrkit does not ship (the shipped ones say themselves, when ml_dtypes is
#: missing, which extra to install)
_ML_DTYPES = re.compile(r"bfloat16|float8_\w+|float6_\w+|float4_\w+|u?int[24]")

_NOT_YET = {
    "codec": {"squeeze"},
    #: complex numbers of ml_dtypes formats: numpy and ml_dtypes have no such type to decode to
    "data_type": {"complex_bfloat16", "complex_float16"}
    | {
        f"complex_{part}"
        for part in (
            "float8_e3m4",
            "float8_e4m3",
            "float8_e4m3b11fnuz",
            "float8_e4m3fnuz",
            "float8_e5m2",
            "float8_e5m2fnuz",
            "float8_e8m0fnu",
            "float4_e2m1fn",
            "float6_e2m3fn",
            "float6_e3m2fn",
        )
    },
}


#: known plugin distributions outside zarrkit, by (kind, name): the guides' examples, each a
#: package of its own in zarrkit's source tree (`examples/<folder>`)
_DISTRIBUTIONS: dict[tuple[str, str], tuple[str, str]] = {
    ("codec", "example.lz4"): ("zarrkit-example-lz4", "examples/lz4-codec"),
    ("data_type", "example.int3"): ("zarrkit-example-int3", "examples/int3-data-type"),
    ("chunk_grid", "example.offset"): ("zarrkit-example-offset-grid", "examples/offset-grid"),
    ("chunk_key_encoding", "example.padded"): (
        "zarrkit-example-padded-keys",
        "examples/padded-key-encoding",
    ),
    ("memory_layout", "example.serpentine"): (
        "zarrkit-example-serpentine",
        "examples/serpentine-layout",
    ),
    ("storage_transformer", "example.checksum"): (
        "zarrkit-example-checksum",
        "examples/checksum-transformer",
    ),
    ("metadata_field", "example.revision"): ("zarrkit-example-revision", "examples/revision-field"),
}


@hookimpl
def zarrkit_install_hint(kind: str, name: str, format: str) -> str | None:
    known = _DISTRIBUTIONS.get((kind, name))
    if known is not None:
        dist, folder = known
        return f"the distribution {dist!r} provides it: pip install ./{folder} (zarrkit's source)"
    if kind == "data_type" and _ML_DTYPES.fullmatch(name) and format == "v3":
        return (
            "it looks like an ml_dtypes format that zarrkit does not ship; a data type "
            "plugin (entry-point group 'zarrkit.data_types') backed by ml_dtypes adds it"
        )
    if kind == "codec" and _numcodecs_id(name, format) in _OPTIONAL_NUMCODECS:
        extra = _OPTIONAL_NUMCODECS[_numcodecs_id(name, format)]
        return (
            f"numcodecs provides {name!r} only when the {extra!r} package is installed: "
            f"pip install 'zarrkit[{extra}]'"
        )
    if kind == "codec" and name.startswith("numcodecs."):
        return (
            f"numcodecs has no codec {name[len('numcodecs.') :]!r} here; a package that "
            f"registers it with numcodecs (or in 'zarrkit.codecs') adds it"
        )
    if name in _NOT_YET.get(kind, ()):
        return (
            f"{name!r} is a registered Zarr extension that this zarrkit version does not "
            f"ship yet; a plugin package declaring it in the entry-point group "
            f"'zarrkit.{kind}s' adds it"
        )
    return None


#: numcodecs ids whose codec numcodecs registers only when an optional package imports
_OPTIONAL_NUMCODECS = {"pcodec": "pcodec", "zfpy": "zfp"}


def _numcodecs_id(name: str, format: str) -> str:
    return name[len("numcodecs.") :] if format == "v3" and name.startswith("numcodecs.") else name
