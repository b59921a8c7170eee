"""Arrays: numpy-style reads and writes over chunks in a store.

`Array` is the public face: it checks a selection (building its per-chunk projections with
`indexing`) and a written value, and hands both to the array's chunk engine
(`engine.ChunkEngine`), which reads, decodes, encodes and stores the chunks. What zarr-python
shows of an array beyond that (`info`, `filters`, `get_*_selection`, ...) is the API layer's
subclass `zarrkit.Array` (`zarrkit.api.arrays`), which the kernel builds in this class's place.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Coroutine, Iterable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from . import config as settings
from . import indexing
from .abc.data_type import cast_values, check_representable
from .abc.format import ArrayMetadata
from .abc.store import Store, check_fits
from .codec_chain import CodecChain
from .engine import ChunkEngine, awaiting
from .errors import (
    ArgumentError,
    CodecChainError,
    InvalidArgumentError,
    InvalidKeyError,
    ReadOnlyError,
    SelectionError,
    ValueCastError,
)
from .indexing import Indexer
from .node import Node, node_location

if TYPE_CHECKING:
    pass

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

    @property
    def chunk_store(self) -> Store:
        """The store the array's chunks are read and written through: its store, wrapped by
        each of its storage transformers in order (the store itself when it has none)."""
        return self._chunk_store

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
    def oindex(self) -> _Indexed:
        return _Indexed(self, indexing.orthogonal_indexer)

    @property
    def vindex(self) -> _Indexed:
        return _Indexed(self, indexing.vectorized_indexer)

    @property
    def blocks(self) -> _Indexed:
        """Whole chunks by their grid positions: `a.blocks[1, 2:4]` (see `get_block_selection`)."""
        return _Indexed(self, indexing.block_indexer)

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
            checked_out(out, indexer.shape)
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

    def _mask_indexer(self, mask: Any) -> Any:
        m = np.asarray(mask)
        if m.dtype != bool or m.shape != self.shape:
            got = f"dtype {m.dtype}" if m.dtype != bool else f"shape {m.shape}"
            raise SelectionError(
                f"a mask selection is a boolean array of the array's shape {self.shape}; got {got}"
            )
        return indexing.vectorized_indexer(m, self.shape, self._meta.chunk_grid)

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
            checked_out(out, indexer.shape)
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

    # -- handing selections to the engine ----------------------------------------------------
    def _chunk_key(self, coords: Sequence[int]) -> str:
        return self._engine.chunk_key(coords)

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


def checked_out(out: Any, shape: Sequence[int]) -> np.ndarray:
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
