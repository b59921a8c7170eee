"""A conformance suite every memory layout plugin should pass: subclass it in a test module.

    class TestMyLayout(MemoryLayoutTests):
        @pytest.fixture
        def layout(self):
            return MyLayout()                      # an instance to test

Optional: `dtypes` and `shapes` (what the round trips use), `registered` (False: the suite
registers the class for each test instead of requiring its entry point).

A memory layout is the array -> bytes step of zarr v2 (`order`) and the 2020 draft
(`chunk_memory_layout`); the data type's byte order is the other half of it. The suite asks
what that step promises (`zarrkit.abc.MemoryLayout`): `from_bytes(to_bytes(chunk))` gives the
chunk back for every shape (0-d and empty too) and dtype in both byte orders, from read-only
bytes and memoryviews, whatever the memory order of the chunk given, changing neither; `to_bytes` writes exactly
one whole element per element, each in the dtype's byte order (a layout orders elements, it
does not reshuffle their bytes, or the dtype written beside it would lie); `numpy_order`, when
set, is what the bytes are; `v3_codecs`, when given, lays a chunk out byte for byte as
`to_bytes` does (chunks are copied untouched between formats on that promise); a real v2 or
draft array reads back through the layout.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

from zarrkit import registry
from zarrkit.abc import V2, V3, V3_DRAFT_2020, MemoryLayout
from zarrkit.errors import UnknownExtensionError
from zarrkit.helpers import CodecChain, extension_from_json

from .extension_checks import reread


def _sample(dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    """Distinct values at every position, so any reordering shows."""
    n = int(np.prod(shape, dtype=np.int64))
    values = np.arange(1, n + 1) * 7 % 251
    chunk: np.ndarray
    if dtype.kind == "b":
        chunk = values % 3 == 0
    elif dtype.kind == "c":
        chunk = (values + 1j * values[::-1]).astype(dtype)
    else:
        chunk = values.astype(dtype)
    return chunk.reshape(shape)


def _as_bytes(data: Any) -> bytes:
    return bytes(memoryview(data).cast("B"))


class MemoryLayoutTests:
    """Behaviour every memory layout owes the v2 and draft formats."""

    dtypes: ClassVar[tuple[str, ...]] = ("|u1", "<i2", ">i4", "<f8", ">c8", "|b1")
    shapes: ClassVar[tuple[tuple[int, ...], ...]] = ((), (0,), (7,), (3, 4), (2, 3, 5), (4, 0))
    #: False: the class need not be reachable through an entry point
    registered: ClassVar[bool] = True

    @pytest.fixture(autouse=True)
    def _reachable(self, layout: MemoryLayout) -> Iterator[None]:
        handle = None
        if not self.registered:
            handle = registry.register("memory_layout", type(layout))
        yield
        if handle is not None:
            registry.unregister(handle)

    def _formats(self, layout: MemoryLayout) -> list[str]:
        return [f for f in type(layout).names.formats() if f != V3]

    # -- names and JSON --------------------------------------------------------------------
    def test_names_resolve_to_the_class(self, layout: MemoryLayout) -> None:
        """A layout has a name in v2 or the 2020 draft (v3 spells layouts as codecs)."""
        formats = self._formats(layout)
        assert formats, f"{type(layout).__name__} has no name in zarr v2 or the 2020 draft"
        for fmt in formats:
            name = layout.written_name(fmt)
            try:
                found = registry.lookup("memory_layout", name, fmt)
            except UnknownExtensionError:
                found = None
            assert found is type(layout), (fmt, name, found)

    def test_json_round_trip(self, layout: MemoryLayout) -> None:
        for fmt in self._formats(layout):
            again = reread(layout, fmt)
            assert type(again) is type(layout) and again.to_json(fmt) == layout.to_json(fmt)

    # -- bytes ------------------------------------------------------------------------------
    def test_round_trip(self, layout: MemoryLayout) -> None:
        for dtype_str, shape in itertools.product(self.dtypes, self.shapes):
            dtype = np.dtype(dtype_str)
            chunk = _sample(dtype, shape)
            stored = layout.to_bytes(chunk, dtype)
            np.testing.assert_array_equal(
                chunk, _sample(dtype, shape), "to_bytes changed its input"
            )
            raw = _as_bytes(stored)
            assert len(raw) == chunk.size * dtype.itemsize, (
                f"{dtype} {shape}: {len(raw)} bytes for {chunk.size} elements"
            )
            for given in (raw, memoryview(raw), bytearray(raw)):
                back = layout.from_bytes(given, shape, dtype)
                assert back.shape == shape and back.dtype == dtype, (dtype, shape, back.dtype)
                np.testing.assert_array_equal(back, chunk, err_msg=f"{dtype} {shape}")
                assert bytes(given) == raw, f"{dtype} {shape}: from_bytes changed its input"

    def test_memory_order_of_the_chunk_does_not_matter(self, layout: MemoryLayout) -> None:
        """The engine hands over C-ordered chunks, views and Fortran-ordered copies alike:
        the bytes depend on the values only."""
        for dtype_str in self.dtypes:
            dtype = np.dtype(dtype_str)
            chunk = _sample(dtype, (4, 6))
            expected = _as_bytes(layout.to_bytes(chunk, dtype))
            for other in (np.asfortranarray(chunk), _sample(dtype, (8, 6))[::2], chunk.T.T):
                if other.shape == chunk.shape and np.array_equal(other, chunk):
                    assert _as_bytes(layout.to_bytes(other, dtype)) == expected, dtype
            native = chunk.astype(dtype.newbyteorder("="))
            assert _as_bytes(layout.to_bytes(native, dtype)) == expected, (
                f"{dtype}: a chunk in native byte order must be written in the dtype's"
            )

    def test_elements_are_stored_whole_in_the_dtype_byte_order(self, layout: MemoryLayout) -> None:
        """The stored bytes are the chunk's elements, each as `dtype` writes it, in some
        order: the dtype (with its byte order) is written beside the layout in metadata."""
        for dtype_str, shape in itertools.product(self.dtypes, self.shapes):
            dtype = np.dtype(dtype_str)
            if dtype.kind == "b":
                continue  # few distinct values: nothing to tell apart
            chunk = _sample(dtype, shape)
            raw = _as_bytes(layout.to_bytes(chunk, dtype))
            stored = sorted(raw[i : i + dtype.itemsize] for i in range(0, len(raw), dtype.itemsize))
            plain = chunk.astype(dtype).tobytes()
            own = sorted(
                plain[i : i + dtype.itemsize] for i in range(0, len(plain), dtype.itemsize)
            )
            assert stored == own, f"{dtype} {shape}: stored bytes are not the chunk's elements"

    def test_numpy_order_is_what_is_stored(self, layout: MemoryLayout) -> None:
        order = type(layout).numpy_order
        if order is None:
            pytest.skip("not a numpy order")
        for dtype_str, shape in itertools.product(self.dtypes, self.shapes):
            dtype = np.dtype(dtype_str)
            chunk = _sample(dtype, shape)
            stored = _as_bytes(layout.to_bytes(chunk, dtype))
            assert stored == chunk.astype(dtype).tobytes(order=order), (dtype, shape)

    def test_v3_codecs_lay_out_the_same_bytes(self, layout: MemoryLayout) -> None:
        """Where the layout names v3 codecs for itself, they write exactly its bytes (a
        conversion to v3 copies chunks untouched on that promise)."""
        from zarrkit.api import data_type_from_arg

        checked = 0
        for ndim, endian in itertools.product((1, 2, 3), ("little", "big")):
            docs = layout.v3_codecs(ndim, endian)
            if docs is None:
                continue
            shape = (2, 3, 5)[:ndim]
            dtype = np.dtype("i4").newbyteorder("<" if endian == "little" else ">")
            codecs = [extension_from_json("codec", doc, V3, key="codecs") for doc in docs]
            data_type = data_type_from_arg("int32")
            fill = data_type.cast_scalar(0)
            bound = CodecChain(codecs, data_type, fill).bind(shape)
            chunk = _sample(np.dtype("int32"), shape)
            ours = _as_bytes(layout.to_bytes(chunk, dtype))
            assert _as_bytes(bound.encode(chunk)) == ours, (
                f"v3 codecs {docs} lay a {shape} chunk out differently from the layout ({endian})"
            )
            checked += 1
        if not checked:
            pytest.skip("no v3 equivalent")

    # -- through a real array ---------------------------------------------------------------
    def test_array_round_trip(self, layout: MemoryLayout, tmp_path: Path) -> None:
        """Written through the layout in each format it has a name in, and read back."""
        from zarrkit.api import create_array, open_array

        for fmt in self._formats(layout):
            if fmt not in (V2, V3_DRAFT_2020):
                continue
            path = tmp_path / fmt
            a = create_array(
                path,
                shape=(5, 7),
                chunks=(2, 3),
                dtype=">i4",
                zarr_format=fmt,
                order=layout.written_name(fmt),
            )
            values = _sample(np.dtype("int32"), (5, 7))
            a[...] = values
            np.testing.assert_array_equal(open_array(path)[...], values, err_msg=fmt)
