"""Any zarrkit store handed to zarr-python 3 (and so to xarray's `engine="zarr"`) as a
`zarr.abc.store.Store`:

    store = zarrkit.zarr_python.as_zarr_store("s3://bucket/x.zarr", mode="r")
    zarr.open_group(store)
    xarray.open_zarr(store)

zarr-python awaits its store's methods on its event loop; each call here runs the zarrkit
store's synchronous one in a worker thread (`asyncio.to_thread`), so the loop is never blocked
and zarrkit's own concurrency (a batch's requests, a local store's threads) does the I/O.
Errors are zarrkit's, naming the key and the operation. A read holds at most the value limit of
zarrkit's reads (`zarrkit.abc.store.DEFAULT_VALUE_LIMIT`) of one value.

The way back, a zarr-python store as a zarrkit store, is the `zarr-python` store plugin
(`zarrkit.plugins.stores.adapters.zarr_python`); `as_zarr_store` of a store that plugin made gives
back the zarr-python store it wraps.

Codecs go both ways too: `zarrkit.zarr_python.codecs` presents zarrkit codecs to zarr-python
(`as_zarr_codec`, and `ZarrkitCodec` for a package's `zarr.codecs` entry points), and the
`zarr.codecs:*` codec plugin (`zarrkit.plugins.codecs.zarr_python_bridge`) presents zarr-python's
third-party codecs to zarrkit.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable
from typing import Any

try:
    from zarr.abc.store import (
        ByteRequest,
        OffsetByteRequest,
        RangeByteRequest,
        Store,
        SuffixByteRequest,
    )
    from zarr.core.buffer import Buffer, BufferPrototype, default_buffer_prototype
except ImportError as exc:  # the optional dependency: say which extra brings it
    raise ImportError(
        f"zarrkit.zarr_python needs zarr-python 3 ({exc}): pip install 'zarrkit[zarr-python]'"
    ) from exc

from zarrkit import abc as zarrkit_abc
from zarrkit import registry
from zarrkit.abc import ByteRange, Range, SuffixRange, check_prefix
from zarrkit.errors import ArgumentError
from zarrkit.helpers import open_store

from .codecs import as_zarr_codec

__all__ = ["ZarrkitZarrStore", "as_zarr_codec", "as_zarr_store"]


def as_zarr_store(store: Any, *, mode: str = "r", storage_options: dict | None = None) -> Store:
    """A zarr-python store over `store`: a path, a URL or anything else zarrkit opens as a
    store (with `mode` and `storage_options` as `zarrkit.open` takes them). Read-only when
    `mode` is "r" or the store is."""
    opened = open_store(store, mode=mode, storage_options=storage_options)
    read_only = (
        mode == "r" or bool(opened.capabilities.read_only) or not opened.capabilities.writeable
    )
    # the `zarr-python` store plugin (the way back) wraps a zarr-python store: unwrap it
    bridge = registry.lookup("store", "zarr-python")
    if isinstance(opened, bridge) and bool(opened.inner.read_only) == read_only:
        return opened.inner  # type: ignore[no-any-return]  # zarr-python's already: no round trip
    return ZarrkitZarrStore(opened, read_only=read_only)


class ZarrkitZarrStore(Store):
    """`store`, a zarrkit store, as zarr-python's `Store`."""

    supports_consolidated_metadata = True

    def __init__(self, store: zarrkit_abc.Store, *, read_only: bool | None = None) -> None:
        if not isinstance(store, zarrkit_abc.Store):
            raise TypeError(f"expected a zarrkit Store, got {type(store).__name__}")
        if read_only is None:
            read_only = bool(store.capabilities.read_only) or not store.capabilities.writeable
        super().__init__(read_only=read_only)
        self.store = store

    @property
    def zarrkit_store(self) -> zarrkit_abc.Store:
        """The zarrkit store: what zarrkit opens this adapter as, with no round trip through
        zarr-python (see `ZarrPythonStore.adapt`)."""
        return self.store

    def with_read_only(self, read_only: bool = False) -> ZarrkitZarrStore:
        """This store, read-only or not. A writable copy of a zarrkit store that cannot be
        written (opened with mode "r", or read-only by nature) is refused as zarr-python's
        stores refuse what they cannot do, rather than claiming a writability it lacks."""
        if not read_only and (
            self.store.capabilities.read_only or not self.store.capabilities.writeable
        ):
            raise NotImplementedError(
                f"with_read_only is not implemented for the {type(self)} store type. "
                f"(The zarrkit store {self.store} cannot be written: open it with a "
                f"writable mode.)"
            )
        return type(self)(self.store, read_only=read_only)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ZarrkitZarrStore) and self.store == other.store

    def __hash__(self) -> int:
        return hash(self.store)

    def __repr__(self) -> str:
        return f"ZarrkitZarrStore({self.store!r})"

    # -- reading ---------------------------------------------------------------------------------
    async def get(
        self, key: str, prototype: BufferPrototype, byte_range: ByteRequest | None = None
    ) -> Buffer | None:
        value = await asyncio.to_thread(self.store.get, key, _range(byte_range))
        return None if value is None else prototype.buffer.from_bytes(value)

    async def get_partial_values(
        self,
        prototype: BufferPrototype,
        key_ranges: Iterable[tuple[str, ByteRequest | None]],
    ) -> list[Buffer | None]:
        requests = [(key, _range(request)) for key, request in key_ranges]
        values = await asyncio.to_thread(self.store.get_ranges, requests)
        return [None if v is None else prototype.buffer.from_bytes(v) for v in values]

    async def is_empty(self, prefix: str) -> bool:
        """Whether nothing is stored under `prefix`; "" and "/" are the whole store, as
        zarr-python's stores take them."""
        folder = _folder(prefix)
        answer = await asyncio.to_thread(self.store.is_empty, folder)
        if answer is not None:
            return bool(answer)
        return not await asyncio.to_thread(
            lambda: any(True for _ in self.store.list_prefix(folder))
        )

    async def exists(self, key: str) -> bool:
        return await asyncio.to_thread(self.store.exists, key)

    # -- writing ---------------------------------------------------------------------------------
    @property
    def supports_writes(self) -> bool:
        return bool(self.store.capabilities.writeable)

    @property
    def supports_deletes(self) -> bool:
        return bool(self.store.capabilities.writeable)

    async def set(self, key: str, value: Buffer) -> None:
        self._check_writable()
        await asyncio.to_thread(self.store.set, key, value.as_numpy_array())

    async def _set_many(self, values: Iterable[tuple[str, Buffer]]) -> None:
        self._check_writable()
        items: dict[str, Any] = {key: value.as_numpy_array() for key, value in values}
        await asyncio.to_thread(self.store.set_many, items)

    async def delete(self, key: str) -> None:
        self._check_writable()
        await asyncio.to_thread(self.store.erase, key)

    async def delete_dir(self, prefix: str) -> None:
        self._check_writable()
        await asyncio.to_thread(self.store.erase_prefix, _folder(prefix))

    # -- zarr-python's synchronous surface (SupportsSyncStore) ------------------------------------
    # zarrkit's stores are synchronous: zarr-python's synchronous calls reach them directly,
    # with no event loop or worker thread in between.
    def get_sync(
        self,
        key: str,
        *,
        prototype: BufferPrototype | None = None,
        byte_range: ByteRequest | None = None,
    ) -> Buffer | None:
        value = self.store.get(key, _range(byte_range))
        if value is None:
            return None
        return (prototype or default_buffer_prototype()).buffer.from_bytes(value)

    def set_sync(self, key: str, value: Buffer) -> None:
        self._check_writable()
        self.store.set(key, value.as_numpy_array())

    def delete_sync(self, key: str) -> None:
        self._check_writable()
        self.store.erase(key)

    # -- listing ---------------------------------------------------------------------------------
    @property
    def supports_listing(self) -> bool:
        return bool(self.store.capabilities.listable)

    async def list(self) -> AsyncIterator[str]:
        for key in await asyncio.to_thread(lambda: [*self.store.list()]):
            yield key

    async def list_prefix(self, prefix: str) -> AsyncIterator[str]:
        for key in await asyncio.to_thread(lambda: [*self.store.list_prefix(prefix)]):
            yield key

    async def list_dir(self, prefix: str) -> AsyncIterator[str]:
        keys, prefixes = await asyncio.to_thread(self.store.list_dir, _folder(prefix))
        for name in sorted([*keys, *prefixes]):
            yield name

    def close(self) -> None:
        """Leaves the zarrkit store open: it may be the caller's, still in use."""
        super().close()


def _folder(prefix: str) -> str:
    """zarr-python's folder ('', 'a', 'a/') as a zarrkit prefix ('' or 'a/')."""
    return check_prefix(prefix.rstrip("/") + "/" if prefix.strip("/") else "")


def _range(request: ByteRequest | None) -> Range | None:
    if request is None:
        return None
    if isinstance(request, RangeByteRequest):
        return ByteRange(request.start, max(0, request.end - request.start))
    if isinstance(request, OffsetByteRequest):
        return ByteRange(request.offset)
    if isinstance(request, SuffixByteRequest):
        return SuffixRange(request.suffix)
    # (zarr-python's stores say it in these words, and its StoreTests look for them)
    raise ArgumentError(f"Unexpected byte_range, got {request!r}.")
