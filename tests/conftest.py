"""Fixtures shared by the array and hierarchy tests: each test runs on both first-party stores."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from zarrkit.plugins.stores.local import LocalStore
from zarrkit.plugins.stores.memory import MemoryStore

# Hypothesis profiles: what every property test shares, and how many examples a test that does
# not set its own count draws (the fuzz tests). "dev", the default, keeps a local run quick;
# "ci" draws thousands and is chosen where CI=true (CI sets it) or by HYPOTHESIS_PROFILE=ci.
_SHARED = {
    "deadline": None,
    "database": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}
settings.register_profile("dev", max_examples=150, **_SHARED)
settings.register_profile("ci", max_examples=2500, **_SHARED)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE")
    or ("ci" if os.environ.get("CI", "").lower() == "true" else "dev")
)


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
    """zarr-python 2.18 in its own cached venv (see tests/zarr2_env.py)."""
    from zarr2_env import Zarr2

    return Zarr2.ensure()


@pytest.fixture(scope="module")
def moto(request: pytest.FixtureRequest) -> Iterator[Any]:
    """A moto S3 server on 127.0.0.1 for one test module, with the module's `BUCKET` made."""
    from store_servers import Moto

    server = Moto()
    server.create_bucket(request.module.BUCKET)
    yield server
    server.stop()
