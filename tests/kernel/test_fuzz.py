"""Nothing but zarrkit errors from any metadata or any key, and nothing hangs.

Valid hierarchies of every format (v3 arrays plain, sharded and with a codec chain, v3 and v2
consolidated groups, v2 arrays and groups, the 2020 draft) are written once; each example
mutates one of their metadata documents (fields replaced, deleted or inserted with random JSON:
huge and negative integers, floats, NaN, strings, null, nested lists and objects; or the bytes
themselves cut, changed or nested thousands deep), then opens every node and uses it as a user
would: sizes, info, attributes, reads, a write, listing members. Any exception that is not a
`ZarrkitError` fails the test, and so does an example slower than the deadline (a hang).
Node names and paths are fuzzed the same way against a memory and a local store.

Examples per test come from the Hypothesis profile (tests/conftest.py): a few hundred locally,
thousands under CI=true.
"""

from __future__ import annotations

import functools
import json
import math
import random
import tempfile
from datetime import timedelta
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrkit as zk
from zarrkit.errors import ZarrkitError
from zarrkit.plugins.stores.local.local import LocalStore
from zarrkit.plugins.stores.memory import MemoryStore

#: an example that takes longer than this is a hang (they take milliseconds)
FUZZ = settings(deadline=timedelta(seconds=10))

DRAFT = "v3-draft-2020"
#: what a write is tried on: a chunk (or shard) no larger than this
WRITE_BYTES = 1 << 20
#: what `a[...]` is tried on: arrays of no more elements than this
READ_ALL = 1 << 14

CODEC_CHAIN = [
    {"name": "transpose", "configuration": {"order": [1, 0]}},
    {"name": "bytes", "configuration": {"endian": "big"}},
    {"name": "gzip", "configuration": {"level": 1}},
    {"name": "crc32c"},
]


def _hierarchies() -> dict[str, tuple[MemoryStore, list[str]]]:
    """name -> (a store holding a valid hierarchy, the paths of its nodes)."""
    out = {}
    data = np.arange(48, dtype="i4").reshape(6, 8)

    s = MemoryStore()
    a = zk.create_array(
        s,
        shape=(6, 8),
        chunks=(3, 4),
        dtype="i4",
        fill_value=-1,
        attributes={"units": "m", "nested": [1, {"x": None}]},
        dimension_names=["y", "x"],
    )
    a[:] = data
    out["v3-array"] = (s, [""])

    s = MemoryStore()
    zk.create_array(s, shape=(8, 8), chunks=(2, 2), shards=(4, 4), dtype="f4")[:5, :7] = 1.5
    out["v3-sharded"] = (s, [""])

    s = MemoryStore()
    zk.create_array(s, shape=(6, 8), chunks=(3, 4), dtype="u2", codecs=CODEC_CHAIN)[:] = data
    out["v3-codecs"] = (s, [""])

    for fmt, name in [(3, "v3-consolidated"), (2, "v2-consolidated")]:
        s = MemoryStore()
        g = zk.create_group(s, zarr_format=fmt, attributes={"title": "t"})
        g.create_array("a", shape=(5,), chunks=(2,), dtype="f8")[:] = np.arange(5.0)
        g.create_group("sub").create_array("b", shape=(3, 3), chunks=(2, 2), dtype="u1")[:] = 7
        zk.consolidate_metadata(s)
        out[name] = (s, ["", "a", "sub", "sub/b"])

    s = MemoryStore()
    zk.create_array(
        s, shape=(7, 3), chunks=(4, 2), dtype="<i8", zarr_format=2, attributes={"a": 1}
    )[:] = 3
    out["v2-array"] = (s, [""])

    s = MemoryStore()
    g = zk.create_group(s, zarr_format=DRAFT, attributes={"k": "v"})
    g.create_array("x/y", shape=(4, 5), chunks=(2, 5), dtype="f4", zarr_format=DRAFT)[:] = 2.5
    out["draft"] = (s, ["", "x", "x/y"])
    return out


@functools.cache
def _seeds() -> dict[str, tuple[dict[str, bytes], list[str]]]:
    return {
        name: ({k: bytes(store.get(k)) for k in store.list()}, paths)
        for name, (store, paths) in _hierarchies().items()
    }


def _is_document(key: str) -> bool:
    return key.endswith((".json", ".zarray", ".zgroup", ".zattrs", ".zmetadata"))


# -- random JSON -------------------------------------------------------------------------------
_INTS = st.one_of(
    st.integers(-3, 10),
    st.sampled_from(
        [2**31, 2**32, 2**53 + 1, 2**62, 2**63 - 1, 2**63, 2**64, 2**100, -1, -(2**63), -(2**64)]
    ),
    st.integers(),
)
_WORDS = st.sampled_from(
    [
        "bytes",
        "gzip",
        "zstd",
        "blosc",
        "crc32c",
        "transpose",
        "sharding_indexed",
        "regular",
        "default",
        "v2",
        "uint8",
        "int64",
        "float32",
        "bool",
        "string",
        "complex128",
        "r16",
        "<f8",
        ">i2",
        "|b1",
        "|O",
        "C",
        "F",
        ".",
        "/",
        "little",
        "big",
        "array",
        "group",
        "start",
        "end",
        "NaN",
        "Infinity",
        "0x7fc00000",
        "",
        "zlib",
        "delta",
        "vlen-utf8",
    ]
)
_LEAVES = st.one_of(st.none(), st.booleans(), _INTS, st.floats(), st.text(max_size=10), _WORDS)
_FIELDS = st.sampled_from(
    [
        "zarr_format",
        "node_type",
        "shape",
        "data_type",
        "chunk_grid",
        "chunk_key_encoding",
        "fill_value",
        "codecs",
        "attributes",
        "dimension_names",
        "storage_transformers",
        "name",
        "configuration",
        "chunk_shape",
        "separator",
        "endian",
        "order",
        "level",
        "index_codecs",
        "index_location",
        "must_understand",
        "chunks",
        "dtype",
        "compressor",
        "filters",
        "id",
        "dimension_separator",
        "consolidated_metadata",
        "metadata",
        "kind",
        "extensions",
        "chunk_memory_layout",
        "type",
        "codec",
        "metadata_key_suffix",
    ]
)
_JSON = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(_FIELDS, st.text(max_size=6)), inner, max_size=4),
    ),
    max_leaves=10,
)


def _places(doc: Any, out: list, depth: int = 0) -> list:
    """Every (container, index or key) in a document, to pick one to change."""
    if depth > 40:
        return out
    if isinstance(doc, dict):
        for k, v in doc.items():
            out.append((doc, k))
            _places(v, out, depth + 1)
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out.append((doc, i))
            _places(v, out, depth + 1)
    return out


def _mutate(draw: Any, doc: Any) -> Any:
    """One change: a leaf tweaked to a value of its kind (most documents stay nearly valid,
    so what is read next gets exercised), or any field replaced, deleted or inserted."""
    places = _places(doc, [])
    containers = [doc] + [c[k] for c, k in places if isinstance(c[k], (dict, list))]
    leaves = [(c, k) for c, k in places if not isinstance(c[k], (dict, list))]
    # (a seeded generator, so that every field is as likely to change: Hypothesis's own
    # draws favour the first, and most changes of `zarr_format` only hide the node)
    pick = random.Random(draw(st.integers(0, 2**32))).choice
    action = draw(st.sampled_from(["tweak"] * 4 + ["replace"] * 2 + ["delete", "insert"]))
    if action == "tweak" and leaves:
        container, key = pick(leaves)
        old = container[key]
        if isinstance(old, bool) or old is None:
            container[key] = draw(_LEAVES)
        elif isinstance(old, (int, float)):
            container[key] = draw(st.one_of(_INTS, st.floats()))
        else:
            container[key] = draw(st.one_of(_WORDS, st.text(max_size=10)))
        return doc
    if action == "insert" or not places:
        target = pick(containers) if isinstance(doc, (dict, list)) else None
        if isinstance(target, dict):
            target[draw(_FIELDS | st.text(max_size=6))] = draw(_JSON)
        elif isinstance(target, list):
            target.insert(draw(st.integers(0, len(target))), draw(_JSON))
        else:
            return draw(_JSON)
        return doc
    container, key = pick(places)
    if action == "delete":
        del container[key]
    else:
        container[key] = draw(_JSON)
    return doc


def _raw_mutation(draw: Any, raw: bytes) -> bytes:
    how = draw(st.sampled_from(["cut", "byte", "nest", "text"]))
    at = draw(st.integers(0, len(raw)))
    if how == "cut":
        return raw[:at]
    if how == "byte":
        return raw[:at] + bytes([draw(st.integers(0, 255))]) + raw[at + 1 :]
    if how == "nest":  # a value nested far deeper than any reader recurses
        depth = draw(st.sampled_from([150, 250, 1000, 100_000]))
        doc = json.loads(raw)
        place = draw(st.sampled_from(_places(doc, []) or [(doc, "attributes")]))
        place[0][place[1]] = "@@"
        return json.dumps(doc).replace('"@@"', "[" * depth + "]" * depth).encode()
    return raw[:at] + draw(st.text(max_size=4)).encode("utf-8", "surrogatepass") + raw[at:]


@st.composite
def mutated_hierarchies(draw: Any) -> tuple[str, str, dict[str, bytes], list[str]]:
    """(seed name, mutated key, the store's files after the mutation, node paths)."""
    seeds = _seeds()
    name = draw(st.sampled_from(sorted(seeds)))
    files, paths = seeds[name]
    files = dict(files)
    key = draw(st.sampled_from(sorted(k for k in files if _is_document(k))))
    if draw(st.integers(0, 5)) == 0:
        files[key] = _raw_mutation(draw, files[key])
    else:
        doc = json.loads(files[key])
        for _ in range(draw(st.integers(1, 3))):
            doc = _mutate(draw, doc)
        files[key] = json.dumps(doc).encode()
    return name, key, files, paths


# -- using what was opened -----------------------------------------------------------------------
def _attempt(action: Any) -> Any:
    """Run one user action: a zarrkit error is an answer, anything else fails the test."""
    try:
        return action()
    except ZarrkitError:
        return None


def _use_array(a: Any) -> None:
    for name in (
        "shape",
        "dtype",
        "size",
        "nbytes",
        "nchunks",
        "chunks",
        "shards",
        "cdata_shape",
        "fill_value",
        "read_only",
        "dimension_names",
    ):
        _attempt(functools.partial(getattr, a, name))
    _attempt(lambda: str(a.info))
    _attempt(lambda: a.attrs.asdict())
    shape = a.shape
    if 0 in shape:
        _attempt(lambda: a[...])
        return
    first, last = (0,) * len(shape), tuple(n - 1 for n in shape)
    _attempt(lambda: a[first])
    _attempt(lambda: a[last])
    _attempt(lambda: a[tuple(slice(max(0, n - 3), n) for n in shape)])
    if shape:
        _attempt(lambda: a.oindex[([0, shape[0] - 1],) + (0,) * (len(shape) - 1)])
        _attempt(lambda: a.vindex[tuple([0, n - 1] for n in shape)])
        _attempt(lambda: a.blocks[(0,) * len(shape)] if _chunk_bytes(a) <= WRITE_BYTES else None)
    if math.prod(shape) <= READ_ALL:
        _attempt(lambda: a[...])
    if not a.read_only and _chunk_bytes(a) <= WRITE_BYTES:
        value = _attempt(lambda: a[first])
        if value is not None:
            _attempt(lambda: a.__setitem__(first, value))
        _attempt(lambda: a.attrs.__setitem__("fuzzed", [1, "two"]))


def _chunk_bytes(a: Any) -> int:
    """Bytes of the biggest chunk (or shard) a write would build."""
    shape = a.metadata.chunk_grid.uniform_chunk_shape
    if shape is None:
        return WRITE_BYTES + 1
    return math.prod(shape) * max(1, a.dtype.itemsize)


def _use_group(g: Any) -> None:
    _attempt(lambda: g.attrs.asdict())
    names = _attempt(g.keys) or []
    _attempt(g.tree)
    _attempt(lambda: "a" in g)
    for name in names[:4]:
        node = _attempt(functools.partial(g.__getitem__, name))
        if isinstance(node, zk.Array):
            _use_array(node)


def _use(store: Any, paths: list[str]) -> None:
    for path in paths:
        node = _attempt(functools.partial(zk.open, store, path=path, mode="r+"))
        if isinstance(node, zk.Array):
            _use_array(node)
        elif node is not None:
            _use_group(node)
    _attempt(lambda: zk.open_consolidated(store))
    _attempt(lambda: zk.consolidate_metadata(store))


@FUZZ
@given(case=mutated_hierarchies())
def test_mutated_metadata_gives_only_zarrkit_errors(case):
    _name, _key, files, paths = case
    store = MemoryStore()
    store.set_many(files)
    _use(store, paths)


# -- names and paths ---------------------------------------------------------------------------
_NAME_PARTS = st.one_of(
    st.text(min_size=1, max_size=12),
    st.text(alphabet=st.characters(codec="utf-8"), min_size=200, max_size=300),
    st.sampled_from(
        [
            "zarr.json",
            ".zarray",
            ".zgroup",
            ".zattrs",
            ".zmetadata",
            ".",
            "..",
            "__x",
            "c",
            "meta",
            "data",
            "\\",
            "\x00",
            " ",
            "é" * 128,
            "\ud800",
            "a" * 255,
            "a" * 256,
        ]
    ),
)
_PATHS = st.one_of(
    _NAME_PARTS,
    st.lists(_NAME_PARTS, min_size=1, max_size=4).map("/".join),
    st.builds(lambda a, b: f"/{a}//{b}/", _NAME_PARTS, _NAME_PARTS),
)


@FUZZ
@given(path=_PATHS, fmt=st.sampled_from([3, 2, DRAFT]), local=st.booleans())
def test_fuzzed_node_names_give_only_zarrkit_errors(path, fmt, local):
    with tempfile.TemporaryDirectory() as tmp:
        store = LocalStore(f"{tmp}/s", mode="w") if local else MemoryStore()
        root = zk.create_group(store, zarr_format=fmt)
        created = _attempt(lambda: root.create_array(path, shape=(2,), dtype="u1"))
        if created is not None:
            created[:] = 4
            assert zk.open_array(store, path=created.path)[:].tolist() == [4, 4]
            assert root[path].path == created.path
        _attempt(lambda: root.create_group(path, overwrite=True))
        _attempt(lambda: root[path])
        _attempt(lambda: path in root)
        _attempt(lambda: zk.open(store, path=path, mode="r"))
        _attempt(lambda: zk.create_group(store, path=path, zarr_format=fmt))
        _attempt(root.tree)


# -- what the fuzzers found, kept as plain tests ---------------------------------------------
def test_a_consolidated_member_with_an_unhashable_zarr_format_is_a_metadata_error():
    store = MemoryStore()
    g = zk.create_group(store)
    g.create_array("a", shape=(2,), dtype="u1")
    zk.consolidate_metadata(store)
    doc = json.loads(store.get("zarr.json"))
    doc["consolidated_metadata"]["metadata"]["a"]["zarr_format"] = {}
    store.set("zarr.json", json.dumps(doc).encode())
    group = zk.open_group(store)
    try:
        group["a"]
    except ZarrkitError as exc:
        assert "zarr_format" in str(exc) and "consolidated metadata" in str(exc)
    else:
        raise AssertionError("a member with zarr_format {} was opened")


def test_a_name_with_a_lone_surrogate_is_refused_by_every_store(tmp_path):
    for store in (MemoryStore(), LocalStore(tmp_path / "s", mode="w")):
        root = zk.create_group(store)
        for call in (
            functools.partial(root.create_group, "a\ud800"),
            functools.partial(root.__getitem__, "a\ud800"),
            functools.partial(store.set, "k\udcff/zarr.json", b"{}"),
        ):
            try:
                call()
            except ZarrkitError as exc:
                assert "surrogate" in str(exc)
            else:
                raise AssertionError("a lone surrogate was accepted")
        assert "a\ud800" not in root and root.keys() == []


def test_blosc_sizes_beyond_a_c_int_are_metadata_errors():
    # found by the fuzzer: numcodecs raised OverflowError on the first write (blocksize 2**31)
    for fmt, field in [(3, "blocksize"), (3, "typesize"), (DRAFT, "blocksize")]:
        store = MemoryStore()
        zk.create_array(
            store,
            shape=(4,),
            dtype="f4",
            zarr_format=fmt,
            **(
                {
                    "codecs": [
                        {"name": "bytes"},
                        {
                            "name": "blosc",
                            "configuration": {
                                "cname": "lz4",
                                "clevel": 5,
                                "shuffle": "shuffle",
                                "typesize": 4,
                                "blocksize": 0,
                            },
                        },
                    ]
                }
                if fmt == 3
                else {"compressor": "blosc"}
            ),
        )
        key = "zarr.json" if fmt == 3 else "meta/root.array.json"
        doc = json.loads(store.get(key))
        codec = doc["codecs"][1] if fmt == 3 else doc["compressor"]
        codec["configuration"][field] = 2**31
        store.set(key, json.dumps(doc).encode())
        try:
            zk.open_array(store, mode="r+")[:] = 1
        except ZarrkitError as exc:
            assert field in str(exc) and "2**31 - 1" in str(exc)
        else:
            raise AssertionError(f"a blosc {field} of 2**31 was accepted")
