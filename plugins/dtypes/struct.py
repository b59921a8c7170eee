"""`struct` (zarr-extensions): records of named, typed, fixed-size fields; numpy structured dtypes.

- v3: `{"name": "struct", "configuration": {"fields": [{"name": "x", "data_type": "float32"},
  ...]}}`, fill value an object by field name (fields left out take their default). The legacy
  `structured` (`{"fields": [["x", "float32"], ...]}`, fill value base64 of the little-endian
  record) is read too; it is written as `struct`.
- v2: numpy's list form `[["x", "<f4"], ["y", ">i2"]]`, which the v2 format hands over as
  the name `structured` with configuration `{"fields": <the list>}`; fill value base64 of the
  record in the byte orders the list names.

Records are packed (no padding), as the spec's bytes encoding says. Each field is any fixed-size
data type, resolved through the registry, so a plugin's data type can be a field too.

Fields with a shape (numpy subarrays, v2's `["a", "<f4", [2, 3]]`, which zarr-python 2 and
tensorstore write) are read and written in v2. The `struct` spec has no form for them, and
zarr-python 3.4 refuses them in both formats, so a v3 array of such a type is refused with an
error saying so rather than written in a form no one else reads.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from zarrkit.abc import V2, V3, DataType, check_known_fields, names
from zarrkit.errors import MetadataError, ValueCastError
from zarrkit.helpers import data_type_from_native, extension_from_json


def _field_type(doc: Any, format: str, key: str) -> DataType:
    data_type: DataType = extension_from_json("data_type", doc, format, key=key)
    return data_type


class Struct(DataType):
    names = names("struct", aliases=["structured"], v2="structured")
    numpy_keys = ("V+fields",)

    def __init__(self, fields: Sequence[tuple[str, DataType]]):
        fields = tuple((str(n), t) for n, t in fields)
        if not fields:
            raise MetadataError("a struct needs at least one field", field="configuration.fields")
        seen = set()
        total = 0
        for name, data_type in fields:
            if not name or name in seen:
                raise MetadataError(
                    f"struct field names must be unique and non-empty, got {name!r} twice or empty",
                    field="configuration.fields",
                )
            seen.add(name)
            size = data_type.stored_size
            if size is None:
                raise MetadataError(
                    f"struct field {name!r} has variable-length type "
                    f"{data_type.describe()}; fields must be fixed-size",
                    field="configuration.fields",
                )
            total += size
        self.fields = fields
        self._item_size = total

    # -- JSON of the type --------------------------------------------------------------------
    @classmethod
    def from_json(cls, name: str, configuration: Mapping[str, Any], format: str = V3) -> DataType:
        check_known_fields(configuration, {"fields"}, owner=name)
        items = configuration.get("fields")
        if not isinstance(items, (list, tuple)):
            raise MetadataError(
                f"{name}: 'fields' must be a list, got {items!r}", field="configuration.fields"
            )
        fields: list[tuple[str, DataType]] = []
        for i, item in enumerate(items):
            key = f"configuration.fields[{i}]"
            if isinstance(item, Mapping) and format == V3:
                check_known_fields(item, {"name", "data_type"}, owner=f"{name} field")
                field_name, doc = item.get("name"), item.get("data_type")
            elif isinstance(item, (list, tuple)) and len(item) == 2:
                field_name, doc = item
            elif isinstance(item, (list, tuple)) and len(item) == 3 and format == V2:
                field_name, doc, shape = item
                base = (
                    cls.from_json("structured", {"fields": doc}, V2)
                    if isinstance(doc, (list, tuple))
                    else _field_type(doc, format, f"{key}.data_type")
                )
                fields.append((_name(field_name, key), _Subarray(base, _shape(shape, key))))
                continue
            else:
                raise MetadataError(
                    f"a struct field is {{'name', 'data_type'}} (or [name, type]), got {item!r}",
                    field=key,
                )
            field_name = _name(field_name, key)
            if format == V2 and isinstance(doc, (list, tuple)):
                field_type = cls.from_json("structured", {"fields": doc}, V2)
            else:
                field_type = _field_type(doc, format, f"{key}.data_type")
            fields.append((field_name, field_type))
        return cls(fields)

    @classmethod
    def from_native(cls, dtype: np.dtype) -> DataType:
        fields: list[tuple[str, DataType]] = []
        for name in dtype.names or ():
            field_dtype = dtype[name]
            if field_dtype.subdtype is not None:
                base, shape = field_dtype.subdtype
                fields.append((name, _Subarray(data_type_from_native(base), shape)))
            else:
                fields.append((name, data_type_from_native(field_dtype)))
        return cls(fields)

    def configuration(self, format: str = V3) -> dict[str, Any]:
        if format == V3:
            return {"fields": [{"name": n, "data_type": t.to_json(V3)} for n, t in self.fields]}
        return {}

    def to_json(self, format: str = V3) -> Any:
        if format == V2:
            return [
                [n, t.base.to_json(V2), list(t.shape)]
                if isinstance(t, _Subarray)
                else [n, t.to_json(V2)]
                for n, t in self.fields
            ]
        return super().to_json(format)

    def describe(self) -> str:
        return repr(self.to_json(V2) if self._shaped() else self.to_json(V3))

    def _shaped(self) -> bool:
        """Whether a field (or a field's field) has a shape: then the type has no v3 form."""
        return any(
            isinstance(t, _Subarray) or (isinstance(t, Struct) and t._shaped())
            for _, t in self.fields
        )

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is type(self)
            and self.fields == other.fields
            and self.endian == other.endian
        )

    def __hash__(self) -> int:
        return hash((type(self), self.fields, self.endian))

    def __repr__(self) -> str:
        # zarr-python's: `Struct(fields=(('a', Float64(endianness='little')), ...))`
        return f"Struct(fields={tuple((name, t) for name, t in self.fields)!r})"

    # -- numpy -------------------------------------------------------------------------------
    @property
    def native(self) -> np.dtype:
        return np.dtype([(n, t.native) for n, t in self.fields])

    @property
    def stored_size(self) -> int:
        return self._item_size

    @property
    def has_endianness(self) -> bool:
        return any(t.has_endianness for _, t in self.fields)

    @property
    def bit_layout(self) -> tuple[int, int, bool] | None:
        return None

    def encoded_dtype(self, endian: str | None) -> np.dtype:
        """Each field in its own byte order when it has one (v2 names it), else `endian`."""
        return np.dtype([(n, t.encoded_dtype(t.endian or endian)) for n, t in self.fields])

    def to_encoded(self, data: np.ndarray, endian: str | None) -> np.ndarray:
        target = self.encoded_dtype(endian)
        if data.dtype == target:
            return data
        out = np.empty(data.shape, dtype=target)
        for name, field in self.fields:
            out[name] = field.to_encoded(data[name], field.endian or endian)
        return out

    def from_encoded(self, stored: np.ndarray, endian: str | None) -> np.ndarray:
        if stored.dtype == self.native:
            return stored
        out = np.empty(stored.shape, dtype=self.native)
        for name, field in self.fields:
            out[name] = field.from_encoded(stored[name], field.endian or endian)
        return out

    # -- fill values -------------------------------------------------------------------------
    def default_fill(self) -> Any:
        out = np.zeros((), dtype=self.native)
        for name, field in self.fields:
            out[name] = field.default_fill()
        return out[()]

    def fill_from_json(self, value: Any, format: str = V3) -> Any:
        if isinstance(value, str):
            try:
                raw = base64.b64decode(value.encode("ascii"), validate=True)
            except (binascii.Error, UnicodeEncodeError):
                raise MetadataError(f"{value!r} is not base64", field="fill_value") from None
            if len(raw) != self.stored_size:
                raise MetadataError(
                    f"the fill value has {len(raw)} bytes; {self.describe()} has {self.stored_size}",
                    field="fill_value",
                )
            stored = np.frombuffer(raw, dtype=self.encoded_dtype("little"))
            return self.from_encoded(stored, "little")[0]
        if isinstance(value, Mapping) and format != V2:
            unknown = set(value) - {n for n, _ in self.fields}
            if unknown:
                raise MetadataError(
                    f"the fill value names fields {sorted(unknown)} that {self.describe()} lacks",
                    field="fill_value",
                )
            out = np.zeros((), dtype=self.native)
            for name, field in self.fields:
                out[name] = (
                    field.fill_from_json(value[name], format)
                    if name in value
                    else field.default_fill()
                )
            return out[()]
        raise MetadataError(
            f"the fill value of a struct is an object by field name (or base64), got {value!r}",
            field="fill_value",
        )

    def fill_to_json(self, value: Any, format: str = V3) -> Any:
        record = np.asarray(value, dtype=self.native)
        if format == V2:
            return base64.b64encode(self.to_encoded(record.reshape(1), "little").tobytes()).decode(
                "ascii"
            )
        return {name: field.fill_to_json(record[name][()], format) for name, field in self.fields}

    def fill_from_user(self, value: Any) -> Any:
        if isinstance(value, Mapping):
            return self.fill_from_json(dict(value))
        try:
            return self.cast_scalar(value)
        except ValueCastError as exc:
            raise MetadataError(str(exc), field="fill_value") from None

    def cast_scalar(self, value: Any) -> Any:
        try:
            if isinstance(value, Mapping):
                return self.fill_from_json(dict(value))
            if isinstance(value, np.void) and value.dtype.names is not None:
                return np.asarray(value).astype(self.native)[()]
            if isinstance(value, (tuple, list)):
                return np.array(tuple(value), dtype=self.native)[()]
            if isinstance(value, int) and value == 0:
                return self.default_fill()
        except (TypeError, ValueError) as exc:
            raise ValueCastError(
                f"{value!r} cannot be stored as {self.describe()}: {exc}"
            ) from None
        raise ValueCastError(
            f"{value!r} cannot be stored as {self.describe()}: give a tuple, a "
            f"dict by field name or a numpy record"
        )


def _name(value: Any, key: str) -> str:
    if not isinstance(value, str):
        raise MetadataError(f"a struct field name is a string, got {value!r}", field=key)
    return value


def _shape(value: Any, key: str) -> tuple[int, ...]:
    if not isinstance(value, (list, tuple)) or not all(
        isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in value
    ):
        raise MetadataError(
            f"the shape of a struct field is a list of positive integers, got {value!r}", field=key
        )
    return tuple(value)


class _Subarray(DataType):
    """A struct field with a shape: `shape` values of `base` (numpy's subarray dtype). Only
    a field of a `Struct`, never an array's own type (numpy folds that into the array)."""

    names = names("struct.subarray")  # internal: never written, never registered

    def __init__(self, base: DataType, shape: Sequence[int]):
        self.base = base
        self.shape = tuple(int(n) for n in shape)
        if base.stored_size is None:
            raise MetadataError(
                f"a struct field with a shape needs a fixed-size type, got {base.describe()}",
                field="configuration.fields",
            )

    @classmethod
    def from_json(cls, name: str, configuration: Mapping[str, Any], format: str = V3) -> DataType:
        raise MetadataError("a struct field with a shape is written inside its struct")

    def to_json(self, format: str = V3) -> Any:
        raise MetadataError(
            f"struct fields with a shape ({self.describe()}) have no Zarr v3 form: the struct "
            f"spec defines none and zarr-python refuses them; store such records in Zarr v2",
            field="data_type",
        )

    def describe(self) -> str:
        return f"{self.base.describe()} of shape {list(self.shape)}"

    @property
    def endian(self) -> str | None:
        return self.base.endian

    @property
    def native(self) -> np.dtype:
        return np.dtype((self.base.native, self.shape))

    @property
    def stored_size(self) -> int:
        return self.encoded_dtype("little").itemsize

    @property
    def has_endianness(self) -> bool:
        return self.base.has_endianness

    @property
    def bit_layout(self) -> tuple[int, int, bool] | None:
        return None

    def encoded_dtype(self, endian: str | None) -> np.dtype:
        return np.dtype((self.base.encoded_dtype(endian), self.shape))

    def to_encoded(self, data: np.ndarray, endian: str | None) -> np.ndarray:
        return self.base.to_encoded(data, endian)

    def from_encoded(self, stored: np.ndarray, endian: str | None) -> np.ndarray:
        return self.base.from_encoded(stored, endian)

    def default_fill(self) -> Any:
        return np.full(self.shape, self.base.default_fill(), dtype=self.base.native)

    def fill_from_json(self, value: Any, format: str = V3) -> Any:
        out = np.asarray(value, dtype=object)
        if out.shape != self.shape:
            raise MetadataError(
                f"the fill value of {self.describe()} is a nested list of that shape, "
                f"got {value!r}",
                field="fill_value",
            )
        flat = [self.base.fill_from_json(v, format) for v in out.reshape(-1).tolist()]
        return np.array(flat, dtype=self.base.native).reshape(self.shape)

    def fill_to_json(self, value: Any, format: str = V3) -> Any:
        values = np.asarray(value, dtype=self.base.native).reshape(self.shape)
        flat = [self.base.fill_to_json(v, format) for v in values.reshape(-1)]
        return np.array(flat, dtype=object).reshape(self.shape).tolist()

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, _Subarray) and self.base == other.base and self.shape == other.shape
        )

    def __hash__(self) -> int:
        return hash((_Subarray, self.base, self.shape))
