"""zarr-python's own store conformance suite and stateful machines, run on zarrkit's stores as
zarr-python stores (`zarrkit.zarr_python.as_zarr_store` / `ZarrkitZarrStore`).

`zarr.testing.store.StoreTests` (in zarr-python's wheel) is what zarr-python holds its own
stores to; `zarr.testing.stateful` drives a store, and a hierarchy of groups and arrays made by
zarr-python's own API on it, through random sequences of operations and compares each step
with a model. Passing them is what "zarrkit's stores work under zarr-python" means.

The suite's tests and fixtures are coroutines: they run under pytest-asyncio, each coroutine
test marked here (`_asyncio_for_coroutines`) and the suite's two async fixtures re-declared
through `pytest_asyncio`; pytest-asyncio's strict mode runs nothing else, so no other test in
the repository runs differently.
"""

from __future__ import annotations

import functools
import inspect
import pickle
from pathlib import Path
from typing import Any, TypeVar

import pytest

pytest.importorskip("pytest_asyncio")
zarr = pytest.importorskip("zarr")

import pytest_asyncio  # noqa: E402  (after the skips: without them the module is skipped)
from hypothesis import HealthCheck, settings  # noqa: E402
from hypothesis.stateful import run_state_machine_as_test  # noqa: E402
from zarr.core.buffer import Buffer, cpu, default_buffer_prototype  # noqa: E402
from zarr.testing.stateful import (  # noqa: E402
    ZarrHierarchyStateMachine,
    ZarrStoreStateMachine,
)
from zarr.testing.store import StoreTests  # noqa: E402

from zarrkit.abc import Store as ZarrkitStore  # noqa: E402
from zarrkit.helpers import open_store  # noqa: E402
from zarrkit.zarr_python import ZarrkitZarrStore, as_zarr_store  # noqa: E402

pytestmark = pytest.mark.interop


_Suite = TypeVar("_Suite", bound=type)


def _asyncio_for_coroutines(suite: _Suite) -> _Suite:
    """`suite` with each inherited coroutine test marked for pytest-asyncio (a function-scoped
    loop) through a wrapper of its own, so zarr-python's functions are left unmarked."""
    for name, test in inspect.getmembers(suite, inspect.iscoroutinefunction):
        if name.startswith("test_"):

            @functools.wraps(test)
            async def marked(*args: Any, __test: Any = test, **kwargs: Any) -> None:
                await __test(*args, **kwargs)

            setattr(suite, name, pytest.mark.asyncio(loop_scope="function")(marked))
    return suite


def _zarrkit_store(kind: str, tmp_path: Path) -> ZarrkitStore:
    """A new, empty zarrkit store of one kind, writable."""
    if kind == "memory":
        return open_store("memory://", mode="w")
    if kind == "local":
        return open_store(str(tmp_path / "local.zarr"), mode="w")
    return open_store(f"zip://{tmp_path / 'data.zip'}", mode="w")


class _AdapterStoreTests(StoreTests[ZarrkitZarrStore, cpu.Buffer]):
    """StoreTests on the adapter over one kind of zarrkit store (`kind`)."""

    store_cls = ZarrkitZarrStore
    buffer_cls = cpu.Buffer
    kind: str

    # (the suite's `set`/`get` reach the storage without the store under test)
    async def set(self, store: ZarrkitZarrStore, key: str, value: Buffer) -> None:
        store.zarrkit_store.set(key, value.to_bytes())

    async def get(self, store: ZarrkitZarrStore, key: str) -> Buffer:
        value = store.zarrkit_store.get(key)
        assert value is not None, key
        return self.buffer_cls.from_bytes(bytes(value))

    @pytest.fixture
    def store_kwargs(self, tmp_path: Path) -> dict[str, Any]:
        return {"store": _zarrkit_store(self.kind, tmp_path), "read_only": False}

    # the suite's async fixtures, as pytest-asyncio fixtures (its strict mode runs only these)
    @pytest_asyncio.fixture(loop_scope="function")
    async def store(self, open_kwargs: dict[str, Any]) -> ZarrkitZarrStore:
        return await self.store_cls.open(**open_kwargs)

    @pytest_asyncio.fixture(loop_scope="function")
    async def store_not_open(self, store_kwargs: dict[str, Any]) -> ZarrkitZarrStore:
        return self.store_cls(**store_kwargs)

    def test_store_repr(self, store: ZarrkitZarrStore) -> None:
        assert repr(store) == f"ZarrkitZarrStore({store.zarrkit_store!r})"

    def test_store_supports_writes(self, store: ZarrkitZarrStore) -> None:
        assert store.supports_writes

    def test_store_supports_listing(self, store: ZarrkitZarrStore) -> None:
        assert store.supports_listing

    def test_a_pickled_adapter_reads_what_the_original_wrote(self, store: ZarrkitZarrStore) -> None:
        """(beyond the suite: the copy is the same storage, not an equal empty one)"""
        zarr.create_array(store, shape=(3,), dtype="i2", fill_value=7)
        copy = pickle.loads(pickle.dumps(store))
        if self.kind == "memory":  # a private memory store is this process's: a copy is new
            assert copy == store
        else:
            assert zarr.open_array(copy)[:].tolist() == [7, 7, 7]


@_asyncio_for_coroutines
class TestMemoryStoreThroughZarrPython(_AdapterStoreTests):
    kind = "memory"


@_asyncio_for_coroutines
class TestLocalStoreThroughZarrPython(_AdapterStoreTests):
    kind = "local"


@_asyncio_for_coroutines
class TestZipStoreThroughZarrPython(_AdapterStoreTests):
    kind = "zip"


# -- the stateful machines -----------------------------------------------------------------------
# Each machine runs a bounded number of random programs, the same ones on every run
# (derandomize): CI has 2 shared cores and a few minutes for this module, and a failure found
# here must reproduce on the next run. zarr-python runs them unbounded on its own stores.
_MACHINE_SETTINGS = settings(
    max_examples=12,
    stateful_step_count=15,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


@pytest.fixture(params=["memory", "local", "zip"])
def adapter(request: pytest.FixtureRequest, tmp_path: Path) -> ZarrkitZarrStore:
    store = as_zarr_store(_zarrkit_store(request.param, tmp_path), mode="a")
    assert isinstance(store, ZarrkitZarrStore)
    return store


@pytest.mark.filterwarnings("ignore::zarr.core.dtype.common.UnstableSpecificationWarning")
def test_zarr_python_hierarchy_machine(adapter: ZarrkitZarrStore) -> None:
    run_state_machine_as_test(  # type: ignore[no-untyped-call]
        lambda: ZarrHierarchyStateMachine(adapter), settings=_MACHINE_SETTINGS
    )


def test_zarr_python_store_machine(adapter: ZarrkitZarrStore) -> None:
    run_state_machine_as_test(  # type: ignore[no-untyped-call]
        lambda: ZarrStoreStateMachine(adapter), settings=_MACHINE_SETTINGS
    )


def test_the_machines_buffers_come_back_as_written(adapter: ZarrkitZarrStore) -> None:
    """(a check that the machines compare real data: a written value reads back equal)"""
    prototype = default_buffer_prototype()
    zarr.core.sync.sync(adapter.set("k/0", cpu.Buffer.from_bytes(b"\x00\xff")))
    got = zarr.core.sync.sync(adapter.get("k/0", prototype))
    assert got is not None and got.to_bytes() == b"\x00\xff"
