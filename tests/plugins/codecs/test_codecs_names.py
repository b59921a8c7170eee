"""Names per format (v3, v2's numcodecs ids, the 2020 draft's URIs), which provider wins a
name, and the errors a user sees for unknown names and bad configurations."""

from __future__ import annotations

import numcodecs
import numpy as np
import pytest

from zarrkit import registry
from zarrkit.abc.codec import ChunkSpec, CodecKind
from zarrkit.abc.extension import V2, V3, V3_DRAFT_2020
from zarrkit.api import data_type_from_arg
from zarrkit.codec_chain import CodecChain
from zarrkit.errors import CodecChainError, MetadataError, UnknownExtensionError
from zarrkit.plugins.codecs.numcodecs_bridge import NumcodecsCodec


def build(name, configuration=None, fmt=V3):
    return registry.lookup("codec", name, fmt).from_json(name, configuration or {}, fmt)


@pytest.mark.parametrize(
    "config",
    [
        {"id": "gzip", "level": 1},
        {"id": "zstd", "level": 3, "checksum": False},
        {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0},
        {"id": "blosc", "cname": "zstd", "clevel": 3, "shuffle": -1, "blocksize": 0},
        {"id": "crc32c"},
    ],
)
def test_first_party_codecs_read_and_write_numcodecs_v2_form(config):
    cid = config["id"]
    codec = build(cid, {k: v for k, v in config.items() if k != "id"}, V2)
    assert type(codec).__module__.startswith("zarrkit.plugins.codecs.")
    assert not isinstance(codec, NumcodecsCodec)  # exact names win over the bridge's pattern
    assert codec.to_json(V2) == config
    # and the chunks are numcodecs' chunks, both ways
    data_type = data_type_from_arg("int32")
    spec = ChunkSpec((500,), data_type, data_type.cast_scalar(0))
    payload = np.arange(500, dtype="<i4")
    ours = bytes(memoryview(codec.encode(payload.view("u1"), spec)).cast("B"))
    theirs = numcodecs.get_codec(config)
    np.testing.assert_array_equal(np.frombuffer(theirs.decode(ours), "<i4"), payload)
    decoded = codec.decode(bytes(memoryview(theirs.encode(payload)).cast("B")), spec)
    np.testing.assert_array_equal(np.frombuffer(decoded, "<i4"), payload)


def test_blosc_auto_shuffle_matches_numcodecs_bytes():
    codec = build("blosc", {"cname": "lz4", "clevel": 5, "shuffle": -1, "blocksize": 0}, V2)
    for dtype in ("u1", "<i4", "<f8"):
        data_type = data_type_from_arg(np.dtype(dtype))
        spec = ChunkSpec((300,), data_type, data_type.cast_scalar(0))
        payload = np.arange(300).astype(dtype)
        ours = codec.encode(payload.view("u1"), spec)
        theirs = numcodecs.Blosc(cname="lz4", clevel=5, shuffle=-1).encode(payload)
        assert bytes(ours) == bytes(theirs), dtype


@pytest.mark.parametrize(
    "cid, config",
    [
        ("gzip", {"level": 4}),
        ("zstd", {"level": 2, "checksum": True}),
        ("blosc", {"cname": "zstd", "clevel": 1, "shuffle": 2, "blocksize": 0}),
    ],
)
def test_first_party_codecs_speak_the_2020_draft(cid, config):
    uri = f"https://purl.org/zarr/spec/codec/{cid}/1.0"
    codec = build(uri, config, V3_DRAFT_2020)
    assert codec.to_json(V3_DRAFT_2020) == {"codec": uri, "configuration": config}
    assert codec.written_name(V3) == cid


def test_bridge_answers_v2_ids_and_draft_uris_of_any_numcodecs_codec():
    v2 = build("delta", {"dtype": "<i4", "astype": "<i2"}, V2)
    assert isinstance(v2, NumcodecsCodec) and v2.kind is CodecKind.ARRAY_ARRAY
    assert v2.to_json(V2) == {"id": "delta", "dtype": "<i4", "astype": "<i2"}
    assert v2.to_json(V3) == {
        "name": "numcodecs.delta",
        "configuration": {"dtype": "<i4", "astype": "<i2"},
    }
    draft = build("https://purl.org/zarr/spec/codec/zlib/1.0", {"level": 2}, V3_DRAFT_2020)
    assert draft.kind is CodecKind.BYTES_BYTES and draft.to_json(V2) == {"id": "zlib", "level": 2}
    obj = build("vlen-utf8", {}, V2)
    assert obj.kind is CodecKind.ARRAY_BYTES


def test_first_party_names_win_over_the_bridge():
    assert registry.lookup("codec", "numcodecs.bitround").__name__ == "BitRoundCodec"
    assert registry.lookup("codec", "bitround").__name__ == "BitRoundCodec"
    assert registry.lookup("codec", "bitround", V2).__name__ == "BitRoundCodec"
    assert registry.lookup("codec", "gzip", V2).__name__ == "GzipCodec"
    assert registry.lookup("codec", "numcodecs.gzip") is NumcodecsCodec  # a different format


def test_bridge_gil_hint_and_checksum_size_are_per_codec():
    assert build("numcodecs.zlib").releases_gil is True
    assert build("numcodecs.delta", {"dtype": "<i4"}).releases_gil is False
    assert build("numcodecs.crc32").encoded_size(10) == 14
    assert build("numcodecs.zlib").encoded_size(10) is None


def test_filter_that_changes_dtype_resolves_the_encoded_spec():
    data_type = data_type_from_arg("float64")
    spec = ChunkSpec((4, 5), data_type, data_type.cast_scalar(1.5))
    fso = build(
        "numcodecs.fixedscaleoffset", {"offset": 1, "scale": 10, "dtype": "<f8", "astype": "<i2"}
    )
    out = fso.encoded_spec(spec)
    assert out.dtype == np.dtype("int16") and out.shape == (4, 5) and out.fill_value == 5
    astype = build("numcodecs.astype", {"encode_dtype": "float32", "decode_dtype": "float64"})
    assert astype.encoded_spec(spec).dtype == np.dtype("float32")
    packbits = build("numcodecs.packbits")
    bool_type = data_type_from_arg("bool")
    packed = packbits.encoded_spec(ChunkSpec((4, 5), bool_type, bool_type.cast_scalar(False)))
    assert packed.dtype == np.dtype("uint8") and packed.shape == (1 + 3,)


def test_filter_that_cannot_encode_the_type_is_a_chain_error():
    data_type = data_type_from_arg("int32")
    quantize = build("numcodecs.quantize", {"digits": 2, "dtype": "<f8"})
    bytes_codec = build("bytes", {"endian": "little"})
    with pytest.raises(CodecChainError, match="numcodecs.quantize"):
        CodecChain([quantize, bytes_codec], data_type, data_type.cast_scalar(0)).bind((10,))


def test_required_dtype_left_out_is_filled_at_creation_only():
    delta = build("numcodecs.delta")  # zarr-python fills the dtype in at creation too
    data_type = data_type_from_arg("uint16")
    spec = ChunkSpec((8,), data_type, data_type.cast_scalar(0))
    assert delta.evolve(spec).configuration() == {"dtype": "uint16"}
    with pytest.raises(CodecChainError, match="'dtype'"):
        delta.validate(spec)


@pytest.mark.parametrize(
    "name, fmt, needle",
    [
        ("numcodecs.nosuchcodec", V3, "numcodecs has no codec 'nosuchcodec'"),
        ("nosuchcodec", V2, "no installed plugin provides the codec 'nosuchcodec'"),
    ],
)
def test_unknown_numcodecs_names_are_clear(name, fmt, needle):
    with pytest.raises(UnknownExtensionError) as info:
        registry.lookup("codec", name, fmt)
    assert needle in str(info.value)


def test_missing_optional_package_hint():
    from zarrkit.plugins.hints import zarrkit_install_hint

    assert "zarrkit[pcodec]" in zarrkit_install_hint(
        kind="codec", name="numcodecs.pcodec", format=V3
    )
    assert "zarrkit[zfp]" in zarrkit_install_hint(kind="codec", name="zfpy", format=V2)


@pytest.mark.parametrize(
    "name, config, field",
    [
        ("numcodecs.zlib", {"speed": 3}, "configuration"),
        ("numcodecs.delta", {"id": "zlib", "dtype": "<i4"}, "configuration.id"),
        ("numcodecs.bitround", {"keepbits": -1}, "configuration.keepbits"),
        ("numcodecs.bitround", {}, "configuration.keepbits"),
        ("scale_offset", {"scale": [1]}, "configuration.scale"),
        ("scale_offset", {"scale": 2, "bias": 1}, "configuration"),
        ("cast_value", {"data_type": "uint8", "rounding": "up"}, "configuration.rounding"),
        ("cast_value", {}, "configuration.data_type"),
        ("cast_value", {"data_type": "nosuchtype"}, "configuration.data_type"),
        ("zfp", {"mode": "fixed_rate"}, "configuration.rate"),
        ("zfp", {"mode": "lossy"}, "configuration.mode"),
        ("gzip", {}, "configuration.level"),
    ],
)
def test_bad_configuration_names_the_field(name, config, field):
    with pytest.raises(MetadataError) as info:
        build(name, config)
    assert info.value.field == field, str(info.value)


def test_scale_offset_refuses_what_the_type_cannot_hold():
    from zarrkit.errors import ChunkDecodeError, ValueCastError

    codec = build("scale_offset", {"offset": 0, "scale": 100})
    data_type = data_type_from_arg("int8")
    spec = ChunkSpec((3,), data_type, data_type.cast_scalar(0))
    with pytest.raises(ValueCastError, match="outside"):
        codec.encode(np.array([1, 2, 3], dtype="i1"), spec)
    with pytest.raises(ChunkDecodeError, match="multiples"):
        codec.decode(np.array([100, 50, 0], dtype="i1"), spec)
    with pytest.raises(CodecChainError, match="not a value"):
        build("scale_offset", {"offset": 0.5}).validate(spec)
    with pytest.raises(CodecChainError, match="zero"):
        build("scale_offset", {"scale": 0}).validate(spec)


def test_cast_value_out_of_range_is_refused_unless_asked():
    from zarrkit.errors import ValueCastError

    data_type = data_type_from_arg("float32")
    spec = ChunkSpec((3,), data_type, data_type.cast_scalar(0))
    with pytest.raises(ValueCastError):
        build("cast_value", {"data_type": "uint8"}).encode(np.array([1, 300, 2], "f4"), spec)
    clamped = build("cast_value", {"data_type": "uint8", "out_of_range": "clamp"})
    assert clamped.encode(np.array([1, 300, -2], "f4"), spec).tolist() == [1, 255, 0]


def test_zfp_expert_mode_is_read_but_refused_with_a_reason():
    codec = build(
        "zfp", {"mode": "expert", "minbits": 1, "maxbits": 100, "maxprec": 20, "minexp": -100}
    )
    assert codec.configuration()["mode"] == "expert"
    data_type = data_type_from_arg("float32")
    with pytest.raises(CodecChainError, match="expert"):
        codec.validate(ChunkSpec((4,), data_type, data_type.cast_scalar(0)))
