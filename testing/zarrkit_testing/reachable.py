"""Making the plugin a suite tests the one its name resolves to, for the length of one test.

A suite may test a class that no entry point installs (a plugin under development, a test's
own broken variant), or one that an installed plugin of the same name would shadow; the
suite's tests look the name up like any user would, so the class is registered for the test
and unregistered after it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from zarrkit import registry
from zarrkit.abc import V3
from zarrkit.errors import UnknownExtensionError


@contextmanager
def reachable(kind: str, cls: type, name: str | None) -> Iterator[None]:
    """Hold `cls` registered as a `kind` plugin while its v3 `name` resolves to another class
    (or to none); a class without a v3 name is registered outright."""
    handle = None
    found: type | None = None
    if name is not None:
        try:
            found = registry.lookup(kind, name, V3)
        except UnknownExtensionError:
            found = None
    if found is not cls:
        handle = registry.register(kind, cls)
    try:
        yield
    finally:
        if handle is not None:
            registry.unregister(handle)
