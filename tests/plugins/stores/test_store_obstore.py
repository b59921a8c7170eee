"""The obstore store against a real S3 API (moto's server on 127.0.0.1) and a real HTTP file
server, through the proxies of the latency test bed (tests/support/store_servers.py `NetBed`) where
requests are counted and faults injected."""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("obstore")
pytest.importorskip("moto.server")

from obstore_cases import QUICK_RETRIES, ObstoreStoreTests
from store_servers import Moto, NetBed
from zarrkit_testing.store_tests import ReadableStoreTests

import zarrkit as zk
from zarrkit import config
from zarrkit.abc.store import ByteRange, Store
from zarrkit.errors import ReadOnlyError, StoreError
from zarrkit.plugins.stores.local.local import LocalStore
from zarrkit.plugins.stores.remote.objectstore import ObstoreStore
from zarrkit.store_opening import open_store

pytestmark = pytest.mark.network


@pytest.fixture
def net(bed: NetBed) -> Iterator[NetBed]:
    for proxy in (bed.s3_proxy, bed.http_proxy):
        proxy.traffic.reset()
    yield bed
    for proxy in (bed.s3_proxy, bed.http_proxy):
        proxy.traffic.reset()


def options(bed: NetBed | Moto, **extra: Any) -> dict[str, Any]:
    """obstore's S3 options for the proxied moto server (or a plain one): few, quick retries."""
    return {
        "endpoint": bed.s3_endpoint if isinstance(bed, NetBed) else bed.endpoint,
        "access_key_id": "testing",
        "secret_access_key": "testing",
        "region": "us-east-1",
        "client_options": {"allow_http": True, "timeout": "10s"},
        "retry_config": QUICK_RETRIES,
        **extra,
    }


def _url(bed: NetBed) -> str:
    return f"obstore+s3://{bed.bucket}/{uuid.uuid4().hex}/data.zarr"


class TestObstoreS3(ObstoreStoreTests):
    @pytest.fixture
    def store(self, bed: NetBed) -> ObstoreStore:
        return ObstoreStore.from_url(_url(bed), mode="w", **options(bed))


class TestObstoreHttp(ReadableStoreTests):
    """obstore's HTTP backend over the bed's plain file server: read-only, not listable."""

    @pytest.fixture
    def store_with(self, bed: NetBed) -> Any:
        def fill(items: Mapping[str, bytes]) -> Store:
            name = uuid.uuid4().hex
            LocalStore(Path(bed.files.root) / name, mode="w").set_many(items)
            url = f"obstore+{bed.http_url}/{name}"
            return ObstoreStore.from_url(url, client_options={"allow_http": True})

        return fill


def test_arrays_round_trip_and_zarr_python_reads_them(net: NetBed) -> None:
    url = _url(net)
    data = np.arange(40 * 30, dtype="f8").reshape(40, 30)
    a = zk.create_array(
        url,
        shape=data.shape,
        chunks=(16, 16),
        shards=(32, 32),
        dtype="f8",
        storage_options=options(net),
    )
    a[...] = data
    np.testing.assert_array_equal(
        zk.open_array(url, storage_options=options(net))[3:37, 5:9], data[3:37, 5:9]
    )
    zarr = pytest.importorskip("zarr")
    from store_servers import s3_options

    fs_url = url.replace("obstore+", "")
    theirs = zarr.open_array(
        fs_url,
        mode="r",
        storage_options={
            "key": "testing",
            "secret": "testing",
            "client_kwargs": {"endpoint_url": net.s3_endpoint, "region_name": "us-east-1"},
        },
    )
    np.testing.assert_array_equal(theirs[...], data)
    assert s3_options  # (the fsspec spelling of the same server)


def test_s3_urls_go_to_obstore_by_configuration(net: NetBed) -> None:
    url = _url(net)
    with config.override(store_schemes={"s3": "obstore+s3"}):
        store = open_store(url.replace("obstore+", ""), mode="w", storage_options=options(net))
    assert isinstance(store, ObstoreStore)


def test_s3_urls_go_to_obstore_by_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZARRKIT_STORE_SCHEMES", "s3=obstore+s3; gs=obstore+gs")
    assert config.Settings().store_schemes == {"s3": "obstore+s3", "gs": "obstore+gs"}
    monkeypatch.setenv("ZARRKIT_STORE_SCHEMES", "s3")
    with pytest.raises(ValueError, match="ZARRKIT_STORE_SCHEMES"):
        config.Settings()


def test_http_reads_through_obstore(net: NetBed, tmp_path_factory: Any) -> None:
    root = Path(net.files.root)
    data = np.arange(100, dtype="i4")
    zk.create_array(str(root / "h.zarr"), shape=(100,), chunks=(10,), dtype="i4")[...] = data
    url = f"obstore+{net.http_url}/h.zarr"
    a = zk.open_array(url, storage_options={"client_options": {"allow_http": True}})
    np.testing.assert_array_equal(a[5:95], data[5:95])
    with pytest.raises(ReadOnlyError):
        a.store.set("x", b"1")


def test_get_ranges_merges_nearby_ranges_into_one_request(net: NetBed) -> None:
    store = ObstoreStore.from_url(_url(net), mode="w", **options(net))
    shard = bytes(range(256)) * 40
    store.set("shard", shard)
    net.s3_proxy.traffic.reset()
    requests = [("shard", ByteRange(i * 100, 100)) for i in range(0, 100, 2)]
    assert store.get_ranges(requests) == [shard[r.offset : r.offset + 100] for _, r in requests]
    assert len(net.s3_proxy.traffic.gets("shard")) == 1


def _array(net: NetBed) -> tuple[str, np.ndarray]:
    url = _url(net)
    data = np.arange(64, dtype="f4").reshape(8, 8) + 1
    zk.create_array(
        url, shape=(8, 8), chunks=(4, 4), dtype="f4", fill_value=0, storage_options=options(net)
    )[...] = data
    return url, data


def test_5xx_answers_raise_store_error_naming_key_and_operation(net: NetBed) -> None:
    url, _ = _array(net)
    array = zk.open_array(url, storage_options=options(net))
    net.s3_proxy.traffic.always = 500
    with pytest.raises(StoreError) as info:
        array[...]
    assert info.value.key is not None and info.value.key.startswith("c/")
    assert info.value.operation == "read" and "read" in str(info.value)
    assert len(net.s3_proxy.traffic.gets(info.value.key)) > 1  # retried before giving up


def test_throttling_is_retried(net: NetBed) -> None:
    url, data = _array(net)
    array = zk.open_array(url, storage_options=options(net))
    net.s3_proxy.traffic.faults = [503, 503]
    np.testing.assert_array_equal(array[...], data)


@pytest.mark.parametrize("fault", ["truncate", "drop"])
def test_a_cut_answer_is_retried_or_a_store_error(net: NetBed, fault: str) -> None:
    url, data = _array(net)
    array = zk.open_array(url, storage_options=options(net))
    net.s3_proxy.traffic.faults = [fault]
    np.testing.assert_array_equal(array[...], data)  # once: obstore asks again
    net.s3_proxy.traffic.always = fault
    with pytest.raises(StoreError) as info:
        array[...]
    assert info.value.key is not None


# -- guarded updates ------------------------------------------------------------------------------
def test_updates_are_conditional_puts_and_a_stale_one_is_computed_again(net: NetBed) -> None:
    """Another writer changes the key between this update's read and its write: the put is
    refused (If-Match), and compute runs again on the new value; nothing is lost."""
    store = ObstoreStore.from_url(_url(net), mode="w", **options(net))
    store.set("k", b"a")
    seen: list[bytes] = []

    def compute(keys: Any, old: Any) -> dict[str, bytes]:
        seen.append(bytes(old["k"]))
        if len(seen) == 1:  # another process writes in between
            ObstoreStore(store.backend, mode="a", root=store.root).set("k", b"ab")
        return {"k": bytes(old["k"]) + b"+"}

    net.s3_proxy.traffic.reset()
    store.update_many(["k"], compute)
    assert seen == [b"a", b"ab"]
    # the other writer's PUT, the refused conditional one, the one that went through
    assert [r[0] for r in net.s3_proxy.traffic.requests if r[0] == "PUT"] == ["PUT"] * 3
    assert store.get("k") == b"ab+"


def test_an_update_to_fill_erases_only_an_unchanged_key(net: NetBed) -> None:
    store = ObstoreStore.from_url(_url(net), mode="w", **options(net))
    store.set("k", b"a")
    calls: list[Any] = []

    def compute(keys: Any, old: Any) -> dict[str, bytes | None]:
        calls.append(old.get("k"))
        if len(calls) == 1:
            ObstoreStore(store.backend, mode="a", root=store.root).set("k", b"b")
            return {"k": None}  # erase what was read: refused, the key changed
        return {"k": bytes(old["k"]) + b"!"}

    store.update_many(["k"], compute)
    assert [bytes(c) for c in calls] == [b"a", b"b"] and store.get("k") == b"b!"
    store.update_many(["k"], lambda keys, old: {"k": None})
    assert not store.exists("k")


def test_which_backends_guard_updates(tmp_path: Path) -> None:
    import obstore.store

    memory = open_store(obstore.store.MemoryStore(), mode="w")
    local = open_store(obstore.store.LocalStore(tmp_path, mkdir=True), mode="w")
    assert isinstance(memory, ObstoreStore) and memory.safe_updates
    assert isinstance(local, ObstoreStore) and not local.safe_updates  # (no update mode)
    for store in (memory, local):
        store.set("k", b"1")
        store.update_many(["k"], lambda keys, old: {"k": bytes(old["k"]) + b"2"})
        assert store.get("k") == b"12"


def _request_in_child(url: str, opts: dict[str, Any], answers: Any) -> None:
    try:
        ObstoreStore.from_url(url, **opts).get("k")
        answers.put("no error")
    except StoreError as exc:
        answers.put(str(exc))


@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_a_forked_child_gets_an_error_not_a_hang(net: NetBed) -> None:
    """obstore's runtime does not survive a fork: its requests there would never end."""
    import multiprocessing

    url = _url(net)
    ObstoreStore.from_url(url, mode="w", **options(net)).set("k", b"1")
    context = multiprocessing.get_context("fork")
    answers = context.Queue()
    child = context.Process(target=_request_in_child, args=(url, options(net), answers))
    child.start()
    try:
        answer = answers.get(timeout=60)  # (a hang guard only)
    finally:
        child.join(60)
        if child.is_alive():
            child.kill()
    assert "forked" in answer and "spawn" in answer


# -- one HTTP client per configuration ---------------------------------------------------------------
def test_opening_again_reuses_the_client_and_other_credentials_get_their_own(
    net: NetBed, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Opening the same data again (each member of a group, an array at every step of a loop)
    reuses the HTTP client (building one holds the GIL a while); a client is never shared
    with other credentials, so every request is signed with the key it was opened with."""
    url = _url(net)
    data = np.arange(60, dtype="i4")
    zk.create_array(url, shape=(60,), chunks=(10,), dtype="i4", storage_options=options(net))[
        ...
    ] = data
    first = zk.open_array(url, storage_options=options(net))
    again = zk.open_array(url, storage_options=options(net))
    assert again.store.backend is first.store.backend  # type: ignore[attr-defined]
    # another array in the bucket: the same client, its own keys
    elsewhere = zk.create_array(_url(net), shape=(5,), dtype="i4", storage_options=options(net))
    elsewhere[...] = -1
    assert elsewhere.store.backend is first.store.backend  # type: ignore[attr-defined]
    assert elsewhere.store != first.store
    assert sorted(first.store.list()) == ["c/0", "c/1", "c/2", "c/3", "c/4", "c/5", "zarr.json"]
    np.testing.assert_array_equal(first[...], data)
    net.s3_proxy.traffic.reset()
    other = zk.open_array(url, storage_options=options(net, access_key_id="someone-else"))
    np.testing.assert_array_equal(other[...], data)
    theirs = list(net.s3_proxy.traffic.signers)
    np.testing.assert_array_equal(first[...], data)
    ours = net.s3_proxy.traffic.signers[len(theirs) :]
    assert theirs == ["someone-else"] * 7  # its metadata and 6 chunks
    assert ours == ["testing"] * 6
    # obstore reads its configuration from the environment too: a changed one is another
    # client (not a session token there: obstore would carry it off-origin, and is refused)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    renewed = zk.open_array(url, storage_options=options(net))
    assert renewed.store.backend is not first.store.backend  # type: ignore[attr-defined]
    # a configuration it cannot compare (here a credential provider) is never shared
    provided = options(net)
    del provided["access_key_id"], provided["secret_access_key"]

    def provider() -> dict[str, Any]:
        return {"access_key_id": "testing", "secret_access_key": "testing", "token": None}

    one = ObstoreStore.from_url(url, credential_provider=provider, **provided)
    two = ObstoreStore.from_url(url, credential_provider=provider, **provided)
    assert one.backend is not two.backend
