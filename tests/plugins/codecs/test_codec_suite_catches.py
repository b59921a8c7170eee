"""CodecTests catches the codecs that corrupt data only in real use: shared mutable state
between calls on threads, a decode that writes to its input, an encode that writes to an input
it declared it only reads. Each broken codec here passes the round trip (what the suite checked
before), and fails the new check with a message that says what is wrong."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from zarrkit_testing import CodecTests

from zarrkit.abc import (
    V3,
    ArrayArrayCodec,
    ArrayBytesCodec,
    BytesBytesCodec,
    ChunkSpec,
    as_bytes_view,
    names,
)

Failed = pytest.fail.Exception


class Suite(CodecTests):
    """The suite with the defaults, its checks called on one codec each."""

    registered = False


@dataclass(frozen=True, eq=False)
class _Xor(BytesBytesCodec):
    """Flips every byte's bits; the base of the broken bytes codecs below."""

    names = names("test.xor")

    @classmethod
    def from_json(cls, name: str, configuration: Mapping[str, Any], format: str = V3) -> Any:
        return cls()

    def configuration(self, format: str = V3) -> dict:
        return {}

    def encode(self, data: Any, spec: ChunkSpec) -> Any:
        return np.invert(np.frombuffer(as_bytes_view(data), np.uint8)).tobytes()

    def decode(self, data: Any, spec: ChunkSpec) -> Any:
        return np.invert(np.frombuffer(as_bytes_view(data), np.uint8)).tobytes()


@dataclass(frozen=True, eq=False)
class SharedOutputXor(_Xor):
    """Decodes into one buffer kept on the instance and returns it: each call overwrites what
    the one before returned (what corrupted most of a real array in issue 26)."""

    _out: dict = field(default_factory=dict, init=False, repr=False)

    def decode(self, data: Any, spec: ChunkSpec) -> Any:
        view = np.frombuffer(as_bytes_view(data), np.uint8)
        out = self._out.get(view.size)
        if out is None:
            out = self._out[view.size] = np.empty(view.size, np.uint8)
        np.invert(view, out=out)
        return out


@dataclass(frozen=True, eq=False)
class SharedScratchXor(_Xor):
    """Decodes in a scratch buffer kept on the instance and copies the result out: right
    whenever calls come one at a time, wrong when two threads use the scratch at once."""

    _scratch: dict = field(default_factory=dict, init=False, repr=False)

    def _buffer(self, size: int) -> np.ndarray:
        found = self._scratch.get(size)
        if found is None:
            found = self._scratch[size] = np.empty(size, np.uint8)
        return found

    def decode(self, data: Any, spec: ChunkSpec) -> Any:
        view = as_bytes_view(data)
        scratch = self._buffer(len(view))
        np.copyto(scratch, np.frombuffer(view, np.uint8))
        np.invert(scratch, out=scratch)
        return bytes(scratch)


@dataclass(frozen=True, eq=False)
class InPlaceDecodeXor(_Xor):
    """Decodes in its input's memory when it may write there: a stored value held as bytes
    (read-only) decodes right, a writable one (a store's or cache's buffer) is spoiled."""

    def decode(self, data: Any, spec: ChunkSpec) -> Any:
        array = np.frombuffer(data, np.uint8) if isinstance(data, bytes) else np.asarray(data)
        if not array.flags.writeable:
            return np.invert(array).tobytes()
        flat = array.reshape(-1).view(np.uint8)
        np.invert(flat, out=flat)
        return flat


@dataclass(frozen=True, eq=False)
class InPlaceNegate(ArrayArrayCodec):
    """Negates the chunk in place on encode, yet declares that encode only reads its input."""

    names = names("test.negate")
    reads_input_only = True

    @classmethod
    def from_json(cls, name: str, configuration: Mapping[str, Any], format: str = V3) -> Any:
        return cls()

    def configuration(self, format: str = V3) -> dict:
        return {}

    def encode(self, data: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        np.negative(data, out=data)
        return data

    def decode(self, data: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        return np.negative(data)


@pytest.fixture
def suite() -> Suite:
    return Suite()


@pytest.mark.parametrize(
    "broken, symptoms",
    [
        (SharedOutputXor, ["decode gave wrong values for"]),
        # (the threads may or may not meet in its scratch buffer; the state it leaves is seen)
        (
            SharedScratchXor,
            [
                "it keeps what a call works on in the codec or its module (SharedScratchXor._scratch",
                "decode gave wrong values for",
            ],
        ),
    ],
)
def test_a_codec_with_shared_state_is_not_thread_safe(
    suite: Suite, broken: type, symptoms: list[str]
) -> None:
    codec = broken()
    suite.test_round_trip(codec)  # right one call at a time
    with pytest.raises((Failed, AssertionError)) as info:
        suite.test_one_instance_on_many_threads(codec)
    message = str(info.value)
    assert f"{broken.__name__} is not thread-safe" in message
    assert any(symptom in message for symptom in symptoms), message
    assert "zarrkit calls one codec instance from many threads at once" in message


def test_a_decode_that_writes_to_its_input_is_caught(suite: Suite) -> None:
    codec = InPlaceDecodeXor()
    suite.test_round_trip(codec)
    suite.test_one_instance_on_many_threads(codec)
    with pytest.raises(Failed) as info:
        suite.test_inputs_are_left_unchanged(codec)
    message = str(info.value)
    assert "InPlaceDecodeXor.decode wrote to its input" in message
    assert "decode must only read what it is given" in message


@dataclass(frozen=True, eq=False)
class InPlaceEncodeXor(_Xor):
    """Encodes in its input's memory (the chunk's bytes, often the user's own array)."""

    def encode(self, data: Any, spec: ChunkSpec) -> Any:
        flat = np.asarray(data).reshape(-1).view(np.uint8)
        np.invert(flat, out=flat)
        return flat.tobytes()


def test_a_bytes_codec_whose_encode_writes_to_its_input_is_caught(suite: Suite) -> None:
    codec = InPlaceEncodeXor()
    with pytest.raises(Failed, match=r"InPlaceEncodeXor\.encode wrote to its input"):
        suite.test_inputs_are_left_unchanged(codec)


def test_a_codec_that_only_claims_to_read_its_input_is_named_so(suite: Suite) -> None:
    codec = InPlaceNegate()
    suite.test_round_trip(codec)  # the chain hands the round trip a copy
    suite.test_inputs_are_left_unchanged(codec)  # its decode is fine
    with pytest.raises(Failed) as info:
        suite.test_reads_input_only_is_true(codec)
    message = str(info.value)
    assert "InPlaceNegate declares reads_input_only = True" in message
    assert "encode wrote to its input" in message
    assert "Arrays are not equal" not in message


@dataclass(frozen=True, eq=False)
class CContiguousOnly(ArrayBytesCodec):
    """Takes its input's memory as the chunk's bytes, which holds for a C-ordered array only,
    yet declares that it takes its input in any layout."""

    names = names("test.raw")
    reads_input_only = True

    @classmethod
    def from_json(cls, name: str, configuration: Mapping[str, Any], format: str = V3) -> Any:
        return cls()

    def configuration(self, format: str = V3) -> dict:
        return {}

    def encode(self, data: np.ndarray, spec: ChunkSpec) -> Any:
        return np.frombuffer(data.data.cast("B") if data.flags.c_contiguous else data, np.uint8)

    def decode(self, data: Any, spec: ChunkSpec) -> np.ndarray:
        return np.frombuffer(data, spec.dtype).reshape(spec.shape).copy()


def test_a_codec_that_only_claims_to_take_any_layout_is_named_so(suite: Suite) -> None:
    codec = CContiguousOnly()
    suite.test_round_trip(codec)
    with pytest.raises(Failed) as info:
        suite.test_reads_input_only_is_true(codec)
    message = str(info.value)
    assert "CContiguousOnly declares reads_input_only = True" in message
    assert "encode fails on a strided view" in message


def test_first_party_codecs_that_read_their_input_only_pass(suite: Suite) -> None:
    """The check holds the codecs that really only read (the `bytes` serialiser) to it."""
    from zarrkit import registry

    codec = registry.lookup("codec", "bytes", V3).from_json("bytes", {"endian": "big"}, V3)
    assert codec.reads_input_only
    suite.test_reads_input_only_is_true(codec)
    suite.test_inputs_are_left_unchanged(codec)
