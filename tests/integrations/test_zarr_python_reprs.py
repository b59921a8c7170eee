"""zarr-python's printed forms of arrays, groups, stores and codecs, run unchanged against
`zarr` and `zarrkit`: each script returns the texts it would print, and both must be equal,
except for the number in `memory://<id>` (the id of a dict, which differs by run)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import zarrkit

zarr = pytest.importorskip("zarr")

pytestmark = [pytest.mark.interop, pytest.mark.filterwarnings("ignore:::zarr")]

_ID = re.compile(r"memory://\d+")


def _same(script: Callable[[Any, Path], list[str]], tmp_path: Path) -> list[str]:
    texts = []
    for zk in (zarr, zarrkit):
        folder = tmp_path / zk.__name__
        folder.mkdir()
        out = script(zk, folder)
        texts.append([_ID.sub("memory://ID", t.replace(str(folder), "<tmp>")) for t in out])
    theirs, ours = texts
    assert ours == theirs
    return ours


def test_array_and_group_reprs(tmp_path: Path) -> None:
    def script(zk: Any, folder: Path) -> list[str]:
        a = zk.create_array({}, shape=(2,), dtype="i4")
        root = zk.open_group(str(folder), mode="w")
        child = root.create_group("a")
        nested = child.create_array("b", shape=(3, 4), dtype="f8")
        named = zk.create_array(zk.storage.MemoryStore(), name="x/y", shape=(1,), dtype="u1")
        v2 = zk.create_array({}, shape=(2,), dtype="i2", zarr_format=2)
        text = zk.create_array({}, shape=(2,), dtype=str)
        return [
            repr(a),
            str(a),
            repr(zk.create_group({})),
            str(zk.group()),
            repr(root),
            repr(child),
            repr(nested),
            repr(named),
            repr(v2),
            repr(text),
        ]

    texts = _same(script, tmp_path)
    assert texts[0] == "<Array memory://ID shape=(2,) dtype=int32>"
    assert texts[6] == "<Array file://<tmp>/a/b shape=(3, 4) dtype=float64>"


def test_store_reprs(tmp_path: Path) -> None:
    def script(zk: Any, folder: Path) -> list[str]:
        local = zk.storage.LocalStore(str(folder))
        memory = zk.storage.MemoryStore()
        archive = zk.storage.ZipStore(str(folder / "x.zip"), mode="w")
        texts = [repr(local), str(local), repr(memory), str(memory), repr(archive), str(archive)]
        archive.close()
        return texts

    texts = _same(script, tmp_path)
    assert texts[:2] == ["LocalStore('file://<tmp>')", "file://<tmp>"]


def test_codec_reprs(tmp_path: Path) -> None:
    def script(zk: Any, _: Path) -> list[str]:
        c = zk.codecs
        made = [
            c.GzipCodec(level=1),
            c.BytesCodec(),
            c.BytesCodec(endian="big"),
            c.ZstdCodec(level=3, checksum=True),
            c.TransposeCodec(order=(1, 0)),
            c.Crc32cCodec(),
            c.VLenUTF8Codec(),
            c.VLenBytesCodec(),
            c.numcodecs.Zlib(level=1),
            c.numcodecs.Delta(dtype="<i4"),
            c.numcodecs.Shuffle(elementsize=4),
        ]
        a = zk.create_array({}, shape=(4,), dtype="i4", compressors=c.BloscCodec(cname="lz4"))
        return [repr(x) for x in made] + [repr(a.compressors), repr(a.serializer)]

    _same(script, tmp_path)


def test_difference_unevolved_blosc_shows_none() -> None:
    """A `BloscCodec()` not yet given to an array: zarr-python shows placeholders for the
    fields still to be chosen (`typesize=1, shuffle='bitshuffle'`), zarrkit shows None."""
    assert repr(zarrkit.codecs.BloscCodec(cname="lz4")) == (
        "BloscCodec(_tunable_attrs={'shuffle', 'typesize'}, typesize=None, cname='lz4', "
        "clevel=5, shuffle=None, blocksize=0)"
    )
    theirs = repr(zarr.codecs.BloscCodec(cname="lz4"))
    assert "typesize=1," in theirs and "shuffle='bitshuffle'" in theirs


def test_difference_sharding_has_no_subchunk_write_order() -> None:
    kw: dict[str, Any] = {"chunk_shape": (2,)}
    ours = repr(zarrkit.codecs.ShardingCodec(**kw))
    theirs = repr(zarr.codecs.ShardingCodec(**kw))
    assert theirs == ours[:-1] + ", subchunk_write_order='morton')"


def test_difference_dict_store_repr_names_its_class() -> None:
    """A dict given as a store: zarr-python keeps it in a MemoryStore, zarrkit in its
    MappingStore; both print the same URL for it."""
    d: dict[str, Any] = {}
    assert repr(zarrkit.storage.MemoryStore(d)) == f"MappingStore('memory://{id(d)}')"
    assert repr(zarr.storage.MemoryStore(d)) == f"MemoryStore('memory://{id(d)}')"
