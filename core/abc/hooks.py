"""`hookimpl`: the marker of a hook implementation in a module registered under the
`zarrkit.hooks` entry-point group (pluggy; the hooks are specified in the kernel)."""

from __future__ import annotations

from ..hooks import hookimpl

__all__ = ["hookimpl"]
