"""The data type contract: how a Zarr data type maps to numpy and to JSON in each format.

A data type plugin owns everything type-specific — its numpy dtype, its JSON, its fill value
encoding, and how the `bytes` codec should lay it out — so that codecs and the kernel never
branch on concrete types.
"""

from __future__ import annotations

import threading
from typing import Any, ClassVar, Mapping

import numpy as np

from .errors import MetadataError, ValueCastError
from .extension import Extension
from .names import V3


class DataType(Extension):
    #: Keys of the static index from numpy dtypes to data types; see `native_keys()`.
    numpy_keys: ClassVar[tuple[str, ...]] = ()

    @property
    def native(self) -> np.dtype:
        """The numpy dtype of decoded chunks, in native byte order."""
        raise NotImplementedError

    @classmethod
    def from_native(cls, dtype: np.dtype) -> "DataType":
        """Build from a numpy dtype this class claimed through `numpy_keys`."""
        return cls()

    @property
    def item_size(self) -> int | None:
        """Bytes per element, or None for variable-length types."""
        return self.native.itemsize

    # -- JSON of the data type itself -------------------------------------------------------
    def to_json(self, format: str = V3) -> Any:
        return self.written_name(format)

    # -- fill values --------------------------------------------------------------------------
    def default_fill(self) -> Any:
        return self.native.type(0)

    def fill_from_json(self, value: Any, format: str = V3) -> Any:
        """Decode the JSON fill value of this type; raise MetadataError naming the problem."""
        raise NotImplementedError

    def fill_to_json(self, value: Any, format: str = V3) -> Any:
        raise NotImplementedError

    def fill_from_user(self, value: Any) -> Any:
        """A fill value as a user gives it: a Python/numpy scalar or the JSON encoding."""
        if isinstance(value, (str, list, dict)):
            return self.fill_from_json(value)
        try:
            return self.cast_scalar(value)
        except ValueCastError as exc:
            raise MetadataError(str(exc), key="fill_value") from None

    def cast_scalar(self, value: Any) -> Any:
        """Convert one scalar to this type, refusing values the type cannot represent."""
        arr = np.asarray(value)
        try:
            out = (np.asarray(value, dtype=self.native) if arr.dtype.kind in "OU"
                   else cast_values(arr, self))
        except (ValueError, TypeError, OverflowError) as exc:
            raise ValueCastError(f"{value!r} cannot be stored as {self.describe()}: {exc}") from None
        if out.shape != ():
            raise ValueCastError(f"fill value must be a scalar, got shape {out.shape}")
        check_representable(arr, out, self)
        return out[()]

    def describe(self) -> str:
        return repr(self.to_json(V3))

    # -- traits for the bytes codec ----------------------------------------------------------
    @property
    def has_endianness(self) -> bool:
        """Whether the bytes codec needs an `endian` to lay this type out."""
        native = self.native
        if native.fields:
            return any(native.fields[f][0].itemsize > 1 and native.fields[f][0].kind != "V"
                       for f in native.names)
        return native.itemsize > 1 and native.kind not in "VSUO"

    def encoded_dtype(self, endian: str | None) -> np.dtype:
        """The numpy dtype whose buffer is this type's bytes in `endian` ('little'/'big')."""
        if endian is None or not self.has_endianness:
            return self.native
        return self.native.newbyteorder("<" if endian == "little" else ">")

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.to_json() == other.to_json()

    def __hash__(self) -> int:
        return hash((type(self), repr(self.to_json())))

    def __repr__(self) -> str:
        return f"<data type {self.to_json()!r}>"


def cast_values(source: np.ndarray, data_type: DataType) -> np.ndarray:
    """`source` as the type's dtype, without numpy's warnings on lossy casts: the caller judges
    the result with `check_representable`, so a bad value is one clean ValueCastError."""
    target = data_type.native
    if source.dtype.kind == "c" and target.kind not in "cOV":
        if np.any(source.imag):
            raise ValueCastError(f"complex values with a non-zero imaginary part cannot be "
                                 f"stored as {data_type.describe()}")
        source = source.real
    with np.errstate(invalid="ignore", over="ignore"):
        return source.astype(target)


def check_representable(source: np.ndarray, cast: np.ndarray, data_type: DataType) -> None:
    """Refuse casts that silently change values (int overflow, float->int truncation, ...).

    Casts numpy calls 'same_kind' between floats or complexes (float64 -> float32) are allowed:
    losing precision there is what a user of that type expects.
    """
    target = cast.dtype
    src = source.dtype
    if src == target or np.can_cast(src, target, "safe"):
        return
    if (src.kind == target.kind and src.kind in "fc") or (src.kind in "biu" and target.kind == "f"):
        # precision may go, magnitude may not: a finite value must not overflow to infinity
        if target.kind in "fc" and source.size and np.any(np.isinf(cast) & np.isfinite(source)):
            raise ValueCastError(f"values of dtype {src} cannot be stored as "
                                 f"{data_type.describe()}: out of range (would become infinite)")
        return
    if src.kind in "iu" and target.kind in "iu":
        # a range check: a round trip hides wrapping between types of one size (int64 <-> uint64)
        info = np.iinfo(target)
        if source.size == 0 or (int(source.min()) >= info.min and int(source.max()) <= info.max):
            return
        raise ValueCastError(
            f"values of dtype {src} cannot be stored as {data_type.describe()}: out of range "
            f"{info.min}..{info.max}")
    try:
        back = cast.astype(src)
        same = np.array_equal(back, source, equal_nan=src.kind in "fc")
    except (TypeError, ValueError):
        same = False
    if not same:
        raise ValueCastError(
            f"values of dtype {src} cannot be stored as {data_type.describe()} without changing them"
        )


def native_keys(dtype: np.dtype) -> tuple[str, ...]:
    """Index keys of a numpy dtype, most specific first: 'f4' then 'f'; structured: 'V+fields'."""
    dtype = np.dtype(dtype)
    if dtype.fields:
        return ("V+fields",)
    return (f"{dtype.kind}{dtype.itemsize}", dtype.kind)


class _NativeIndex:
    """Static index numpy-dtype key -> data type classes, built once from every provider."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._table: dict[str, list[type]] | None = None
        self._stamp: tuple = ()

    def table(self) -> Mapping[str, list[type]]:
        from .registry import get_registry

        registry = get_registry("data_type")
        with self._lock:
            if self._table is None or self._stamp != _registry_stamp(registry):
                table: dict[str, list[type]] = {}
                for _provider, cls, _err in registry.load_all():
                    if cls is None:
                        continue
                    for key in getattr(cls, "numpy_keys", ()):
                        if cls not in table.setdefault(key, []):
                            table[key].append(cls)
                self._table = table
                self._stamp = _registry_stamp(registry)
            return self._table


def _registry_stamp(registry) -> tuple:
    return (registry.generation, len(registry._hooked))


native_index = _NativeIndex()


def data_type_from_native(dtype: Any) -> DataType:
    """Resolve a numpy dtype (or anything np.dtype accepts) to a data type plugin instance."""
    try:
        dtype = np.dtype(dtype)
    except TypeError as exc:
        raise MetadataError(f"{dtype!r} is not a data type name nor a numpy dtype: {exc}",
                            key="data_type") from None
    table = native_index.table()
    for key in native_keys(dtype):
        candidates = table.get(key)
        if not candidates:
            continue
        if len(candidates) > 1:
            names = ", ".join(sorted(c.__module__ + "." + c.__qualname__ for c in candidates))
            raise MetadataError(
                f"numpy dtype {dtype} matches several data types ({names}); name the one you "
                f"want with its Zarr name", key="data_type")
        return candidates[0].from_native(dtype)
    raise MetadataError(f"no installed data type plugin handles numpy dtype {dtype}", key="data_type")
