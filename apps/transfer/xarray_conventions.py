"""xarray's conventions for Zarr, which a conversion between formats must carry over for xarray
to read the result as it read the source (docs.xarray.dev, "Zarr Encoding Specification").

- Dimension names: v3 `dimension_names`; v2 (and the 2020 draft) the attribute
  `_ARRAY_DIMENSIONS`. An array with names in either place is an xarray variable.
- Missing values: in v2 the array's fill value is the CF `_FillValue` (a JSON `null` fill value
  masks nothing); in v3 the fill value masks nothing and the mask is the attribute `_FillValue`,
  base64 of a little-endian float64 for floats (xarray's `FillValueCoder`).

Pure data in, data out: nothing here imports xarray.
"""

from __future__ import annotations

import base64
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrkit.abc.extension import V3
from zarrkit.errors import MetadataError

ARRAY_DIMENSIONS = "_ARRAY_DIMENSIONS"
FILL_VALUE = "_FillValue"


@dataclass(frozen=True)
class Placed:
    """An array's names, attributes and fill value as another format holds them."""

    dimension_names: tuple[str | None, ...] | None
    attributes: dict[str, Any]
    fill_value: Any
    #: write the fill value as JSON `null` (formats other than v3): no mask
    null_fill: bool = False


def names_of(meta: Any) -> tuple[str, ...] | None:
    """The xarray dimension names of an array, wherever its format keeps them; None when it
    is not an xarray variable."""
    if meta.format == V3:
        names = meta.dimension_names
        if names is None or not all(isinstance(n, str) for n in names):
            return None
        return tuple(names)
    stored = meta.attributes.get(ARRAY_DIMENSIONS)
    if (
        isinstance(stored, (list, tuple))
        and len(stored) == len(meta.shape)
        and all(isinstance(n, str) for n in stored)
    ):
        return tuple(stored)
    return None


def mask_of(meta: Any) -> tuple[bool, Any]:
    """(whether xarray masks a value of this array, that value), as xarray reads it."""
    if meta.format == V3:
        if FILL_VALUE not in meta.attributes:
            return False, None
        return True, decode_fill(meta.attributes[FILL_VALUE], meta.dtype)
    if meta.document.get("fill_value") is None:
        return False, None
    return True, meta.fill_value


def place(meta: Any, fmt: str, attributes: Mapping[str, Any]) -> Placed:
    """Where an xarray variable's names and mask go in `fmt` (see the module docstring); other
    arrays, and conversions within v3 or within the other formats, keep everything in place."""
    attributes = dict(attributes)
    names = names_of(meta)
    unchanged = Placed(meta.dimension_names, attributes, meta.fill_value)
    if names is None or (fmt == V3) == (meta.format == V3):
        return unchanged
    masked, mask = mask_of(meta)
    if fmt == V3:  # from v2 / the draft
        attributes.pop(ARRAY_DIMENSIONS, None)
        if masked:
            attributes[FILL_VALUE] = encode_fill(mask, meta.dtype)
        return Placed(names, attributes, meta.fill_value)
    stored = attributes.get(ARRAY_DIMENSIONS, list(names))
    if list(stored) != list(names):
        raise MetadataError(
            f"its dimension_names {list(names)} and its attribute "
            f"{ARRAY_DIMENSIONS!r} {stored!r} disagree",
            field="dimension_names",
        )
    attributes[ARRAY_DIMENSIONS] = list(names)
    attributes.pop(FILL_VALUE, None)
    if masked:
        return Placed(None, attributes, mask)
    return Placed(None, attributes, meta.data_type.default_fill(), null_fill=True)


def comparable(meta: Any) -> tuple[tuple | None, dict[str, Any], tuple[bool, Any]]:
    """(names, other attributes, mask) of an array: what a conversion must keep though the
    format holds each in another place."""
    attributes = dict(meta.attributes)
    names = names_of(meta)
    if names is None:
        return meta.dimension_names, attributes, (False, None)
    attributes.pop(ARRAY_DIMENSIONS, None)
    attributes.pop(FILL_VALUE, None)
    return names, attributes, mask_of(meta)


# -- xarray's FillValueCoder, both ways ---------------------------------------------------
def encode_fill(value: Any, dtype: np.dtype) -> Any:
    kind = dtype.kind
    if kind == "f":
        return _b64_float(value)
    if kind == "c":
        return [_b64_float(value.real), _b64_float(value.imag)]
    if kind == "b":
        return bool(value)
    if kind in "iu":
        return int(value)
    if kind == "S":
        return base64.standard_b64encode(bytes(value)).decode()
    if kind == "U":
        return str(value)
    raise MetadataError(
        f"xarray has no encoding for a {FILL_VALUE} of data type {dtype}", field=FILL_VALUE
    )


def decode_fill(value: Any, dtype: np.dtype) -> Any:
    kind = dtype.kind
    try:
        if kind == "f":
            return _float_b64(value) if isinstance(value, str) else float(value)
        if kind == "c":
            return complex(_float_b64(value[0]), _float_b64(value[1]))
        if kind == "b":
            return bool(value)
        if kind in "iu":
            return int(value)
        if kind == "S":
            return base64.standard_b64decode(value)
        if kind == "U":
            return str(value)
    except (TypeError, ValueError, IndexError, struct.error) as exc:
        raise MetadataError(
            f"{value!r} is not an xarray-encoded fill value of data type {dtype}: {exc}",
            field=FILL_VALUE,
        ) from None
    raise MetadataError(
        f"xarray has no encoding for a {FILL_VALUE} of data type {dtype}", field=FILL_VALUE
    )


def _b64_float(value: Any) -> str:
    return base64.standard_b64encode(struct.pack("<d", float(value))).decode()


def _float_b64(value: str) -> float:
    number: float = struct.unpack("<d", base64.standard_b64decode(value))[0]
    return number
