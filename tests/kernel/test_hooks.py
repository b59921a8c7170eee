"""The pluggy hooks a plugin distribution can implement, each exercised by a real (fake-installed)
hook plugin distribution, and how hook plugins that cannot work are reported.

Serving a URL scheme no store claims and refusing nodes on open were hooks until 0.2
(`zarrkit_open_store`, `zarrkit_metadata_loaded`); they are store entry points now, tested in
test_plugin_distribution.py."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

import zarrkit as zk
from zarrkit import hooks, registry
from zarrkit.errors import UnknownExtensionError

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
        entry_points={"zarrkit.hooks": {"site": "site_defaults"}},
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
        entry_points={"zarrkit.hooks": {"site": "site_shards"}},
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


def test_each_hook_has_a_first_party_implementer() -> None:
    """As pytest's own hooks each have a built-in user: a hook nobody in zarrkit answers is a
    promise nothing keeps working."""
    specs = {name for name in vars(hooks.HookSpecs) if name.startswith("zarrkit_")}
    answered = {
        name
        for name in specs
        for impl in getattr(hooks.manager().hook, name).get_hookimpls()
        if impl.plugin.__name__.startswith("zarrkit.plugins.")
    }
    assert (
        specs
        == answered
        == {
            "zarrkit_install_hint",
            "zarrkit_array_defaults",
            "zarrkit_shard_codecs",
        }
    )


def test_install_hint_is_first_party_and_names_no_shipped_extension() -> None:
    """`sharding_indexed` ships: no hint may call it missing; an extension zarrkit does not ship
    yet gets the hint."""
    assert registry.lookup("codec", "sharding_indexed").__name__ == "ShardingCodec"
    assert hooks.install_hint("codec", "sharding_indexed", "v3") is None
    with pytest.raises(UnknownExtensionError, match="does not ship yet"):
        registry.lookup("codec", "squeeze")


LEGACY_HINTS = textwrap.dedent("""
    from zarrkit.hooks import hookimpl

    @hookimpl
    def zarrkit_install_hint(kind, name, format):
        return "pip install zarrkit-legacy-hints" if name == "legacy.thing" else None
""")


def test_the_group_named_before_0_2_is_still_read_with_a_deprecation_warning(fake_distribution):
    fake_distribution(
        "zarrkit-legacy-hints",
        entry_points={hooks.LEGACY_GROUP: {"legacy": "legacy_hints"}},
        modules={"legacy_hints": LEGACY_HINTS},
    )
    with pytest.warns(DeprecationWarning, match="'zarrkit.hooks'") as caught:
        with pytest.raises(UnknownExtensionError, match="pip install zarrkit-legacy-hints"):
            registry.lookup("codec", "legacy.thing")
    (message,) = [str(w.message) for w in caught if w.category is DeprecationWarning]
    assert "zarrkit-legacy-hints" in message and "'zarrkit.plugins'" in message


REMOVED_HOOK = textwrap.dedent("""
    from zarrkit.hooks import hookimpl

    @hookimpl
    def zarrkit_open_store(url, options):
        return None

    @hookimpl
    def zarrkit_install_hint(kind, name, format):
        return "never asked: this plugin is skipped whole"
""")


def test_a_hook_plugin_implementing_a_removed_hook_is_skipped_and_says_what_replaced_it(
    fake_distribution,
):
    fake_distribution(
        "zarrkit-old-site",
        entry_points={hooks.GROUP: {"oldsite": "old_site"}},
        modules={"old_site": REMOVED_HOOK},
    )
    with pytest.warns(RuntimeWarning, match="zarrkit_open_store") as caught:
        with pytest.raises(UnknownExtensionError) as info:
            zk.open_array("nosuchscheme://x")
    assert "never asked" not in str(info.value)
    assert "zarrkit-old-site" in str(info.value) and "zarrkit.stores" in str(info.value)
    (message,) = [str(w.message) for w in caught if "zarrkit_open_store" in str(w.message)]
    assert "no longer asks" in message
