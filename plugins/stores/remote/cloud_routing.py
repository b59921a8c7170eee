"""Which backend opens a plain `gs://` (`gcs://`) or `az://` (`abfs://`, `abfss://`) URL:
fsspec's store when the scheme's fsspec filesystem (gcsfs, adlfs) is installed, else obstore's.

Unlike `s3://` (`s3_routing`), the storage options are not translated between the two: gcsfs
and adlfs spell credentials and accounts their own way, and their URL forms differ. So a user
who installed gcsfs or adlfs keeps what their options mean. Without it, fsspec cannot open the
URL at all, and obstore, which serves GCS and Azure itself, opens it with the options as its
own (`account_name`, `service_account_key`, ...). `fsspec+gs://`, `obstore+az://`, ... pick one
backend whatever is installed; the `store_schemes` setting sends every URL of a scheme to one.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from zarrkit.abc import Store, names
from zarrkit.errors import PluginLoadError
from zarrkit.plugins.stores.remote.s3_routing import installed

#: the fsspec filesystem package each scheme needs, and zarrkit's extra that installs it
_FSSPEC_PACKAGES: dict[str, tuple[str, str]] = {
    "gs": ("gcsfs", "gcs"),
    "gcs": ("gcsfs", "gcs"),
    "az": ("adlfs", "azure"),
    "abfs": ("adlfs", "azure"),
    "abfss": ("adlfs", "azure"),
}


class CloudBackends(Store):
    """Not a store itself: `from_url` answers fsspec's store or obstore's."""

    names = names("gs", aliases=["gcs", "az", "abfs", "abfss"])

    @classmethod
    def from_url(cls, url: str, *, mode: str = "r", **options: Any) -> Store:
        scheme = url.split("://", 1)[0].lower()
        package, extra = _FSSPEC_PACKAGES[scheme]
        if installed(package) or not installed("obstore"):
            if not installed(package):
                raise PluginLoadError(
                    f"{scheme}:// URLs need fsspec's {package} (pip install "
                    f"'zarrkit[{extra}]') or obstore (pip install 'zarrkit[obstore]'); neither "
                    f"is installed"
                )
            from zarrkit.plugins.stores.remote.fsspec import FsspecStore

            return FsspecStore.from_url(url, mode=mode, **options)
        from zarrkit.plugins.stores.remote import objectstore

        if not objectstore.usable_here():
            raise PluginLoadError(
                f"{scheme}:// opens obstore's store here ({package} is not installed), and "
                f"obstore cannot make requests in a process forked after its parent used it: "
                f"start workers with 'spawn' or 'forkserver', or install {package}"
            )
        store = objectstore.ObstoreStore.from_url(url, mode=mode, **options)
        store.reopen = partial(cls.from_url, url, mode=mode, **options)
        return store
