"""Which backend opens a plain `s3://` (or `s3a://`) URL: obstore where it can, else fsspec.

obstore serves S3 with fewer round trips in Python and more requests in flight than s3fs, so
it is the default when it is installed and the storage options given mean the same to it as
to s3fs (`s3_options`: s3fs's spellings translated, obstore's passed on). Otherwise (obstore
not installed, an option only s3fs knows, an environment obstore would read differently, no
endpoint nor region to go to) the fsspec store opens the URL, as before obstore existed, so
that nothing a user wrote for s3fs changes meaning. A session token or customer encryption key
(as an option or in the environment) keeps the URL with fsspec too: obstore would send it to
any origin a redirect leads to (`objectstore.carried_off_origin`), s3fs does not (`s3_guard`). `fsspec+s3://` and `obstore+s3://` pick
one backend whatever the options; the `store_schemes` setting
(`ZARRKIT_STORE_SCHEMES="s3=fsspec+s3"`) sends every `s3://` URL to one.

A process forked after its parent made obstore requests cannot make any (obstore's runtime
does not survive a fork), so there plain `s3://` opens fsspec; a store this module opened with
obstore is unpickled by choosing again, so an array handed to a forked worker (a fork-based
process pool pickles it) reads through fsspec there and through obstore in a spawned one.

`gs://` and `az://` are `cloud_routing`'s: fsspec's store where gcsfs or adlfs is installed, else
obstore's, their options not translated.
"""

from __future__ import annotations

import importlib.util
import os
from functools import partial
from typing import Any

from zarrkit.abc import Store, names
from zarrkit.errors import UntranslatableOptionsError
from zarrkit.plugins.stores.remote import s3_options


class S3Backends(Store):
    """Not a store itself: `from_url` answers the obstore store or the fsspec store."""

    names = names("s3", aliases=["s3a"])

    @classmethod
    def from_url(cls, url: str, *, mode: str = "r", **options: Any) -> Store:
        translated, _why_not = choose(options)
        if translated is not None:
            from zarrkit.plugins.stores.remote.objectstore import ObstoreStore

            store = ObstoreStore.from_url(url, mode=mode, **translated)
            store.reopen = partial(cls.from_url, url, mode=mode, **options)
            return store
        from zarrkit.plugins.stores.remote.fsspec import FsspecStore

        return FsspecStore.from_url(url, mode=mode, **options)


def choose(options: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """`options` for the obstore store (None when `s3://` goes to fsspec), and why."""
    if not installed("obstore"):
        return None, "obstore is not installed"
    from zarrkit.plugins.stores.remote import objectstore

    if not objectstore.usable_here():
        return None, "obstore cannot make requests here: forked after its parent used it"
    try:
        translated = s3_options.obstore_s3_options(options, os.environ)
    except UntranslatableOptionsError as exc:
        return None, str(exc)
    carried = objectstore.carried_off_origin("s3://", translated, os.environ)
    if carried:  # (obstore refuses them: see `objectstore`)
        return None, f"obstore would send {', '.join(carried)} to another origin on a redirect"
    return translated, "obstore"


def installed(package: str) -> bool:
    """Whether `package` can be imported, without importing it."""
    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):  # (blocked: `sys.modules["obstore"] = None`)
        return False
