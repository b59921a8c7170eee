"""`zarrkit.Array`: the kernel's array with zarr-python 3's faces over it.

The kernel's `Array` (`zarrkit.array`) reads and writes selections through the chunk engine;
what zarr-python 3 also shows of an array is here, in the API layer: `info` and
`info_complete()`, the codecs split as `filters` / `serializer` / `compressors`, `order`, the
chunk counts and sizes, the `get_*_selection` / `set_*_selection` spellings of indexing,
`with_config`, and the ways into other layers (`lazy`, `to_dask`). Importing this module
registers the class with the kernel (`zarrkit.node.register_node_class`), so every array the
kernel opens or creates is a `zarrkit.Array`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from zarrkit.abc.codec import CodecKind
from zarrkit.abc.extension import V3
from zarrkit.abc.format import ArrayMetadata as KernelArrayMetadata
from zarrkit.abc.store import limiting_listings, limiting_values
from zarrkit.api.metadata import ArrayMetadata, shown
from zarrkit.array import CONFIG_FIELDS, ArrayConfig, checked_out
from zarrkit.array import Array as KernelArray
from zarrkit.errors import (
    ArgumentError,
    MetadataError,
    SelectionError,
    StoreError,
    ValueCastError,
)
from zarrkit.indexing import Indexer
from zarrkit.node import register_node_class

if TYPE_CHECKING:
    from zarrkit.views import LazyArray

__all__ = ["Array", "ArrayInfo", "public"]


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


class Array(KernelArray):
    """An array in a store: a handle made by `zarrkit.open_array`, `create_array` or a group,
    never by hand. Indexing reads and writes (`a[...]`, `a.oindex[...]`, `a.vindex[...]`,
    `a.blocks[...]`), touching only the chunks a selection covers. A handle pickles as what
    opens it again; it is safe to share between threads."""

    _meta: ArrayMetadata

    def _set_metadata(self, metadata: KernelArrayMetadata) -> None:
        super()._set_metadata(shown(metadata))

    @property
    def metadata(self) -> ArrayMetadata:
        """The array's metadata, with what zarr-python's shows (`to_dict()`, `zarr_format`)."""
        return self._meta

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

    @property
    def lazy(self) -> LazyArray:
        """A view of the whole array that reads nothing until asked: `a.lazy[sel]` chains
        selections (numpy's, `.oindex`, `.vindex`, `.T`) and `.result()` reads them as one
        (`zarrkit.views`, outside the kernel)."""
        from zarrkit.views import LazyArray

        return LazyArray(self)

    def to_dask(self, chunks: Any = None) -> Any:
        """A lazy dask array over this one, one task per stored chunk (per shard) unless
        `chunks` says otherwise: `zarrkit.dask.from_zarrkit(self, chunks=chunks)`."""
        try:
            from zarrkit.dask import from_zarrkit
        except ImportError as exc:
            from zarrkit.errors import PluginLoadError

            raise PluginLoadError("Array.to_dask needs dask: pip install 'zarrkit[dask]'") from exc
        return from_zarrkit(self, chunks=chunks)

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

    def _get(self, indexer: Indexer, out: np.ndarray | None = None) -> Any:
        """The selection's values (into `out`, checked first, when given)."""
        if out is not None:
            checked_out(out, indexer.shape)
        return self._engine.read(indexer, out)

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

    def read_stored_chunks(self, coords: Iterable[Sequence[int]]) -> dict[tuple[int, ...], bytes]:
        """The stored values of chunks (shards, when sharded), encoded as the store holds
        them, read in one batch through the array's storage transformers: what a tool that
        copies chunks without decoding them reads (`zarrkit copy`). Each value is held to what
        a chunk of this array can take, far above what any codec chain stores, so a hostile
        one (an endless HTTP body) is refused before it fills memory.

        Args:
            coords: The chunks' grid coordinates, one integer per dimension (those of
                `stored_chunks()` are the chunks the store holds).

        Returns:
            The encoded values by coordinates; a chunk the store does not hold is left out.

        Raises:
            SelectionError: coordinates outside the array's chunk grid.
            ValueTooLargeError: a stored value is larger than a chunk of the array can be.
            StoreError: the store failed.
        """
        grid = tuple(self._meta.chunk_grid.grid_shape(self.shape))
        by_key: dict[str, tuple[int, ...]] = {}
        for where in coords:
            chunk = tuple(int(c) for c in where)
            if len(chunk) != len(grid) or not all(0 <= c < n for c, n in zip(chunk, grid)):
                raise SelectionError(
                    f"{chunk} is not a chunk of array {self.name!r}, whose grid is {grid}"
                )
            by_key[self._chunk_key(chunk)] = chunk
        with limiting_values(self._engine.value_limit):
            found = self._chunk_store.get_many(list(by_key))
        return {by_key[key]: value for key, value in found.items() if key in by_key}

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


register_node_class(KernelArray, Array)


def public(array: KernelArray) -> Array:
    """`array`, which the kernel built, typed as what it is: a `zarrkit.Array` (the class
    registered above; the kernel's own class is typed as its return)."""
    return cast(Array, array)


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
