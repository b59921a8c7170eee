"""The 2020 draft of Zarr v3 (seed 001) as a zarrkit format: keys, the entry point, implicit
groups, existence checks and erase in the seed's order, must_understand negotiation, data type
extensions with fallbacks, memory layouts, creation arguments, and clear errors for bad input."""

from __future__ import annotations

import json
import uuid

import numpy as np
import pytest

import zarrkit as zk
from zarrkit.errors import (
    CapabilityError,
    ContainsNodeError,
    MetadataError,
    MustUnderstandError,
    NodeNotFoundError,
    UnknownExtensionError,
)
from zarrkit.formats import detect, get_format
from zarrkit.plugins.stores.memory import MemoryStore

DRAFT = "v3-draft-2020"
CORE = "https://purl.org/zarr/spec/protocol/core/3.0"
GZIP = {"codec": "https://purl.org/zarr/spec/codec/gzip/1.0", "configuration": {"level": 1}}
fmt = get_format(DRAFT)


def new_store() -> MemoryStore:
    return MemoryStore(f"draft-{uuid.uuid4().hex}")


def doc_of(store, key: str) -> dict:
    return json.loads(store.get(key))


def put(store, key: str, doc) -> None:
    store.set(key, json.dumps(doc).encode() if not isinstance(doc, bytes) else doc)


def entry(**changes) -> dict:
    base = {
        "zarr_format": CORE,
        "metadata_encoding": CORE,
        "metadata_key_suffix": ".json",
        "extensions": [],
    }
    base.update(changes)
    return base


def array_doc(**changes) -> dict:
    base = {
        "shape": [4, 4],
        "data_type": "<i4",
        "chunk_grid": {"type": "regular", "chunk_shape": [2, 2], "separator": "/"},
        "chunk_memory_layout": "C",
        "fill_value": 0,
        "extensions": [],
        "attributes": {},
    }
    base.update(changes)
    return base


def store_with(doc: dict, *, key: str = "meta/root/a.array.json", entry_doc=None) -> MemoryStore:
    store = new_store()
    put(store, "zarr.json", entry() if entry_doc is None else entry_doc)
    put(store, key, doc)
    return store


class Unlistable(MemoryStore):
    listable = False


class Recording(MemoryStore):
    """Records erase operations in order, to check the seed's erase order."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.ops: list[tuple[str, str]] = []

    def erase(self, key: str) -> None:
        self.ops.append(("erase", key))
        super().erase(key)

    def erase_prefix(self, prefix: str) -> None:
        self.ops.append(("erase_prefix", prefix))
        super().erase_prefix(prefix)


# -- keys and layout ------------------------------------------------------------------------
def test_first_node_writes_entry_point_and_keys():
    store = new_store()
    a = zk.create_array(
        store,
        path="foo/baz",
        shape=(5, 4),
        chunks=(2, 3),
        dtype="<f8",
        zarr_format=DRAFT,
        compressor=GZIP,
        fill_value="NaN",
    )
    a[...] = np.arange(20.0).reshape(5, 4)
    assert doc_of(store, "zarr.json") == entry()
    keys = set(store.list())
    assert {
        "meta/root/foo/baz.array.json",
        "data/root/foo/baz/c0/0",
        "data/root/foo/baz/c2/1",
    } <= keys
    assert not any(k.startswith("meta/root/foo.") for k in keys)  # the ancestor stays implicit
    doc = doc_of(store, "meta/root/foo/baz.array.json")
    assert doc["chunk_grid"] == {"type": "regular", "chunk_shape": [2, 3], "separator": "/"}
    assert doc["compressor"] == GZIP and doc["chunk_memory_layout"] == "C"
    assert doc["data_type"] == "<f8" and doc["fill_value"] == "NaN"
    again = zk.open_array(store, path="foo/baz")
    np.testing.assert_array_equal(again[...], np.arange(20.0).reshape(5, 4))


def test_separator_order_and_byte_order():
    store = new_store()
    data = np.arange(12, dtype=">u2").reshape(3, 4)
    a = zk.create_array(
        store,
        path="x",
        shape=(3, 4),
        chunks=(2, 2),
        dtype=">u2",
        zarr_format=DRAFT,
        order="F",
        dimension_separator=".",
        compressor=None,
    )
    a[...] = data
    assert "data/root/x/c1.1" in set(store.list())
    doc = doc_of(store, "meta/root/x.array.json")
    assert doc["data_type"] == ">u2" and doc["chunk_memory_layout"] == "F"
    assert doc["chunk_grid"]["separator"] == "." and "compressor" not in doc
    # the stored chunk is big-endian, column-major
    raw = store.get("data/root/x/c0.0")
    assert raw == data[:2, :2].astype(">u2").tobytes(order="F")
    np.testing.assert_array_equal(zk.open_array(store, path="x")[...], data)


def test_root_array_and_zero_d_chunk():
    store = new_store()
    a = zk.create_array(store, shape=(), dtype="<i8", zarr_format=DRAFT)
    a[...] = 42
    keys = set(store.list())
    assert {"zarr.json", "meta/root.array.json", "data/root/c0"} <= keys
    assert zk.open_array(store)[...] == 42
    assert detect(store, "") is fmt


def test_root_group_explicit_and_attributes():
    store = new_store()
    g = zk.create_group(store, zarr_format=DRAFT, attributes={"a": 1})
    assert doc_of(store, "meta/root.group.json") == {"attributes": {"a": 1}}
    g.attrs["b"] = 2
    assert zk.open_group(store).attrs.asdict() == {"a": 1, "b": 2}


def test_custom_metadata_key_suffix():
    store = store_with(
        array_doc(), key="meta/root/a.array.meta", entry_doc=entry(metadata_key_suffix=".meta")
    )
    assert zk.open_array(store, path="a").shape == (4, 4)
    assert zk.open_group(store).keys() == ["a"]


# -- implicit groups, existence, listing, erase ---------------------------------------------
def test_implicit_groups_and_children():
    store = new_store()
    zk.create_array(store, path="foo/baz/qux", shape=(2,), dtype="<i4", zarr_format=DRAFT)
    zk.create_group(store, path="foo/bar", zarr_format=DRAFT)
    root = zk.open_group(store, mode="r+")
    assert root.keys() == ["foo"]
    foo = root["foo"]
    assert foo.keys() == ["bar", "baz"]  # an explicit group and an implicit one
    assert "baz" in foo and "nothing" not in foo
    assert isinstance(foo["baz"], zk.Group) and isinstance(foo["baz/qux"], zk.Array)
    # writing an implicit group's attributes makes it explicit
    foo.attrs["made"] = "explicit"
    assert doc_of(store, "meta/root/foo.group.json") == {"attributes": {"made": "explicit"}}
    with pytest.raises(ContainsNodeError):
        zk.create_array(store, path="foo/baz", shape=(1,), dtype="<i4", zarr_format=DRAFT)


def test_unlistable_store_gets_capability_error_not_a_wrong_answer():
    listable = new_store()
    zk.create_array(listable, path="g/a", shape=(3,), chunks=(3,), dtype="<i4", zarr_format=DRAFT)[
        ...
    ] = [1, 2, 3]
    zk.create_group(listable, path="h", zarr_format=DRAFT)
    store = Unlistable(f"unlistable-{uuid.uuid4().hex}")
    for key in listable.list():
        store.set(key, listable.get(key))
    # documents found by key need no listing
    np.testing.assert_array_equal(zk.open_array(store, path="g/a")[...], [1, 2, 3])
    assert isinstance(zk.open_group(store, path="h"), zk.Group)
    # an implicit group (or its absence) can only be known by listing
    with pytest.raises(CapabilityError, match="implicit group"):
        zk.open_group(store, path="g")
    with pytest.raises(CapabilityError):
        zk.open(store, path="nothing")
    with pytest.raises(CapabilityError, match="members"):
        zk.open_group(store, path="h").keys()


def test_erase_in_seed_order():
    store = Recording(f"rec-{uuid.uuid4().hex}")
    zk.create_array(store, path="g/a", shape=(4,), chunks=(2,), dtype="<i4", zarr_format=DRAFT)[
        ...
    ] = 1
    zk.create_array(store, path="g/sub/b", shape=(2,), dtype="<i4", zarr_format=DRAFT)[...] = 2
    g = zk.open_group(store, path="g", mode="r+")
    store.ops.clear()
    del g["a"]
    assert store.ops == [("erase", "meta/root/g/a.array.json"), ("erase_prefix", "data/root/g/a/")]
    store.ops.clear()
    del g["sub"]  # implicit
    assert store.ops == [("erase_prefix", "meta/root/g/sub/"), ("erase_prefix", "data/root/g/sub/")]
    assert g.keys() == []
    assert not any(k.startswith("data/root/g/") for k in store.list())


def test_erase_explicit_group_removes_everything_below():
    store = new_store()
    zk.create_group(store, path="g", zarr_format=DRAFT)
    zk.create_array(store, path="g/x/y", shape=(2,), dtype="<i4", zarr_format=DRAFT)[...] = 5
    del zk.open_group(store, mode="r+")["g"]
    assert set(store.list()) == {"zarr.json"}
    with pytest.raises(NodeNotFoundError):
        zk.open(store, path="g")


# -- must_understand ------------------------------------------------------------------------
def test_entry_point_extensions_negotiated():
    ext = {
        "extension": "http://example.org/zarr/extension/foo",
        "must_understand": False,
        "configuration": {"foo": "bar"},
    }
    store = store_with(array_doc(), entry_doc=entry(extensions=[ext]))
    assert zk.open_array(store, path="a").shape == (4, 4)
    store = store_with(array_doc(), entry_doc=entry(extensions=[{**ext, "must_understand": True}]))
    with pytest.raises(MustUnderstandError, match="example.org/zarr/extension/foo") as info:
        zk.open_array(store, path="a")
    assert info.value.field == "extensions[0]" and "zarr.json" in str(info.value)


def test_array_extensions_and_unknown_fields_negotiated():
    ext = {"extension": "http://example.org/ext/x", "must_understand": False}
    a = zk.open_array(store_with(array_doc(extensions=[ext])), path="a")
    assert a.shape == (4, 4)
    with pytest.raises(MustUnderstandError, match="example.org/ext/x"):
        zk.open_array(
            store_with(array_doc(extensions=[{**ext, "must_understand": True}])), path="a"
        )
    ok = zk.open_array(store_with(array_doc(extra={"must_understand": False})), path="a")
    assert ok.metadata.extra_fields == {"extra": {"must_understand": False}}
    with pytest.raises(MustUnderstandError) as info:
        zk.open_array(store_with(array_doc(extra=1)), path="a")
    assert info.value.field == "extra"


# -- data types -----------------------------------------------------------------------------
def test_data_type_extension_with_fallback():
    dt = {"extension": "http://example.org/zarr/dtype/unknown", "type": "mytype", "fallback": "<i4"}
    store = store_with(array_doc(data_type=dt, fill_value=3))
    put(store, "data/root/a/c0/0", np.array([1, 2, 3, 4], dtype="<i4").tobytes())
    a = zk.open_array(store, path="a", mode="r+")
    np.testing.assert_array_equal(a[:2, :2], [[1, 2], [3, 4]])
    assert a[3, 3] == 3
    a.attrs["x"] = 1  # the extension object is written back as read
    assert doc_of(store, "meta/root/a.array.json")["data_type"] == dt
    no_fallback = store_with(array_doc(data_type={**dt, "fallback": None}))
    with pytest.raises(UnknownExtensionError, match="example.org/zarr/dtype/unknown") as info:
        zk.open_array(no_fallback, path="a")
    assert info.value.field == "data_type"


def test_zarr_python_2_extension_types_read_by_type():
    complex_uri = (
        "https://zarr-specs.readthedocs.io/en/core-protocol-v3.0-dev/protocol/"
        "extensions/complex-dtypes/v1.0.html"
    )
    dt = {"extension": complex_uri, "type": "<c8", "fallback": None}
    a = zk.open_array(store_with(array_doc(data_type=dt, fill_value=[1.0, -1.0])), path="a")
    assert a.dtype == np.complex64 and a[0, 0] == 1 - 1j


def test_r16_raw_bits_round_trip():
    store = new_store()
    a = zk.create_array(
        store, path="r", shape=(3,), chunks=(2,), dtype="r16", zarr_format=DRAFT, compressor=None
    )
    data = np.array([b"\x01\x02", b"\xff\x00", b"\x10\x20"], dtype="V2")
    a[...] = data
    assert doc_of(store, "meta/root/r.array.json")["data_type"] == "r16"
    assert zk.open_array(store, path="r")[...].tobytes() == data.tobytes()


@pytest.mark.parametrize(
    "fill, check",
    [
        ("NaN", np.isnan),
        ("+Infinity", np.isposinf),
        ("Infinity", np.isposinf),
        ("-Infinity", np.isneginf),
        ("0x7fc00000", np.isnan),
        ("0x3f800000", lambda v: v == 1.0),
    ],
)
def test_float_fill_values(fill, check):
    a = zk.open_array(store_with(array_doc(data_type="<f4", fill_value=fill)), path="a")
    assert check(a[0, 0])


def test_null_fill_value_reads_as_zero_and_is_kept():
    store = store_with(array_doc(fill_value=None))
    a = zk.open_array(store, path="a", mode="r+")
    assert a[0, 0] == 0
    a.attrs["k"] = "v"
    assert doc_of(store, "meta/root/a.array.json")["fill_value"] is None


# -- creation arguments and what the draft cannot express ------------------------------------
def test_creation_arguments():
    with pytest.raises(MetadataError, match="v3-draft-2020 arrays cannot have shards"):
        zk.create_array(new_store(), shape=(2,), dtype="<i4", zarr_format=DRAFT, shards=(1,))
    with pytest.raises(ValueError, match="dimension_separator"):
        zk.create_array(
            new_store(), shape=(2,), dtype="<i4", zarr_format=DRAFT, dimension_separator="-"
        )
    store = new_store()
    zk.create_array(store, path="d", shape=(4,), dtype="<i4", zarr_format=DRAFT)
    doc = doc_of(store, "meta/root/d.array.json")
    assert doc["compressor"]["codec"] == "https://purl.org/zarr/spec/codec/blosc/1.0"
    assert doc["compressor"]["configuration"]["cname"] == "lz4"


def test_array_document_from_a_v3_chain():
    """A v3 chain (what a conversion hands over) becomes order + byte order + compressor."""
    src = zk.create_array(
        new_store(),
        shape=(4, 6),
        chunks=(2, 3),
        dtype="int16",
        codecs=[
            {"name": "transpose", "configuration": {"order": [1, 0]}},
            {"name": "bytes", "configuration": {"endian": "big"}},
            {"name": "zstd", "configuration": {"level": 1}},
        ],
    )
    m = src.metadata
    doc = fmt.array_document(
        shape=m.shape,
        data_type=m.data_type,
        chunk_grid=m.chunk_grid,
        chunk_key_encoding=m.chunk_key_encoding,
        fill_value=m.fill_value,
        codecs=m.codecs,
        attributes={"a": 1},
        dimension_names=None,
    )
    assert doc["chunk_memory_layout"] == "F" and doc["data_type"] == ">i2"
    assert doc["compressor"]["codec"] == "https://purl.org/zarr/spec/codec/zstd/1.0"
    assert doc["chunk_grid"] == {"type": "regular", "chunk_shape": [2, 3], "separator": "/"}


@pytest.mark.parametrize(
    "codecs, dimension_names, match",
    [
        (
            [{"name": "bytes"}, {"name": "zstd"}, {"name": "gzip", "configuration": {"level": 1}}],
            None,
            "one compressor",
        ),
        ([{"name": "bytes"}], ["x", "y"], "dimension names"),
        (
            [
                {"name": "transpose", "configuration": {"order": [0, 1]}},
                {"name": "transpose", "configuration": {"order": [1, 0]}},
                {"name": "bytes"},
            ],
            None,
            "no memory layout|no numcodecs id",
        ),
    ],
)
def test_array_document_refuses_what_the_draft_cannot_express(codecs, dimension_names, match):
    src = zk.create_array(
        new_store(),
        shape=(4, 6),
        chunks=(2, 3),
        dtype="int16",
        codecs=codecs,
        dimension_names=dimension_names,
    )
    m = src.metadata
    with pytest.raises(MetadataError, match=match):
        fmt.array_document(
            shape=m.shape,
            data_type=m.data_type,
            chunk_grid=m.chunk_grid,
            chunk_key_encoding=m.chunk_key_encoding,
            fill_value=m.fill_value,
            codecs=m.codecs,
            attributes=None,
            dimension_names=m.dimension_names,
        )


def test_resize_keeps_separator_and_filters_attribute_is_reserved():
    store = new_store()
    a = zk.create_array(
        store,
        path="r",
        shape=(4,),
        chunks=(2,),
        dtype="<i4",
        zarr_format=DRAFT,
        dimension_separator=".",
        filters=[{"id": "delta", "dtype": "<i4"}],
    )
    a[...] = [1, 2, 3, 4]
    a.resize(6)
    doc = doc_of(store, "meta/root/r.array.json")
    assert doc["shape"] == [6] and doc["chunk_grid"]["separator"] == "."
    assert [(f["id"], f["dtype"]) for f in doc["attributes"]["filters"]] == [("delta", "<i4")]
    np.testing.assert_array_equal(zk.open_array(store, path="r")[...], [1, 2, 3, 4, 0, 0])
    with pytest.raises(MetadataError, match="filters"):
        a.attrs["filters"] = []


# -- corrupt input --------------------------------------------------------------------------
@pytest.mark.parametrize(
    "entry_doc, key",
    [
        (b"{not json", None),
        (entry(zarr_format="https://purl.org/zarr/spec/protocol/core/4.0"), "zarr_format"),
        (entry(metadata_encoding="https://example.org/yaml"), "metadata_encoding"),
        (entry(metadata_key_suffix="/x"), "metadata_key_suffix"),
        (entry(extensions={"extension": "x"}), "extensions"),
        (entry(extensions=[{"must_understand": False}]), "extensions[0]"),
    ],
)
def test_bad_entry_point(entry_doc, key):
    store = new_store()
    put(store, "zarr.json", entry_doc)
    put(store, "meta/root/a.array.json", array_doc())
    if isinstance(entry_doc, bytes):  # not JSON at all: not recognisably the draft's
        with pytest.raises((MetadataError, NodeNotFoundError)):
            zk.open_array(store, path="a")
        return
    with pytest.raises(MetadataError) as info:
        zk.open_array(store, path="a")
    assert info.value.field == key and "zarr.json" in str(info.value)


@pytest.mark.parametrize(
    "changes, key",
    [
        ({"shape": "x"}, "shape"),
        ({"fill_value": "lots"}, "fill_value"),
        ({"chunk_memory_layout": 5}, "chunk_memory_layout"),
        ({"chunk_memory_layout": "X"}, "chunk_memory_layout"),
        ({"compressor": "gzip"}, "compressor"),
        ({"compressor": {"codec": "https://example.org/codec/nope/1.0"}}, "compressor"),
        (
            {"chunk_grid": {"type": "regular", "chunk_shape": [2, 2], "separator": "-"}},
            "chunk_grid.separator",
        ),
        ({"chunk_grid": {"type": "regular", "chunk_shape": [2]}}, "chunk_grid"),
        ({"chunk_grid": {"type": "hexagonal", "chunk_shape": [2, 2]}}, None),
        ({"dimension_separator": "."}, "dimension_separator"),
        ({"data_type": 7}, "data_type"),
        ({"data_type": {"extension": "http://x", "fallback": "<i4"}}, "data_type.type"),
        ({"attributes": []}, "attributes"),
        ({"attributes": {"filters": [{"id": "no-such-codec"}]}}, "attributes.filters[0]"),
        ({"storage_transformers": [{"type": "indexed"}]}, "storage_transformers"),
    ],
)
def test_malformed_array_document(changes, key):
    doc = array_doc(**changes)
    store = store_with(doc)
    with pytest.raises(MetadataError) as info:
        zk.open_array(store, path="a")
    if key is not None:
        assert info.value.field == key, str(info.value)
    assert "meta/root/a.array.json" in str(info.value)


def test_missing_required_field_and_bad_group():
    doc = array_doc()
    del doc["chunk_memory_layout"]
    with pytest.raises(MetadataError) as info:
        zk.open_array(store_with(doc), path="a")
    assert info.value.field == "chunk_memory_layout"
    with pytest.raises(MetadataError) as info:
        zk.open_group(store_with({"attributes": 3}, key="meta/root/g.group.json"), path="g")
    assert info.value.field == "attributes"
    with pytest.raises(MetadataError, match="not valid JSON"):
        zk.open_group(store_with(b"{", key="meta/root/g.group.json"), path="g")


def test_draft_node_refused_inside_a_v3_hierarchy():
    store = new_store()
    zk.create_group(store)  # v3 root
    with pytest.raises(MetadataError, match="entry point"):
        zk.create_array(store, path="x", shape=(1,), dtype="<i4", zarr_format=DRAFT)
