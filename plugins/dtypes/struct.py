"""`struct` (zarr-extensions): records of named, typed, fixed-size fields; numpy structured dtypes.

- v3: `{"name": "struct", "configuration": {"fields": [{"name": "x", "data_type": "float32"},
  ...]}}`, fill value an object by field name (fields left out take their default). The legacy
  `structured` (`{"fields": [["x", "float32"], ...]}`, fill value base64 of the little-endian
  record) is read too; it is written as `struct`.
- v2: numpy's list form `[["x", "<f4"], ["y", ">i2"]]`, which the v2 format hands over as
  the name `structured` with configuration `{"fields": <the list>}`; fill value base64 of the
  record in the byte orders the list names.

Records are packed (no padding), as the spec's bytes encoding says. Each field is any fixed-size
data type, resolved through the registry, so a plugin's data type can be a field too. Fields
with a shape (numpy subarrays) are not supported.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from zarrkit.abc import (
    V2,
    V3,
    DataType,
    check_known_fields,
    data_type_from_native,
    extension_from_json,
    names,
)
from zarrkit.errors import MetadataError, ValueCastError


def _field_type(doc: Any, format: str, key: str) -> DataType:
    data_type: DataType = extension_from_json("data_type", doc, format, key=key)
    return data_type


class Struct(DataType):
    names = names("struct", aliases=["structured"], v2="structured")
    numpy_keys = ("V+fields",)

    def __init__(self, fields: Sequence[tuple[str, DataType]]):
        fields = tuple((str(n), t) for n, t in fields)
        if not fields:
            raise MetadataError("a struct needs at least one field", key="configuration.fields")
        seen = set()
        total = 0
        for name, data_type in fields:
            if not name or name in seen:
                raise MetadataError(
                    f"struct field names must be unique and non-empty, got {name!r} twice or empty",
                    key="configuration.fields",
                )
            seen.add(name)
            size = data_type.stored_size
            if size is None:
                raise MetadataError(
                    f"struct field {name!r} has variable-length type "
                    f"{data_type.describe()}; fields must be fixed-size",
                    key="configuration.fields",
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
                f"{name}: 'fields' must be a list, got {items!r}", key="configuration.fields"
            )
        fields = []
        for i, item in enumerate(items):
            key = f"configuration.fields[{i}]"
            if isinstance(item, Mapping) and format == V3:
                check_known_fields(item, {"name", "data_type"}, owner=f"{name} field")
                field_name, doc = item.get("name"), item.get("data_type")
            elif isinstance(item, (list, tuple)) and len(item) == 2:
                field_name, doc = item
            elif isinstance(item, (list, tuple)) and len(item) == 3:
                raise MetadataError(
                    f"struct field {item[0]!r} has a shape {item[2]!r}; fields "
                    f"with a shape are not supported",
                    key=key,
                )
            else:
                raise MetadataError(
                    f"a struct field is {{'name', 'data_type'}} (or [name, type]), got {item!r}",
                    key=key,
                )
            if not isinstance(field_name, str):
                raise MetadataError(f"a struct field name is a string, got {field_name!r}", key=key)
            if format == V2 and isinstance(doc, (list, tuple)):
                field_type = cls.from_json("structured", {"fields": doc}, V2)
            else:
                field_type = _field_type(doc, format, f"{key}.data_type")
            fields.append((field_name, field_type))
        return cls(fields)

    @classmethod
    def from_native(cls, dtype: np.dtype) -> DataType:
        fields = []
        for name in dtype.names or ():
            field_dtype = dtype[name]
            if field_dtype.subdtype is not None:
                raise MetadataError(
                    f"struct field {name!r} has a shape {field_dtype.shape}; "
                    f"fields with a shape are not supported",
                    key="data_type",
                )
            fields.append((name, data_type_from_native(field_dtype)))
        return cls(fields)

    def configuration(self, format: str = V3) -> dict[str, Any]:
        if format == V3:
            return {"fields": [{"name": n, "data_type": t.to_json(V3)} for n, t in self.fields]}
        return {}

    def to_json(self, format: str = V3) -> Any:
        if format == V2:
            return [[n, t.to_json(V2)] for n, t in self.fields]
        return super().to_json(format)

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
                raise MetadataError(f"{value!r} is not base64", key="fill_value") from None
            if len(raw) != self.stored_size:
                raise MetadataError(
                    f"the fill value has {len(raw)} bytes; {self.describe()} has {self.stored_size}",
                    key="fill_value",
                )
            stored = np.frombuffer(raw, dtype=self.encoded_dtype("little"))
            return self.from_encoded(stored, "little")[0]
        if isinstance(value, Mapping) and format != V2:
            unknown = set(value) - {n for n, _ in self.fields}
            if unknown:
                raise MetadataError(
                    f"the fill value names fields {sorted(unknown)} that {self.describe()} lacks",
                    key="fill_value",
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
            key="fill_value",
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
            raise MetadataError(str(exc), key="fill_value") from None

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
