"""A separately installed distribution adds a codec and a data type, the way a third-party
package would: data written with them round-trips, and without them opening fails clearly."""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest

import zarrkit as zk
from zarrkit.errors import UnknownExtensionError

PLUGIN_SOURCE = textwrap.dedent('''
    """A third-party zarrkit plugin: an XOR codec and a BGR colour data type."""
    from dataclasses import dataclass
    import numpy as np
    from zarrkit.abc import BytesBytesCodec, DataType, config_value, names
    from zarrkit.errors import MetadataError


    @dataclass(frozen=True, eq=False)
    class XorCodec(BytesBytesCodec):
        names = names("example.xor", aliases=("xor",))
        key: int = 0

        @classmethod
        def from_json(cls, name, configuration, format="v3"):
            return cls(config_value(configuration, "key", int, owner="example.xor",
                                    choices=tuple(range(256))))

        def configuration(self, format="v3"):
            return {"key": self.key}

        def encode(self, data, spec):
            return (np.frombuffer(data, dtype=np.uint8) ^ self.key).tobytes()

        decode = encode


    class Bgr8(DataType):
        """Three bytes per pixel; the fill value is a web colour string like "#ff8000"."""
        names = names("example.bgr8")
        _native = np.dtype([("b", "u1"), ("g", "u1"), ("r", "u1")])

        @property
        def native(self):
            return self._native

        def default_fill(self):
            return np.zeros((), self._native)[()]

        def fill_from_json(self, value, format="v3"):
            if not (isinstance(value, str) and len(value) == 7 and value[0] == "#"):
                raise MetadataError(f"expected a colour like '#rrggbb', got {value!r}")
            r, g, b = bytes.fromhex(value[1:])
            return np.array((b, g, r), self._native)[()]

        def fill_to_json(self, value, format="v3"):
            v = np.asarray(value, self._native)
            return "#%02x%02x%02x" % (int(v["r"]), int(v["g"]), int(v["b"]))

        def cast_scalar(self, value):
            return np.asarray(value, self._native)[()]
''')

ENTRY_POINTS = {
    "zarrkit.codecs": {"example.xor": "zarrkit_example_plugin:XorCodec"},
    "zarrkit.data_types": {"example.bgr8": "zarrkit_example_plugin:Bgr8"},
}


def _install(fake_distribution):
    return fake_distribution(
        "zarrkit-example-plugin",
        version="0.3",
        entry_points=ENTRY_POINTS,
        modules={"zarrkit_example_plugin": PLUGIN_SOURCE},
    )


def _write_with_plugin(path):
    a = zk.create_array(
        str(path),
        path="img",
        shape=(5, 4),
        chunks=(2, 4),
        dtype="example.bgr8",
        codecs=["bytes", {"name": "example.xor", "configuration": {"key": 90}}],
        fill_value="#ff8000",
    )
    pixels = np.zeros((4, 4), a.dtype)
    pixels["r"] = np.arange(16).reshape(4, 4)
    pixels["g"] = 7
    a[:4] = pixels
    return a, pixels


def test_data_round_trips_through_installed_plugin(tmp_path, fake_distribution):
    _install(fake_distribution)
    _, pixels = _write_with_plugin(tmp_path / "p.zarr")

    back = zk.open_array(str(tmp_path / "p.zarr"), path="img")[:]
    assert back.dtype.names == ("b", "g", "r")
    np.testing.assert_array_equal(back[:4], pixels)
    # row 4 lives in a chunk never written: it reads as the custom fill value
    assert back[4, 0].tolist() == (0x00, 0x80, 0xFF)
    doc = json.loads((tmp_path / "p.zarr/img/zarr.json").read_text())
    assert doc["data_type"] == "example.bgr8"
    assert doc["fill_value"] == "#ff8000"
    assert doc["codecs"][1] == {"name": "example.xor", "configuration": {"key": 90}}


def test_stored_bytes_are_what_the_plugin_codec_made(tmp_path, fake_distribution):
    _install(fake_distribution)
    _, pixels = _write_with_plugin(tmp_path / "p.zarr")
    raw = (tmp_path / "p.zarr/img/c/0/0").read_bytes()
    assert bytes(b ^ 90 for b in raw) == pixels[:2].tobytes()


def test_alias_of_installed_codec_resolves(tmp_path, fake_distribution):
    _install(fake_distribution)
    a = zk.create_array(
        str(tmp_path / "q.zarr"),
        shape=(3,),
        chunks=(3,),
        dtype="uint8",
        codecs=["bytes", {"name": "xor", "configuration": {"key": 1}}],
    )
    a[:] = [1, 2, 3]
    assert zk.open_array(str(tmp_path / "q.zarr"))[:].tolist() == [1, 2, 3]


def test_without_the_plugin_opening_names_the_missing_extension(tmp_path):
    from zarrkit_testing import fake_dist

    site = tmp_path / "site"
    fake_dist.make_distribution(
        site,
        "zarrkit-example-plugin",
        "0.3",
        ENTRY_POINTS,
        {"zarrkit_example_plugin": PLUGIN_SOURCE},
    )
    with fake_dist.installed(site):
        _write_with_plugin(tmp_path / "p.zarr")
    # leaving the block took the distribution off sys.path, as `pip uninstall` would

    with pytest.raises(UnknownExtensionError) as info:
        zk.open_array(str(tmp_path / "p.zarr"), path="img")
    assert info.value.kind == "data_type"
    assert info.value.name == "example.bgr8"
    assert "example.bgr8" in str(info.value) and "zarr.json" in str(info.value)


def test_unknown_codec_alone_is_named(tmp_path, fake_distribution):
    doc = {
        "zarr_format": 3,
        "node_type": "array",
        "shape": [2],
        "data_type": "uint8",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
        "chunk_key_encoding": {"name": "default"},
        "fill_value": 0,
        "codecs": ["bytes", {"name": "example.xor", "configuration": {"key": 3}}],
    }
    (tmp_path / "u.zarr").mkdir()
    (tmp_path / "u.zarr/zarr.json").write_text(json.dumps(doc))
    with pytest.raises(UnknownExtensionError) as info:
        zk.open_array(str(tmp_path / "u.zarr"))
    assert (info.value.kind, info.value.name) == ("codec", "example.xor")
    assert "codecs[1]" in str(info.value) or "example.xor" in str(info.value)

    _install(fake_distribution)
    assert zk.open_array(str(tmp_path / "u.zarr"))[:].tolist() == [0, 0]


# -- stores: what the hooks `zarrkit_open_store` and `zarrkit_metadata_loaded` did until 0.2 -------
STORE_PLUGINS = textwrap.dedent('''
    """A site's store plugins: a scheme of its own, and a policy wrapper refusing nodes."""
    import json

    from zarrkit.abc import names
    from zarrkit.plugins.stores.memory import MemoryStore
    from zarrkit.abc import Store
    from zarrkit.store_opening import open_store


    class ScratchStore(MemoryStore):
        """scratch://name: the in-memory store of that name."""
        names = names("scratch")

        @classmethod
        def from_url(cls, url, *, mode="r", **options):
            return super().from_url("memory://" + url[len("scratch://"):], mode=mode, **options)


    class PolicyStore(Store):
        """policy://<url>: <url>, read-only, without the nodes under embargo."""
        names = names("policy")
        writeable = False
        read_only = True

        def __init__(self, inner):
            self.inner = inner

        @classmethod
        def from_url(cls, url, *, mode="r", **options):
            return cls(open_store(url[len("policy://"):], mode="r", storage_options=options))

        def get(self, key, byte_range=None):
            value = self.inner.get(key, byte_range)
            if value is not None and key.rpartition("/")[2] == "zarr.json" and byte_range is None:
                if json.loads(value).get("attributes", {}).get("embargoed"):
                    raise PermissionError(f"{key.rpartition('/')[0]} is under embargo")
            return value

        def list(self):
            return self.inner.list()
''')

STORE_ENTRY_POINTS = {
    "zarrkit.stores": {"scratch": "site_stores:ScratchStore", "policy": "site_stores:PolicyStore"}
}


@pytest.fixture
def site_stores(fake_distribution):
    fake_distribution(
        "zarrkit-site-stores",
        entry_points=STORE_ENTRY_POINTS,
        modules={"site_stores": STORE_PLUGINS},
    )


def test_a_store_plugin_serves_a_scheme_of_its_own(site_stores):
    a = zk.create_array("scratch://plugins-demo", shape=(4,), chunks=(2,), dtype="int16")
    a[:] = [1, 2, 3, 4]
    again = zk.open_array("scratch://plugins-demo")
    assert again[:].tolist() == [1, 2, 3, 4]


def test_without_a_store_plugin_an_unknown_scheme_is_refused_by_name():
    with pytest.raises(UnknownExtensionError) as info:
        zk.open_array("scratch://nothing-here")
    assert (info.value.kind, info.value.name) == ("store", "scratch")


def test_a_wrapping_store_plugin_can_refuse_a_node(site_stores, tmp_path):
    root = zk.open_group(str(tmp_path / "h.zarr"), mode="w")
    root.create_array("open", shape=(2,), chunks=(2,), dtype="uint8")
    root.create_array(
        "secret", shape=(2,), chunks=(2,), dtype="uint8", attributes={"embargoed": True}
    )
    url = f"policy://{tmp_path / 'h.zarr'}"
    assert zk.open_array(url, path="open")[:].tolist() == [0, 0]
    with pytest.raises(PermissionError, match="embargo"):
        zk.open_array(url, path="secret")
    assert zk.open_array(str(tmp_path / "h.zarr"), path="secret")[:].tolist() == [0, 0]
