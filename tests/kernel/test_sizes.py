"""Sizes and counts are exact Python integers in every format, and lengths beyond what can be
indexed (a dimension past 2**63 - 1, a chunk past 2**63 - 1 bytes) are refused when metadata is
read or an array is created, naming the field and the document."""

from __future__ import annotations

import json

import numpy as np
import pytest

import zarrkit as zk
from zarrkit.errors import MetadataError, SelectionError
from zarrkit.plugins.stores.memory import MemoryStore

FORMATS = [3, 2, "v3-draft-2020"]
TOP = 2**63 - 1  # the longest dimension


def _doc_key(store: MemoryStore) -> str:
    """The key of the root array's document, whatever the format."""
    for key in ("meta/root.array.json", ".zarray", "zarr.json"):
        raw = store.get(key)
        if raw is not None and (key != "zarr.json" or json.loads(raw).get("zarr_format") == 3):
            return key
    raise AssertionError("no array document")


def _edit(store: MemoryStore, change) -> str:
    """Edit the root array's stored document in place; the key it lives at."""
    key = _doc_key(store)
    doc = json.loads(store.get(key))
    change(doc)
    store.set(key, json.dumps(doc).encode())
    return key


def _chunk_field(doc: dict) -> list:
    if "chunks" in doc:
        return doc["chunks"]
    grid = doc["chunk_grid"]
    return grid["configuration"]["chunk_shape"] if "configuration" in grid else grid["chunk_shape"]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(
    "shape, chunks",
    [((2**32, 2**32), (2**16, 2**16)), ((3, 2**62), (1, 2**20)), ((TOP,), (2**40,))],
)
def test_size_nbytes_and_nchunks_are_exact(fmt, shape, chunks):
    a = zk.create_array(MemoryStore(), shape=shape, chunks=chunks, dtype="f8", zarr_format=fmt)
    size = 1
    for n in shape:
        size *= n
    count = 1
    for n, c in zip(shape, chunks):
        count *= -(-n // c)
    assert (a.size, a.nbytes, a.nchunks) == (size, size * 8, count)
    assert a.info.nbytes == size * 8


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_dimension_past_2_63_is_refused_on_create(fmt):
    store = MemoryStore()
    with pytest.raises(MetadataError, match=r"dimension 0 is 18446744073709551616") as info:
        zk.create_array(store, shape=(2**64,), chunks=(10,), dtype="u1", zarr_format=fmt)
    assert info.value.field == "shape"
    with pytest.raises(MetadataError, match=r"2\*\*63 - 1") as info:
        zk.create_array(store, shape=(10,), chunks=(2**63,), dtype="u1", zarr_format=fmt)
    assert info.value.field == "chunks"
    with pytest.raises(MetadataError, match="holds 9223372036854775808 bytes") as info:
        zk.create_array(store, shape=(10,), chunks=(2**60,), dtype="f8", zarr_format=fmt)
    assert list(store.list()) in ([], ["zarr.json"])  # (the draft's entry point at most)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(
    "field, value, message",
    [
        ("shape", [2**64], "dimension 0 is 18446744073709551616"),
        ("shape", [2**63], "dimension 0 is 9223372036854775808"),
        ("chunks", [2**64], "dimension 0 is 18446744073709551616"),
        ("chunks", [2**62], "holds 36893488147419103232 bytes"),
    ],
)
def test_stored_lengths_beyond_the_limit_are_refused_on_read(fmt, field, value, message):
    store = MemoryStore()
    zk.create_array(store, shape=(10,), chunks=(5,), dtype="f8", zarr_format=fmt)

    def change(doc):
        if field == "shape":
            doc["shape"] = value
        else:
            _chunk_field(doc)[:] = value

    key = _edit(store, change)
    with pytest.raises(MetadataError, match=message) as info:
        zk.open_array(store)
    assert key in str(info.value)  # the document
    assert info.value.field and (field == "shape") == (info.value.field == "shape")  # the field
    assert ("chunk" in info.value.field) == (field == "chunks")


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_longest_dimension_reads_and_writes_at_its_end(fmt):
    a = zk.create_array(
        MemoryStore(), shape=(TOP,), chunks=(2**20,), dtype="i4", zarr_format=fmt, fill_value=-1
    )
    a[TOP - 3 :] = [1, 2, 3]
    assert a[-1] == 3
    assert a[-4:].tolist() == [-1, 1, 2, 3]
    assert a[:: 2**62].tolist() == [-1, -1]
    assert a.oindex[[0, TOP - 1]].tolist() == [-1, 3]
    assert a.vindex[[TOP - 2, 0]].tolist() == [2, -1]
    assert a.blocks[-1][-3:].tolist() == [1, 2, 3]
    with pytest.raises(SelectionError, match="too large to hold in memory"):
        a[:]
    with pytest.raises(MetadataError, match="dimension 0 is 9223372036854775808"):
        a.resize(TOP + 1)
    assert a.shape == (TOP,)


def test_a_chunk_too_large_to_allocate_is_reported_not_a_memory_error():
    # allowed by the spec and by the limit, but no machine holds 4 EiB
    a = zk.create_array(MemoryStore(), shape=(10,), chunks=(2**62,), dtype="u1")
    assert a[-1] == 0  # a missing chunk reads as the fill value without allocating it
    with pytest.raises(MetadataError, match="cannot allocate memory for a chunk") as info:
        a[0] = 1
    assert info.value.field == "chunk_grid"


@pytest.mark.parametrize("fmt", FORMATS)
def test_deeply_nested_documents_are_refused(fmt):
    store = MemoryStore()
    zk.create_array(store, shape=(4,), chunks=(2,), dtype="u1", zarr_format=fmt)
    raw = store.get(_doc_key(store)).decode()
    deep = raw.rstrip().rstrip("}") + ', "attributes": ' + "[" * 100_000 + "]" * 100_000 + "}"
    store.set(_doc_key(store), deep.encode())
    with pytest.raises(MetadataError, match="nested more than"):
        zk.open_array(store)


def test_attributes_nested_too_deep_are_refused_before_writing():
    a = zk.create_array(MemoryStore(), shape=(4,), chunks=(2,), dtype="u1")
    value: list = []
    for _ in range(5000):
        value = [value]
    with pytest.raises(MetadataError, match="nested more than"):
        a.attrs["deep"] = value
    assert "deep" not in zk.open_array(a.store).attrs


def test_chunk_counts_of_a_sharded_array_are_exact():
    a = zk.create_array(
        MemoryStore(),
        shape=(2**40, 2**40),
        chunks=(2**10, 2**10),
        shards=(2**20, 2**20),
        dtype="u1",
    )
    assert a.nchunks == 2**60  # inner chunks, as zarr-python counts them
    assert a.cdata_shape == (2**30, 2**30)
    assert np.asarray(a[2**40 - 1, -2:]).tolist() == [0, 0]


@pytest.mark.parametrize("fmt", FORMATS)
def test_more_dimensions_than_numpy_holds_are_refused(fmt):
    store = MemoryStore()
    with pytest.raises(MetadataError, match="65 dimensions; at most 64") as info:
        zk.create_array(store, shape=(1,) * 65, chunks=(1,) * 65, dtype="u1", zarr_format=fmt)
    assert info.value.field == "shape"
    zk.create_array(store, shape=(2,) * 64, chunks=(1,) * 64, dtype="u1", zarr_format=fmt)
    _edit(store, lambda doc: (doc["shape"].append(1), _chunk_field(doc).append(1)))
    with pytest.raises(MetadataError, match="65 dimensions; at most 64"):
        zk.open_array(store)
