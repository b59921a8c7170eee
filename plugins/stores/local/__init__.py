"""Stores in this machine's files: a folder, a zip archive, an LMDB environment.

The folder store's two implementations register themselves with `local.LocalStore` as they
are defined, so both are imported with the package (`LocalStore(...)` chooses between them).
"""

from zarrkit.plugins.stores.local import portable, posix

__all__ = ["portable", "posix"]
