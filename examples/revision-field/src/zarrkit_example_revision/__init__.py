"""`example.revision`: a top-level zarr.json field counting the times a node's document was
rewritten, as a third-party package would declare it to zarrkit.

    "example.revision": {"must_understand": true, "revision": 3}

`must_understand` is true on purpose: an implementation that does not keep the count must not
rewrite the node. With this package installed zarrkit reads such nodes, checks the field, and
bumps the count on every rewrite (attributes, resize).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from zarrkit.abc import FieldSite, MetadataField, names
from zarrkit.errors import MetadataError


class Revision(MetadataField):
    names = names("example.revision")  # v3 only; `node_types` defaults to arrays and groups

    def read(self, value: Any, site: FieldSite) -> Any:
        return {**value, "revision": _revision(value)}

    def write(self, value: Any, site: FieldSite) -> Any:
        return {**value, "revision": _revision(value) + 1}


def _revision(value: Any) -> int:
    if not isinstance(value, Mapping):
        raise MetadataError(f"expected an object, got {value!r}")
    revision = value.get("revision")
    if not isinstance(revision, int) or isinstance(revision, bool) or revision < 0:
        raise MetadataError(f"expected a non-negative integer, got {revision!r}", field="revision")
    return revision
