"""zarrkit's pytest plugin (entry point `pytest11: zarrkit`), for zarrkit and its plugin authors.

pytest imports this module in every run of every project where zarrkit is installed, so it
imports nothing but pytest and the standard library at import time; zarrkit itself is imported
inside the fixtures that need it.

Fixtures:
  fake_distribution  install a real fake distribution (entry points + modules) for one test
  zarrkit_register   register an extension class at runtime for one test

Conformance suites (e.g. `StoreTests`) will be re-exported from here as well.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

FakeDistribution = Callable[..., Path]
Register = Callable[..., Any]


@pytest.fixture
def fake_distribution(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FakeDistribution]:
    """A factory installing fake distributions into a fresh site folder for this test only.

    `fake_distribution(name, entry_points={group: {ep_name: "mod:attr"}}, modules={mod: src},
    version="1.0")` returns the dist-info folder. The registries rescan after each call, and
    at teardown the folder leaves `sys.path`, its modules leave `sys.modules` and the
    registries rescan again, so no test sees another's plugins.
    """
    from zarrkit_testing import fake_dist

    site_dir = tmp_path_factory.mktemp("site-packages")
    on_path = False
    with ExitStack() as stack:

        def install(
            name: str,
            *,
            entry_points: Mapping[str, Mapping[str, str]] | None = None,
            modules: Mapping[str, str] | None = None,
            version: str = "1.0",
        ) -> Path:
            nonlocal on_path
            dist_info = fake_dist.make_distribution(site_dir, name, version, entry_points, modules)
            if not on_path:  # first distribution of this test: put the folder on sys.path
                stack.enter_context(fake_dist.installed(site_dir))
                on_path = True
            else:
                fake_dist.rescan()
            return dist_info

        yield install


@pytest.fixture
def zarrkit_register() -> Iterator[Register]:
    """A factory `zarrkit_register(kind, cls, name=None)` registering at runtime for one test.

    Returns the registration handle; every registration is taken back at teardown, newest
    first, even when the test already took some back itself.
    """
    from zarrkit import registry

    handles: list[Any] = []

    def register(kind: str, cls: type, name: str | None = None) -> Any:
        handle = registry.register(kind, cls, name=name)
        handles.append(handle)
        return handle

    yield register
    for handle in reversed(handles):
        try:
            registry.unregister(handle)
        except ValueError:  # the test unregistered it already
            pass
