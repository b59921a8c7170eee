"""The zarr-python codec bridge, both ways: a codec written only for zarr-python 3 (a separately
installed distribution that declares it in `zarr.codecs` and nowhere in zarrkit) reads and
writes in zarrkit, and a zarrkit codec plugin (the example LZ4 package, which declares
`zarrkit.zarr_python.codecs:ZarrkitCodec` in its `zarr.codecs` entry points) reads and writes in
zarr-python; each read back by the other, value for value."""

from __future__ import annotations

import importlib.metadata as md
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import zarrkit as zk
from zarrkit import registry
from zarrkit.errors import ChunkDecodeError, UnknownExtensionError, ValueCastError

pytestmark = pytest.mark.interop  # through zarr-python 3

zarr = pytest.importorskip("zarr")

LZ4_DIST = "zarrkit-example-lz4"

#: a package for zarr-python only: a bytes -> bytes codec with nothing but coroutines (zarr
#: runs it on its event loop), an array -> array one and an array -> bytes one with synchronous
#: methods, and one that fails on request
ZARR_CODECS = textwrap.dedent("""
    from dataclasses import dataclass, replace

    import numpy as np
    from zarr.abc.codec import ArrayArrayCodec, ArrayBytesCodec, BytesBytesCodec
    from zarr.core.common import parse_named_configuration


    @dataclass(frozen=True)
    class BigEndian(ArrayBytesCodec):
        @classmethod
        def from_dict(cls, data):
            parse_named_configuration(data, "example.zarr_be", require_configuration=False)
            return cls()

        def to_dict(self):
            return {"name": "example.zarr_be"}

        def compute_encoded_size(self, input_byte_length, chunk_spec):
            return input_byte_length

        def _encode_sync(self, chunk_data, chunk_spec):
            array = np.ascontiguousarray(chunk_data.as_numpy_array())
            big = array.astype(array.dtype.newbyteorder(">"))
            return chunk_spec.prototype.buffer.from_bytes(big.tobytes())

        def _decode_sync(self, chunk_data, chunk_spec):
            native = chunk_spec.dtype.to_native_dtype()
            big = np.frombuffer(chunk_data.to_bytes(), dtype=native.newbyteorder(">"))
            out = big.astype(native).reshape(chunk_spec.shape)
            return chunk_spec.prototype.nd_buffer.from_numpy_array(out)

        async def _encode_single(self, chunk_data, chunk_spec):
            return self._encode_sync(chunk_data, chunk_spec)

        async def _decode_single(self, chunk_data, chunk_spec):
            return self._decode_sync(chunk_data, chunk_spec)


    @dataclass(frozen=True)
    class Xor(BytesBytesCodec):
        key: int = 0

        @classmethod
        def from_dict(cls, data):
            _, config = parse_named_configuration(data, "example.zarr_xor")
            return cls(**config)

        def to_dict(self):
            return {"name": "example.zarr_xor", "configuration": {"key": self.key}}

        def compute_encoded_size(self, input_byte_length, chunk_spec):
            return input_byte_length

        async def _encode_single(self, chunk_data, chunk_spec):
            out = chunk_data.as_numpy_array() ^ np.uint8(self.key)
            return chunk_spec.prototype.buffer.from_bytes(out.tobytes())

        _decode_single = _encode_single


    @dataclass(frozen=True)
    class Offset(ArrayArrayCodec):
        offset: int = 0

        @classmethod
        def from_dict(cls, data):
            _, config = parse_named_configuration(data, "example.zarr_offset")
            return cls(**config)

        def to_dict(self):
            return {"name": "example.zarr_offset", "configuration": {"offset": self.offset}}

        def compute_encoded_size(self, input_byte_length, chunk_spec):
            return input_byte_length

        def _encode_sync(self, chunk_data, chunk_spec):
            out = chunk_data.as_numpy_array() + chunk_data.as_numpy_array().dtype.type(self.offset)
            return chunk_spec.prototype.nd_buffer.from_numpy_array(out)

        def _decode_sync(self, chunk_data, chunk_spec):
            out = chunk_data.as_numpy_array() - chunk_data.as_numpy_array().dtype.type(self.offset)
            return chunk_spec.prototype.nd_buffer.from_numpy_array(out)

        async def _encode_single(self, chunk_data, chunk_spec):
            return self._encode_sync(chunk_data, chunk_spec)

        async def _decode_single(self, chunk_data, chunk_spec):
            return self._decode_sync(chunk_data, chunk_spec)


    @dataclass(frozen=True)
    class Failing(BytesBytesCodec):
        when: str = "decode"

        @classmethod
        def from_dict(cls, data):
            _, config = parse_named_configuration(data, "example.zarr_failing")
            return cls(**config)

        def to_dict(self):
            return {"name": "example.zarr_failing", "configuration": {"when": self.when}}

        def compute_encoded_size(self, input_byte_length, chunk_spec):
            return input_byte_length

        def _encode_sync(self, chunk_data, chunk_spec):
            if self.when == "encode":
                raise RuntimeError("the encoder broke")
            return chunk_data

        def _decode_sync(self, chunk_data, chunk_spec):
            raise RuntimeError("the decoder broke")
""")

ZARR_ONLY = {
    "zarr.codecs": {
        "example.zarr_xor": "zarr_example_codecs:Xor",
        "example.zarr_offset": "zarr_example_codecs:Offset",
        "example.zarr_failing": "zarr_example_codecs:Failing",
        "example.zarr_be": "zarr_example_codecs:BigEndian",
        # a third party's class for a name zarrkit implements itself: zarrkit's stays
        "gzip": "zarr_example_codecs:Xor",
    }
}

CODECS = [
    {"name": "example.zarr_offset", "configuration": {"offset": 7}},
    {"name": "bytes", "configuration": {"endian": "little"}},
    {"name": "example.zarr_xor", "configuration": {"key": 90}},
]


@pytest.fixture
def zarr_only(fake_distribution):
    """The zarr-python-only package, installed; its site folder (for a fresh interpreter)."""
    return fake_distribution(
        "zarr-example-codecs", entry_points=ZARR_ONLY, modules={"zarr_example_codecs": ZARR_CODECS}
    ).parent


def _run(code: str, site: Path | None = None) -> subprocess.CompletedProcess:
    """`code` in a fresh interpreter that sees the fake distributions in `site`, as a program
    run after installing them would: zarr-python reads their entry points itself."""
    path = os.pathsep.join([*([str(site)] if site else []), os.environ.get("PYTHONPATH", "")])
    run = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        timeout=300,  # a hang guard only
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return run


def _data() -> np.ndarray:
    return (np.arange(1500, dtype="int16") * 37 % 1000 - 500).reshape(30, 50)


# -- zarr-python -> zarrkit -----------------------------------------------------------------
def test_zarr_python_only_codecs_both_ways(zarr_only: Path, tmp_path: Path) -> None:
    data = _data()
    # zarrkit writes with the zarr-python codecs (edge chunks included)
    written = zk.create_array(
        str(tmp_path), path="by_zarrkit", shape=data.shape, chunks=(16, 20), dtype="int16",
        fill_value=-3, codecs=CODECS,
    )  # fmt: skip
    written[...] = data
    kinds = [type(c).__name__ for c in written.codecs]
    assert kinds == ["_ArrayArrayZarrCodec", "BytesCodec", "_BytesBytesZarrCodec"]
    # the stored bytes really are XORed and offset: not a pass-through
    stored = (tmp_path / "by_zarrkit" / "c" / "0" / "0").read_bytes()
    expected = (data[:16, :20] + 7).astype("<i2").tobytes()
    assert stored == bytes(b ^ 90 for b in expected)
    # and a zarr-python serialiser in place of `bytes`
    floats = zk.create_array(
        str(tmp_path), path="be_by_zarrkit", shape=(10,), chunks=(4,), dtype="float32",
        fill_value=0.5, codecs=[{"name": "example.zarr_be"}],
    )  # fmt: skip
    floats[:6] = np.arange(6, dtype="float32") / 4
    assert type(floats.codecs[0]).__name__ == "_ArrayBytesZarrCodec"
    stored = (tmp_path / "be_by_zarrkit" / "c" / "0").read_bytes()
    assert stored == (np.arange(4, dtype="float32") / 4).astype(">f4").tobytes()

    # zarr-python, in an interpreter that finds the codecs through their entry points, reads
    # what zarrkit wrote and writes its own array with them
    out = _run(
        f"""
        import json, numpy as np, zarr
        root = {str(tmp_path)!r}
        a = zarr.open_array(root, path="by_zarrkit", mode="r")
        print(json.dumps(a[...].tolist()))
        b = zarr.create_array(root, name="by_zarr", shape=a.shape, chunks=(16, 20),
                              dtype="int16", fill_value=-3, filters=[{CODECS[0]!r}],
                              serializer={CODECS[1]!r}, compressors=[{CODECS[2]!r}])
        b[...] = a[...]
        b[29, 49] = 1234
        f = zarr.open_array(root, path="be_by_zarrkit", mode="r")
        print(json.dumps(f[...].tolist()))
        g = zarr.create_array(root, name="be_by_zarr", shape=(10,), chunks=(4,), dtype="float32",
                              fill_value=0.5, serializer={{"name": "example.zarr_be"}})
        g[3:] = np.arange(7, dtype="float32") * 2

        # a codec registered with zarr-python at run time, not by an entry point
        from dataclasses import dataclass
        import zarr.registry, zarrkit as zk
        from zarr.abc.codec import BytesBytesCodec

        @dataclass(frozen=True)
        class Reverse(BytesBytesCodec):
            @classmethod
            def from_dict(cls, data):
                return cls()
            def to_dict(self):
                return {{"name": "example.runtime_reverse"}}
            def compute_encoded_size(self, input_byte_length, chunk_spec):
                return input_byte_length
            def _encode_sync(self, chunk_data, chunk_spec):
                return chunk_spec.prototype.buffer.from_bytes(chunk_data.to_bytes()[::-1])
            _decode_sync = _encode_sync
            async def _encode_single(self, chunk_data, chunk_spec):
                return self._encode_sync(chunk_data, chunk_spec)
            _decode_single = _encode_single

        zarr.registry.register_codec("example.runtime_reverse", Reverse)
        c = zarr.create_array(root, name="runtime", shape=(7,), chunks=(4,), dtype="uint8",
                              compressors=[Reverse()])
        c[...] = np.arange(7) * 3
        k = zk.create_array(root, path="runtime_zk", shape=(7,), chunks=(4,), dtype="uint8",
                            codecs=["bytes", {{"name": "example.runtime_reverse"}}])
        k[...] = np.arange(7) * 5
        print(json.dumps([zk.open_array(root, path="runtime")[...].tolist(),
                          zarr.open_array(root, path="runtime_zk")[...].tolist(),
                          open(root + "/runtime/c/0", "rb").read().hex()]))
        """,
        zarr_only,
    )
    by_zarrkit_read, floats_read, runtime = out.stdout.strip().splitlines()
    np.testing.assert_array_equal(np.array(json.loads(by_zarrkit_read)), data)
    assert json.loads(floats_read) == [0, 0.25, 0.5, 0.75, 1, 1.25, 0.5, 0.5, 0.5, 0.5]
    floats_back = zk.open_array(str(tmp_path), path="be_by_zarr")[...]
    np.testing.assert_array_equal(floats_back, [0.5, 0.5, 0.5, 0, 2, 4, 6, 8, 10, 12])
    by_zarr_read, by_zarrkit_read_back, stored_hex = json.loads(runtime)
    assert by_zarr_read == [i * 3 for i in range(7)]
    assert by_zarrkit_read_back == [i * 5 for i in range(7)]
    assert stored_hex == bytes([9, 6, 3, 0]).hex()  # reversed: the codec really ran

    # zarrkit reads what zarr-python wrote, value for value, and the metadata it writes is
    # what zarr-python wrote
    expected_back = data.copy()
    expected_back[29, 49] = 1234
    read = zk.open_array(str(tmp_path), path="by_zarr")
    np.testing.assert_array_equal(read[...], expected_back)
    np.testing.assert_array_equal(read[20:, 45:], expected_back[20:, 45:])
    by_zarr = json.loads((tmp_path / "by_zarr" / "zarr.json").read_text())["codecs"]
    by_zarrkit = json.loads((tmp_path / "by_zarrkit" / "zarr.json").read_text())["codecs"]
    assert by_zarrkit == by_zarr == CODECS


def test_zarr_python_own_codecs_stay_zarrkit_first_party(zarr_only: Path) -> None:
    """zarr-python registers its own codecs (and here a third party claims `gzip` for
    zarr-python too): each name keeps zarrkit's first-party implementation."""
    names = ["bytes", "endian", "gzip", "zstd", "blosc", "crc32c", "transpose"]
    names += ["sharding_indexed", "vlen-utf8", "numcodecs.zstd", "numcodecs.delta"]
    for name in names:
        cls = registry.lookup("codec", name)
        assert cls.__module__.startswith("zarrkit.plugins.codecs."), (name, cls)
        assert "zarr_python_bridge" not in cls.__module__, (name, cls)
    bridged = registry.lookup("codec", "example.zarr_xor")
    assert bridged.__module__ == "zarrkit.plugins.codecs.zarr_python_bridge"


NAMED_IN_ZARRKIT = textwrap.dedent("""
    from zarrkit.abc import ArrayArrayCodec, names


    class Offset(ArrayArrayCodec):
        names = names("example.zarr_offset")

        def encode(self, data, spec):
            return data

        decode = encode
""")


def test_a_zarrkit_plugin_naming_the_codec_wins_over_the_bridge(
    zarr_only: Path, fake_distribution
) -> None:
    assert registry.lookup("codec", "example.zarr_offset").__name__ == "ZarrPythonCodec"
    fake_distribution(
        "zarrkit-offset",
        entry_points={"zarrkit.codecs": {"example.zarr_offset": "zarrkit_offset:Offset"}},
        modules={"zarrkit_offset": NAMED_IN_ZARRKIT},
    )
    assert registry.lookup("codec", "example.zarr_offset").__module__ == "zarrkit_offset"


def test_a_failing_zarr_python_codec_is_named_in_zarrkit_errors(
    zarr_only: Path, tmp_path: Path
) -> None:
    def create(path: str, when: str) -> zk.Array:
        failing = {"name": "example.zarr_failing", "configuration": {"when": when}}
        return zk.create_array(
            str(tmp_path), path=path, shape=(10,), chunks=(5,), dtype="uint8",
            codecs=["bytes", failing],
        )  # fmt: skip

    reads = create("reads", "decode")
    reads[...] = np.arange(10, dtype="uint8")
    with pytest.raises(ChunkDecodeError) as info:
        reads[...]
    message = str(info.value)
    assert "'example.zarr_failing'" in message and "zarr_example_codecs.Failing" in message
    assert "the decoder broke" in message and "c/0" in message

    writes = create("writes", "encode")
    with pytest.raises(ValueCastError, match=r"'example\.zarr_failing'.*the encoder broke"):
        writes[...] = np.arange(10, dtype="uint8")


def test_a_bad_configuration_is_refused_naming_the_codec(zarr_only: Path, tmp_path: Path) -> None:
    with pytest.raises(zk.errors.MetadataError, match=r"'example\.zarr_xor'.*'colour'"):
        zk.create_array(
            str(tmp_path), shape=(4,), chunks=(4,), dtype="uint8",
            codecs=["bytes", {"name": "example.zarr_xor", "configuration": {"colour": 1}}],
        )  # fmt: skip


def test_without_zarr_python_the_error_says_what_to_install(
    zarr_only: Path, tmp_path: Path
) -> None:
    """Where zarr-python cannot be imported: a lookup that other plugins answer, or nobody
    does, never tries to import it; a codec declared only for zarr-python is an unknown-codec
    error naming its entry point and the extra to install; so is the adapter module."""
    out = _run(
        f"""
        import json, sys

        class NoZarr:  # zarr-python not installed: every attempt to import it is recorded
            tried = []
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] == "zarr":
                    self.tried.append(name)
                    raise ModuleNotFoundError(f"No module named {{name!r}}")
        sys.meta_path.insert(0, NoZarr())
        import zarrkit as zk
        from zarrkit import registry
        from zarrkit.errors import UnknownExtensionError
        registry.lookup("codec", "endian")
        registry.lookup("codec", "numcodecs.delta")
        try:
            registry.lookup("codec", "no.such.codec")
        except UnknownExtensionError:
            pass
        messages = [NoZarr.tried[:]]
        try:
            zk.create_array({str(tmp_path)!r}, shape=(4,), chunks=(4,), dtype="uint8",
                            codecs=["bytes", {CODECS[2]!r}])
        except UnknownExtensionError as exc:
            messages.append(str(exc))
        try:
            import zarrkit.zarr_python
        except ImportError as exc:
            messages.append(str(exc))
        print(json.dumps(messages))
        """,
        zarr_only,
    )
    tried, codec_error, adapter_error = json.loads(out.stdout)
    assert tried == []
    assert "example.zarr_xor" in codec_error and "zarr_example_codecs:Xor" in codec_error
    assert "pip install 'zarrkit[zarr-python]'" in codec_error
    assert "zarr-python" in adapter_error
    assert "pip install 'zarrkit[zarr-python]'" in adapter_error


def test_an_unknown_name_is_still_unknown(tmp_path: Path) -> None:
    with pytest.raises(UnknownExtensionError, match="no.such.codec"):
        registry.lookup("codec", "no.such.codec")


# -- zarrkit -> zarr-python -----------------------------------------------------------------
@pytest.fixture(scope="module")
def lz4_class():
    try:
        md.distribution(LZ4_DIST)
    except md.PackageNotFoundError:
        pytest.fail(f"{LZ4_DIST} is not installed; ./dev installs it")
    declared = {ep.name: ep.value for ep in md.distribution(LZ4_DIST).entry_points}
    assert declared.get("example.lz4") is not None
    from zarrkit_example_lz4 import Lz4Codec

    return Lz4Codec


def test_example_lz4_through_zarr_python_both_ways(lz4_class, tmp_path: Path) -> None:
    from zarrkit.zarr_python.codecs import ZarrkitBytesBytesCodec, as_zarr_codec

    data = (np.arange(6000, dtype="float32") % 13).reshape(60, 100)
    lz4 = {"name": "example.lz4", "configuration": {"acceleration": 3}}
    # zarr-python writes with the example codec, found through the package's entry point
    z = zarr.create_array(
        store=str(tmp_path), name="by_zarr", shape=data.shape, chunks=(25, 40),
        dtype="float32", compressors=[lz4],
    )  # fmt: skip
    assert isinstance(z.compressors[0], ZarrkitBytesBytesCodec)
    z[...] = data
    a = zk.open_array(str(tmp_path), path="by_zarr")
    assert type(a.codecs[-1]) is lz4_class
    np.testing.assert_array_equal(a[...], data)
    assert json.loads((tmp_path / "by_zarr" / "zarr.json").read_text())["codecs"][-1] == lz4

    # zarrkit writes, zarr-python reads; and a codec in hand, handed to zarr-python directly
    b = zk.create_array(
        str(tmp_path), path="by_zarrkit", shape=data.shape, chunks=(25, 40), dtype="float32",
        codecs=["bytes", lz4],
    )  # fmt: skip
    b[...] = data
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path), path="by_zarrkit")[...], data)
    c = zarr.create_array(
        store=str(tmp_path), name="in_hand", shape=(10,), chunks=(4,), dtype="uint16",
        compressors=[as_zarr_codec(lz4_class(acceleration=5))],
    )  # fmt: skip
    c[...] = np.arange(10, dtype="uint16")
    np.testing.assert_array_equal(zk.open_array(str(tmp_path), path="in_hand")[...], np.arange(10))
    assert zk.open_array(str(tmp_path), path="in_hand").codecs[-1] == lz4_class(acceleration=5)
