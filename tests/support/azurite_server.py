"""Azurite, Microsoft's Azure Blob Storage emulator, served on 127.0.0.1 for the tests.

Azurite is a Node.js package: it is installed once with npm into the tests' cache (under
``$ZARRKIT_TEST_CACHE`` or ``~/.cache/zarrkit-tests``, as zarr 2's venv is) and started once
per test session with its data in memory. Requests are signed with the emulator's well-known account
(`ACCOUNT`, `KEY`), so the clients run their real Azure code: Shared Key signatures, Azure's
conditional headers, its listing. Where Node.js is missing, or npm cannot install Azurite
(offline), the tests that need it are skipped, except under CI (`CI=true`), where a missing
server fails them: CI must run them.
"""

from __future__ import annotations

import base64
import email.utils
import hashlib
import hmac
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from zarr2_env import cache_root

from zarrkit.abc.store import SuffixRange

VERSION = "3.37.0"
#: the emulator's one account and its key, published with Azurite
ACCOUNT = "devstoreaccount1"
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


class Unavailable(RuntimeError):
    """Azurite cannot run here (no Node.js or npm)."""


def installed() -> Path:
    """The `azurite-blob` launcher, installing Azurite into the cache the first time (into a
    folder of its own first, then renamed: an interrupted install is not taken for one)."""
    where = cache_root() / f"azurite-{VERSION}"
    launcher = where / "node_modules" / ".bin" / "azurite-blob"
    if launcher.exists():
        return launcher
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        raise Unavailable("Azurite needs Node.js and npm, which are not on PATH")
    where.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f"azurite-{VERSION}-", dir=where.parent))
    command = [npm, "install", "--prefix", str(partial), "--no-audit", "--no-fund", "--silent"]
    try:
        subprocess.run([*command, f"azurite@{VERSION}"], check=True, timeout=600)
    except (subprocess.SubprocessError, OSError) as exc:  # offline, no registry, ...
        shutil.rmtree(partial, ignore_errors=True)
        raise Unavailable(f"npm could not install azurite@{VERSION}: {exc}") from exc
    try:
        partial.rename(where)
    except OSError:  # another run finished first
        shutil.rmtree(partial, ignore_errors=True)
    return launcher


class Azurite:
    """Azurite's blob service on a free port of 127.0.0.1, its data in memory."""

    def __init__(self) -> None:
        launcher = installed()
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self.endpoint = f"http://127.0.0.1:{port}/{ACCOUNT}"
        # what it says when it fails; a file, not a pipe nobody reads (which could fill and
        # stall it), kept open while it runs (closed by `stop`)
        self._errors = tempfile.TemporaryFile()  # noqa: SIM115
        self._process = subprocess.Popen(
            [
                str(launcher),
                "--blobHost",
                "127.0.0.1",
                "--blobPort",
                str(port),
                "--inMemoryPersistence",
                "--skipApiVersionCheck",
                "--silent",
            ],
            stdout=subprocess.DEVNULL,
            stderr=self._errors,
        )
        self._wait(port)

    def _wait(self, port: int, limit: float = 30.0) -> None:
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                self._errors.seek(0)
                error = self._errors.read().decode(errors="replace")
                raise RuntimeError(f"Azurite exited ({self._process.returncode}): {error}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"Azurite did not listen on port {port} within {limit} s")

    def create_container(self, name: str) -> None:
        """Make a container: a request of Azure's own API (obstore has none), signed with the
        account's Shared Key as Azure requires."""
        headers = {"x-ms-date": email.utils.formatdate(usegmt=True), "x-ms-version": "2021-08-06"}
        canonical = "".join(f"{k}:{v}\n" for k, v in sorted(headers.items()))
        # verb, eleven empty standard headers, the x-ms headers, the resource
        signed = f"PUT\n{chr(10) * 11}{canonical}/{ACCOUNT}/{ACCOUNT}/{name}\nrestype:container"
        digest = hmac.new(base64.b64decode(KEY), signed.encode(), hashlib.sha256).digest()
        request = urllib.request.Request(
            f"{self.endpoint}/{name}?restype=container",
            method="PUT",
            headers={
                **headers,
                "Authorization": f"SharedKey {ACCOUNT}:{base64.b64encode(digest).decode()}",
                "Content-Length": "0",
            },
        )
        urllib.request.urlopen(request, timeout=10).read()

    def options(self, **extra: Any) -> dict[str, Any]:
        """obstore's Azure options for this server: the account, its key and the endpoint."""
        return {
            "account_name": ACCOUNT,
            "account_key": KEY,
            "endpoint": self.endpoint,
            "client_options": {"allow_http": True, "timeout": "10s"},
            **extra,
        }

    def fsspec_options(self) -> dict[str, Any]:
        """adlfs's options for this server: a connection string with the account's key."""
        return {
            "connection_string": (
                f"DefaultEndpointsProtocol=http;AccountName={ACCOUNT};AccountKey={KEY};"
                f"BlobEndpoint={self.endpoint};"
            )
        }

    @contextmanager
    def proxied(self) -> Iterator[tuple[Any, str]]:
        """A proxy in front of this server (tests/support/store_servers.py `Proxy`: it counts requests
        and injects faults) and the account's endpoint through it."""
        from store_servers import Proxy, address, serving

        upstream = self.endpoint.split("//", 1)[1].split("/", 1)[0]
        with serving(Proxy(upstream)) as proxy:
            yield proxy, f"http://{address(proxy)}/{ACCOUNT}"

    def stop(self) -> None:
        """Kill it: its data is in memory, nothing to keep, and on SIGTERM it takes seconds
        to close connections clients keep open."""
        if self._process.poll() is None:
            self._process.kill()
            self._process.wait()
        self._errors.close()


def required_here() -> bool:
    """Whether a missing Azurite fails the tests (under CI) rather than skipping them."""
    return os.environ.get("CI", "").lower() == "true"


def read_end_while_replaced(store: Any, other: Any, traffic: Any) -> list[str]:
    """Read the last 30 bytes of a value through `store` while `other` (a store of the same
    place, not behind the proxy) replaces it as the second request reaches the proxy: check
    that the new value's end comes back, and return the methods the proxy saw."""
    store.set("k", bytes(100))
    new = bytes(range(250))

    def replace(number: int) -> None:
        if number == 2:  # the range's request, the size's answered: another writer
            other.set("k", new)

    traffic.requests.clear()
    traffic.on_request = replace
    assert store.get("k", SuffixRange(30)) == new[-30:]
    return [method for method, _, _ in traffic.requests]
