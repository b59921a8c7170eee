"""The pluggy hooks a plugin distribution can implement, each exercised by a real (fake-installed)
hook plugin distribution."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

import zarrkit as zk
from zarrkit.errors import UnknownExtensionError

HOOKS = textwrap.dedent("""
    from zarrkit.hooks import hookimpl

    @hookimpl
    def zarrkit_open_store(url, options):
        if url.startswith("scratch://"):
            from zarrkit.plugins.stores.memory import MemoryStore
            return MemoryStore.from_url("memory://" + url[len("scratch://"):], mode=options["mode"])
        return None

    @hookimpl
    def zarrkit_metadata_loaded(node):
        if node.attrs.get("embargoed"):
            raise PermissionError(f"{node.name} is under embargo")
""")


@pytest.fixture
def hook_plugin(fake_distribution):
    fake_distribution(
        "zarrkit-site-policy",
        entry_points={"zarrkit.plugins": {"policy": "site_policy"}},
        modules={"site_policy": HOOKS},
    )


def test_open_store_hook_serves_a_scheme_no_store_plugin_claims(hook_plugin):
    a = zk.create_array("scratch://hooks-demo", shape=(4,), chunks=(2,), dtype="int16")
    a[:] = [1, 2, 3, 4]
    again = zk.open_array("scratch://hooks-demo")
    assert again[:].tolist() == [1, 2, 3, 4]


def test_without_the_hook_an_unknown_scheme_is_refused_by_name():
    with pytest.raises(UnknownExtensionError) as info:
        zk.open_array("scratch://nothing-here")
    assert (info.value.kind, info.value.name) == ("store", "scratch")


def test_metadata_loaded_hook_can_refuse_a_node(hook_plugin, tmp_path):
    root = zk.open_group(str(tmp_path / "h.zarr"), mode="w")
    root.create_array("open", shape=(2,), chunks=(2,), dtype="uint8")
    root.create_array(
        "secret", shape=(2,), chunks=(2,), dtype="uint8", attributes={"embargoed": True}
    )
    assert zk.open_array(str(tmp_path / "h.zarr"), path="open")[:].tolist() == [0, 0]
    with pytest.raises(PermissionError, match="embargo"):
        zk.open_array(str(tmp_path / "h.zarr"), path="secret")


SITE_DEFAULTS = textwrap.dedent("""
    from zarrkit.hooks import hookimpl

    @hookimpl
    def zarrkit_array_defaults(format, data_type, chunk_shape):
        return {"codecs": ["bytes", {"name": "gzip", "configuration": {"level": 9}}],
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunk_shape)}},
                "chunk_key_encoding": {"name": "v2", "configuration": {"separator": "."}}}
""")


def test_array_defaults_come_from_plugins_and_a_site_plugin_can_change_them(
    fake_distribution, tmp_path
):
    import json

    plain = zk.create_array(str(tmp_path / "plain.zarr"), shape=(4,), chunks=(2,), dtype="uint8")
    doc = json.loads((tmp_path / "plain.zarr/zarr.json").read_text())
    assert [c["name"] for c in doc["codecs"]] == ["bytes", "zstd"]
    assert doc["chunk_key_encoding"]["name"] == "default"
    plain[:] = [1, 2, 3, 4]

    fake_distribution(
        "site-zarr-defaults",
        entry_points={"zarrkit.plugins": {"site": "site_defaults"}},
        modules={"site_defaults": SITE_DEFAULTS},
    )
    site = zk.create_array(str(tmp_path / "site.zarr"), shape=(4,), chunks=(2,), dtype="uint8")
    site[:] = [1, 2, 3, 4]
    doc = json.loads((tmp_path / "site.zarr/zarr.json").read_text())
    assert doc["codecs"][1] == {"name": "gzip", "configuration": {"level": 9}}
    assert (tmp_path / "site.zarr/1").exists()  # v2 key encoding: chunk 1 is "1"
    assert zk.open_array(str(tmp_path / "site.zarr"))[:].tolist() == [1, 2, 3, 4]


SITE_SHARDS = textwrap.dedent("""
    from zarrkit.hooks import hookimpl

    @hookimpl
    def zarrkit_shard_codecs(format, shard_shape, chunk_shape, codecs, options):
        # this site keeps shard indexes at the start, for readers that fetch the head first
        return [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": list(chunk_shape), "codecs": [c.to_json() for c in codecs],
            "index_codecs": [{"name": "bytes"}, {"name": "crc32c"}],
            "index_location": options.get("index_location", "start")}}]
""")


def test_shards_come_from_a_plugin_and_a_site_plugin_can_change_them(fake_distribution, tmp_path):
    import json

    def index_location(name):
        doc = json.loads((tmp_path / name / "zarr.json").read_text())
        return doc["codecs"][0]["configuration"]["index_location"]

    data = np.arange(64, dtype="uint8").reshape(8, 8)
    zk.create_array(
        str(tmp_path / "plain"), shape=(8, 8), chunks=(2, 2), shards=(4, 4), dtype="uint8"
    )[...] = data
    assert index_location("plain") == "end"
    fake_distribution(
        "site-zarr-shards",
        entry_points={"zarrkit.plugins": {"site": "site_shards"}},
        modules={"site_shards": SITE_SHARDS},
    )
    zk.create_array(
        str(tmp_path / "site"), shape=(8, 8), chunks=(2, 2), shards=(4, 4), dtype="uint8"
    )[...] = data
    assert index_location("site") == "start"
    for name in ("plain", "site"):
        a = zk.open_array(str(tmp_path / name))
        assert (a.chunks, a.shards) == ((2, 2), (4, 4))
        np.testing.assert_array_equal(a[...], data)
