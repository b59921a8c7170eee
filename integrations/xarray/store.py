"""The xarray data store over a zarrkit group: what `engine="zarrkit"` reads through and what
`to_zarrkit` writes through.

It follows xarray's `ZarrStore` (xarray/backends/zarr.py) decision for decision, so a dataset
reads and writes as it does with zarr-python: dimension names from v3 `dimension_names` or the
v2 attribute `_ARRAY_DIMENSIONS`; the Zarr fill value as the CF `_FillValue` for v2 and as
`encoding["fill_value"]` for v3 (attribute `_FillValue` base64-encoded, xarray's
`FillValueCoder`); variables encoded by xarray's `encode_zarr_variable` and
`extract_zarr_variable_encoding`; appends encoded exactly as the stored variables. What
`ZarrStore` does with zarr-python objects is done here with zarrkit's, so zarrkit does all the
I/O and zarr-python need not be installed. Region validation is xarray's own code, borrowed.
"""

from __future__ import annotations

import contextlib
import struct
import sys
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import FrameType
from typing import Any, Literal

import numpy as np

import zarrkit
import zarrkit.api
from xarray import coding, conventions
from xarray.backends.chunks import grid_rechunk, validate_grid_chunks_alignment
from xarray.backends.common import AbstractWritableDataStore, _encode_variable_name
from xarray.backends.zarr import (
    FillValueCoder,
    ZarrStore,
    _validate_and_transpose_existing_dims,
    _validate_datatypes_for_zarr_append,
    encode_zarr_attr_value,
    encode_zarr_variable,
    extract_zarr_variable_encoding,
)
from xarray.core import indexing
from xarray.core.utils import FrozenDict
from xarray.core.variable import Variable
from zarrkit.abc import V3, StoreLike
from zarrkit.errors import DimensionNamesError, MetadataError, NodeNotFoundError, NotJSONError
from zarrkit.helpers import get_format, open_store

from .array import ZarrkitBackendArray, is_vlen_string
from .encoding import creation_codecs, read_encoding, resolve_serializer

#: where zarr format 2 (and the 2020 draft) keep dimension names, as xarray writes them
DIMENSION_KEY = "_ARRAY_DIMENSIONS"


def opens_its_store(store: object) -> bool:
    """Whether opening `store` makes a zarrkit store (a path or URL) rather than using one."""
    from zarrkit.abc import Store

    return not isinstance(store, Store)


def open_group(
    store: StoreLike,
    *,
    mode: str = "r",
    group: str | None = None,
    consolidated: bool | None = None,
    storage_options: dict | None = None,
    zarr_format: int | None = None,
) -> Any:
    """The zarrkit group a dataset lives in, its store opened once. Reading uses consolidated
    metadata as xarray does with zarr-python: that of the store's root (a subgroup is found
    through it) when present (`consolidated=None`, warning as engine="zarr" does when there is
    none) or required (`True`). Writing never reads through it: documents consolidated before
    the write would hide what the write creates."""
    path = (group or "").strip("/")
    store = open_store(store, mode="a" if mode == "a-" else mode, storage_options=storage_options)
    if mode == "r":
        if consolidated is not False and path:
            try:
                root = zarrkit.open_group(store, mode="r", use_consolidated=consolidated)
            except NodeNotFoundError:  # no root group (v3 may imply it): open `path` itself
                root = None
            if root is not None:
                if consolidated is None and not is_consolidated(root):
                    warn_unconsolidated()
                node = root[path]
                if not isinstance(node, zarrkit.Group):
                    raise NodeNotFoundError(path, root.store, what="group (found an array)")
                return node
        opened = zarrkit.open_group(store, path=path, mode="r", use_consolidated=consolidated)
        if consolidated is None and not is_consolidated(opened):
            warn_unconsolidated()
        return opened
    mode = "a" if mode == "a-" else mode
    create: dict[str, Any] = {}
    if zarr_format is not None and mode != "r+":
        create["zarr_format"] = zarr_format
    return zarrkit.open_group(store, path=path, mode=mode, use_consolidated=False, **create)


def is_consolidated(group: Any) -> bool:
    """Whether `group` was opened with consolidated metadata (v3 inline, v2 `.zmetadata`)."""
    return group.metadata.document.get("consolidated_metadata") is not None


def warn_unconsolidated() -> None:
    """engine="zarr"'s warning, word for word, when `consolidated=None` finds no consolidated
    metadata: on an object store listing every member is the slow open it points to."""
    warnings.warn(
        "Failed to open Zarr store with consolidated metadata, "
        "but successfully read with non-consolidated metadata. "
        "This is typically much slower for opening a dataset. "
        "To silence this warning, consider:\n"
        "1. Consolidating metadata in this existing store with "
        "zarrkit.consolidate_metadata().\n"
        "2. Explicitly setting consolidated=False, to avoid trying "
        "to read consolidate metadata, or\n"
        "3. Explicitly setting consolidated=True, to raise an "
        "error in this case instead of falling back to try "
        "reading non-consolidated metadata.",
        RuntimeWarning,
        stacklevel=_user_stacklevel(),
    )


def _user_stacklevel() -> int:
    """The stack level of the first frame outside xarray and zarrkit, so a warning names the
    user's call (as xarray's `emit_user_level_warning` does for its own code)."""
    frame: FrameType | None = sys._getframe(1)
    level = 1
    while frame is not None:
        module = str(frame.f_globals.get("__name__", ""))
        if module.partition(".")[0] not in ("xarray", "zarrkit"):
            return level
        frame = frame.f_back
        level += 1
    return level


class ZarrkitStore(AbstractWritableDataStore):
    """One group of a Zarr hierarchy as an xarray data store (see the module docstring)."""

    def __init__(
        self,
        group: Any,
        *,
        mode: str = "r",
        consolidate_on_close: bool = False,
        append_dim: Any = None,
        write_region: Any = None,
        safe_chunks: bool = True,
        align_chunks: bool = False,
        write_empty: bool | None = None,
        use_zarr_fill_value_as_mask: bool | None = None,
        close_store_on_close: bool = False,
    ):
        self.zarr_group = group
        self._close_store_on_close = close_store_on_close
        self._mode = mode
        self._consolidate_on_close = consolidate_on_close
        self._append_dim = append_dim
        self._write_region = write_region
        self._align_chunks = align_chunks
        self._safe_chunks = safe_chunks and not align_chunks
        self._write_empty = write_empty
        self._format = group.metadata.format
        if use_zarr_fill_value_as_mask is None:  # as xarray: v2 data is masked by its fill value
            use_zarr_fill_value_as_mask = self._format != V3
        self._use_zarr_fill_value_as_mask = use_zarr_fill_value_as_mask
        self._members = dict(group.members())

    @property
    def ds(self) -> Any:
        """The zarrkit group, under the name xarray's `ZarrStore` gives its zarr group."""
        return self.zarr_group

    def get_child_store(self, group: str) -> ZarrkitStore:
        child = self.zarr_group.require_group(group.strip("/"))
        store = type(self)(
            child,
            mode=self._mode,
            consolidate_on_close=self._consolidate_on_close,
            append_dim=self._append_dim,
            write_region=self._write_region,
            safe_chunks=self._safe_chunks,
            align_chunks=self._align_chunks,
            write_empty=self._write_empty,
            use_zarr_fill_value_as_mask=self._use_zarr_fill_value_as_mask,
        )
        return store

    def child_groups(self) -> dict[str, ZarrkitStore]:
        """Every group below this one, by path relative to it ("" for this one): the groups of
        a DataTree."""
        out = {"": self}
        for name, node in self._members.items():
            if isinstance(node, zarrkit.Group):
                child = type(self)(
                    node,
                    mode=self._mode,
                    use_zarr_fill_value_as_mask=self._use_zarr_fill_value_as_mask,
                )
                out.update(
                    {
                        "/".join(p for p in (name, k) if p): v
                        for k, v in child.child_groups().items()
                    }
                )
        return out

    # -- reading ---------------------------------------------------------------------------
    def array_keys(self) -> tuple[str, ...]:
        return tuple(k for k, v in self._members.items() if isinstance(v, zarrkit.Array))

    def arrays(self) -> tuple[tuple[str, Any], ...]:
        return tuple((k, v) for k, v in self._members.items() if isinstance(v, zarrkit.Array))

    def open_store_variable(self, name: str) -> Variable:
        array = self._members[name]
        dimensions, attributes = dims_and_attrs(array)
        wrapper = ZarrkitBackendArray(array)
        data = indexing.LazilyIndexedArray(wrapper)
        chunks, shards = _chunk_encoding(array)
        encoding: dict[str, Any] = {
            "chunks": chunks,
            "preferred_chunks": dict(zip(dimensions, chunks, strict=True)),
            "shards": shards,
            **read_encoding(array),
        }
        if wrapper.dtype.kind == "T":  # as engine="zarr": written back as StringDType
            encoding["dtype"] = wrapper.dtype
        fill = stored_fill_value(array)
        if self._use_zarr_fill_value_as_mask:
            if fill is not None:
                attributes["_FillValue"] = fill
        else:
            if self._format == V3:
                encoding["fill_value"] = fill
            if "_FillValue" in attributes:
                attributes["_FillValue"] = _decoded_fill(array, attributes["_FillValue"])
        return Variable(dimensions, data, attributes, encoding)

    def get_variables(self) -> Mapping[str, Variable]:
        if self._mode != "r":  # written through: read the arrays as they are now, as ZarrStore
            self._members = dict(self.zarr_group.members())
        self.get_dimensions()  # the stored lengths agree, or a zarrkit error names the array
        return FrozenDict((k, self.open_store_variable(k)) for k in self.array_keys())

    def get_attrs(self) -> dict[str, Any]:
        return {
            k: v for k, v in dict(self.zarr_group.attrs).items() if not k.lower().startswith("_nc")
        }

    def get_dimensions(self) -> dict[str, int]:
        dimensions: dict[str, int] = {}
        for _name, array in self.arrays():
            names, _ = dims_and_attrs(array)
            for d, s in zip(names, array.shape, strict=True):
                if d in dimensions and dimensions[d] != s:
                    raise MetadataError(
                        f"found conflicting lengths for dimension {d!r} ({s} != {dimensions[d]})",
                        field="shape",
                        where=f"array {array.name!r} in {array.store}",
                    )
                dimensions[d] = s
        return dimensions

    # -- writing (xarray's ZarrStore.store / set_variables, through zarrkit) ----------------
    def set_dimensions(self, variables: Any, unlimited_dims: Any = None) -> None:
        if unlimited_dims is not None:
            raise NotImplementedError("Zarr has no unlimited dimensions")

    def set_attributes(self, attributes: Mapping[str, Any]) -> None:
        """The group's attributes become the dataset's (replaced, not merged, as in xarray)."""
        with _attributes_as_xarray_says():
            self.zarr_group.attrs.put({k: encode_zarr_attr_value(v) for k, v in attributes.items()})

    def encode_variable(self, variable: Variable, name: Any = None) -> Variable:
        fmt: Literal[2, 3] = 3 if self._format == V3 else 2
        if fmt == 2 and variable.dtype.kind == "T":
            variable = _as_str_objects(variable)
        encoded: Variable = encode_zarr_variable(variable, name=name, zarr_format=fmt)
        return encoded

    def encode_attribute(self, a: Any) -> Any:
        return encode_zarr_attr_value(a)

    def encode(
        self, variables: Mapping[str, Variable], attributes: Mapping[str, Any]
    ) -> tuple[dict[str, Variable], dict[str, Any]]:
        """xarray's own (each variable and attribute through the two methods above), typed."""
        encoded: tuple[dict[str, Variable], dict[str, Any]]
        encoded = AbstractWritableDataStore.encode(self, variables, attributes)
        return encoded

    # pure logic over this store's fields and `open_store_variable`: xarray's own
    _auto_detect_regions = ZarrStore._auto_detect_regions
    _validate_and_autodetect_region = ZarrStore._validate_and_autodetect_region
    _validate_encoding = ZarrStore._validate_encoding

    def store(
        self,
        variables: Mapping[str, Variable],
        attributes: Mapping[str, Any],
        check_encoding_set: Any = frozenset(),
        writer: Any = None,
        unlimited_dims: Any = None,
    ) -> None:
        if self._mode == "w":
            existing_keys: tuple[str, ...] = ()
            existing_names: set[str] = set()
        else:
            existing_keys = self.array_keys()
            existing_names = {vn for vn in variables if _encode_variable_name(vn) in existing_keys}
        new_names = set(variables) - existing_names
        if self._mode == "r+" and (new := [k for k in variables if k not in existing_keys]):
            raise ValueError(
                f"dataset contains non-pre-existing variables {new!r}, which is "
                f"not allowed in to_zarrkit() with mode='r+'. To allow writing new "
                f"variables, set mode='a'."
            )
        if self._append_dim is not None and self._append_dim not in existing_keys:
            existing_dims = self.get_dimensions()
            if self._append_dim not in existing_dims:
                raise ValueError(
                    f"append_dim={self._append_dim!r} does not match any existing "
                    f"dataset dimensions {existing_dims}"
                )
        encoded, attributes = self.encode({vn: variables[vn] for vn in new_names}, attributes)
        if existing_names:
            # values written into stored variables are encoded exactly as the stored ones
            existing_vars, _, _ = conventions.decode_cf_variables(
                variables={k: self.open_store_variable(name=k) for k in existing_names},
                attributes={},
            )
            with_encoding = {}
            for vn in existing_names:
                _validate_datatypes_for_zarr_append(vn, existing_vars[vn], variables[vn])
                with_encoding[vn] = variables[vn].copy(deep=False)
                with_encoding[vn].encoding = existing_vars[vn].encoding
            with_encoding, _ = self.encode(with_encoding, {})
            encoded.update(with_encoding)
            for vn in existing_names:
                encoded[vn] = _validate_and_transpose_existing_dims(
                    vn, encoded[vn], existing_vars[vn], self._write_region, self._append_dim
                )
        if self._mode not in ("r", "r+"):
            self.set_dimensions(encoded, unlimited_dims=unlimited_dims)
        if self._mode == "a-" and self._append_dim is not None:
            encoded = {
                k: v
                for k, v in encoded.items()
                if k not in existing_names or self._append_dim in v.dims
            }
        # every variable checked before anything is written, the group's attributes included
        # (a refused append leaves the store as it was, its consolidated metadata too)
        planned = self._plan_variables(encoded, check_encoding_set)
        if self._mode not in ("r", "r+"):
            self.set_attributes(attributes)
        self._write_planned(planned, writer)
        if self._consolidate_on_close:
            consolidate_root(self.zarr_group)

    def set_variables(
        self,
        variables: Mapping[str, Variable],
        check_encoding_set: Any,
        writer: Any,
        unlimited_dims: Any = None,
    ) -> None:
        """xarray's `ZarrStore.set_variables` in two passes: every variable is checked (its
        encoding, its dask blocks against the stored chunks or shards) before any array is
        grown or created, so a refused append leaves the store as it was."""
        self._write_planned(self._plan_variables(variables, check_encoding_set), writer)

    def _plan_variables(
        self, variables: Mapping[str, Variable], check_encoding_set: Any
    ) -> list[_Planned]:
        """Each variable checked (its encoding, its dask blocks against the stored chunks or
        shards) and planned, before anything is written."""
        existing_keys = self.array_keys()
        return [
            self._plan_variable(vn, v, check_encoding_set, existing_keys)
            for vn, v in variables.items()
        ]

    def _write_planned(self, planned: list[_Planned], writer: Any) -> None:
        """The planned variables grown or created, and their data handed to `writer`."""
        for plan in planned:
            array = plan.array
            if plan.grown is not None:
                array.resize(plan.grown)
            if array is None:
                array = self._create_array(
                    plan.name,
                    dims=plan.variable.dims,
                    shape=plan.variable.shape,
                    dtype=plan.variable.dtype,
                    fill_value=plan.fill_value,
                    encoding=plan.encoding,
                    attrs=plan.attrs,
                )
            # this store reads what it wrote (xarray's `dump_to_store` then `decode_cf`)
            self._members[plan.name] = array
            wanted = plan.encoding.get("write_empty_chunks", self._write_empty)
            writer.add(plan.variable.data, _Target(array, wanted), plan.region)

    def _plan_variable(
        self, vn: Any, v: Variable, check_encoding_set: Any, existing_keys: tuple[str, ...]
    ) -> _Planned:
        name = _encode_variable_name(vn)
        attrs = v.attrs.copy()
        dims, dtype = v.dims, v.dtype
        if self._use_zarr_fill_value_as_mask:
            fill_value = attrs.pop("_FillValue", None)
        else:
            fill_value = v.encoding.pop("fill_value", None)
            if fill_value is None and v.dtype.kind == "f":
                fill_value = np.nan  # xarray's default for floats (zarr's is 0)
            if "_FillValue" in attrs:
                fv = attrs.pop("_FillValue")
                if fv is not None:
                    attrs["_FillValue"] = FillValueCoder.encode(fv, dtype)
        if "_FillValue" in v.encoding:
            if v.encoding.get("_FillValue") is not None:
                raise ValueError("Zarr does not support _FillValue in encoding.")
            del v.encoding["_FillValue"]
        encoding = extract_zarr_variable_encoding(
            v,
            raise_on_invalid=vn in check_encoding_set,
            name=vn,
            zarr_format=3 if self._format == V3 else 2,
        )
        region_map = self._write_region if self._write_region is not None else {}
        write_region = {dim: region_map.get(dim, slice(None)) for dim in dims}
        array = None
        grown: tuple[int, ...] | None = None
        zarr_shape: tuple[int, ...] | None = None
        if self._mode != "w" and name in existing_keys:
            array = self.zarr_group[name]  # (read again: a resize must see the latest)
            zarr_shape = array.shape
            if self._append_dim is not None and self._append_dim in dims:
                axis = dims.index(self._append_dim)
                write_region[self._append_dim] = slice(array.shape[axis], None)
                new_shape = list(array.shape)
                new_shape[axis] += v.shape[axis]
                zarr_shape = grown = tuple(new_shape)
        region = tuple(write_region[dim] for dim in dims)
        # dask blocks must not straddle a stored chunk (a shard, when sharded): two tasks
        # would each rewrite it, and one update would be lost
        effective = encoding.get("shards") or encoding["chunks"]
        if self._align_chunks and isinstance(effective, tuple):
            v = grid_rechunk(v=v, enc_chunks=effective, region=region)
        if self._safe_chunks and isinstance(effective, tuple):
            validate_grid_chunks_alignment(
                nd_v_chunks=v.chunks,
                enc_chunks=effective,
                region=region,
                allow_partial_chunks=self._mode != "r+",
                name=name,
                backend_shape=zarr_shape or v.shape,
            )
        encoded_attrs = {k: self.encode_attribute(a) for k, a in attrs.items()}
        return _Planned(name, v, array, grown, region, encoding, fill_value, encoded_attrs)

    def _create_array(
        self,
        name: str,
        *,
        dims: tuple,
        shape: tuple,
        dtype: np.dtype,
        fill_value: Any,
        encoding: dict,
        attrs: dict,
    ) -> Any:
        """A new array as zarr-python's `Group.create` makes it for xarray (zarr-python's
        defaults where the encoding names nothing), through zarrkit."""
        fmt = self._format
        # variable-length strings: zarrkit's `string` (v3) or `|O` + vlen-utf8
        requested: np.dtype | type[str] = dtype
        if coding.strings.check_vlen_dtype(dtype) is str:
            requested = str
        if (
            self._write_empty is not None
            and encoding.get("write_empty_chunks", self._write_empty) != self._write_empty
        ):
            raise ValueError(
                f'Differing "write_empty_chunks" values in encoding and parameters'
                f' Got {encoding["write_empty_chunks"] = } and '
                f"{self._write_empty = }"
            )
        chunks = encoding.get("chunks")
        chunks = None if isinstance(chunks, str) else chunks
        shards = encoding.get("shards")
        shards = None if isinstance(shards, str) else shards
        kwargs: dict[str, Any] = creation_codecs(encoding, fmt)
        data_type = zarrkit.api.data_type_from_arg(requested, fmt)
        if "codecs" in kwargs:
            kwargs["codecs"] = resolve_serializer(kwargs["codecs"], data_type)
        if fmt == V3:
            kwargs["dimension_names"] = [str(d) for d in dims]
        else:
            attrs = {**attrs, DIMENSION_KEY: [str(d) for d in dims]}
        with _attributes_as_xarray_says():
            array = self.zarr_group.create_array(
                name,
                shape=shape,
                dtype=data_type,
                chunks=chunks,
                shards=shards,
                fill_value=fill_value,
                attributes=attrs,
                overwrite=self._mode == "w",
                **kwargs,
            )
        if fill_value is None and fmt != V3:
            array = _null_fill_v2(array)
        return array

    def sync(self) -> None:
        pass

    def close(self) -> None:
        """Close the zarrkit store when this opened it from a path or URL (a zip archive is
        written then, an LMDB environment released); a store object passed in stays open."""
        if self._close_store_on_close:
            self.zarr_group.store.close()


@dataclass(frozen=True)
class _Planned:
    """One variable's write, checked: the array to grow (`grown`) or create (`array` None)."""

    name: str
    variable: Variable
    array: Any
    grown: tuple[int, ...] | None
    region: tuple
    encoding: dict
    fill_value: Any
    attrs: dict


class _Target:
    """The array xarray's ArrayWriter writes blocks into (`target[region] = block`), with the
    `write_empty_chunks` of the variable's encoding or of the dataset when one is given: a
    handle of its own with that setting (`with_config`), so writes with different settings
    may run at once."""

    def __init__(self, array: Any, write_empty: bool | None):
        if write_empty is not None:
            array = array.with_config({"write_empty_chunks": write_empty})
        self.array = array
        self.shape = array.shape
        self.dtype = array.dtype
        self.ndim = array.ndim

    def __setitem__(self, region: Any, value: Any) -> None:
        self.array[region] = value


#: a dimension's chunks in an encoding: one length (a regular grid) or each chunk's (irregular)
ChunkLengths = int | tuple[int, ...]
#: the most chunks along a dimension whose lengths an encoding lists (an irregular grid's
#: metadata can say "a billion chunks of 1" in a few bytes)
_MOST_LISTED = 1 << 20


def _chunk_encoding(array: Any) -> tuple[tuple[ChunkLengths, ...], Any]:
    """`chunks` and `shards` of a variable's encoding, as xarray's zarr backend reads them: on
    an irregular grid (rectilinear), each chunk's length along an irregular dimension, so that
    `chunks={}` makes one dask block per stored chunk (one length would cut blocks across
    stored chunks, each then read twice). A grid with more than `_MOST_LISTED` chunks along a
    dimension gives its first chunk's shape instead, as a regular grid would."""
    grid = array.metadata.chunk_grid
    listed = grid.uniform_chunk_shape is None and all(
        n <= _MOST_LISTED for n in grid.grid_shape(array.shape)
    )
    if not listed:
        chunks = array.chunks or grid.chunk_shape((0,) * array.ndim)
        return tuple(chunks), array.shards
    lengths = _compact(array.write_chunk_sizes)
    if array.chunks is None:  # unsharded: the grid's chunks are the chunks
        return lengths, None
    return tuple(array.chunks), lengths  # regular chunks inside irregular shards


def _compact(sizes: tuple[tuple[int, ...], ...]) -> tuple[ChunkLengths, ...]:
    """Each dimension's chunk lengths as one length where they are a regular grid's (equal,
    the last no longer), else as they are; (0,) for an empty dimension, which dask accepts."""
    out: list[ChunkLengths] = []
    for lengths in sizes:
        if not lengths:
            out.append((0,))
        elif len(set(lengths[:-1])) <= 1 and lengths[-1] <= lengths[0]:
            out.append(lengths[0])
        else:
            out.append(tuple(lengths))
    return tuple(out)


@contextlib.contextmanager
def _attributes_as_xarray_says() -> Iterator[None]:
    """An attribute JSON cannot hold, reported in the words of xarray's `_put_attrs` (which
    callers match on), still as zarrkit's `NotJSONError` (a TypeError, as xarray's is)."""
    try:
        yield
    except NotJSONError as exc:
        raise NotJSONError(f"Invalid attribute in Dataset.attrs. ({exc.detail})") from exc


def dims_and_attrs(array: Any) -> tuple[tuple[str, ...], dict[str, Any]]:
    """An array's dimension names and the attributes xarray shows, as xarray's zarr backend
    finds them: v3 `dimension_names`; elsewhere the `_ARRAY_DIMENSIONS` attribute, hidden."""
    attributes = dict(array.attrs)
    where = f"array {array.name!r} in {array.store}"
    if array.metadata.format == V3:
        names = array.dimension_names or ()
        if len(names) != array.ndim or any(n is None for n in names):
            raise DimensionNamesError(
                "missing: xarray needs a name for every dimension of an array",
                field="dimension_names",
                where=where,
            )
        return tuple(names), attributes
    names = attributes.pop(DIMENSION_KEY, None)
    if (
        not isinstance(names, list)
        or len(names) != array.ndim
        or not all(isinstance(n, str) for n in names)
    ):
        raise DimensionNamesError(
            f"xarray needs the attribute {DIMENSION_KEY!r} naming each of the "
            f"{array.ndim} dimensions, got {names!r}",
            field=DIMENSION_KEY,
            where=where,
        )
    return tuple(names), {k: v for k, v in attributes.items() if not k.lower().startswith("_nc")}


def _decoded_fill(array: Any, value: Any) -> Any:
    """A v3 `_FillValue` attribute as xarray's FillValueCoder reads it; a zarrkit error that
    names the array when it is not one."""
    try:
        return FillValueCoder.decode(value, array.dtype)
    except (TypeError, ValueError, struct.error) as exc:
        raise MetadataError(
            f"{value!r} is not a fill value xarray encodes for data type {array.dtype}: {exc}",
            field="attributes._FillValue",
            where=f"array {array.name!r} in {array.store}",
        ) from None


def _as_str_objects(variable: Variable) -> Variable:
    """A StringDType variable as the str objects v2 stores with a `vlen-utf8` filter. xarray
    encodes StringDType for v2 as fixed-width `<U`, which the `vlen-utf8` filter of strings read
    from v2 (in `encoding["filters"]`) cannot take: a dataset read from v2 would not write
    back (with engine="zarr" it does not: zarr-python finds no data type for the pair)."""
    encoding = {k: v for k, v in variable.encoding.items() if k != "dtype"}
    out = variable.astype(object)
    out.encoding = encoding
    return out


def stored_fill_value(array: Any) -> Any:
    """The fill value as zarr-python reports it: None for a v2 `null`, the value otherwise."""
    if array.metadata.format != V3 and array.metadata.document.get("fill_value") is None:
        return None
    fill = array.fill_value
    if is_vlen_string(array) and isinstance(fill, bytes):
        return fill.decode()
    return fill


def _null_fill_v2(array: Any) -> Any:
    """A new v2 array's fill value set to `null`, as zarr-python writes it when none is given
    (readers then mask nothing): zarrkit's `create_array` always writes a value, so the
    array's document is written again through its format (`zarrkit.abc.format.Format`)."""
    doc = array.metadata.to_json()
    doc["fill_value"] = None
    fmt = get_format(array.metadata.format)
    fmt.write_metadata(array.store, array.path, doc)
    return zarrkit.open_array(array.store, path=array.path, mode="r+")


def consolidate_root(group: Any) -> None:
    """Consolidate the store's root group, as xarray does after writing with zarr-python."""
    zarrkit.consolidate_metadata(group.store, "")
