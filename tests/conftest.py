"""Fixtures shared by the array and hierarchy tests: each test runs on both first-party stores."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from zarrkit.plugins.stores.local import LocalStore
from zarrkit.plugins.stores.memory import MemoryStore


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
