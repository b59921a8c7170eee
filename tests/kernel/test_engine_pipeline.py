"""Whole reads and writes on a store whose calls are round trips keep the network busy while
the CPU works: a read fetches its next batch while one decodes, and decodes each chunk soon
after its answer, a write stores what it has encoded while it encodes what comes next.
Checked by structure, not by timing: moto's S3 server behind the test bed's proxy
(tests/support/store_servers.py), a test codec that waits inside decode or encode, and the proxy
holding or watching requests."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from typing import Any, ClassVar

import numpy as np
import pytest
from store_servers import NetBed

import zarrkit as zk
from zarrkit import config
from zarrkit.abc import BytesBytesCodec, ChunkSpec
from zarrkit.abc.extension import names
from zarrkit.engine import batch_size
from zarrkit.errors import StoreError
from zarrkit.plugins.stores.memory import MemoryStore
from zarrkit.store_opening import open_store

#: seconds a gate waits before giving up (a hang guard: the awaited event comes at once)
HANG = 30.0
#: a chunk of float64 (4 MiB decoded, a few hundred bytes stored: constant values)
CHUNK = 1 << 19


class GateCodec(BytesBytesCodec):
    """The identity, whose decode waits for `decode_gate` (and sets `decoded`) and whose
    encode counts chunks (and past `encode_gate_after` of them waits for `encode_gate`); a
    wait that times out is recorded in `stuck`."""

    names = names("test.gate")
    decode_gate: ClassVar[threading.Event | None] = None
    encoded: ClassVar[int] = 0
    encoded_enough: ClassVar[threading.Event] = threading.Event()
    enough: ClassVar[int] = 0
    decoded: ClassVar[threading.Event] = threading.Event()
    encode_gate: ClassVar[threading.Event | None] = None
    encode_gate_after: ClassVar[int] = 0
    stuck: ClassVar[list[str]] = []
    lock: ClassVar[threading.Lock] = threading.Lock()

    @classmethod
    def reset(cls, *, enough: int = 0) -> None:
        cls.decode_gate = None
        cls.encoded = 0
        cls.enough = enough
        cls.encoded_enough = threading.Event()
        cls.decoded = threading.Event()
        cls.encode_gate = None
        cls.encode_gate_after = 0
        cls.stuck = []

    def encode(self, data: Any, spec: ChunkSpec) -> Any:
        cls = type(self)
        with cls.lock:
            cls.encoded += 1
            number = cls.encoded
            if cls.enough and cls.encoded >= cls.enough:
                cls.encoded_enough.set()
        gate = cls.encode_gate
        if gate is not None and number > cls.encode_gate_after and not gate.wait(HANG):
            cls.stuck.append("encode waited for the first upload")
            gate.set()  # (once is enough to fail)
        return data

    def decode(self, data: Any, spec: ChunkSpec) -> Any:
        gate = type(self).decode_gate
        if gate is not None and not gate.wait(HANG):
            type(self).stuck.append("decode waited for the next batch's requests")
        type(self).decoded.set()
        return data


@pytest.fixture(scope="module")
def bed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NetBed]:
    pytest.importorskip("s3fs")
    pytest.importorskip("moto.server")
    with NetBed(tmp_path_factory.mktemp("served")) as server:
        yield server


@pytest.fixture
def net(bed: NetBed, zarrkit_register: Any) -> Iterator[NetBed]:
    zarrkit_register("codec", GateCodec)
    GateCodec.reset()
    bed.set_delay(0.0)
    bed.reset()
    try:
        with config.override(threads=1):
            yield bed
    finally:
        bed.s3_proxy.traffic.on_request = None
        bed.s3_proxy.traffic.always = None
        GateCodec.reset()


def _array(bed: NetBed, chunks: int) -> tuple[str, zk.Array]:
    """An array of `chunks` chunks of `CHUNK` float64 through the gate codec."""
    url = f"s3://{bed.bucket}/{uuid.uuid4().hex}/data.zarr"
    a = zk.create_array(
        url,
        shape=(chunks * CHUNK,),
        chunks=(CHUNK,),
        dtype="float64",
        codecs=[{"name": "bytes"}, {"name": "test.gate"}, {"name": "zstd"}],
        storage_options=bed.s3_options(),
    )
    return url, a


def _two_batches(bed: NetBed) -> int:
    """Chunks making one batch of a whole read or write on the bed's S3 store, and one more."""
    store = open_store(f"s3://{bed.bucket}/x", storage_options=bed.s3_options())
    return batch_size(CHUNK * 8, store) + 1


def _path_of(bed: NetBed, number: int) -> tuple[str, str]:
    method, path, _ = bed.s3_proxy.traffic.requests[number - 1]
    return method, path.split("?", 1)[0]


@pytest.mark.network
def test_a_whole_read_fetches_the_next_batch_while_one_decodes(net: NetBed) -> None:
    """The first chunk's decode waits until the proxy has seen the request for the last
    chunk, which is in the next batch: read one batch after another, it never would."""
    chunks = _two_batches(net)
    url, a = _array(net, chunks)
    a[...] = 1.0
    last = f"/c/{chunks - 1}"
    gate = threading.Event()

    def watch(number: int) -> None:
        method, path = _path_of(net, number)
        if method == "GET" and path.endswith(last):
            gate.set()

    reader = zk.open_array(url, storage_options=net.s3_options())
    net.s3_proxy.traffic.on_request = watch
    GateCodec.decode_gate = gate
    values = reader[...]
    assert GateCodec.stuck == []
    assert values.shape == (chunks * CHUNK,) and bool((values == 1.0).all())
    assert len(net.s3_proxy.traffic.gets("/c/")) == chunks  # one request per chunk still


@pytest.mark.network
@pytest.mark.parametrize("held", [0, 2], ids=["first", "last"])
def test_a_whole_read_decodes_a_chunk_while_another_is_on_its_way(net: NetBed, held: int) -> None:
    """The proxy holds one chunk's request until a chunk has been decoded. Held last: a read
    that decoded only once all of a batch's answers were in would wait for it (a network read
    then ends with a whole batch's decoding after its last answer). Held first: a read that
    decoded its units in the order it asked for them would wait too (the server answers in
    its own order, and one late answer would hold up every unit after it)."""
    chunks = 3  # (one batch; each 4 MiB chunk a store call of its own)
    url, a = _array(net, chunks)
    a[...] = 5.0
    late: list[str] = []

    def hold(number: int) -> None:
        method, path = _path_of(net, number)
        if method == "GET" and path.endswith(f"/c/{held}") and not GateCodec.decoded.wait(HANG):
            late.append(f"chunk {held}'s answer came before any chunk was decoded")

    reader = zk.open_array(url, storage_options=net.s3_options())
    GateCodec.reset()
    net.s3_proxy.traffic.on_request = hold
    values = reader[...]
    assert late == []
    assert bool((values == 5.0).all())


@pytest.mark.network
def test_a_whole_write_encodes_the_next_chunks_while_one_is_stored(net: NetBed) -> None:
    """The proxy holds the first chunk's upload until every chunk has been encoded: stored
    one batch after another, the next batch would wait for it."""
    chunks = _two_batches(net)
    url, a = _array(net, chunks)
    GateCodec.reset(enough=chunks)
    held: list[str] = []

    def hold_first(number: int) -> None:
        method, path = _path_of(net, number)
        if method == "PUT" and path.endswith("/c/0") and not GateCodec.encoded_enough.wait(HANG):
            held.append("the upload waited for chunks still to be encoded")

    net.reset()
    net.s3_proxy.traffic.on_request = hold_first
    a[...] = 2.0
    net.s3_proxy.traffic.on_request = None
    assert held == []
    puts = [r for r in net.s3_proxy.traffic.requests if r[0] == "PUT" and "/c/" in r[1]]
    assert len(puts) == chunks  # one request per chunk still
    values = zk.open_array(url, storage_options=net.s3_options())[...]
    assert bool((values == 2.0).all())


@pytest.mark.network
def test_a_whole_writes_first_upload_starts_after_its_first_chunk(net: NetBed) -> None:
    """Encoding stops after two chunks until the proxy sees a chunk's upload: a write whose
    first group held a full group's worth of chunks would upload nothing by then."""
    url = f"s3://{net.bucket}/{uuid.uuid4().hex}/data.zarr"
    small = 1 << 13  # float64: 64 KiB chunks, which go in groups of many
    a = zk.create_array(
        url,
        shape=(40 * small,),
        chunks=(small,),
        dtype="float64",
        codecs=[{"name": "bytes"}, {"name": "test.gate"}],
        storage_options=net.s3_options(),
    )
    uploaded = threading.Event()

    def watch(number: int) -> None:
        method, path = _path_of(net, number)
        if method == "PUT" and "/c/" in path:
            uploaded.set()

    GateCodec.reset()
    GateCodec.encode_gate, GateCodec.encode_gate_after = uploaded, 2
    net.s3_proxy.traffic.on_request = watch
    a[...] = 6.0
    net.s3_proxy.traffic.on_request = None
    assert GateCodec.stuck == []
    assert bool((zk.open_array(url, storage_options=net.s3_options())[...] == 6.0).all())


@pytest.mark.network
def test_a_failed_upload_is_the_writes_store_error(net: NetBed) -> None:
    """A store error from an upload running beside the encoding is the write's error, as the
    store raised it (naming the key and the operation)."""
    chunks = _two_batches(net)
    # a filesystem of its own: answered without its bodies read, its connections are spent
    options = net.s3_options(skip_instance_cache=True)
    url = f"s3://{net.bucket}/{uuid.uuid4().hex}/data.zarr"
    a = zk.create_array(
        url, shape=(chunks * CHUNK,), chunks=(CHUNK,), dtype="float64", storage_options=options
    )
    net.s3_proxy.traffic.always = 403  # refused, not retried
    with pytest.raises(StoreError) as caught:
        a[...] = 3.0
    assert caught.value.operation == "write" and "'c/" in str(caught.value)


@pytest.mark.network
def test_a_failed_fetch_ahead_is_the_reads_store_error(net: NetBed) -> None:
    chunks = _two_batches(net)
    url, a = _array(net, chunks)
    a[...] = 4.0
    reader = zk.open_array(url, storage_options=net.s3_options())
    net.s3_proxy.traffic.always = 403
    with pytest.raises(StoreError) as caught:
        reader[...]
    assert caught.value.operation == "read" and "'c/" in str(caught.value)


# -- the same paths without a network: values round trip ---------------------------------------------
class RoundTripStore(MemoryStore):
    """A memory store that asks for what a remote store asks for, so the engine reads ahead
    and uploads beside encoding."""

    preferred_fetch_bytes = preferred_store_bytes = 1 << 10


@pytest.mark.parametrize("threads", [1, 2])
def test_reads_and_writes_over_several_batches_round_trip(threads: int) -> None:
    """Whole and partly covered chunks over several batches, chunks left all fill erased."""
    store = RoundTripStore()
    with config.override(threads=threads):
        a = zk.create_array(store, shape=(70, 70), chunks=(4, 4), dtype="int32", fill_value=0)
        assert batch_size(4 * 4 * 4, store) < 18 * 18  # several batches
        data = np.arange(70 * 70, dtype="int32").reshape(70, 70) + 1
        a[...] = data
        np.testing.assert_array_equal(a[...], data)
        data[3:57, 5:50] = -data[3:57, 5:50]
        a[3:57, 5:50] = data[3:57, 5:50]
        data[8:64, 8:64] = 0  # whole chunks all fill: erased
        a[8:64, 8:64] = 0
        np.testing.assert_array_equal(a[...], data)
        np.testing.assert_array_equal(a[1:69, 2:67], data[1:69, 2:67])
    assert "c/5/5" not in set(store.list())


def test_a_sharded_read_of_several_batches_decodes_shards_in_part() -> None:
    store = RoundTripStore()
    a = zk.create_array(
        store, shape=(120, 120), chunks=(4, 4), shards=(8, 8), dtype="uint16", fill_value=0
    )
    data = np.arange(120 * 120, dtype="uint16").reshape(120, 120)
    a[...] = data
    np.testing.assert_array_equal(a[1:119, 2:117], data[1:119, 2:117])
    np.testing.assert_array_equal(a[...], data)
