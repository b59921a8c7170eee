"""Credentials and redirects, for every store that follows HTTP redirects (the standard-library
HTTP store and fsspec's HTTP filesystem): the caller's headers never reach another origin, an
https -> http redirect is refused, and a redirect chain ends. Real servers on 127.0.0.1: two
ports are two origins, and one of them speaks TLS with a certificate made for the test."""

from __future__ import annotations

import ssl
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hostile_servers import CREDENTIALS, HostileServer, self_signed
from store_servers import serving

import zarrkit as zk
from zarrkit.errors import RedirectRefusedError, StoreError
from zarrkit.plugins.stores.remote.http import HttpStore

pytestmark = pytest.mark.network

DATA = np.arange(12 * 10, dtype="<i4").reshape(12, 10)


@pytest.fixture
def www(tmp_path: Path) -> Path:
    (tmp_path / "www").mkdir()
    return tmp_path / "www"


@pytest.fixture
def other(www: Path) -> Iterator[HostileServer]:
    """The origin a redirect leads to, holding the data."""
    with serving(HostileServer(www)) as running:
        yield running  # type: ignore[misc]


@pytest.fixture
def origin(www: Path) -> Iterator[HostileServer]:
    """The origin the caller names (and gives credentials for)."""
    with serving(HostileServer(www)) as running:
        yield running  # type: ignore[misc]


def _arrays(www: Path) -> str:
    """A plain and a sharded array under a fresh name in the served folder."""
    name = uuid.uuid4().hex
    root = zk.open_group(str(www / name), mode="w")
    root.create_array("plain", shape=DATA.shape, chunks=(5, 4), dtype="i4")[:] = DATA
    root.create_array("sharded", shape=DATA.shape, chunks=(6, 10), shards=(12, 10), dtype="i4")[
        :
    ] = DATA
    return name


# the two stores that follow redirects, opened as a user opens them
BACKENDS = ["stdlib", "fsspec"]


def _open(backend: str, url: str, path: str, headers: dict[str, str] | None = None) -> Any:
    options: dict[str, Any] = {"headers": dict(headers or CREDENTIALS)}
    if backend == "fsspec":
        pytest.importorskip("aiohttp")
        if url.startswith("https:"):  # aiohttp's own trust: the test's certificate (`tls`)
            options["ssl"] = ssl.create_default_context()
        url = f"fsspec+{url}"
    return zk.open_array(url, path=path, storage_options=options)


def _reads(array: Any) -> None:
    """Metadata, whole chunks and (sharded) byte ranges: every kind of read a user makes."""
    np.testing.assert_array_equal(array[...], DATA)
    np.testing.assert_array_equal(array[3, 2:7], DATA[3, 2:7])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("path", ["plain", "sharded"])
@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_cross_origin_redirects_never_carry_credentials(
    www: Path, origin: HostileServer, other: HostileServer, backend: str, path: str, status: int
) -> None:
    name = _arrays(www)
    origin.redirects["/"] = other.origin + "/"
    origin.redirect_status = status
    _reads(_open(backend, f"{origin.origin}/{name}", path))
    asked = other.paths()
    assert any(p.endswith("/zarr.json") for p in asked)  # metadata went there ...
    assert any("/c/" in p for p in asked)  # ... and chunks
    if path == "sharded":  # ... and byte ranges of shards
        assert any(h.get("range") for _, p, h in other.seen if "/c/" in p)
    assert other.credentials_seen() == []
    # the origin got them on every request: the test would see a leak
    assert {h for _, h in origin.credentials_seen()} == {k.lower() for k in CREDENTIALS}
    assert len(origin.credentials_seen()) == len(CREDENTIALS) * len(origin.seen)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("spelling", ["upper-case", "scheme-relative", "user-info", "host-case"])
def test_every_spelling_of_another_origin_is_another_origin(
    www: Path, origin: HostileServer, other: HostileServer, backend: str, spelling: str
) -> None:
    """Locations written to slip past a naive comparison: `HTTP://`, `//host:port/`, user info
    naming the caller's origin before the '@', and the same IP by another name."""
    name = _arrays(www)
    port = other.server_address[1]
    here = f"127.0.0.1:{origin.server_address[1]}"
    origin.redirects["/"] = {
        "upper-case": f"HTTP://127.0.0.1:{port}/",
        "scheme-relative": f"//127.0.0.1:{port}/",
        "user-info": f"http://{here}@127.0.0.1:{port}/",
        "host-case": f"http://LOCALHOST:{port}/",
    }[spelling]
    _reads(_open(backend, f"{origin.origin}/{name}", "plain"))
    assert other.paths() and other.credentials_seen() == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_same_origin_redirects_keep_credentials(
    www: Path, origin: HostileServer, backend: str
) -> None:
    name = _arrays(www)
    origin.redirects["/moved/"] = "/"  # a relative Location, on the same origin
    _reads(_open(backend, f"{origin.origin}/moved/{name}", "sharded"))
    landed = [h for _, p, h in origin.seen if not p.startswith("/moved/")]
    assert landed and all(
        h.get("authorization") == CREDENTIALS["Authorization"]
        and h.get("cookie") == CREDENTIALS["Cookie"]
        for h in landed
    )


def test_a_chain_that_leaves_the_origin_never_regains_credentials(
    www: Path, origin: HostileServer, other: HostileServer
) -> None:
    """origin -> other -> back to origin: the way back was chosen by the other origin, so the
    credentials stay off until the request ends."""
    name = _arrays(www)
    origin.redirects["/bounce/"] = other.origin + "/back/"
    other.redirects["/back/"] = origin.origin + "/"
    _reads(_open("stdlib", f"{origin.origin}/bounce/{name}", "plain"))
    assert other.credentials_seen() == []
    assert all(path.startswith("/bounce/") for path, _ in origin.credentials_seen())
    assert any(not p.startswith("/bounce/") for p in origin.paths())


@pytest.fixture
def tls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A server context with a fresh certificate for 127.0.0.1, which clients here trust."""
    try:
        cert, context = self_signed(tmp_path)
    except (OSError, Exception) as exc:  # no openssl binary: nothing to run https with
        pytest.skip(f"cannot make a certificate: {exc}")
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    return context


@pytest.mark.parametrize("backend", BACKENDS)
def test_https_to_http_redirect_is_refused(
    www: Path, other: HostileServer, tls: Any, backend: str
) -> None:
    name = _arrays(www)
    with serving(HostileServer(www, tls=tls)) as secure:
        assert isinstance(secure, HostileServer)
        # https itself works: the refusal below is about the redirect, not the certificate
        _reads(_open(backend, f"{secure.origin}/{name}", "plain"))
        secure.redirects["/"] = other.origin + "/"
        with pytest.raises(StoreError) as info:
            _open(backend, f"{secure.origin}/{name}", "plain")
    assert "https" in str(info.value) and other.origin in str(info.value)
    assert isinstance(info.value, RedirectRefusedError)
    assert other.seen == []  # not even one request in the clear


def test_redirects_to_other_schemes_are_refused(www: Path, origin: HostileServer) -> None:
    (www / "k").write_bytes(b"v")
    for target in (
        "file:///etc/passwd#",
        "ftp://127.0.0.1/",
        "gopher://127.0.0.1/",
        "http://127.0.0.1:99999/",
        "http://127.0.0.1:port/",
        "mailto:a@b.c",
        "http://[::1",
    ):
        origin.redirects["/"] = target
        with pytest.raises(RedirectRefusedError, match="not an http"):
            HttpStore(origin.origin).get("k")


@pytest.mark.parametrize("backend", BACKENDS)
def test_redirect_loops_end_in_an_error(www: Path, origin: HostileServer, backend: str) -> None:
    (www / "zarr.json").write_text("{}")
    origin.redirects["/"] = origin.origin + "/"  # every path to itself, forever
    start = time.monotonic()
    with pytest.raises(StoreError, match="(?i)redirect"):
        _open(backend, origin.origin, "")
    assert time.monotonic() - start < 10
    if backend == "stdlib":  # 10 redirects followed, the 11th answer refused
        assert len(origin.seen) == 11


def test_max_redirects_is_the_bound(www: Path, origin: HostileServer, other: HostileServer) -> None:
    (www / "k").write_bytes(b"v")
    origin.redirects["/"] = other.origin + "/"
    assert HttpStore(origin.origin, max_redirects=1).get("k") == b"v"
    with pytest.raises(StoreError, match="more than 0 redirects"):
        HttpStore(origin.origin, max_redirects=0).get("k")
    with pytest.raises(ValueError):
        HttpStore(origin.origin, max_redirects=-1)
