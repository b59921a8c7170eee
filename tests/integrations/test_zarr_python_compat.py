"""A zarr-python 3 user's calls, run unchanged against `zarr` and `zarrkit`: each script below
takes the module as `zk` and a fresh folder, and both runs must agree on what the calls return
(values, shapes, dtypes, chunks, attributes, codecs), on the files written (every metadata
document JSON-equal, the same chunk keys) and on refusals (both raise). Where zarrkit differs on
purpose the script says so and docs/zarr-python.md says why.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numcodecs
import numpy as np
import pytest

import zarrkit

zarr = pytest.importorskip("zarr")

#: zarr-python's own warnings ("consolidated metadata is not in the spec", "order has no
#: effect for v3") are about zarr-python, not about what is compared here
pytestmark = [pytest.mark.interop, pytest.mark.filterwarnings("ignore:::zarr")]

METADATA = frozenset({"zarr.json", ".zarray", ".zgroup", ".zattrs", ".zmetadata"})


# -- what is compared -----------------------------------------------------------------------------
def codec_json(codec: Any, fmt: str = "v3") -> Any:
    """A codec of either library as JSON (zarr-python's v3 codecs, numcodecs', zarrkit's)."""
    if codec is None:
        return None
    if hasattr(codec, "written_name"):  # zarrkit
        return codec.to_json(fmt)
    if hasattr(codec, "to_dict"):
        return codec.to_dict()
    return codec.get_config()


def array_facts(a: Any) -> dict[str, Any]:
    """What a user reads off an array, in plain values."""
    v2 = getattr(a.metadata, "zarr_format", None) == 2 or getattr(a.metadata, "format", "") == "v2"
    fmt = "v2" if v2 else "v3"
    return {
        "shape": tuple(a.shape),
        "dtype": np.dtype(a.dtype).str,
        "chunks": tuple(a.chunks),
        "shards": None if a.shards is None else tuple(a.shards),
        "fill_value": np.asarray(a.fill_value).tolist(),
        "attrs": dict(a.attrs),
        "ndim": a.ndim,
        "size": a.size,
        "nbytes": a.nbytes,
        "nchunks": a.nchunks,
        "cdata_shape": tuple(a.cdata_shape),
        "order": a.order,
        "read_only": a.read_only,
        "filters": [codec_json(c, fmt) for c in a.filters],
        "serializer": codec_json(a.serializer, fmt),
        "compressors": [codec_json(c, fmt) for c in a.compressors],
        "values": np.asarray(a[...]),
        "name": a.name.rstrip("/") or "/",
        "basename": a.basename,
    }


def stored(root: Path) -> dict[str, Any]:
    """Every metadata document (parsed) and the set of other keys under `root`. One
    difference on purpose is left out (docs/zarr-python.md): zarr-python writes
    an empty `.zattrs` beside every v2 node; zarrkit leaves it out, as the spec allows."""
    docs: dict[str, Any] = {}
    keys = set()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        key = path.relative_to(root).as_posix()
        if path.name in METADATA:
            doc = json.loads(path.read_text())
            if path.name == ".zattrs" and doc == {}:
                continue
            docs[key] = _without_empty(doc)
        else:
            keys.add(key)
    return {"documents": docs, "chunk_keys": keys}


def _without_empty(doc: Any) -> Any:
    """Consolidated metadata holds documents too: the same differences inside it. And a v2
    zstd compressor: zarrkit writes numcodecs' own `get_config()` (`"checksum": false`
    included), zarr-python 3.4.2 its default without it; both read the same."""
    if isinstance(doc, dict):
        if doc.get("id") == "zstd" and doc.get("checksum") is False:
            doc = {k: v for k, v in doc.items() if k != "checksum"}
        out = {}
        for key, value in doc.items():
            if key.endswith(".zattrs") and value == {}:
                continue
            out[key] = _without_empty(value)
        return out
    return doc


def plain(value: Any) -> Any:
    """A result with arrays and nodes turned into comparable values."""
    if isinstance(value, (zarr.Array, zarrkit.Array)):
        return array_facts(value)
    if isinstance(value, (zarr.Group, zarrkit.Group)):
        return {"group": value.name.rstrip("/") or "/", "attrs": dict(value.attrs)}
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def assert_same(left: Any, right: Any, where: str = "result") -> None:
    if isinstance(left, np.ndarray) or isinstance(right, np.ndarray):
        a, b = np.asarray(left), np.asarray(right)
        assert a.dtype == b.dtype, f"{where}: dtype {a.dtype} != {b.dtype}"
        np.testing.assert_array_equal(a, b, err_msg=where)
        return
    if isinstance(left, dict) and isinstance(right, dict):
        assert left.keys() == right.keys(), f"{where}: keys {sorted(left)} != {sorted(right)}"
        for key in left:
            assert_same(left[key], right[key], f"{where}.{key}")
        return
    if isinstance(left, (list, tuple)) and isinstance(right, (list, tuple)):
        assert len(left) == len(right), f"{where}: {left!r} != {right!r}"
        for i, (a, b) in enumerate(zip(left, right)):
            assert_same(a, b, f"{where}[{i}]")
        return
    if isinstance(left, tuple) or isinstance(right, tuple):
        assert_same(list(left), list(right), where)
        return
    if isinstance(left, float) and isinstance(right, float) and np.isnan(left):
        assert np.isnan(right), f"{where}: {left!r} != {right!r}"
        return
    assert left == right, f"{where}: {left!r} != {right!r}"


# -- the scripts ----------------------------------------------------------------------------------
Script = Callable[[Any, Path], Any]
SCRIPTS: dict[str, Script] = {}


def script(fn: Script) -> Script:
    SCRIPTS[fn.__name__] = fn
    return fn


DATA = np.arange(100 * 80, dtype="f8").reshape(100, 80)


@script
def create_array_defaults(zk: Any, root: Path) -> Any:
    a = zk.create_array(str(root), shape=(100, 80), dtype="f8")
    a[...] = DATA
    return a


@script
def create_array_with_data(zk: Any, root: Path) -> Any:
    return zk.create_array(str(root), data=DATA.astype("i4"), chunks=(30, 40))


@script
def create_array_named_member(zk: Any, root: Path) -> Any:
    a = zk.create_array(str(root), name="g/a", shape=(10,), dtype="u1", fill_value=3)
    a[2:5] = 7
    return a, zk.open_group(str(root), mode="r").attrs.asdict()


@script
def compressors_filters_serializer(zk: Any, root: Path) -> Any:
    a = zk.create_array(
        str(root),
        shape=(100, 80),
        chunks=(25, 20),
        dtype="i2",
        filters=[{"name": "transpose", "configuration": {"order": [1, 0]}}],
        serializer={"name": "bytes", "configuration": {"endian": "big"}},
        compressors=[{"name": "gzip", "configuration": {"level": 3}}],
    )
    a[...] = DATA.astype("i2")
    return a


@script
def compressors_none(zk: Any, root: Path) -> Any:
    a = zk.create_array(str(root), shape=(20,), chunks=(5,), dtype="i8", compressors=None)
    a[:] = np.arange(20)
    return a


@script
def compressors_one_codec_not_a_list(zk: Any, root: Path) -> Any:
    a = zk.create_array(
        str(root),
        shape=(20,),
        chunks=(5,),
        dtype="i8",
        compressors={"name": "zstd", "configuration": {"level": 5, "checksum": True}},
    )
    a[:] = np.arange(20)
    return a


@script
def sharded(zk: Any, root: Path) -> Any:
    a = zk.create_array(str(root), shape=(100, 80), chunks=(10, 10), shards=(50, 40), dtype="f8")
    a[:60] = DATA[:60]
    metadata = len((root / "zarr.json").read_bytes())  # (see `stored`)
    return a, a.nchunks_initialized, a.nbytes_stored() - metadata


@script
def shards_auto(zk: Any, root: Path) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zarr-python: "experimental"
        return zk.create_array(str(root), shape=(4000, 300), shards="auto", dtype="u2")


@script
def chunks_auto_large(zk: Any, root: Path) -> Any:
    a = zk.create_array(str(root / "a"), shape=(10000, 10000), chunks="auto", dtype="f8")
    b = zk.create_array(str(root / "b"), shape=(123, 4567, 3), dtype="i1")
    return a.chunks, b.chunks


@script
def attributes_and_dimension_names(zk: Any, root: Path) -> Any:
    a = zk.create_array(
        str(root),
        shape=(4, 5),
        dtype="f4",
        attributes={"units": "m", "scale": [1, 2]},
        dimension_names=["y", "x"],
        fill_value=np.nan,
    )
    return a, a.metadata.dimension_names


@script
def format_2_defaults(zk: Any, root: Path) -> Any:
    a = zk.create_array(str(root), shape=(30, 30), chunks=(10, 10), dtype="<i4", zarr_format=2)
    a[...] = np.arange(900).reshape(30, 30)
    return a


@script
def format_2_arguments(zk: Any, root: Path) -> Any:
    a = zk.create_array(
        str(root / "a"),
        shape=(30, 30),
        chunks=(10, 10),
        dtype="<f8",
        zarr_format=2,
        compressors=numcodecs.Zlib(level=4),
        filters=[numcodecs.Delta(dtype="<f8")],
        fill_value=-1.5,
    )
    a[5:25, 5:25] = 2.5
    f = zk.create_array(
        str(root / "f"), shape=(30, 20), chunks=(10, 10), dtype="<u2", zarr_format=2, order="F"
    )
    f[...] = np.arange(600).reshape(30, 20)
    return a, f


@script
def write_empty_chunks_config(zk: Any, root: Path) -> Any:
    a = zk.create_array(
        str(root / "a"), shape=(20,), chunks=(5,), dtype="i4", config={"write_empty_chunks": True}
    )
    a[:] = 0
    b = zk.create_array(str(root / "b"), shape=(20,), chunks=(5,), dtype="i4")
    b[:] = 0
    return a.nchunks_initialized, b.nchunks_initialized


@script
def zeros_ones_full_empty(zk: Any, root: Path) -> Any:
    kw: dict[str, Any] = {"chunks": (5, 5), "dtype": "i4"}
    z = zk.zeros((10, 10), store=str(root / "z"), **kw)
    o = zk.ones((10, 10), store=str(root / "o"), **kw)
    f = zk.full((10, 10), 7, store=str(root / "f"), **kw)
    e = zk.empty((10, 10), store=str(root / "e"), **kw)
    return z, o, f, e[...].shape


@script
def create_with_zarr2_spelling(zk: Any, root: Path) -> Any:
    a = zk.create(
        (40,), store=str(root / "a"), chunks=(10,), dtype="u2", compressor=None, zarr_format=2
    )
    a[:] = np.arange(40)
    b = zk.create(
        (40,),
        store=str(root / "b"),
        chunks=(10,),
        dtype="u2",
        codecs=[{"name": "bytes", "configuration": {"endian": "little"}}],
    )
    b[:] = np.arange(40)
    return a, b


@script
def array_from_numpy(zk: Any, root: Path) -> Any:
    return zk.array(DATA[:20, :30], store=str(root), chunks=(10, 10))


@script
def like_functions(zk: Any, root: Path) -> Any:
    a = zk.create_array(str(root / "a"), shape=(12, 8), chunks=(4, 4), dtype="i2", fill_value=5)
    return (
        zk.zeros_like(a, store=str(root / "z")),
        zk.ones_like(a, store=str(root / "o")),
        zk.full_like(a, store=str(root / "f"), fill_value=9),
        zk.empty_like(a, store=str(root / "e")),
        zk.zeros_like(np.ones((3, 4), dtype="f4"), store=str(root / "n")),
    )


@script
def open_like_creates(zk: Any, root: Path) -> Any:
    a = zk.create_array(str(root / "a"), shape=(12, 8), chunks=(4, 4), dtype="i2")
    return zk.open_like(a, "b"), zk.open_like(a, "c", store=str(root / "c"))


@script
def from_array_keeps_layout(zk: Any, root: Path) -> Any:
    src = zk.create_array(
        str(root / "src"), shape=(40, 30), chunks=(10, 15), dtype="i8", attributes={"a": 1}
    )
    src[...] = np.arange(1200).reshape(40, 30)
    return zk.from_array(str(root / "dst"), data=src)


@script
def save_and_load_one_array(zk: Any, root: Path) -> Any:
    zk.save(str(root), np.arange(50, dtype="i2").reshape(5, 10))
    return zk.load(str(root))


@script
def save_a_group(zk: Any, root: Path) -> Any:
    zk.save(str(root), np.arange(5), np.ones(3), extra=np.zeros((2, 2), dtype="u1"))
    # zarr-python 3.4.2's `load` of a group raises NotImplementedError; zarrkit's answers a
    # dict (docs/zarr-python.md), so the group is read member by member here
    group = zk.open_group(str(root), mode="r")
    return {name: np.asarray(group[name][...]) for name in sorted(group)}


@script
def save_array_and_group(zk: Any, root: Path) -> Any:
    zk.save_array(str(root / "a"), np.arange(6.0))
    zk.save_group(str(root / "g"), first=np.arange(3), second=np.arange(4.0))
    return zk.open_array(str(root / "a"), mode="r"), sorted(zk.open_group(str(root / "g")))


@script
def groups_and_members(zk: Any, root: Path) -> Any:
    g = zk.open_group(str(root), mode="w", attributes={"title": "t"})
    sub = g.create_group("sub", attributes={"k": 1})
    sub.create_array("x", shape=(3,), dtype="i1")
    g.create_array("y", data=np.arange(4, dtype="u2"), chunks=(2,))
    again = g.require_group("sub")
    same = g.require_array("y", shape=(4,), dtype="u2")
    deep = g.require_group("deep").require_group("er")
    return (
        g,
        again,
        same,
        deep,
        sorted(name for name, _ in g.members(max_depth=None)),
        sorted(name for name, _ in g.members()),
        sorted(g.array_keys()),
        sorted(g.group_keys()),
        "y" in g,
        "nope" in g,
    )


@script
def group_function(zk: Any, root: Path) -> Any:
    g = zk.group(store=str(root), attributes={"a": 1})
    g.create_array("x", shape=(2,), dtype="f8")
    return g, zk.group(store=str(root)), sorted(zk.open_group(str(root)))


@script
def create_group_and_nested_path(zk: Any, root: Path) -> Any:
    zk.create_group(str(root), path="a/b", attributes={"deep": True})
    return zk.open_group(str(root), path="a/b", mode="r"), zk.open(str(root), mode="r", path="a")


@script
def consolidated(zk: Any, root: Path) -> Any:
    g = zk.open_group(str(root), mode="w")
    g.create_array("x", shape=(3,), dtype="i4", attributes={"u": "m"})
    g.create_group("s").create_array("y", shape=(2, 2), dtype="f4")
    zk.consolidate_metadata(str(root))
    c = zk.open_consolidated(str(root))
    return sorted(name for name, _ in c.members(max_depth=None))


@script
def consolidated_format_2(zk: Any, root: Path) -> Any:
    g = zk.open_group(str(root), mode="w", zarr_format=2)
    # (no default compressor here: zarr-python 3.4.2's Group.create_array writes Blosc for
    # v2 where its zarr.create_array writes Zstd; see docs/zarr-python.md)
    g.create_array("x", shape=(3,), dtype="<i4", chunks=(3,), compressors=numcodecs.Zlib())
    zk.consolidate_metadata(str(root))
    return sorted(zk.open_consolidated(str(root), zarr_format=2))


@script
def open_modes(zk: Any, root: Path) -> Any:
    a = zk.open_array(str(root), mode="w", shape=(6,), chunks=(3,), dtype="i4")
    a[:] = 1
    b = zk.open_array(str(root), mode="r+")
    b[0] = 5
    return zk.open(str(root), mode="r"), zk.open_array(str(root), mode="a")


@script
def resize_and_append(zk: Any, root: Path) -> Any:
    a = zk.create_array(str(root), shape=(5, 4), chunks=(2, 2), dtype="i4")
    a[...] = np.arange(20).reshape(5, 4)
    a.resize((6, 4))
    a.append(np.full((2, 4), 9, dtype="i4"))
    return a


@script
def group_shortcuts_and_update_attributes(zk: Any, root: Path) -> Any:
    g = zk.open_group(str(root), mode="w")
    z = g.zeros(name="z", shape=(6, 4), chunks=(3, 2))
    o = g.ones(name="o", shape=(5,), dtype="u1")
    f = g.full(name="f", shape=(3,), fill_value=2.5)
    zl = g.zeros_like(name="zl", data=o)
    g.update_attributes({"a": 1}).update_attributes({"b": [2]})
    z.update_attributes({"units": "m"})
    return z, o, f, zl, g


@script
def memory_order_config(zk: Any, root: Path) -> Any:
    a = zk.create_array(str(root), shape=(6, 4), chunks=(3, 2), dtype="i4", config={"order": "F"})
    a[...] = np.arange(24).reshape(6, 4)
    values = a[...]
    return a.order, values.flags.f_contiguous, values


@script
def tree_text(zk: Any, root: Path) -> Any:
    g = zk.open_group(str(root), mode="w")
    g.create_group("a").create_group("b").create_array("c", shape=(2, 3), dtype="i1")
    g.create_array("d", shape=(4,), dtype="f8")
    return str(g.tree()), str(g.tree(level=1))


@script
def array_introspection(zk: Any, root: Path) -> Any:
    a = zk.create_array(str(root / "a"), shape=(40, 30), chunks=(10, 10), dtype="i4")
    a[:15] = 1
    b = zk.create_array(
        str(root / "b"), shape=(40, 30), chunks=(10, 10), shards=(20, 30), dtype="i4"
    )
    b[:15] = 1
    return [
        (x.nchunks_initialized, x.nchunks, x.info_complete()._count_chunks_initialized)
        if zk is zarr
        else (x.nchunks_initialized, x.nchunks, x.info_complete().chunks_initialized)
        for x in (a, b)
    ]


@script
def group_info_counts(zk: Any, root: Path) -> Any:
    g = zk.open_group(str(root), mode="w")
    g.create_group("a").create_array("b", shape=(1,), dtype="i1")
    g.create_array("c", shape=(1,), dtype="i1")
    info = g.info_complete()
    return info._count_members if zk is zarr else info.count_members


# -- refusals: both must raise --------------------------------------------------------------------
REFUSALS: dict[str, Script] = {}


def refusal(fn: Script) -> Script:
    REFUSALS[fn.__name__] = fn
    return fn


@refusal
def unknown_keyword(zk: Any, root: Path) -> Any:
    return zk.create_array(str(root), shape=(4,), dtype="i4", mode="w")


@refusal
def existing_array_without_overwrite(zk: Any, root: Path) -> Any:
    zk.create_array(str(root), shape=(4,), dtype="i4")
    return zk.create_array(str(root), shape=(4,), dtype="i4")


@refusal
def shards_not_a_multiple_of_chunks(zk: Any, root: Path) -> Any:
    return zk.create_array(str(root), shape=(40,), chunks=(10,), shards=(15,), dtype="i4")


@refusal
def open_missing(zk: Any, root: Path) -> Any:
    return zk.open_array(str(root / "missing"), mode="r")


@refusal
def open_array_on_a_group(zk: Any, root: Path) -> Any:
    zk.create_group(str(root))
    return zk.open_array(str(root), mode="r")


@refusal
def write_read_only(zk: Any, root: Path) -> Any:
    zk.create_array(str(root), shape=(4,), dtype="i4")
    a = zk.open_array(str(root), mode="r")
    a[0] = 1


@refusal
def several_compressors_in_format_2(zk: Any, root: Path) -> Any:
    return zk.create_array(
        str(root),
        shape=(4,),
        dtype="i4",
        zarr_format=2,
        compressors=[numcodecs.Zlib(level=1), numcodecs.Zlib(level=2)],
    )


@refusal
def a_compressor_as_a_filter(zk: Any, root: Path) -> Any:
    return zk.create_array(
        str(root), shape=(4,), dtype="i4", filters=[{"name": "gzip", "configuration": {"level": 1}}]
    )


@refusal
def require_array_of_another_shape(zk: Any, root: Path) -> Any:
    g = zk.open_group(str(root), mode="w")
    g.create_array("a", shape=(4,), dtype="i4")
    return g.require_array("a", shape=(5,), dtype="i4")


@refusal
def save_group_with_nothing(zk: Any, root: Path) -> Any:
    return zk.save_group(str(root))


# -- the tests ------------------------------------------------------------------------------------
def run(zk: Any, fn: Script, root: Path) -> tuple[Any, dict[str, Any]]:
    root.mkdir()
    return plain(fn(zk, root)), stored(root)


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_same_calls_same_results_and_files(name: str, tmp_path: Path) -> None:
    fn = SCRIPTS[name]
    theirs, their_files = run(zarr, fn, tmp_path / "zarr")
    ours, our_files = run(zarrkit, fn, tmp_path / "zarrkit")
    assert_same(ours, theirs)
    assert_same(our_files["documents"], their_files["documents"], "documents")
    assert our_files["chunk_keys"] == their_files["chunk_keys"]


@pytest.mark.parametrize("name", sorted(REFUSALS))
def test_same_refusals(name: str, tmp_path: Path) -> None:
    fn = REFUSALS[name]
    for zk in (zarr, zarrkit):
        root = tmp_path / zk.__name__
        root.mkdir()
        with pytest.raises(Exception) as caught:
            fn(zk, root)
        if zk is zarrkit:
            error = caught.value
            assert isinstance(error, zarrkit.errors.ZarrkitError), repr(error)


@pytest.mark.parametrize("zk", [zarr, zarrkit], ids=["zarr", "zarrkit"])
def test_unknown_keyword_names_itself_and_the_nearest(zk: Any, tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="compresors") as caught:
        zk.create_array(str(tmp_path), shape=(4,), dtype="i4", compresors=None)
    if zk is zarrkit:
        assert "did you mean 'compressors'?" in str(caught.value)


# -- the documented differences (docs/zarr-python.md), both sides checked -------------
def test_documented_differences(tmp_path: Path) -> None:
    zstd = {"name": "zstd", "configuration": {"level": 1, "checksum": False}}
    bytes_le = {"name": "bytes", "configuration": {"endian": "little"}}

    # bare codec names: refused by zarr-python, the plugin's defaults in zarrkit
    with pytest.raises(TypeError, match="Expected dict"):
        zarr.create((4,), store=str(tmp_path / "z1"), dtype="i4", codecs=["bytes", "gzip"])
    a = zarrkit.create((4,), store=str(tmp_path / "k1"), dtype="i4", codecs=["bytes", "gzip"])
    assert [c.to_json() for c in a.codecs] == [
        bytes_le,
        {"name": "gzip", "configuration": {"level": 5}},
    ]
    with pytest.raises(zarrkit.errors.MetadataError, match="'order'.*give it as a JSON object"):
        zarrkit.create((4,), store=str(tmp_path / "k1t"), dtype="i4", codecs=["transpose"])

    # codecs= without an array -> bytes codec: refused by zarr-python, `bytes` inserted here
    with pytest.raises(ValueError, match="ArrayBytesCodec"):
        zarr.create((4,), store=str(tmp_path / "z2"), dtype="i4", codecs=[zstd])
    b = zarrkit.create((4,), store=str(tmp_path / "k2"), dtype="i4", codecs=[zstd])
    assert [c.to_json() for c in b.codecs] == [bytes_le, zstd]

    # load of a group
    for zk in (zarr, zarrkit):
        zk.save_group(str(tmp_path / f"{zk.__name__}3"), x=np.arange(3))
    with pytest.raises(NotImplementedError):
        zarr.load(str(tmp_path / "zarr3"))
    loaded = zarrkit.load(str(tmp_path / "zarrkit3"))
    assert list(loaded) == ["x"]
    np.testing.assert_array_equal(loaded["x"], np.arange(3))

    # Group.move
    for zk in (zarr, zarrkit):
        g = zk.open_group(str(tmp_path / f"{zk.__name__}4"), mode="w")
        g.create_group("a").create_array("x", data=np.arange(5), chunks=(2,))
    with pytest.raises(NotImplementedError):
        zarr.open_group(str(tmp_path / "zarr4"), mode="r+").move("a", "b/c")
    moved = zarrkit.open_group(str(tmp_path / "zarrkit4"), mode="r+")
    moved.move("a", "b/c")
    assert sorted(n for n, _ in moved.members(max_depth=None)) == ["b", "b/c", "b/c/x"]
    np.testing.assert_array_equal(moved["b/c/x"][...], np.arange(5))
    assert not (tmp_path / "zarrkit4" / "a").exists()

    # order= on a v3 array: ignored by zarr-python (with a warning), zarrkit's runtime order
    with pytest.warns(RuntimeWarning, match="no effect"):
        c = zarr.create_array(str(tmp_path / "z6"), shape=(2, 2), dtype="i1", order="F")
    d = zarrkit.create_array(str(tmp_path / "k6"), shape=(2, 2), dtype="i1", order="F")
    assert (c.order, d.order) == ("C", "F") and d[...].flags.f_contiguous
    assert json.loads((tmp_path / "z6" / "zarr.json").read_text()) == json.loads(
        (tmp_path / "k6" / "zarr.json").read_text()
    )

    # v2 filters with order "F": written by zarr-python, refused by zarrkit
    v2 = {
        "shape": (4, 4),
        "dtype": "<f8",
        "zarr_format": 2,
        "order": "F",
        "filters": [numcodecs.Delta(dtype="<f8")],
    }
    zarr.create_array(str(tmp_path / "z5"), **v2)
    with pytest.raises(zarrkit.errors.MetadataError, match="order 'F' are not supported"):
        zarrkit.create_array(str(tmp_path / "k5"), **v2)


def test_readme_codecs_example_and_group_create_array_with_data(tmp_path: Path) -> None:
    """What issue 25 found broken: `codecs=["bytes", "gzip"]`, `codecs=["zstd"]`,
    `chunks="auto"` and `group.create_array(name, data=x)`."""
    g = zarrkit.open_group(str(tmp_path), mode="w")
    a = g.create_array("a", data=np.arange(12).reshape(3, 4), codecs=["bytes", "gzip"])
    b = g.create_array("b", shape=(10,), dtype="i4", codecs=["zstd"], chunks="auto")
    np.testing.assert_array_equal(a[...], np.arange(12).reshape(3, 4))
    assert b.chunks == (10,) and [c.to_json()["name"] for c in b.codecs] == ["bytes", "zstd"]
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "a"))[...], a[...])


def test_unknown_keywords_in_every_creating_call(tmp_path: Path) -> None:
    """Never "zarr format 3 takes no arguments ['mode']": each call names the keyword."""
    url = str(tmp_path / "a")
    with pytest.raises(TypeError, match=r"create_array\(\) takes no 'mode': it always creates"):
        zarrkit.create_array(url, shape=(4,), dtype="i4", mode="w")
    with pytest.raises(TypeError, match="'atributes'; did you mean 'attributes'"):
        zarrkit.open_group(url, mode="r", atributes={})
    with pytest.raises(TypeError, match="'chunk'; did you mean 'chunks'"):
        zarrkit.open(url, mode="w", shape=(3,), dtype="i1", chunk=(2,))
    group = zarrkit.open_group(url, mode="w")
    with pytest.raises(TypeError, match="'compresors'; did you mean 'compressors'"):
        group.create_array("x", shape=(2,), dtype="i1", compresors=None)
    with pytest.raises(TypeError, match="'chunk_shap'; did you mean 'chunk_shape'"):
        zarrkit.zeros((3,), store=str(tmp_path / "z"), chunk_shap=(2,))
    with pytest.raises(TypeError, match="'rite_empty_chunks'; did you mean 'write_empty_chunks'"):
        zarrkit.create_array(url, shape=(4,), dtype="i4", config={"rite_empty_chunks": True})
    assert sorted(group) == []  # nothing was written by any of them


def test_runtime_config_belongs_to_the_handle(tmp_path: Path) -> None:
    import pickle

    a = zarrkit.create_array(
        str(tmp_path), shape=(4,), chunks=(2,), dtype="i4", write_empty_chunks=True
    )
    a[:] = 0
    assert a.nchunks_initialized == 2  # chunks equal to the fill value stored anyway
    again = pickle.loads(pickle.dumps(a))
    assert again.config == a.config == zarrkit.ArrayConfig(write_empty_chunks=True)
    plain = zarrkit.open_array(str(tmp_path), mode="r+")
    assert plain.config == zarrkit.ArrayConfig()
    plain[:] = 0
    assert plain.nchunks_initialized == 0  # this handle follows the global setting
    fortran = plain.with_config({"order": "F"})
    assert fortran.order == "F" and plain.order == "C"
