"""The data type contract: how a Zarr data type maps to numpy and to JSON in each format.

A data type plugin owns everything type-specific — its numpy dtype, its JSON, its fill value
encoding, and how the `bytes` codec should lay it out — so that codecs and the kernel never
branch on concrete types. `cast_values`, `numeric_cast` and `check_representable` are how a
data type judges written values (a type overrides `cast_array` where numpy's cast would change
values silently).
"""

from __future__ import annotations

import copy
import warnings
from typing import Any, ClassVar, Self

import numpy as np

from ..errors import InvalidArgumentError, MetadataError, ValueCastError
from .extension import V3, Extension, named_config

__all__ = ["DataType", "cast_values", "check_representable", "numeric_cast"]


class DataType(Extension):
    """A Zarr data type: its numpy form, its JSON in each format, its fill values, its bytes.

    Byte order. In v3 a data type has none (the `bytes` codec says). In v2 and the 2020 draft
    the name carries it (`<f8`, `>i2`), so an instance built from such a name remembers it,
    writes the same name back with `to_json(format)`, and reports it as `endian` ('little',
    'big', or None when the type has no byte order or the format does not say). The v2/draft
    array->bytes step lays chunks out with `encoded_dtype(endian or 'little')`.

    Two sizes, named apart. `memory_size` is numpy's itemsize of `native` (how decoded
    chunks are held: 4 for an int24 held as int32); `stored_size` is the bytes per element of
    the fixed-size stored layout, the itemsize of `encoded_dtype` (3 for that int24), or None
    for variable-length types. Codecs size stored values by `stored_size`.

    Traits for array->bytes codecs: `has_endianness`, `encoded_dtype(endian)`, `to_encoded` /
    `from_encoded` (the conversion between decoded and stored layout), and `bit_layout` (for
    bit-packing codecs). A codec that cannot lay a type out says so when an array is created or
    opened (`Codec.check_data_type`), not when a chunk is first written.
    """

    #: Keys of the static index from numpy dtypes to data types; see `native_keys()`.
    numpy_keys: ClassVar[tuple[str, ...]] = ()
    #: Byte order remembered from a v2/draft name; see `endian`.
    _endian: str | None = None

    @property
    def native(self) -> np.dtype:
        """The numpy dtype of decoded chunks, in native byte order."""
        raise NotImplementedError

    @classmethod
    def from_native(cls, dtype: np.dtype) -> DataType:
        """Build from a numpy dtype this class claimed through `numpy_keys`."""
        return cls()

    @property
    def endian(self) -> str | None:
        """'little' / 'big' as named in v2 or draft metadata; None in v3 or for byte-free types."""
        return self._endian

    def with_endian(self, endian: str | None) -> Self:
        """A copy remembering `endian` (ignored for types without byte order)."""
        if endian not in (None, "little", "big"):
            raise InvalidArgumentError(f"endian must be 'little', 'big' or None, got {endian!r}")
        out = copy.copy(self)
        out._endian = endian if self.has_endianness else None
        return out

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        legacy = cls.__dict__.get("item_size")
        if legacy is not None and "stored_size" not in cls.__dict__:
            # a type written before `stored_size` existed: its `item_size` was the stored size
            warnings.warn(
                f"{cls.__module__}.{cls.__qualname__} defines item_size, which is deprecated: "
                f"define stored_size (bytes per element as stored) instead",
                DeprecationWarning,
                stacklevel=2,
            )
            getter = legacy.fget if isinstance(legacy, property) else None
            if getter is not None:
                cls.stored_size = property(getter)  # type: ignore[method-assign,assignment]

    @property
    def stored_size(self) -> int | None:
        """Bytes per element as stored (the itemsize of `encoded_dtype`), or None for
        variable-length types. May differ from `memory_size`: an int24 held as int32 stores 3."""
        return self.encoded_dtype("little").itemsize

    @property
    def memory_size(self) -> int:
        """Bytes per element of decoded chunks in memory: numpy's itemsize of `native`."""
        return self.native.itemsize

    @property
    def item_size(self) -> int | None:
        """Deprecated: `stored_size`, which is what it always meant."""
        warnings.warn(
            "DataType.item_size is deprecated: use stored_size (bytes per element as stored) "
            "or memory_size (numpy's itemsize of native)",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.stored_size

    # -- JSON of the data type itself -------------------------------------------------------
    def to_json(self, format: str = V3) -> Any:
        """The bare name, or `{"name", "configuration"}` when the type has a configuration."""
        configuration = self.configuration(format)
        name = self.written_name(format)
        return named_config(name, configuration) if configuration else name

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
            raise MetadataError(str(exc), field="fill_value") from None

    def cast_scalar(self, value: Any) -> Any:
        """Convert one scalar to this type, refusing values the type cannot represent."""
        arr = np.asarray(value)
        try:
            out = (
                np.asarray(value, dtype=self.native)
                if arr.dtype.kind in "OU"
                else cast_values(arr, self)
            )
        except (ValueError, TypeError, OverflowError) as exc:
            raise ValueCastError(
                f"{value!r} cannot be stored as {self.describe()}: {exc}"
            ) from None
        if out.shape != ():
            raise ValueCastError(f"fill value must be a scalar, got shape {out.shape}")
        check_representable(arr, out, self)
        return out[()]

    def describe(self) -> str:
        return repr(self.to_json(V3))

    def cast_array(self, source: np.ndarray) -> np.ndarray:
        """Written values (`source`, of another numpy dtype) as `native`. `check_representable`
        judges the result afterwards; a type whose elements numpy's cast would change silently
        (numbers to text) overrides this to refuse them with `ValueCastError`."""
        return numeric_cast(source, self)

    # -- value semantics used when casting written values ----------------------------------
    @property
    def numeric_kind(self) -> str:
        """The numpy kind the values behave as ('f' for bfloat16 even though numpy says 'V')."""
        return self.native.kind

    @property
    def finite_max(self) -> float | None:
        """The largest finite value of a float type (per component for complex), for range
        checks on writes: formats without infinities saturate instead of overflowing."""
        if self.native.kind in "fc":
            part = (
                self.native
                if self.native.kind == "f"
                else np.dtype(f"f{self.native.itemsize // 2}")
            )
            return float(np.finfo(part).max)
        return None

    @property
    def int_range(self) -> tuple[int, int] | None:
        """(min, max) of an integer type, for range checks on writes; None otherwise."""
        if self.native.kind in "iu":
            info = np.iinfo(self.native)
            return int(info.min), int(info.max)
        return None

    def chunk_equals_fill(self, chunk: np.ndarray, fill: Any) -> bool:
        """Whether every element of `chunk` is the fill value (such chunks are not stored).

        Compared bytewise, so a NaN fill matches NaN elements with the same payload; types
        whose elements are Python objects override this with an element comparison.
        """
        fill_bytes = np.asarray(fill, dtype=chunk.dtype).tobytes()
        itemsize = len(fill_bytes)
        if chunk.size == 0 or itemsize == 0:
            return True
        data = np.ascontiguousarray(chunk).reshape(-1).view(np.uint8)
        if itemsize in (1, 2, 4, 8):
            word = np.dtype(f"u{itemsize}")
            return bool((data.view(word) == np.frombuffer(fill_bytes, dtype=word)[0]).all())
        return bool((data.reshape(-1, itemsize) == np.frombuffer(fill_bytes, dtype=np.uint8)).all())

    def default_serializer(self) -> Any:
        """The JSON of the array->bytes codec a new array of this type needs when its creator
        names none, or None to let the configured defaults decide (fixed-size types)."""
        return None

    # -- traits for the bytes codec ----------------------------------------------------------
    @property
    def has_endianness(self) -> bool:
        """Whether the bytes codec needs an `endian` to lay this type out."""
        native = self.native
        if native.fields:
            return any(
                field[0].itemsize > 1 and field[0].kind != "V" for field in native.fields.values()
            )
        return native.itemsize > 1 and native.kind not in "VSUO"

    def encoded_dtype(self, endian: str | None) -> np.dtype:
        """The numpy dtype whose buffer is this type's bytes in `endian` ('little'/'big')."""
        if endian is None or not self.has_endianness:
            return self.native
        return self.native.newbyteorder("<" if endian == "little" else ">")

    def to_encoded(self, data: np.ndarray, endian: str | None) -> np.ndarray:
        """`data` (of `native`) as an array of `encoded_dtype(endian)` holding the same values.

        The default is a numpy cast; types numpy cannot byte-swap by casting (ml_dtypes'
        bfloat16) override both this and `from_encoded` with views.
        """
        target = self.encoded_dtype(endian)
        return data if data.dtype == target else data.astype(target)

    def from_encoded(self, stored: np.ndarray, endian: str | None) -> np.ndarray:
        """The inverse of `to_encoded`: stored values back as `native`."""
        return stored if stored.dtype == self.native else stored.astype(self.native)

    @property
    def bit_layout(self) -> tuple[int, int, bool] | None:
        """(bits per component, components per element, signed) for bit-packing codecs.

        A component is laid out as its little-endian bytes in the stored layout
        (`encoded_dtype('little')`, `stored_size // components` bytes each); only the low
        `bits` carry the value. None: this type cannot be bit-packed. The default reads the
        stored layout, so a type stored as raw bytes (`V3`) is not packable until it says how.
        """
        native = self.encoded_dtype("little")
        if native.fields or native.kind not in "biufc":
            return None
        if native.kind == "b":
            return 1, 1, False
        if native.kind == "c":
            return native.itemsize * 4, 2, False
        return native.itemsize * 8, 1, native.kind == "i"

    def __eq__(self, other: object) -> bool:
        return (
            type(self) is type(other)
            and self.to_json() == other.to_json()
            and self.endian == other.endian
        )

    def __hash__(self) -> int:
        return hash((type(self), repr(self.to_json()), self.endian))

    def __repr__(self) -> str:
        return f"<data type {self.to_json()!r}>"


def cast_values(source: np.ndarray, data_type: DataType) -> np.ndarray:
    """`source` as the type's dtype (through its `cast_array`), without numpy's warnings on
    lossy casts: the caller judges the result with `check_representable`, so a bad value is one
    clean ValueCastError."""
    return data_type.cast_array(source)


def numeric_cast(source: np.ndarray, data_type: DataType) -> np.ndarray:
    """The default `DataType.cast_array`: numpy's cast, complex to real only when no value has
    an imaginary part."""
    target = data_type.native
    if source.dtype.kind == "c" and data_type.numeric_kind not in "cOV":
        if np.any(source.imag):
            raise ValueCastError(
                f"complex values with a non-zero imaginary part cannot be "
                f"stored as {data_type.describe()}"
            )
        source = source.real
    with np.errstate(invalid="ignore", over="ignore"):
        return source.astype(target)


def check_representable(source: np.ndarray, cast: np.ndarray, data_type: DataType) -> None:
    """Refuse casts that silently change values (int overflow, float->int truncation, ...).

    Casts numpy calls 'same_kind' between floats or complexes (float64 -> float32) are allowed:
    losing precision there is what a user of that type expects. Kinds are the data type's
    `numeric_kind`, so bfloat16 or int4 (numpy kind 'V') are judged as the floats and integers
    they are.
    """
    target = cast.dtype
    src = source.dtype
    tkind = data_type.numeric_kind
    if src == target or np.can_cast(src, target, "safe"):
        return
    if (src.kind == tkind and src.kind in "fc") or (src.kind in "biuf" and tkind == "f"):
        # precision may go, magnitude may not: a finite value must not overflow (to infinity,
        # or to NaN in the formats without infinities)
        if tkind in "fc" and source.size:
            with np.errstate(invalid="ignore"):
                finite = np.isfinite(source)
                bad = (np.isinf(cast) | np.isnan(cast)) & finite
                limit = data_type.finite_max
                if limit is not None and src.kind in "biuf":
                    bad |= finite & (np.abs(source.astype(np.float64)) > limit)
            if np.any(bad):
                raise ValueCastError(
                    f"values of dtype {src} cannot be stored as "
                    f"{data_type.describe()}: out of range"
                )
        return
    int_range = data_type.int_range
    if src.kind in "iu" and int_range is not None:
        # a range check: a round trip hides wrapping between types of one size (int64 <-> uint64)
        low, high = int_range
        if source.size == 0 or (int(source.min()) >= low and int(source.max()) <= high):
            return
        raise ValueCastError(
            f"values of dtype {src} cannot be stored as {data_type.describe()}: out of range "
            f"{low}..{high}"
        )
    try:
        # real values stored as complex come back through the real part: numpy's own cast
        # drops the (zero) imaginary part too, but warns the user about it (ComplexWarning)
        back = (cast.real if cast.dtype.kind == "c" and src.kind != "c" else cast).astype(src)
        same = np.array_equal(back, source, equal_nan=src.kind in "fc")
    except (TypeError, ValueError):
        same = False
    if not same:
        raise ValueCastError(
            f"values of dtype {src} cannot be stored as {data_type.describe()} without changing them"
        )
