"""Which backend a plain `gs://` or `az://` URL opens (`plugins/stores/remote/cloud_routing.py`):
fsspec's store when gcsfs or adlfs is installed, else obstore's, else an error naming both.
Requests to Azure through `az://` are in test_store_obstore_azure.py; there is no GCS server
here that speaks the API obstore uses, so the GCS store is checked as opened, not used."""

from __future__ import annotations

import sys

import pytest

from zarrkit.errors import PluginLoadError
from zarrkit.store_opening import open_store

pytest.importorskip("obstore")

from zarrkit.plugins.stores.remote.objectstore import ObstoreStore


@pytest.mark.parametrize("url", ["gs://bucket/x.zarr", "gcs://bucket/x.zarr"])
def test_gs_urls_open_obstore_where_gcsfs_is_missing(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "gcsfs", None)  # (not installed, whatever this venv has)
    store = open_store(url, storage_options={"skip_signature": True})
    assert isinstance(store, ObstoreStore)
    assert type(store.backend).__name__ == "GCSStore"
    assert store.url == url


@pytest.mark.parametrize(
    "url,package", [("gs://bucket/x.zarr", "gcsfs"), ("az://container/x.zarr", "adlfs")]
)
def test_without_either_backend_the_error_names_both(
    url: str, package: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, package, None)
    monkeypatch.setitem(sys.modules, "obstore", None)
    with pytest.raises(PluginLoadError, match=f"{package}.*obstore"):
        open_store(url)
