"""What the obstore store's test modules share, whatever the backend (S3 on moto, Azure on
Azurite): the contract suite's obstore specifics and obstore's options for quick retries."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from zarrkit_testing.store_tests import StoreTests

from zarrkit.abc.store import Store
from zarrkit.plugins.stores.remote.objectstore import ObstoreStore

#: obstore's `retry_config` for a test server: two retries, backoff of milliseconds
QUICK_RETRIES: dict[str, Any] = {
    "max_retries": 2,
    "retry_timeout": timedelta(seconds=5),
    "backoff": {
        "init_backoff": timedelta(milliseconds=10),
        "max_backoff": timedelta(milliseconds=100),
        "base": 2,
    },
}


class ObstoreStoreTests(StoreTests):
    """The store contract for an obstore backend; a subclass gives the `store` fixture."""

    concurrent_writers = (4, 16)
    overwrites = 6

    def store_reopen(self, store: ObstoreStore) -> ObstoreStore:
        return ObstoreStore(store.backend, mode="r", url=store.url, root=store.root)

    def test_concurrent_updates_lose_nothing(self, store: Store) -> None:  # type: ignore[override]
        assert isinstance(store, ObstoreStore) and store.safe_updates  # run, not skipped
        super().test_concurrent_updates_lose_nothing(store)
