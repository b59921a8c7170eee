"""Data types by numpy dtype: the static index from numpy dtypes to the installed data type
plugins (`native_keys`, built once from every provider) and `data_type_from_native`, the
registered data type of a numpy dtype, for what is given a numpy dtype (creation's `dtype=`, a
codec that makes arrays of another dtype, a struct's fields). The kernel reads data types by
their Zarr names only; the contract itself is `zarrkit.abc.data_type`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from zarrkit.abc import DataType, lock
from zarrkit.abc.extension import V3
from zarrkit.errors import AmbiguousExtensionError, MetadataError

if TYPE_CHECKING:
    from zarrkit.registry import Registry


def native_keys(dtype: np.dtype) -> tuple[str, ...]:
    """Index keys of a numpy dtype, most specific first: its name ('bfloat16', 'float32'),
    then kind and size ('f4'), then kind ('f'); structured: 'V+fields'.

    The name comes first so that dtypes from other libraries that numpy files under a generic
    kind (ml_dtypes' bfloat16 is 'V2', float8_e5m2 is 'f1') find their own data type.
    """
    dtype = np.dtype(dtype)
    if dtype.fields:
        return ("V+fields",)
    return (dtype.name, f"{dtype.kind}{dtype.itemsize}", dtype.kind)


class _NativeIndex:
    """Static index numpy-dtype key -> data type classes, built once from every provider."""

    def __init__(self) -> None:
        self._lock = lock()
        self._table: dict[str, list[type[DataType]]] | None = None
        self._stamp: tuple[int] | None = None

    def table(self) -> Mapping[str, list[type[DataType]]]:
        from zarrkit.registry import get_registry

        registry = get_registry("data_type")
        with self._lock:
            if self._table is None or self._stamp != _registry_stamp(registry):
                table: dict[str, list[type[DataType]]] = {}
                for _provider, cls, _err in registry.load_all():
                    if cls is None or not issubclass(cls, DataType):
                        continue
                    for key in getattr(cls, "numpy_keys", ()):
                        if cls not in table.setdefault(key, []):
                            table[key].append(cls)
                self._table = table
                self._stamp = _registry_stamp(registry)
            return self._table


def _registry_stamp(registry: Registry) -> tuple[int]:
    return (registry.generation,)


native_index = _NativeIndex()


def data_type_from_native(dtype: Any) -> DataType:
    """Resolve a numpy dtype (or anything np.dtype accepts) to a data type plugin instance."""
    try:
        dtype = np.dtype(dtype)
    except TypeError as exc:
        raise MetadataError(
            f"{dtype!r} is not a data type name nor a numpy dtype: {exc}", field="data_type"
        ) from None
    table = native_index.table()
    for key in native_keys(dtype):
        candidates = table.get(key)
        if not candidates:
            continue
        if len(candidates) > 1:
            raise AmbiguousExtensionError(
                "data_type",
                f"numpy dtype {dtype}",
                None,
                sorted(_label(c) for c in candidates),
                tuple(candidates),
                hint="name the one you want with its Zarr name",
            ).locate("data_type")
        return candidates[0].from_native(dtype)
    raise MetadataError(
        f"no installed data type plugin handles numpy dtype {dtype}", field="data_type"
    )


def _label(cls: type) -> str:
    """`'string' (module.Class)`: the Zarr name a user would type, and where it comes from."""
    names = getattr(cls, "names", None)
    written = names.written(V3) if names is not None else None
    where = f"{cls.__module__}.{cls.__qualname__}"
    return f"{written!r} ({where})" if written else where
