"""Codecs between xarray's encoding and zarrkit: the `compressors` / `filters` / `serializer`
keys xarray's zarr backend reads and writes, in a form either zarr-python or zarrkit takes back.

Reading reports codecs as JSON (v3: `{"name": ..., "configuration": ...}`; v2: numcodecs'
`{"id": ...}`), not as zarrkit objects, so a dataset opened with `engine="zarrkit"` can be written
again with `Dataset.to_zarr` (zarr-python accepts these dicts) as well as with `to_zarrkit`.
Writing takes those dicts, bare names, zarrkit codecs, zarr-python codecs (`to_dict()`) and
numcodecs codecs (`get_config()`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from zarrkit import registry
from zarrkit.abc import V3, Codec, CodecKind
from zarrkit.errors import MetadataError

#: the kinds of codec a v3 chain holds, in chain order, by the encoding key xarray gives each
_KEYS = {
    CodecKind.ARRAY_ARRAY: "filters",
    CodecKind.ARRAY_BYTES: "serializer",
    CodecKind.BYTES_BYTES: "compressors",
}
SHARDING = "sharding_indexed"
#: the compressors zarr-python's `Group.create` (what xarray calls) gives a new array when the
#: encoding names none; zarrkit's own defaults are those of `zarr.create_array` (zstd for both)
V2_DEFAULT_COMPRESSOR = {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}
V3_DEFAULT_COMPRESSOR = {"name": "zstd", "configuration": {"level": 0, "checksum": False}}


def read_encoding(array: Any) -> dict[str, Any]:
    """`compressors`, `filters` (and for v3 `serializer`) of a zarrkit array, as zarr-python
    reports them: for a sharded array, those of the chunks inside each shard."""
    if array.metadata.format != V3:
        return _v2_encoding(array.metadata.to_json())
    chain = [_named(c.to_json(V3)) for c in array.codecs]
    if len(chain) == 1 and chain[0]["name"] == SHARDING:
        chain = [_named(c) for c in chain[0]["configuration"]["codecs"]]
    by_key: dict[str, list[Any]] = {"filters": [], "serializer": [], "compressors": []}
    for item in chain:
        codec_class = registry.lookup("codec", item["name"], V3)
        assert issubclass(codec_class, Codec)  # the codec registry holds codecs
        by_key[_KEYS[codec_class.kind]].append(item)
    return {
        "filters": tuple(by_key["filters"]),
        "compressors": tuple(by_key["compressors"]),
        "serializer": by_key["serializer"][0] if by_key["serializer"] else None,
    }


def _named(item: Any) -> dict[str, Any]:
    if isinstance(item, str):
        return {"name": item, "configuration": {}}
    return {"name": item["name"], "configuration": dict(item.get("configuration") or {})}


def _v2_encoding(doc: Mapping[str, Any]) -> dict[str, Any]:
    compressor = doc.get("compressor")
    filters = tuple(dict(f) for f in doc.get("filters") or ())
    # zarr-python reports the object codec of a string array as a filter too
    return {"compressors": (dict(compressor),) if compressor else (), "filters": filters}


def codec_json(item: Any, fmt: str, key: str) -> Any:
    """One codec as the JSON zarrkit's `create_array` takes in format `fmt`."""
    if isinstance(item, Codec):
        return item
    to_dict = getattr(item, "to_dict", None)
    if callable(to_dict) and not isinstance(item, Mapping):  # a zarr-python codec
        item = to_dict()
    get_config = getattr(item, "get_config", None)
    if callable(get_config) and getattr(item, "codec_id", None):  # a numcodecs codec
        item = get_config()
    if isinstance(item, Mapping) and "id" in item and fmt == V3:
        config = {k: v for k, v in item.items() if k != "id"}
        return {"name": f"numcodecs.{item['id']}", "configuration": config}
    if isinstance(item, (str, Mapping)):
        return dict(item) if isinstance(item, Mapping) else item
    raise MetadataError(
        f"expected a codec (a JSON object, a name, or a zarrkit, zarr-python "
        f"or numcodecs codec), got {item!r}",
        field=key,
    )


def creation_codecs(encoding: Mapping[str, Any], fmt: str) -> dict[str, Any]:
    """zarrkit `create_array` arguments for the codec keys of an xarray encoding: v3 `codecs`
    (filters, serializer, compressors in chain order; the serializer defaults to the data
    type's own, else `bytes`), v2 `filters` / `compressor` (one at most, as in v2's metadata).
    Compressors not given (or "auto") are those zarr-python gives xarray's arrays; `None` or
    `[]` is none."""
    filters = _sequence(encoding.get("filters"))
    compressors = encoding.get("compressors", encoding.get("compressor", ...))
    if isinstance(compressors, str) and compressors == "auto":
        compressors = ...
    compressors = ... if compressors is ... else _sequence(compressors)
    serializer = encoding.get("serializer")
    if fmt != V3:
        if compressors is ...:  # what zarr-python's Group.create gives v2 arrays for xarray
            compressors = (V2_DEFAULT_COMPRESSOR,)
        out: dict[str, Any] = {}
        if serializer not in (None, "auto"):
            raise MetadataError("zarr format 2 has no serializer", field="serializer")
        if filters is not None:
            out["filters"] = [codec_json(f, fmt, f"filters[{i}]") for i, f in enumerate(filters)]
        if compressors is not ...:
            if len(compressors or ()) > 1:
                raise MetadataError(
                    f"zarr format 2 takes one compressor, got {len(compressors)}",
                    field="compressors",
                )
            out["compressor"] = (
                codec_json(compressors[0], fmt, "compressors") if compressors else None
            )
        return out
    chain: list[Any] = [codec_json(f, fmt, f"filters[{i}]") for i, f in enumerate(filters or ())]
    chain.append(
        codec_json(serializer, fmt, "serializer") if serializer not in (None, "auto") else None
    )  # the data type's own, filled in by `resolve_serializer`
    if compressors is ...:
        compressors = (V3_DEFAULT_COMPRESSOR,)
    chain.extend(codec_json(c, fmt, f"compressors[{i}]") for i, c in enumerate(compressors or ()))
    return {"codecs": chain}


def resolve_serializer(codecs: list[Any], data_type: Any) -> list[Any]:
    """Fill the serializer left open by `creation_codecs` with the data type's own (strings:
    vlen-utf8) or `bytes`, as zarr-python does."""
    own = getattr(data_type, "default_serializer", lambda: None)()
    return [(own if own is not None else {"name": "bytes"}) if c is None else c for c in codecs]


def _sequence(value: Any) -> Sequence[Any] | None:
    """A codec list from what xarray's encoding holds: None (none given), one codec, or many."""
    if value is None or (isinstance(value, str) and value == "auto"):
        return None
    if isinstance(value, (str, Mapping, Codec)) or not isinstance(value, Sequence):
        return (value,)
    return tuple(value)
