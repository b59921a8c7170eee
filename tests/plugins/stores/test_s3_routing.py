"""Which backend a plain `s3://` URL opens: obstore when it is installed and every storage
option means the same to it as to s3fs (`plugins/stores/remote/s3_options.py`), fsspec otherwise;
`fsspec+s3://`, `obstore+s3://` and the `store_schemes` setting choose one outright. The
translation is checked option by option, and the stores it opens against moto's server."""

from __future__ import annotations

import pickle
import sys
import uuid
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

pytest.importorskip("obstore")
pytest.importorskip("moto.server")

from process_cases import in_fork
from store_servers import Moto, s3_options

import zarrkit as zk
from zarrkit import config
from zarrkit.errors import UntranslatableOptionsError
from zarrkit.plugins.stores.remote.fsspec import FsspecStore
from zarrkit.plugins.stores.remote.objectstore import ObstoreStore
from zarrkit.plugins.stores.remote.s3_options import obstore_s3_options
from zarrkit.store_opening import open_store

BUCKET = "zarrkit-routing"
ENDPOINT = "http://127.0.0.1:9"
#: an environment with credentials, as a user of obstore would have
KEYS = {"AWS_ACCESS_KEY_ID": "id", "AWS_SECRET_ACCESS_KEY": "secret"}


# -- the translation, option by option ------------------------------------------------------------
@pytest.mark.parametrize(
    "given,expected",
    [
        ({"key": "k"}, {"access_key_id": "k"}),
        ({"username": "k"}, {"access_key_id": "k"}),
        ({"secret": "s"}, {"secret_access_key": "s"}),
        ({"password": "s"}, {"secret_access_key": "s"}),
        ({"token": "t"}, {"session_token": "t"}),
        ({"anon": True}, {"skip_signature": True}),
        ({"anon": False}, {}),
        ({"requester_pays": True}, {"request_payer": True}),
        ({"requester_pays": False}, {}),
        ({"use_ssl": True}, {}),
        (
            {"endpoint_url": "https://s3.example.org"},
            {"endpoint": "https://s3.example.org"},
        ),
        (
            {"client_kwargs": {"endpoint_url": "http://h:9000"}},
            {"endpoint": "http://h:9000", "client_options": {"allow_http": True}},
        ),
        ({"client_kwargs": {"region_name": "eu-west-1"}}, {"region": "eu-west-1"}),
        (  # s3fs: its own endpoint_url wins over client_kwargs'
            {"endpoint_url": "https://a.example", "client_kwargs": {"endpoint_url": "https://b"}},
            {"endpoint": "https://a.example"},
        ),
        ({"concurrency": 4}, {"concurrency": 4}),
        (  # None: s3fs's "not given"
            {"key": None, "endpoint_url": None, "client_kwargs": {"region_name": "us-east-1"}},
            {"region": "us-east-1"},
        ),
    ],
)
def test_each_s3fs_option_is_translated(given: dict[str, Any], expected: dict[str, Any]) -> None:
    where = {"region": "us-east-1"} if not {"endpoint_url", "client_kwargs"} & set(given) else {}
    got = obstore_s3_options({**given, **where}, KEYS)
    assert got == {**expected, **where}


@pytest.mark.parametrize(
    "given",
    [
        {"config_kwargs": {"connect_timeout": 5}},
        {"profile": "work"},
        {"version_aware": True},
        {"s3_additional_kwargs": {"ServerSideEncryption": "AES256"}},
        {"use_ssl": False},
        {"anon": "yes"},
        {"client_kwargs": {"verify": False}},
        {"client_kwargs": "http://h"},
        {"key": "a", "access_key_id": "b"},  # the same setting twice, differently
    ],
)
def test_an_option_only_s3fs_understands_is_untranslatable(given: dict[str, Any]) -> None:
    with pytest.raises(UntranslatableOptionsError):
        obstore_s3_options({"endpoint_url": ENDPOINT, **given}, KEYS)


def test_obstore_spelled_options_pass_as_they_are() -> None:
    given = {
        "endpoint": ENDPOINT,
        "access_key_id": "k",
        "secret_access_key": "s",
        "client_options": {"allow_http": True, "timeout": "10s"},
        "retry_config": {"max_retries": 2},
    }
    assert obstore_s3_options(given, {"AWS_ENDPOINT": "http://elsewhere"}) == given


@pytest.mark.parametrize(
    "given,environ,why",
    [
        ({"key": "k", "secret": "s"}, {}, "no endpoint and no region"),
        ({"endpoint_url": ENDPOINT}, {}, "no credentials"),
        (  # obstore would pair the environment's session token with the keys given
            {"endpoint_url": ENDPOINT, "key": "k", "secret": "s"},
            {"AWS_SESSION_TOKEN": "someone else's"},
            "AWS_SESSION_TOKEN",
        ),
        ({"endpoint_url": ENDPOINT, "anon": True}, {"AWS_ENDPOINT": "http://x"}, "AWS_ENDPOINT"),
        ({"endpoint_url": ENDPOINT, "key": "k"}, {"AWS_PROFILE": "work"}, "AWS_PROFILE"),
    ],
)
def test_what_obstore_would_do_differently_keeps_fsspec(
    given: dict[str, Any], environ: dict[str, str], why: str
) -> None:
    with pytest.raises(UntranslatableOptionsError, match=why):
        obstore_s3_options(given, environ)


def test_credentials_from_the_environment_or_none_needed() -> None:
    assert obstore_s3_options({"endpoint_url": ENDPOINT}, KEYS) == {
        "endpoint": ENDPOINT,
        "client_options": {"allow_http": True},
    }
    assert obstore_s3_options({"endpoint_url": ENDPOINT, "anon": True}, {})["skip_signature"]


# -- the stores it opens, on moto's server -------------------------------------------------------
@pytest.fixture(scope="module")
def moto() -> Iterator[Moto]:
    server = Moto()
    server.create_bucket(BUCKET)
    yield server
    server.stop()


def _url() -> str:
    return f"s3://{BUCKET}/{uuid.uuid4().hex}/data.zarr"


def _s3fs(moto: Moto) -> dict[str, Any]:
    """s3fs's spelling, every option of which obstore has."""
    return {
        "key": "testing",
        "secret": "testing",
        "client_kwargs": {"endpoint_url": moto.endpoint, "region_name": "us-east-1"},
    }


@pytest.fixture
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AWS_SESSION_TOKEN", "AWS_ENDPOINT", "AWS_PROFILE", "AWS_ENDPOINT_URL_S3"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.network
@pytest.mark.interop
def test_plain_s3_goes_to_obstore_and_zarr_python_reads_it(
    moto: Moto, clean_environment: None
) -> None:
    import zarr

    url = _url()
    data = np.arange(30 * 20, dtype="i4").reshape(30, 20)
    array = zk.create_array(
        url,
        shape=data.shape,
        chunks=(8, 8),
        shards=(16, 16),
        dtype="i4",
        storage_options=_s3fs(moto),
    )
    assert isinstance(array.store, ObstoreStore) and array.store.url == url
    array[...] = data
    theirs = zarr.open_array(url, mode="r+", storage_options=_s3fs(moto))
    np.testing.assert_array_equal(theirs[...], data)
    theirs[3:5, 2:19] = -7  # and what zarr-python writes, zarrkit reads
    data[3:5, 2:19] = -7
    np.testing.assert_array_equal(zk.open_array(url, storage_options=_s3fs(moto))[...], data)


@pytest.mark.network
def test_an_s3fs_only_option_keeps_fsspec(moto: Moto, clean_environment: None) -> None:
    url = _url()
    store = open_store(url, mode="w", storage_options=s3_options(moto.endpoint))  # config_kwargs
    assert isinstance(store, FsspecStore)
    store.set("k", b"1")
    assert open_store(url, storage_options=_s3fs(moto)).get("k") == b"1"  # (same data)


@pytest.mark.network
def test_explicit_backends_win_over_the_options(moto: Moto, clean_environment: None) -> None:
    url = _url()
    assert isinstance(
        open_store("fsspec+" + url, mode="w", storage_options=_s3fs(moto)), FsspecStore
    )
    obstore_options = {
        "endpoint": moto.endpoint,
        "access_key_id": "testing",
        "secret_access_key": "testing",
        "client_options": {"allow_http": True},
    }
    assert isinstance(open_store(url, storage_options=obstore_options), ObstoreStore)
    assert isinstance(open_store("obstore+" + url, storage_options=obstore_options), ObstoreStore)
    with config.override(store_schemes={"s3": "fsspec+s3"}):
        assert isinstance(open_store(url, storage_options=_s3fs(moto)), FsspecStore)


@pytest.mark.network
def test_without_obstore_plain_s3_is_fsspec(
    moto: Moto, clean_environment: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "obstore", None)  # (as if not installed)
    store = open_store(_url(), mode="w", storage_options=_s3fs(moto))
    assert isinstance(store, FsspecStore)
    store.set("k", b"1")
    assert store.get("k") == b"1"


@pytest.mark.network
def test_a_session_token_in_the_environment_never_joins_given_keys(
    moto: Moto, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_SESSION_TOKEN", "belongs-to-another-account")
    store = open_store(_url(), mode="w", storage_options=_s3fs(moto))
    assert isinstance(store, FsspecStore)


# -- fork: obstore's runtime does not survive it, so a forked child chooses fsspec ------------
def _opened_in_parent(moto: Moto) -> tuple[str, Any, np.ndarray]:
    """An array written through plain s3:// (obstore), so this process has used obstore."""
    url = _url()
    data = np.arange(12 * 10, dtype="f8").reshape(12, 10)
    array = zk.create_array(
        url, shape=data.shape, chunks=(5, 5), dtype="f8", storage_options=_s3fs(moto)
    )
    array[...] = data
    assert isinstance(array.store, ObstoreStore)
    return url, array, data


@pytest.mark.network
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded")
def test_a_forked_child_opens_plain_s3_through_fsspec(moto: Moto, clean_environment: None) -> None:
    url, _, data = _opened_in_parent(moto)

    def child() -> tuple[str, list[float]]:
        array = zk.open_array(url, storage_options=_s3fs(moto))
        return type(array.store).__name__, array[...].ravel().tolist()

    kind, values = in_fork(child)
    assert kind == "FsspecStore" and values == data.ravel().tolist()


@pytest.mark.network
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded")
def test_an_array_inherited_by_a_forked_child_reads_and_writes_there(
    moto: Moto, clean_environment: None
) -> None:
    """As a DataLoader-style worker uses the handles it inherits, without unpickling them:
    the plain-s3:// handle opens itself again through fsspec in the child (issue 44 item 12)."""
    _, array, data = _opened_in_parent(moto)

    def child() -> tuple[str, list[float], int]:
        values = array[2:7, 3:9].ravel().tolist()
        array[0, 0] = -1.0  # a write through the inherited handle too
        return type(array.store).__name__, values, array.nchunks_initialized

    kind, values, stored = in_fork(child)
    assert kind == "ObstoreStore"  # the handle is the parent's; its calls went to fsspec
    assert values == data[2:7, 3:9].ravel().tolist()
    assert stored == 6
    assert array[0, 0] == -1.0  # the parent, on obstore still, reads the child's write
    np.testing.assert_array_equal(array[1:, 1:], data[1:, 1:])


@pytest.mark.network
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded")
def test_an_array_pickled_into_a_forked_child_reads_there(
    moto: Moto, clean_environment: None
) -> None:
    """As a fork-based process pool hands an array to its workers: pickled, then unpickled in
    the child, where the store is chosen again."""
    _, array, data = _opened_in_parent(moto)
    pickled = pickle.dumps(array)
    again = pickle.loads(pickled)  # here obstore still works: obstore again
    assert isinstance(again.store, ObstoreStore)
    np.testing.assert_array_equal(again[...], data)

    def child() -> tuple[str, list[float]]:
        theirs = pickle.loads(pickled)
        return type(theirs.store).__name__, theirs[2:7, 3:9].ravel().tolist()

    kind, values = in_fork(child)
    assert kind == "FsspecStore" and values == data[2:7, 3:9].ravel().tolist()
