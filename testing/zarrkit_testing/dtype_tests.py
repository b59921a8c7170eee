"""A conformance suite every data type plugin should pass: subclass it in a test module.

    class TestMyType(DataTypeTests):
        @pytest.fixture
        def data_type(self):
            return MyType()                       # an instance to test

        @pytest.fixture
        def sample(self):
            return np.array([...], dtype=...)     # 1-d values of `data_type.native`

        fill_values = (0, "NaN")                  # optional: JSON fill values (v3) to try

`data_type` and `sample` are required. The type must be reachable by its v3 name — installed
through its entry point, or registered by the suite for each test when it is not. Tests cover
what users rely on: JSON of the type and of fill values in every format the type declares,
numpy resolution (when it claims `numpy_keys`), the sizes in memory and as stored, the bytes
layout in both byte orders, a real array written and read back through the type's default
codecs, and every serializer in `serializers`: each either refuses the type when the array is
created (a `CodecChainError` naming the codec and the type) or stores and reads it back.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

from zarrkit import registry
from zarrkit.abc import V3, DataType
from zarrkit.errors import CodecChainError, MetadataError
from zarrkit.helpers import data_type_from_native

from .reachable import reachable


def _same(a: Any, b: Any, dtype: np.dtype) -> bool:
    left, right = np.asarray(a, dtype=dtype), np.asarray(b, dtype=dtype)
    if dtype.hasobject:
        return bool(left.tolist() == right.tolist())
    return left.tobytes() == right.tobytes()


class DataTypeTests:
    """Behaviour every data type owes its users, whatever it stores."""

    #: JSON (v3) fill values to round-trip besides the default one
    fill_values: ClassVar[Sequence[Any]] = ()
    #: array->bytes codecs (v3 JSON) that must either refuse the type at creation or store it
    serializers: ClassVar[Sequence[Mapping[str, Any]]] = (
        {"name": "bytes"},
        {"name": "packbits"},
        {"name": "vlen-utf8"},
    )

    @pytest.fixture(autouse=True)
    def _reachable(self, data_type: DataType) -> Iterator[None]:
        """Register the class for this test when no installed plugin provides its name."""
        with reachable("data_type", type(data_type), data_type.written_name(V3)):
            yield

    # -- the type's own JSON ----------------------------------------------------------------
    def test_v3_name_resolves_to_the_class(self, data_type: DataType) -> None:
        cls = registry.lookup("data_type", data_type.written_name(V3), V3)
        assert cls is type(data_type)

    def test_json_round_trip(self, data_type: DataType) -> None:
        """In every format the type has a name in (v3 at least)."""
        formats = type(data_type).names.formats()
        assert V3 in formats
        for fmt in formats:
            try:
                doc = data_type.to_json(fmt)
            except MetadataError:  # e.g. a struct with a field that has no name in fmt
                assert fmt != V3
                continue
            if not isinstance(doc, (str, dict)):
                continue  # v2 spells structs as a list: the format module parses that
            name, configuration = (
                (doc, {}) if isinstance(doc, str) else (doc["name"], doc.get("configuration", {}))
            )
            assert type(data_type).names.matches(name, fmt), (fmt, name)
            # built by its class: a name may be shared by design (v2's '|O' is string or
            # bytes; the format tells them apart), so the registry is not asked here
            again = type(data_type).from_json(name, configuration, fmt)
            assert again.to_json(fmt) == doc, fmt
            assert again.to_json(V3) == data_type.to_json(V3), fmt

    def test_sizes(self, data_type: DataType) -> None:
        """`memory_size` is numpy's; `stored_size` is the stored layout's in both byte orders
        (an int24 held as int32 has 4 and 3)."""
        assert data_type.memory_size == data_type.native.itemsize
        size = data_type.stored_size
        if size is None:
            return
        assert size > 0, size
        for endian in ("little", "big"):
            assert data_type.encoded_dtype(endian).itemsize == size, endian

    def test_numpy_resolution(self, data_type: DataType) -> None:
        try:
            found = data_type_from_native(data_type.native)
        except MetadataError as exc:
            if type(data_type).numpy_keys:  # an ambiguous numpy dtype must list this type
                assert repr(data_type.written_name(V3)) in str(exc)
            return
        if type(data_type).numpy_keys:
            assert found == data_type
        else:  # a type claiming no numpy dtype is never what a numpy dtype resolves to
            assert type(found) is not type(data_type)

    # -- fill values ------------------------------------------------------------------------
    def test_fill_values_round_trip(self, data_type: DataType) -> None:
        """In every format the type has a name in; bit-exact in v3."""
        values = [data_type.default_fill()]
        values += [data_type.fill_from_json(v, V3) for v in self.fill_values]
        for fmt in type(data_type).names.formats():
            for value in values:
                written = data_type.fill_to_json(value, fmt)
                back = data_type.fill_from_json(written, fmt)
                assert data_type.fill_to_json(back, fmt) == written, (fmt, written)
                if fmt == V3:
                    assert _same(back, value, data_type.native)

    def test_sample_values_as_fill_values(self, data_type: DataType, sample: np.ndarray) -> None:
        for value in sample.reshape(-1)[:16]:
            back = data_type.fill_from_json(data_type.fill_to_json(value, V3), V3)
            assert _same(back, value, data_type.native)

    # -- bytes ------------------------------------------------------------------------------
    @pytest.mark.parametrize("endian", ["little", "big"])
    def test_bytes_layout_round_trip(
        self, data_type: DataType, sample: np.ndarray, endian: str
    ) -> None:
        if data_type.stored_size is None:  # variable-length: the bytes codec must refuse it
            from zarrkit.api import create_array

            with pytest.raises(CodecChainError):
                create_array(
                    "memory://",
                    shape=(3,),
                    dtype=data_type,
                    chunks=(3,),
                    codecs=[{"name": "bytes", "configuration": {"endian": endian}}],
                )
            return
        stored = data_type.to_encoded(sample, endian)
        assert stored.dtype == data_type.encoded_dtype(endian)
        assert stored.dtype.itemsize == data_type.stored_size
        raw = np.ascontiguousarray(stored).tobytes()
        back = data_type.from_encoded(np.frombuffer(raw, dtype=stored.dtype), endian)
        assert _same(back, sample, data_type.native)

    def test_array_round_trip(
        self, data_type: DataType, sample: np.ndarray, tmp_path: Path
    ) -> None:
        from zarrkit.api import create_array, open_array

        values = np.asarray(sample, dtype=data_type.native).reshape(-1)
        a = create_array(
            tmp_path, shape=(values.size + 3,), dtype=data_type, chunks=(max(1, values.size // 2),)
        )
        a[: values.size] = values
        b = open_array(tmp_path)
        assert _same(b[: values.size], values, data_type.native)
        fills = b[values.size :]
        assert _same(
            fills, np.asarray([b.fill_value] * 3, dtype=data_type.native), data_type.native
        )

    # -- codecs -----------------------------------------------------------------------------
    def test_serializers_refuse_at_creation_or_round_trip(
        self, data_type: DataType, sample: np.ndarray
    ) -> None:
        """A codec that cannot lay the type out refuses it when the array is created, naming
        itself and the type; one that accepts it stores the values and reads them back."""
        from zarrkit.api import create_array

        values = np.asarray(sample, dtype=data_type.native).reshape(-1)[:8]
        for codec in self.serializers:
            name = codec["name"]
            try:
                a = create_array(
                    "memory://",
                    shape=(values.size,),
                    dtype=data_type,
                    chunks=(values.size,),
                    codecs=[dict(codec)],
                )
            except CodecChainError as exc:
                assert name in str(exc) and data_type.describe() in str(exc), (name, str(exc))
                continue
            a[...] = values
            back = a[...]
            # values, not bytes: a sub-byte type may come back with its unused bits set
            assert _same(back, values, data_type.native) or bool(np.array_equal(back, values)), name
