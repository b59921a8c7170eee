"""The pluggy hooks a plugin distribution can implement, each exercised by a real (fake-installed)
hook plugin distribution."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

import zarrkit as zk
from zarrkit.errors import UnknownExtensionError

HOOKS = textwrap.dedent('''
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
''')


@pytest.fixture
def hook_plugin(fake_distribution):
    fake_distribution("zarrkit-site-policy", entry_points={"zarrkit.plugins": {"policy": "site_policy"}},
                      modules={"site_policy": HOOKS})


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
    root.create_array("secret", shape=(2,), chunks=(2,), dtype="uint8", attributes={"embargoed": True})
    assert zk.open_array(str(tmp_path / "h.zarr"), path="open")[:].tolist() == [0, 0]
    with pytest.raises(PermissionError, match="embargo"):
        zk.open_array(str(tmp_path / "h.zarr"), path="secret")
