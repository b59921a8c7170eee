"""Credentials across origins on the S3 backends (the standard-library HTTP store and fsspec's
are `test_store_http_redirects`'): a redirect to another origin never carries the S3 session
token (`x-amz-security-token`) there; s3fs follows the redirect without it.

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
from hostile_servers import HostileServer
from store_servers import serving

import zarrkit as zk
from zarrkit.plugins.stores.fsspec import FsspecStore

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


@pytest.mark.parametrize("scheme", ["fsspec+s3"])
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
    assert isinstance(array.store, FsspecStore)
    np.testing.assert_array_equal(array[...], DATA)
    np.testing.assert_array_equal(array[3, 2:7], DATA[3, 2:7])
    asked = [p for _, p, _ in other.seen]
    assert any(p.endswith("/zarr.json") for p in asked) and any("/c/" in p for p in asked)
    assert set(_tokens(other)) == {""}
    assert all(not h.get("authorization") for _, _, h in other.seen)
    assert set(_tokens(origin)) == {TOKEN}  # the origin got it on every request
