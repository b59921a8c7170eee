"""Fixtures shared by the array and hierarchy tests: each test runs on both first-party stores."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from zarrkit.plugins.stores.local.local import LocalStore
from zarrkit.plugins.stores.memory import MemoryStore

# Hypothesis profiles, the one place that says how many examples a property test draws: "dev",
# the default, keeps a local run quick; "ci" draws a thousand, within CI's time budget for the
# whole suite, and is chosen where CI=true (CI services set it), by HYPOTHESIS_PROFILE=ci, or by pytest's --hypothesis-profile=ci.
_SHARED = {
    "deadline": None,
    "database": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}
settings.register_profile("dev", max_examples=80, **_SHARED)
settings.register_profile("ci", max_examples=1000, **_SHARED)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE")
    or ("ci" if os.environ.get("CI", "").lower() == "true" else "dev")
)

#: fixtures that start a server on 127.0.0.1, or need zarr 2 in its own venv: a test that uses
#: one, directly or through another fixture, carries the marker (see pyproject's `markers`)
_MARK_OF_FIXTURE = {
    "moto": "network",
    "http_root": "network",
    "hostile": "network",
    "bed": "network",
    "azurite": "network",
    "zarr2": "interop",
}


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        used = _MARK_OF_FIXTURE.keys() & set(getattr(item, "fixturenames", ()))
        for mark in sorted({_MARK_OF_FIXTURE[name] for name in used}):
            item.add_marker(mark)


@pytest.fixture(params=["memory", "local"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if request.param == "memory":
        return MemoryStore()
    return LocalStore(tmp_path / "store", mode="w")


@pytest.fixture(params=["memory", "local"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A place given as users give it: a memory:// URL or a filesystem path."""
    if request.param == "memory":
        return f"memory://test-{uuid.uuid4().hex}"
    return str(tmp_path / "data.zarr")


@pytest.fixture(scope="session")
def zarr2() -> Any:
    """zarr-python 2.18 in its own cached venv (see tests/support/zarr2_env.py)."""
    from zarr2_env import Zarr2

    return Zarr2.ensure()


@pytest.fixture(scope="module")
def bed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The latency test bed (`store_servers.NetBed`: moto and a file server behind delaying
    proxies) for one test module; a module that wants other settings defines its own."""
    from store_servers import NetBed

    with NetBed(tmp_path_factory.mktemp("served")) as server:
        yield server


@pytest.fixture(scope="session")
def azurite() -> Iterator[Any]:
    """Azurite (Azure Blob Storage's emulator) on 127.0.0.1 for the session, with a container
    `bed` made (tests/support/azurite_server.py); each test writes under a prefix of its own."""
    from azurite_server import Azurite, Unavailable, required_here

    try:
        server = Azurite()
    except Unavailable as exc:
        if required_here():
            raise
        pytest.skip(str(exc))
    server.create_container("bed")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def moto(request: pytest.FixtureRequest) -> Iterator[Any]:
    """A moto S3 server on 127.0.0.1 for one test module, with the module's `BUCKET` made."""
    from store_servers import Moto

    server = Moto()
    server.create_bucket(request.module.BUCKET)
    yield server
    server.stop()
