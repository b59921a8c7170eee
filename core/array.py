"""Arrays: numpy-style reads and writes over chunks in a store.

`Array` is the public face: it checks a selection (building its per-chunk projections with
`indexing`) and a written value, and hands both to the array's chunk engine
(`engine.ChunkEngine`), which reads, decodes, encodes and stores the chunks.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable, Coroutine, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from . import config as settings
from . import indexing
from .codec import CodecKind
from .codec_chain import CodecChain
from .data_type import cast_values, check_representable
from .engine import ChunkEngine, awaiting
from .errors import (
    ArgumentError,
    CodecChainError,
    InvalidArgumentError,
    InvalidKeyError,
    MetadataError,
    ReadOnlyError,
    SelectionError,
    StoreError,
    ValueCastError,
)
from .indexing import Indexer
from .metadata import ArrayMetadata
from .names import V3
from .node import Node, node_location
from .store import Store, check_fits, limiting_listings

if TYPE_CHECKING:
    from zarrkit.views import LazyArray

#: how many distinct chunk shapes of an irregular grid the codec chain is checked against when
#: the array is opened (a chunk of another shape is checked when it is first read or written)
_CHECKED_CHUNK_SHAPES = 64


#: the fields of `ArrayConfig`, the keys its dict form takes
CONFIG_FIELDS = (
    "order",
    "write_empty_chunks",
    "read_missing_chunks",
    "sharding_coalesce_max_gap_bytes",
    "sharding_coalesce_max_bytes",
)


@dataclass(frozen=True)
class ArrayConfig:
    """An array's runtime settings, zarr-python's `ArrayConfig`: never stored, so each handle
    may differ, and each defaults to its setting when the config is made (as zarr-python's
    defaults are read from its config then). `order`: the memory order reads return (the
    stored bytes are the codecs'; `array.order`); `write_empty_chunks`: store chunks equal to
    the fill value (`array.write_empty_chunks`; None: the setting when a chunk is written).

    zarr-python's other fields are kept and shown, with no effect in zarrkit (see
    docs/zarr-python.md): `read_missing_chunks` (a chunk that is not stored is
    always read as the fill value), `sharding_coalesce_max_gap_bytes` and
    `sharding_coalesce_max_bytes` (reads of a shard are merged by the store's own sizes)."""

    order: str = dataclasses.field(default_factory=lambda: settings.get().order)
    write_empty_chunks: bool | None = dataclasses.field(
        default_factory=lambda: settings.get().write_empty_chunks
    )
    read_missing_chunks: bool = dataclasses.field(
        default_factory=lambda: bool(settings.get("array.read_missing_chunks"))
    )
    sharding_coalesce_max_gap_bytes: int = dataclasses.field(
        default_factory=lambda: int(settings.get("array.sharding_coalesce_max_gap_bytes"))
    )
    sharding_coalesce_max_bytes: int = dataclasses.field(
        default_factory=lambda: int(settings.get("array.sharding_coalesce_max_bytes"))
    )

    def checked(self) -> ArrayConfig:
        if self.order not in ("C", "F"):
            raise InvalidArgumentError(f"order must be 'C' or 'F', got {self.order!r}")
        if self.write_empty_chunks not in (None, True, False):
            raise InvalidArgumentError(
                f"write_empty_chunks must be True or False, got {self.write_empty_chunks!r}"
            )
        return self


#: keys a listing of an array's chunks may hold besides its chunks (its documents, a stray
#: file) before it is taken for a listing that never ends
_LISTING_SLACK = 1024


@dataclass(frozen=True)
class StoredChunk:
    """A chunk (a shard, when the array is sharded) that the store holds."""

    coords: tuple[int, ...]
    key: str


def _decoded(decode: Callable[[str], tuple[int, ...]], key: str) -> tuple[int, ...] | None:
    """The grid coordinates `key` encodes, or None when it is no chunk key (metadata, a
    stray file): a key encoding may refuse such a key in any way, so every error means no."""
    try:
        return tuple(int(c) for c in decode(key))
    except Exception:
        return None


class Array(Node):
    """An array in a store: a handle made by `zarrkit.open_array`, `create_array` or a group,
    never by hand. Indexing reads and writes (`a[...]`, `a.oindex[...]`, `a.vindex[...]`,
    `a.blocks[...]`), touching only the chunks a selection covers. A handle pickles as what
    opens it again; it is safe to share between threads."""

    _meta: ArrayMetadata
    _engine: ChunkEngine

    def __init__(
        self,
        store: Store,
        path: str,
        metadata: Any,
        *,
        read_only: bool = False,
        config: ArrayConfig | None = None,
    ):
        self._config = ArrayConfig() if config is None else config.checked()
        super().__init__(store, path, metadata, read_only=read_only)

    def _pickled_options(self) -> dict[str, Any]:
        return {} if self._config == ArrayConfig() else {"config": self._config}

    @property
    def config(self) -> ArrayConfig:
        return self._config

    def with_config(self, config: ArrayConfig | Mapping[str, Any]) -> Array:
        """This array with other runtime settings (zarr-python's `Array.with_config`)."""
        if isinstance(config, Mapping):
            unknown = sorted(set(config) - set(CONFIG_FIELDS))
            if unknown:
                raise ArgumentError(
                    f"config takes {list(CONFIG_FIELDS)}, not {', '.join(map(repr, unknown))}"
                )
            config = dataclasses.replace(self._config, **config)
        return type(self)(
            self._store, self._path, self._meta, read_only=self._read_only, config=config
        )

    # -- metadata ----------------------------------------------------------------------------
    def _set_metadata(self, metadata: ArrayMetadata) -> None:
        super()._set_metadata(metadata)
        self._chain = self._codec_chain(metadata)
        store = self._store
        for transformer in metadata.storage_transformers:
            store = transformer.wrap(store, self._path)
        self._chunk_store = store
        self._inner = self._inner_chunks(metadata)
        self._engine = ChunkEngine(
            metadata,
            self._chain,
            store,
            self._format.chunk_key,
            self._path,
            self._where(),
            write_empty=self._config.write_empty_chunks,
        )
        self._check_chunk_keys(metadata)

    def _check_chunk_keys(self, metadata: ArrayMetadata) -> None:
        """Refuse, before anything is read or written, an array whose chunk keys are longer
        than the store can hold (a v2 array of 130 dimensions names a chunk '1.1.[...].1', 259
        bytes): the key of the last chunk, whose indices have the most digits, is checked."""
        name_limit = getattr(self._chunk_store, "name_limit", None)
        if name_limit is None or name_limit() is None:
            return
        last = tuple(max(0, n - 1) for n in metadata.chunk_grid.grid_shape(metadata.shape))
        key = self._format.chunk_key(self._path, metadata.chunk_key_encoding.encode(last))
        try:
            check_fits(self._chunk_store, key)
        except InvalidKeyError as exc:
            raise InvalidKeyError(
                f"{self._where()}: the array's chunk keys cannot be stored: {exc}"
            ) from None

    def _inner_chunks(self, metadata: ArrayMetadata) -> tuple[int, ...] | None:
        """The chunks inside each chunk of the grid, when the array->bytes codec stores them so
        (sharding) and no array->array codec before it changes their coordinates. One shape
        for every chunk: the codec's inner chunks do not depend on the chunk they are in."""
        grid = metadata.chunk_grid
        shape = grid.uniform_chunk_shape or next(iter(grid.chunk_shapes_used(metadata.shape)), None)
        if shape is None:
            return None
        bound = self._chain.bind(shape)
        if bound.array_array:
            return None
        codec, spec = bound.array_bytes
        inner = codec.inner_chunk_shape(spec)
        return tuple(inner) if inner is not None else None

    def _codec_chain(self, metadata: ArrayMetadata) -> CodecChain:
        """The array's codec chain, validated now so a bad one is refused when the array is
        opened, with the document it came from."""
        try:
            chain = CodecChain(metadata.codecs, metadata.data_type, metadata.fill_value)
            used = metadata.chunk_grid.chunk_shapes_used(metadata.shape)
            for shape in itertools.islice(used, _CHECKED_CHUNK_SHAPES):
                chain.bind(shape)
        except CodecChainError as exc:
            skipped = ", ".join(repr(s.name) for s in metadata.skipped)
            if skipped:
                exc.detail += f" (left out as not understood: {skipped})"
            exc.locate(where=self._where())
            raise
        return chain

    @property
    def shape(self) -> tuple[int, ...]:
        return self._meta.shape

    @property
    def ndim(self) -> int:
        return len(self._meta.shape)

    @property
    def size(self) -> int:
        return math.prod(self._meta.shape)  # exact: numpy's int64 product wraps

    @property
    def dtype(self) -> np.dtype:
        return self._meta.data_type.native

    @property
    def data_type(self) -> Any:
        return self._meta.data_type

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def chunks(self) -> tuple[int, ...] | None:
        """The shape of the chunks values are encoded in: for a sharded array the inner
        chunks (see `shards`), else the grid's chunks; None for an irregular grid."""
        return self._inner or self._meta.chunk_grid.uniform_chunk_shape

    @property
    def shards(self) -> tuple[int, ...] | None:
        """The shape of the stored values (the grid's chunks) when each holds several encoded
        chunks (sharding), else None."""
        return self._meta.chunk_grid.uniform_chunk_shape if self._inner else None

    @property
    def cdata_shape(self) -> tuple[int, ...]:
        """Chunks per dimension (inner chunks for a sharded array, as in zarr-python)."""
        if self._inner:
            return tuple(-(-n // c) for n, c in zip(self.shape, self._inner))
        return self._meta.chunk_grid.grid_shape(self.shape)

    @property
    def write_chunk_sizes(self) -> tuple[tuple[int, ...], ...]:
        """Per dimension, the length of each stored chunk (shard) inside the array: zarr-python's
        `write_chunk_sizes`, the one view of the chunks that fits every grid."""
        grid, shape = self._meta.chunk_grid, self.shape
        sizes = []
        for d, (n, length) in enumerate(zip(grid.grid_shape(shape), shape)):
            starts = np.asarray(grid.chunk_start(d, np.arange(n, dtype=np.int64)), dtype=np.int64)
            ends = np.append(starts[1:], length) if n else starts
            sizes.append(tuple(int(e) for e in np.minimum(ends, length) - starts))
        return tuple(sizes)

    @property
    def read_chunk_sizes(self) -> tuple[tuple[int, ...], ...]:
        """`write_chunk_sizes`, split into the inner chunks of a sharded array (zarr-python's
        `read_chunk_sizes`)."""
        outer = self.write_chunk_sizes
        if not self._inner:
            return outer
        return tuple(
            tuple(min(c, size - i) for size in sizes for i in range(0, size, c))
            for sizes, c in zip(outer, self._inner)
        )

    @property
    def nchunks(self) -> int:
        return math.prod(self.cdata_shape)

    @property
    def fill_value(self) -> Any:
        return self._meta.fill_value

    @property
    def dimension_names(self) -> tuple[str | None, ...] | None:
        return self._meta.dimension_names

    @property
    def codecs(self) -> tuple[Any, ...]:
        return self._meta.codecs

    @property
    def read_only(self) -> bool:
        return super().read_only or not self._meta.writeable

    def __len__(self) -> int:
        if not self.shape:
            raise ArgumentError("len() of a 0-d array")
        return self.shape[0]

    def __repr__(self) -> str:
        # zarr-python's text, `<Array file:///data/x.zarr/a shape=(2,) dtype=int32>`: the
        # store as its URL (its `str`), then the node's path in it
        where = node_location(self._store, self.path)
        return f"<Array {where} shape={self.shape} dtype={self.dtype}>"

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = np.asarray(self[...])
        return out if dtype is None else out.astype(dtype)

    def to_dask(self, chunks: Any = None) -> Any:
        """A lazy dask array over this one, one task per stored chunk (per shard) unless
        `chunks` says otherwise: `zarrkit.dask.from_zarrkit(self, chunks=chunks)`."""
        try:
            from zarrkit.dask import from_zarrkit
        except ImportError as exc:
            from .errors import PluginLoadError

            raise PluginLoadError("Array.to_dask needs dask: pip install 'zarrkit[dask]'") from exc
        return from_zarrkit(self, chunks=chunks)

    # -- what zarr-python 3 shows of an array -----------------------------------------------
    def _encoding_codecs(self) -> tuple[Any, ...]:
        """The codecs chunks are encoded with: for a sharded array those inside each shard
        (as zarr-python reports `filters`, `serializer` and `compressors`)."""
        codecs = tuple(self._meta.codecs)
        if self._inner:
            for codec in codecs:
                inner = getattr(codec, "codecs", None)
                if codec.kind is CodecKind.ARRAY_BYTES and isinstance(inner, tuple):
                    return inner
        return codecs

    @property
    def filters(self) -> tuple[Any, ...]:
        """The array -> array codecs (v2: the filters), as zarr-python's `Array.filters`."""
        return tuple(c for c in self._encoding_codecs() if c.kind is CodecKind.ARRAY_ARRAY)

    @property
    def serializer(self) -> Any:
        """The array -> bytes codec; None for formats that have none of their own (v2)."""
        if self._meta.format != V3:
            return None
        found = [c for c in self._encoding_codecs() if c.kind is CodecKind.ARRAY_BYTES]
        return found[0] if found else None

    @property
    def compressors(self) -> tuple[Any, ...]:
        """The bytes -> bytes codecs (v2: the compressor), as zarr-python's `compressors`."""
        return tuple(c for c in self._encoding_codecs() if c.kind is CodecKind.BYTES_BYTES)

    @property
    def order(self) -> str:
        """The memory order of what reads return: a v2 array's stored `order`, else the
        array's runtime `config.order` (zarr-python: v3 stores no order)."""
        if self._meta.format == V3:
            return self._config.order
        found = self._meta.to_json().get("order")
        return found if found in ("C", "F") else self._config.order

    def _stored_keys(self) -> list[str]:
        self._store.require("list", f"list the chunks of array {self.name!r}")
        prefix = f"{self._path}/" if self._path else ""
        return list(self._store.list_prefix(prefix))

    @property
    def chunk_store(self) -> Store:
        """The store the array's chunks are read and written through: its store, wrapped by
        each of its storage transformers in order (the store itself when it has none)."""
        return self._chunk_store

    def stored_chunks(self) -> Iterator[StoredChunk]:
        """The chunks (shards, when sharded) the store holds, each with its grid coordinates
        and key, from one listing through the array's storage transformers: work and memory in
        proportion to what is stored, never to the size of the grid. A listing that yields more
        chunks than the grid has is a store fault (`StoreError`), not a reason to go on."""
        store = self._chunk_store
        store.require("list", f"list the chunks of array {self.name!r}")
        grid = tuple(self._meta.chunk_grid.grid_shape(self.shape))
        origin = (0,) * len(grid)
        first, encoded = self._chunk_key(origin), self._meta.chunk_key_encoding.encode(origin)
        # every chunk key is the first one's prefix (where the format keeps the array's
        # chunks) followed by the key encoding's string
        prefix = first[: len(first) - len(encoded)] if first.endswith(encoded) else ""
        decode = self._meta.chunk_key_encoding.decode
        capacity = math.prod(grid)
        found = listed = 0
        with limiting_listings(capacity + _LISTING_SLACK):  # (stores that gather pages)
            keys = store.list_prefix(prefix)
        for key in keys:
            listed += 1
            if listed > capacity + _LISTING_SLACK:  # (keys that are no chunks count too)
                raise StoreError(
                    f"listing {prefix!r} gave more keys than array {self.name!r} has chunks "
                    f"({capacity}) and documents; the store repeats keys or never ends its "
                    f"listing",
                    key=prefix,
                    operation="list",
                )
            coords = _decoded(decode, key[len(prefix) :])
            if (
                coords is None
                or len(coords) != len(grid)
                or not all(0 <= c < n for c, n in zip(coords, grid))
                or self._chunk_key(coords) != key  # another spelling of a chunk's key
            ):
                continue
            found += 1
            if found > capacity:
                raise StoreError(
                    f"listing {prefix!r} gave more chunks than array {self.name!r} has "
                    f"({capacity}); the store repeats keys or never ends its listing",
                    key=prefix,
                    operation="list",
                )
            yield StoredChunk(coords, key)

    def nstored(self) -> int:
        """How many values the array's chunks are stored as: chunks, or shards when sharded
        (zarr-python's "Shards Initialized")."""
        return sum(1 for _ in self.stored_chunks())

    @property
    def nchunks_initialized(self) -> int:
        """How many chunks are stored (for a sharded array, the chunks of the stored shards,
        as zarr-python counts them)."""
        if not self._inner:
            return self.nstored()
        grid = self._meta.chunk_grid
        shard = grid.uniform_chunk_shape
        if shard is not None:
            return self.nstored() * math.prod(-(-s // c) for s, c in zip(shard, self._inner))
        # shards of varying shape: each stored one counts its own inner chunks
        return sum(
            math.prod(-(-s // c) for s, c in zip(grid.chunk_shape(chunk.coords), self._inner))
            for chunk in self.stored_chunks()
        )

    def nbytes_stored(self) -> int:
        """Bytes the array takes in its store: its metadata and its stored chunks, sized by the
        store (`Store.sizes`: a file's stat, an object's size), not by reading them."""
        return sum(self._store.sizes(self._stored_keys()).values())

    @property
    def info(self) -> ArrayInfo:
        """What zarr-python's `Array.info` shows, from the metadata alone (no I/O)."""
        return ArrayInfo.of(self)

    def info_complete(self) -> ArrayInfo:
        """`info` with what only the store can say: bytes stored and chunks initialized."""
        return ArrayInfo.of(self, complete=True)

    # -- indexing ----------------------------------------------------------------------------
    def __getitem__(self, selection: Any) -> Any:
        """Read a selection, as numpy indexes: `a[2]`, `a[10:20, ::2]`, `a[...]`; an integer
        array or list in one dimension selects along it (orthogonally), arrays in every
        dimension or a boolean mask of the array's shape pick points (as `vindex`).

        Args:
            selection: ints, slices (any step), Ellipsis, integer lists or arrays, or a mask.

        Returns:
            A numpy array of the selection's shape (a numpy scalar for a single element).

        Raises:
            SelectionError: the selection is outside the array or of a kind it cannot be.
            ChunkDecodeError: a stored chunk does not decode (corrupt, or larger than it can be).
            StoreError: the store failed.
        """
        out = self._engine.read(self._indexer(selection))
        if self._config.order == "F" and isinstance(out, np.ndarray) and out.ndim > 1:
            return np.asfortranarray(out)
        return out

    def __setitem__(self, selection: Any, value: Any) -> None:
        """Write `value` to a selection (the forms `__getitem__` takes). The value is cast
        and broadcast to the selection first, so a bad one writes nothing.

        Args:
            selection: As for `__getitem__`.
            value: A scalar, or array-like values broadcastable to the selection's shape.

        Raises:
            SelectionError: the selection is outside the array or of a kind it cannot be.
            ValueCastError: the value cannot be stored in the data type, or does not fit the
                selection's shape.
            ReadOnlyError: the handle or store is read-only, or the array uses extensions this
                installation cannot write.
            StoreError: the store failed.
        """
        self._set(self._indexer(selection), value)

    def _indexer(self, selection: Any) -> Any:
        """`a[...]` follows numpy: one array in the selection indexes that dimension
        (orthogonal), arrays in every position or a full-shape mask pick points (vindex)."""
        grid = self._meta.chunk_grid
        items = selection if isinstance(selection, tuple) else (selection,)
        arrays = [i for i in items if isinstance(i, (list, np.ndarray)) and np.ndim(i) > 0]
        if not arrays:
            return indexing.basic_indexer(selection, self.shape, grid)
        if len(items) == 1 and np.asarray(arrays[0]).dtype == bool and np.ndim(arrays[0]) > 1:
            return indexing.vectorized_indexer(selection, self.shape, grid)
        if len(arrays) == 1:
            if _advanced_apart(items, self.ndim):
                raise SelectionError(
                    "an index array and integers separated by a slice: numpy would move the "
                    "array's dimension to the front; use a.oindex[...] (dimensions stay in place)"
                )
            return indexing.orthogonal_indexer(selection, self.shape, grid)
        if len(arrays) == len(items) == self.ndim:
            return indexing.vectorized_indexer(selection, self.shape, grid)
        raise SelectionError(
            "this mix of several index arrays with other indices is ambiguous; use "
            "a.oindex[...] (each array indexes its own dimension) or a.vindex[...] (points)"
        )

    @property
    def lazy(self) -> LazyArray:
        """A view of the whole array that reads nothing until asked: `a.lazy[sel]` chains
        selections (numpy's, `.oindex`, `.vindex`, `.T`) and `.result()` reads them as one
        (`zarrkit.views`, outside the kernel)."""
        from zarrkit.views import LazyArray

        return LazyArray(self)

    @property
    def oindex(self) -> _Indexed:
        return _Indexed(self, indexing.orthogonal_indexer)

    @property
    def vindex(self) -> _Indexed:
        return _Indexed(self, indexing.vectorized_indexer)

    @property
    def blocks(self) -> _Indexed:
        """Whole chunks by their grid positions: `a.blocks[1, 2:4]` (see `get_block_selection`)."""
        return _Indexed(self, indexing.block_indexer)

    # The get_* methods take `out=`: an existing array of the selection's shape to read into
    # (and return), so repeated reads reuse one buffer and chunks decode straight into it.
    def get_basic_selection(
        self, selection: Any = Ellipsis, *, out: np.ndarray | None = None
    ) -> Any:
        return self._get(self._indexer(selection), out)

    def get_orthogonal_selection(self, selection: Any, *, out: np.ndarray | None = None) -> Any:
        return self._get(self.oindex._indexer(selection), out)

    def get_coordinate_selection(self, selection: Any, *, out: np.ndarray | None = None) -> Any:
        return self._get(self.vindex._indexer(selection), out)

    def get_mask_selection(self, mask: Any, *, out: np.ndarray | None = None) -> Any:
        """The elements where `mask` (a boolean array of the array's shape) is True, in C
        order, as a 1-D array."""
        return self._get(self._mask_indexer(mask), out)

    def get_block_selection(self, selection: Any, *, out: np.ndarray | None = None) -> Any:
        """Whole chunks by their grid positions: per dimension an int (one chunk; the
        dimension stays) or a slice of step 1 over the chunk grid, clamped to the grid as
        Python clamps slices (zarr-python 3.4 raises for a start beyond the grid). The chunks
        of a sharded array are its shards, as in zarr-python."""
        return self._get(self.blocks._indexer(selection), out)

    # -- awaited reads and writes (`engine.awaiting`; `zarrkit.AsyncArray` is built on them) --
    def read_awaitable(
        self, selection: Any = Ellipsis, *, kind: str = "basic", out: np.ndarray | None = None
    ) -> Coroutine[Any, Any, Any]:
        """`self[selection]` as a coroutine that an event loop awaits without blocking: on a
        store whose client is asynchronous (`zarrkit.abc.AwaitableReads`) the requests are
        its own coroutines and decoding runs on the chunk pool; elsewhere the read runs on
        the I/O pool. `kind` says how `selection` indexes: "basic" (as `a[...]`),
        "orthogonal", "coordinate", "mask" or "block" (as the `get_*_selection` methods).
        The selection is checked now: a bad one raises `SelectionError` (or
        `InvalidArgumentError` for a bad `out`) before any coroutine exists."""
        indexer = self._indexer_of(kind, selection)
        if out is not None:
            _checked_out(out, indexer.shape)
        return self._awaited_read(indexer, out)

    async def _awaited_read(self, indexer: Indexer, out: np.ndarray | None) -> Any:
        values = await awaiting.read(self._engine, indexer, out)
        if out is None and self._config.order == "F" and np.ndim(values) > 1:
            return np.asfortranarray(values)
        return values

    def write_awaitable(
        self, selection: Any, value: Any, *, kind: str = "basic"
    ) -> Coroutine[Any, Any, None]:
        """`self[selection] = value` as a coroutine (see `read_awaitable`); the selection and
        value are checked now (`SelectionError`, `ValueCastError`, `ReadOnlyError`), so a bad
        one writes nothing."""
        self._check_writeable()
        indexer = self._indexer_of(kind, selection)
        return awaiting.write(self._engine, indexer, self._prepare_value(value, indexer.shape))

    def _indexer_of(self, kind: str, selection: Any) -> Indexer:
        if kind == "basic":
            return self._indexer(selection)  # type: ignore[no-any-return]
        if kind == "mask":
            return self._mask_indexer(selection)  # type: ignore[no-any-return]
        indexed = {"orthogonal": self.oindex, "coordinate": self.vindex, "block": self.blocks}
        if kind not in indexed:
            raise ArgumentError(
                f"kind is one of basic, orthogonal, coordinate, mask, block; got {kind!r}"
            )
        return indexed[kind]._indexer(selection)  # type: ignore[no-any-return]

    # -- many selections at once -------------------------------------------------------------
    def read_async(
        self, selection: Any = Ellipsis, *, out: np.ndarray | None = None
    ) -> Future[Any]:
        """`self[selection]` started now and returned as a future, so that many reads wait on
        the store together: on an object store, 100 windows cost about one round trip of
        latency rather than 100. The selection is checked before this returns; at most the
        `io_concurrency` setting of reads and writes run at once."""
        indexer = self._indexer(selection)
        if out is not None:
            _checked_out(out, indexer.shape)
        return self._engine.read_async(indexer, out)

    def write_async(self, selection: Any, value: Any) -> Future[None]:
        """`self[selection] = value` started now, as `read_async`. Writes to overlapping
        selections started together land in no particular order."""
        self._check_writeable()
        indexer = self._indexer(selection)
        return self._engine.write_async(indexer, self._prepare_value(value, indexer.shape))

    def get_many(self, selections: Iterable[Any]) -> list[Any]:
        """`[self[s] for s in selections]`, read together: every selection is checked first,
        then they are read in a few groups (one per thread at least), each group asking the
        store for all its chunks at once, so selections that share a chunk or a shard fetch
        it once and 100 windows cost a couple of round trips and a few requests per shard.
        `read_async` starts one read on its own.

        Args:
            selections: Selections of the forms `__getitem__` takes.

        Returns:
            One numpy array per selection, in order.

        Raises:
            SelectionError: a selection does not fit the array (before anything is read).
            ChunkDecodeError: a stored chunk does not decode.
            StoreError: the store failed.
        """
        return self._engine.read_many(self._indexer(s) for s in selections)

    def set_many(self, items: Iterable[tuple[Any, Any]]) -> None:
        """`self[s] = v` for each (selection, value) in turn, written as one: every selection
        and value is checked before anything is written, then each chunk or shard any of
        them touches is read back (when none covers it whole) and written once, holding
        every selection's values in the order given. 100 windows in four shards of an
        object store cost four reads and four writes, about two round trips.
        `write_async` starts one write on its own.

        Args:
            items: (selection, value) pairs, each as `__setitem__` takes them; where two
                selections meet, the later value is stored.

        Raises:
            SelectionError: a selection does not fit the array (before anything is written).
            ValueCastError: a value cannot be stored or does not fit its selection.
            ReadOnlyError: the handle or store is read-only.
            StoreError: the store failed.
        """
        prepared = []
        self._check_writeable()
        for selection, value in items:
            indexer = self._indexer(selection)
            prepared.append((indexer, self._prepare_value(value, indexer.shape)))
        self._engine.write_many(prepared)

    def set_basic_selection(self, selection: Any, value: Any) -> None:
        self[selection] = value

    def set_orthogonal_selection(self, selection: Any, value: Any) -> None:
        self.oindex[selection] = value

    def set_coordinate_selection(self, selection: Any, value: Any) -> None:
        self.vindex[selection] = value

    def set_mask_selection(self, mask: Any, value: Any) -> None:
        self._set(self._mask_indexer(mask), value)

    def set_block_selection(self, selection: Any, value: Any) -> None:
        self.blocks[selection] = value

    def _mask_indexer(self, mask: Any) -> Any:
        m = np.asarray(mask)
        if m.dtype != bool or m.shape != self.shape:
            got = f"dtype {m.dtype}" if m.dtype != bool else f"shape {m.shape}"
            raise SelectionError(
                f"a mask selection is a boolean array of the array's shape {self.shape}; got {got}"
            )
        return indexing.vectorized_indexer(m, self.shape, self._meta.chunk_grid)

    # -- handing selections to the engine ----------------------------------------------------
    def _chunk_key(self, coords: Sequence[int]) -> str:
        return self._engine.chunk_key(coords)

    def _get(self, indexer: Indexer, out: np.ndarray | None = None) -> Any:
        """The selection's values (into `out`, checked first, when given)."""
        if out is not None:
            _checked_out(out, indexer.shape)
        return self._engine.read(indexer, out)

    def _set(self, indexer: Indexer, value: Any) -> None:
        """Write `value` to the selection, checked and cast first so a bad one writes nothing."""
        self._check_writeable()
        self._engine.write(indexer, self._prepare_value(value, indexer.shape))

    def _prepare_value(self, value: Any, shape: tuple[int, ...]) -> np.ndarray:
        """Cast and broadcast a written value up front, so a bad one writes nothing."""
        data_type = self._meta.data_type
        if isinstance(value, Array):
            value = value[...]
        if np.ndim(value) == 0 and not isinstance(value, np.ndarray):
            arr = np.asarray(data_type.cast_scalar(value), dtype=self.dtype)
        else:
            source = np.asarray(value)
            if source.dtype == self.dtype:
                arr = source
            else:
                try:
                    arr = cast_values(source, data_type)
                except (TypeError, ValueError, OverflowError) as exc:
                    raise ValueCastError(
                        f"cannot store values of dtype {source.dtype} in an array "
                        f"of {data_type.describe()}: {exc}"
                    ) from None
                check_representable(source, arr, data_type)
        while arr.ndim > len(shape) and arr.shape[0] == 1:
            arr = arr[0]
        try:
            return np.broadcast_to(arr, shape)
        except ValueError:
            raise ValueCastError(
                f"a value of shape {np.shape(value)} cannot be written to a "
                f"selection of shape {shape}"
            ) from None

    def _check_writeable(self) -> None:
        super()._check_writeable()
        if not self._meta.writeable:
            names = ", ".join(s.name for s in self._meta.skipped)
            raise ReadOnlyError(
                f"array {self.name!r} cannot be written: it uses extensions this "
                f"installation does not understand ({names})"
            )

    # -- shape changes -----------------------------------------------------------------------
    def resize(self, *shape: Any) -> None:
        """Change the shape. Data outside the new shape is dropped, so growing again shows fill.

        Args:
            *shape: The new shape, as one tuple or as one int per dimension.

        Raises:
            InvalidArgumentError: a shape of another number of dimensions, or a negative one.
            CodecChainError: the array's codecs cannot take chunks of the new shape.
            ReadOnlyError: the handle or store is read-only.
            StoreError: the store failed.
        """
        new = tuple(
            int(n) for n in (shape[0] if len(shape) == 1 and np.ndim(shape[0]) > 0 else shape)
        )
        old = self.shape
        if len(new) != len(old) or any(n < 0 for n in new):
            raise InvalidArgumentError(
                f"new shape {new} must have {len(old)} non-negative dimensions"
            )
        self._check_writeable()
        grid = self._meta.chunk_grid.resized(new)
        if grid is not self._meta.chunk_grid:  # the new chunks must suit the codecs too
            self._codec_chain(dataclasses.replace(self._meta, shape=new, chunk_grid=grid))
        self._clear_outside(old, new)
        self._rewrite_metadata(shape=new)

    def _clear_outside(self, old: tuple[int, ...], new: tuple[int, ...]) -> None:
        grid = self._meta.chunk_grid
        old_grid, new_grid = grid.grid_shape(old), grid.grid_shape(new)
        # chunks straddling the new edge: set the part beyond it to the fill value
        for d in range(len(old)):
            if new[d] >= old[d] or new_grid[d] == 0:
                continue
            last = new_grid[d] - 1
            start = int(grid.chunk_start(d, np.asarray(last)))
            # where that chunk ends: the next one's start (chunks may differ in size)
            end = (
                old[d]
                if last + 1 >= old_grid[d]
                else int(grid.chunk_start(d, np.asarray(last + 1)))
            )
            if end > new[d] and new[d] > start:
                sel = [slice(None)] * len(old)
                sel[d] = slice(new[d], end)
                self._set(indexing.basic_indexer(tuple(sel), old, grid), self.fill_value)
        # chunks wholly outside: erase
        self._engine.erase(_outside_coords(old_grid, new_grid))

    def append(self, data: Any, axis: int = 0) -> tuple[int, ...]:
        """Grow the array along `axis` and write `data` into the new part.

        Args:
            data: Values whose shape matches the array's in every other dimension.
            axis: The dimension to grow.

        Returns:
            The new shape.

        Raises:
            ValueCastError: `axis` is not a dimension, the shapes do not match, or the values
                cannot be stored in the data type (checked before the array grows).
            ReadOnlyError: the handle or store is read-only.
            StoreError: the store failed.
        """
        data = np.asanyarray(data)
        old = self.shape
        if not -self.ndim <= axis < self.ndim:
            raise ValueCastError(f"cannot append along axis {axis} of an array of shape {old}")
        axis = axis % self.ndim
        expected = old[:axis] + old[axis + 1 :]
        if data.ndim != self.ndim or data.shape[:axis] + data.shape[axis + 1 :] != expected:
            raise ValueCastError(
                f"cannot append data of shape {data.shape} to an array of shape "
                f"{old} along axis {axis}"
            )
        self._prepare_value(data, data.shape)  # refuse unrepresentable values before resizing
        new = list(old)
        new[axis] += data.shape[axis]
        self.resize(tuple(new))
        sel = [slice(None)] * self.ndim
        sel[axis] = slice(old[axis], new[axis])
        self[tuple(sel)] = data
        return self.shape


class _Indexed:
    """`array.oindex[...]` / `array.vindex[...]`."""

    def __init__(self, array: Array, make_indexer: Any):
        self._array = array
        self._make = make_indexer

    def _indexer(self, selection: Any) -> Any:
        meta = self._array.metadata
        return self._make(selection, meta.shape, meta.chunk_grid)

    def __getitem__(self, selection: Any) -> Any:
        return self._array._engine.read(self._indexer(selection))

    def __setitem__(self, selection: Any, value: Any) -> None:
        self._array._set(self._indexer(selection), value)


@dataclass(frozen=True)
class ArrayInfo:
    """An array's description, with zarr-python's `ArrayInfo` rows (and zarrkit's codecs
    and dimension names); `nbytes_stored` and `chunks_initialized` are None unless it came
    from `info_complete()`."""

    path: str
    shape: tuple[int, ...]
    data_type: Any
    chunks: tuple[int, ...] | None
    shards: tuple[int, ...] | None
    fill_value: Any
    codecs: list[Any]
    dimension_names: Any
    store: str
    nbytes: int
    read_only: bool
    zarr_format: str = V3
    order: str = "C"
    filters: tuple[Any, ...] = ()
    serializer: Any = None
    compressors: tuple[Any, ...] = ()
    nbytes_stored: int | None = None
    #: stored values: chunks, or shards for a sharded array (as zarr-python counts them here)
    chunks_initialized: int | None = None
    #: what `str` shows, in zarr-python's words: its texts of the data type, the fill value,
    #: the kind of store and the codecs (the fields above stay JSON, for `zarrkit info --json`)
    shown: dict[str, str] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def of(cls, array: Array, *, complete: bool = False) -> ArrayInfo:
        meta = array.metadata
        fmt = meta.format
        return cls(
            array.name,
            array.shape,
            meta.data_type.to_json(fmt),
            array.chunks,
            array.shards,
            meta.data_type.fill_to_json(meta.fill_value, fmt),
            [c.to_json(fmt) for c in meta.codecs],
            array.dimension_names,
            str(array.store),
            array.nbytes,
            array.read_only,
            zarr_format=fmt,
            order=array.order,
            filters=tuple(_codec_json(c, fmt) for c in array.filters),
            serializer=None if array.serializer is None else _codec_json(array.serializer, fmt),
            compressors=tuple(_codec_json(c, fmt) for c in array.compressors),
            nbytes_stored=array.nbytes_stored() if complete else None,
            chunks_initialized=array.nstored() if complete else None,
            shown={
                "data type": repr(meta.data_type),
                "fill value": str(meta.fill_value),
                "store type": store_type(array.store),
                "filters": repr(tuple(array.filters)),
                "serializer": repr(array.serializer),
                "compressors": repr(tuple(array.compressors)),
            },
        )

    @property
    def storage_ratio(self) -> float | None:
        if not self.nbytes_stored:
            return None
        return self.nbytes / self.nbytes_stored

    def __str__(self) -> str:
        """zarr-python's `ArrayInfo` text, row for row."""
        shown = self.shown
        rows: list[tuple[str, Any]] = [
            ("Type", "Array"),
            ("Zarr format", format_number(self.zarr_format)),
            ("Data type", shown.get("data type", self.data_type)),
            ("Fill value", shown.get("fill value", self.fill_value)),
            ("Shape", self.shape),
        ]
        if self.shards is not None:
            rows.append(("Shard shape", self.shards))
        rows += [
            ("Chunk shape", "<variable>" if self.chunks is None else self.chunks),
            ("Order", self.order),
            ("Read-only", self.read_only),
            ("Store type", shown.get("store type", self.store)),
            ("Filters", shown.get("filters", self.filters)),
        ]
        if self.serializer is not None:
            rows.append(("Serializer", shown.get("serializer", self.serializer)))
        rows += [
            ("Compressors", shown.get("compressors", self.compressors)),
            ("No. bytes", byte_count(self.nbytes)),
        ]
        if self.nbytes_stored is not None:
            rows.append(("No. bytes stored", byte_count(self.nbytes_stored)))
            if self.nbytes_stored > 0:
                rows.append(("Storage ratio", f"{self.nbytes / self.nbytes_stored:.1f}"))
        if self.chunks_initialized is not None:
            what = "Shards" if self.shards is not None else "Chunks"
            rows.append((f"{what} Initialized", self.chunks_initialized))
        return "\n".join(f"{k:<18} : {v}" for k, v in rows)


def format_number(fmt: str) -> Any:
    """zarr-python's `zarr_format` of a format: 3 or 2 (other formats keep their names)."""
    return {V3: 3, "v2": 2}.get(fmt, fmt)


def store_type(store: Any) -> str:
    """The kind of store, as zarr-python names its class: the name a store's repr starts with
    (`LocalStore('file://...')`, `ManagedMemoryStore('memory://x')`)."""
    named = getattr(store, "zarr_python_name", None)  # (a store zarr-python knows by another)
    if isinstance(named, str):
        return named
    named = getattr(store, "zarr_python_name", None)  # (a store zarr-python knows by another)
    if isinstance(named, str):
        return named
    text = repr(store)
    return text.split("(", 1)[0].lstrip("<") if "(" in text else type(store).__name__


def byte_count(size: int) -> str:
    """zarr-python's byte count: `400000000 (381.5M)`, or the number alone under 1 KiB."""
    if size < 2**10:
        return str(size)
    for power, unit in ((2, "K"), (3, "M"), (4, "G"), (5, "T")):
        if size < 2 ** (10 * power):
            return f"{size} ({size / 2 ** (10 * (power - 1)):.1f}{unit})"
    return f"{size} ({size / 2**50:.1f}P)"


def _codec_json(codec: Any, fmt: str) -> Any:
    """A codec's JSON in `fmt`, or in v3 when `fmt` has no spelling of it (v2's layout)."""
    try:
        return codec.to_json(fmt)
    except MetadataError:
        return codec.to_json(V3)


def _advanced_apart(items: tuple, ndim: int) -> bool:
    """Whether the integers and the array of a selection are not all adjacent: then numpy puts
    the array's dimension first rather than where it stands, which orthogonal indexing does not."""
    positions, at = [], 0
    for item in items:
        if item is Ellipsis:
            at += ndim - (len(items) - 1)
            continue
        if not isinstance(item, slice):
            positions.append(at)
        at += 1
    return bool(positions) and positions[-1] - positions[0] + 1 != len(positions)


def _checked_out(out: Any, shape: Sequence[int]) -> np.ndarray:
    """The caller's array for a read (`out=`), checked before anything is read."""
    if not isinstance(out, np.ndarray):
        raise ArgumentError(f"out must be a numpy array, got {type(out).__name__}")
    if out.shape != tuple(shape):
        raise InvalidArgumentError(
            f"out has shape {out.shape}; the selection's shape is {tuple(shape)}"
        )
    if not out.flags.writeable:
        raise InvalidArgumentError("out is read-only")
    return out


def _outside_coords(old_grid: Sequence[int], new_grid: Sequence[int]) -> Iterable[tuple[int, ...]]:
    """Chunk coordinates of the old grid that lie wholly outside the new one, each once."""
    ndim = len(old_grid)
    for d in range(ndim):
        if new_grid[d] >= old_grid[d]:
            continue
        ranges = [
            range(min(new_grid[i], old_grid[i])) if i < d else range(old_grid[i])
            for i in range(ndim)
        ]
        ranges[d] = range(new_grid[d], old_grid[d])
        yield from itertools.product(*ranges)
