"""Credentials across origins on the S3 backends and obstore's HTTP backend (the standard-library
HTTP store and fsspec's are `test_store_http_redirects`'): a redirect to another origin never
carries the S3 session token (`x-amz-security-token`) nor a caller's header there. s3fs follows
the redirect without them; obstore, whose client follows redirects with every header but
`Authorization`, `Cookie` and `Proxy-Authorization` and cannot be told otherwise, is refused
such credentials when it is opened (plain `s3://` goes to s3fs then).

Real servers on 127.0.0.1: two ports are two origins, each recording every request's headers;
with the headers S3 clients need, a folder `bucket/...` is served as S3's path-style GETs.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hostile_servers import CREDENTIALS, HostileServer
from store_servers import serving

import zarrkit as zk
from zarrkit.errors import StoreError
from zarrkit.plugins.stores.remote.fsspec import FsspecStore

pytestmark = pytest.mark.network

BUCKET = "bucket"
TOKEN = "secret-session-token"
DATA = np.arange(12 * 10, dtype="<i4").reshape(12, 10)


@pytest.fixture
def www(tmp_path: Path) -> Path:
    (tmp_path / "www" / BUCKET).mkdir(parents=True)
    return tmp_path / "www"


@pytest.fixture
def origin(www: Path) -> Iterator[HostileServer]:
    """The endpoint the caller names (and gives credentials for)."""
    with serving(HostileServer(www, object_headers=True)) as running:
        yield running  # type: ignore[misc]


@pytest.fixture
def other(www: Path) -> Iterator[HostileServer]:
    """The origin a redirect leads to, holding the same data."""
    with serving(HostileServer(www, object_headers=True)) as running:
        yield running  # type: ignore[misc]


def _arrays(www: Path) -> str:
    """A plain and a sharded array in the bucket, under a fresh name."""
    name = uuid.uuid4().hex
    root = zk.open_group(str(www / BUCKET / name), mode="w")
    root.create_array("plain", shape=DATA.shape, chunks=(5, 4), dtype="i4")[:] = DATA
    sharded = root.create_array(
        "sharded", shape=DATA.shape, chunks=(6, 10), shards=(12, 10), dtype="i4"
    )
    sharded[:] = DATA
    return name


def _s3fs_options(server: HostileServer) -> dict[str, Any]:
    """Temporary credentials, as s3fs takes them."""
    return {
        "key": "testing",
        "secret": "testing",
        "token": TOKEN,
        "client_kwargs": {"endpoint_url": server.origin, "region_name": "us-east-1"},
    }


def _tokens(server: HostileServer) -> list[str]:
    """Every request's session token header at `server` ("" where a request had none)."""
    with server.lock:
        return [h.get("x-amz-security-token", "") for _, _, h in server.seen]


@pytest.mark.parametrize("scheme", ["s3", "fsspec+s3"])
@pytest.mark.parametrize("path", ["plain", "sharded"])
@pytest.mark.parametrize("status", [301, 302, 307, 308])
def test_s3_redirects_to_another_origin_never_carry_the_session_token(
    www: Path,
    origin: HostileServer,
    other: HostileServer,
    scheme: str,
    path: str,
    status: int,
) -> None:
    pytest.importorskip("s3fs")
    name = _arrays(www)
    origin.redirects["/"] = other.origin + "/"
    origin.redirect_status = status
    url = f"{scheme}://{BUCKET}/{name}"
    array = zk.open_array(url, path=path, storage_options=_s3fs_options(origin))
    assert isinstance(array.store, FsspecStore)  # (plain s3:// too: obstore would carry it)
    np.testing.assert_array_equal(array[...], DATA)
    np.testing.assert_array_equal(array[3, 2:7], DATA[3, 2:7])
    asked = [p for _, p, _ in other.seen]
    assert any(p.endswith("/zarr.json") for p in asked) and any("/c/" in p for p in asked)
    assert set(_tokens(other)) == {""}
    assert all(not h.get("authorization") for _, _, h in other.seen)
    assert set(_tokens(origin)) == {TOKEN}  # the origin got it on every request


@pytest.mark.parametrize(
    "options",
    [
        {"session_token": TOKEN},
        {"token": TOKEN},
        {"sse_customer_key_base64": "a2V5"},
    ],
    ids=["session_token", "token", "sse-c"],
)
def test_obstore_s3_with_a_credential_in_a_header_is_refused_before_any_request(
    www: Path, origin: HostileServer, options: dict[str, Any]
) -> None:
    pytest.importorskip("obstore")
    name = _arrays(www)
    given = {
        "endpoint": origin.origin,
        "access_key_id": "testing",
        "secret_access_key": "testing",
        "region": "us-east-1",
        "client_options": {"allow_http": True},
        **options,
    }
    with pytest.raises(StoreError) as info:
        zk.open_array(f"obstore+s3://{BUCKET}/{name}", path="plain", storage_options=given)
    assert info.value.operation == "open" and "redirect" in str(info.value)
    assert next(iter(options)) in str(info.value) and "fsspec+s3://" in str(info.value)
    assert origin.seen == []


def test_obstore_s3_with_a_session_token_in_the_environment_is_refused(
    www: Path, origin: HostileServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("obstore")
    monkeypatch.setenv("AWS_SESSION_TOKEN", TOKEN)
    given = {
        "endpoint": origin.origin,
        "access_key_id": "testing",
        "secret_access_key": "testing",
        "region": "us-east-1",
        "client_options": {"allow_http": True},
    }
    with pytest.raises(StoreError, match=r"\$AWS_SESSION_TOKEN"):
        zk.open_array(f"obstore+s3://{BUCKET}/{_arrays(www)}", path="plain", storage_options=given)
    assert origin.seen == []


def _obstore_http(headers: dict[str, str]) -> dict[str, Any]:
    return {"client_options": {"allow_http": True, "default_headers": headers}}


def test_obstore_http_with_a_caller_header_is_refused_before_any_request(
    www: Path, origin: HostileServer
) -> None:
    pytest.importorskip("obstore")
    name = _arrays(www)
    url = f"obstore+{origin.origin}/{BUCKET}/{name}"
    with pytest.raises(StoreError) as info:
        zk.open_array(url, path="plain", storage_options=_obstore_http(CREDENTIALS))
    assert info.value.operation == "open" and "'X-Api-Key'" in str(info.value)
    assert "http(s)://" in str(info.value)
    assert origin.seen == []


@pytest.mark.parametrize("status", [302, 307])
def test_obstore_http_keeps_the_headers_its_client_drops_on_their_origin(
    www: Path, origin: HostileServer, other: HostileServer, status: int
) -> None:
    """`Authorization`, `Cookie` and `Proxy-Authorization` are allowed: obstore's client drops
    them on another origin itself."""
    pytest.importorskip("obstore")
    name = _arrays(www)
    origin.redirects["/"] = other.origin + "/"
    origin.redirect_status = status
    dropped = {k: v for k, v in CREDENTIALS.items() if k != "X-Api-Key"}
    url = f"obstore+{origin.origin}/{BUCKET}/{name}"
    array = zk.open_array(url, path="sharded", storage_options=_obstore_http(dropped))
    np.testing.assert_array_equal(array[...], DATA)
    assert other.seen and other.credentials_seen() == []
    assert {h for _, h in origin.credentials_seen()} == {k.lower() for k in dropped}
