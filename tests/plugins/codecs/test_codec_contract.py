"""The codec contract of `zarrkit.abc`: a codec's kind is its typed base, and what the chain
does beyond whole-chunk encoding and decoding follows from the capabilities a codec declares,
never from which methods its class happens to define."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from zarrkit.abc import (
    ArrayArrayCodec,
    ArrayBytesPartialDecode,
    BytesBytesCodec,
    BytesBytesDecodeInto,
    ChunkSpec,
    Codec,
    CodecKind,
    Region,
    names,
)
from zarrkit.api import data_type_from_arg
from zarrkit.errors import CodecChainError
from zarrkit.helpers import CodecChain, DecodeInto
from zarrkit.plugins.codecs.bytes import BytesCodec
from zarrkit.plugins.codecs.sharding import ShardingCodec
from zarrkit.plugins.codecs.transpose import TransposeCodec

INT32 = data_type_from_arg("int32")


def chain(*codecs: Codec, shape: tuple[int, ...] = (4, 4)) -> Any:
    return CodecChain(codecs, INT32, 0).bind(shape)


class Xor(BytesBytesCodec):
    """bytes->bytes: every byte xor 0x5A. Has a `decode_into` but does not declare it."""

    names = names("test.contract-xor")
    calls: list[str] = []  # noqa: RUF012

    def encode(self, data: Any, spec: ChunkSpec) -> bytes:
        return (np.frombuffer(memoryview(data).cast("B"), np.uint8) ^ 0x5A).tobytes()

    def decode(self, data: Any, spec: ChunkSpec) -> bytes:
        self.calls.append("decode")
        return (np.frombuffer(data, np.uint8) ^ 0x5A).tobytes()

    def decode_into(self, data: Any, out: memoryview, spec: ChunkSpec) -> bool:
        self.calls.append("decode_into")
        np.frombuffer(out, np.uint8)[...] = np.frombuffer(data, np.uint8) ^ 0x5A
        return True


class DeclaredXor(Xor, BytesBytesDecodeInto):
    """The same codec, declaring that it decodes into a buffer."""

    names = names("test.contract-xor-into")


def test_a_method_alone_is_not_a_capability_the_declaration_is() -> None:
    data = np.arange(16, dtype=np.int32).reshape(4, 4)
    for codec, direct in ((Xor(), False), (DeclaredXor(), True)):
        bound = chain(BytesCodec("little"), codec)
        assert bound.decodes_into is direct
        assert (bound.decode_into_by is DecodeInto.BYTES_CODEC) is direct
        Xor.calls.clear()
        out = np.empty((4, 4), np.int32)
        bound.decode_into(bound.encode(data), out)
        np.testing.assert_array_equal(out, data)
        assert Xor.calls == (["decode_into"] if direct else ["decode"])


class OldStyle(Codec):
    """A codec written against the old contract: a `kind` and no typed base."""

    names = names("test.old-style")
    kind = CodecKind.BYTES_BYTES

    def encode(self, data: Any, spec: ChunkSpec) -> Any:
        return data

    def decode(self, data: Any, spec: ChunkSpec) -> Any:
        return data


class TwoKinds(ArrayArrayCodec, BytesBytesCodec):
    names = names("test.two-kinds")

    def encode(self, data: Any, spec: ChunkSpec) -> Any:
        return data

    def decode(self, data: Any, spec: ChunkSpec) -> Any:
        return data


@pytest.mark.parametrize("codec", [OldStyle(), TwoKinds()])
def test_a_codec_without_exactly_one_typed_base_is_refused(codec: Codec) -> None:
    with pytest.raises(CodecChainError, match="exactly one of zarrkit.abc's ArrayArrayCodec"):
        chain(BytesCodec("little"), codec)


def test_a_declared_capability_without_its_method_cannot_be_built() -> None:
    class Careless(BytesCodec, ArrayBytesPartialDecode):
        names = names("test.careless")

    with pytest.raises(TypeError, match="decode_partial"):
        Careless("little")


def test_partial_access_needs_every_codec_to_declare_it() -> None:
    """A shard reads partially through a transpose (which declares both capabilities), not
    through an array->array codec that declares neither."""

    class Negate(ArrayArrayCodec):
        names = names("test.negate-contract")

        def encode(self, data: np.ndarray, spec: ChunkSpec) -> np.ndarray:
            return -data

        def decode(self, data: np.ndarray, spec: ChunkSpec) -> np.ndarray:
            return -data

    shard = ShardingCodec((2, 2), (BytesCodec("little"),), (BytesCodec("little"),))
    for first, partial in ((TransposeCodec((1, 0)), True), (Negate(), False)):
        bound = chain(first, shard)
        assert bound.can_decode_partial is partial and bound.can_encode_partial is partial
        if not partial:
            with pytest.raises(CodecChainError, match="cannot decode part"):
                next(bound.decode_partial(Region.whole((4, 4))))
    assert not chain(shard, Xor()).can_decode_partial  # a bytes->bytes codec that did not say
