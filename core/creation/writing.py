"""Creating a node: an array's canonical spec (`ArraySpec`, which the API layer's
`create_array` makes of a user's arguments) turned into one document of its format (the
format's `array_document`), the room made for it in the store (`prepare_path`: what is in the
way, missing parents), and the document written; groups alike (`write_group`). The `Array` a
caller gets back is validated before anything is written."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .. import codec_chain, config
from ..abc.chunk_grid import ChunkGrid
from ..abc.chunk_key_encoding import ChunkKeyEncoding
from ..abc.codec import ChunkSpec, Codec
from ..abc.data_type import DataType
from ..abc.extension import V2, V3, V3_DRAFT_2020, check_format
from ..abc.format import ArrayMetadata, GroupMetadata
from ..abc.storage_transformer import StorageTransformer
from ..abc.store import Range, Store
from ..array import Array, ArrayConfig
from ..documents import check_nesting
from ..errors import ContainsArrayError, InvalidArgumentError, contains_error
from ..formats import available, check_node_fits, get_format
from ..node import node_class


@dataclass(frozen=True)
class ArraySpec:
    """A new array in canonical form, every extension built: what the format's
    `array_document` writes. The API layer's `create_array` turns a user's arguments into one."""

    shape: tuple[int, ...]
    data_type: DataType
    chunk_grid: ChunkGrid
    chunk_key_encoding: ChunkKeyEncoding
    #: the fill value as the data type holds it (`DataType.fill_from_user`)
    fill_value: Any
    #: the codec chain, before it is evolved to the chunks (`codec_chain.evolve`)
    codecs: tuple[Codec, ...]
    attributes: Mapping[str, Any] | None = None
    dimension_names: tuple[str | None, ...] | None = None
    storage_transformers: tuple[StorageTransformer, ...] = ()


def write_array(
    store: Store, path: str, fmt: str, spec: ArraySpec, *, config: ArrayConfig, overwrite: bool
) -> Array:
    """Write a new array's document of format `fmt` at `path` (a normalized path in an open
    store), making room for it as `prepare_path` does, and return it open with `config`. The
    array is built, and so its codec chain checked, before anything is written."""
    format_module = get_format(fmt)
    where = f"new array {path or '/'!r}"
    grid = spec.chunk_grid
    chunk_shape = grid.uniform_chunk_shape or grid.chunk_shape((0,) * len(spec.shape))
    codecs = codec_chain.evolve(
        list(spec.codecs), ChunkSpec(chunk_shape, spec.data_type, spec.fill_value)
    )
    doc = format_module.array_document(
        shape=spec.shape,
        data_type=spec.data_type,
        chunk_grid=grid,
        chunk_key_encoding=spec.chunk_key_encoding,
        fill_value=spec.fill_value,
        codecs=codecs,
        attributes=spec.attributes,
        dimension_names=None if spec.dimension_names is None else list(spec.dimension_names),
        storage_transformers=list(spec.storage_transformers),
    )
    metadata = format_module.parse_array(
        format_module.load_document(format_module.encode_document(doc), where), where
    )
    array = node_class(Array)(store, path, metadata, config=config)
    prepare_path(store, path, fmt, overwrite=overwrite)
    format_module.write_metadata(store, path, doc)
    return array


#: what users may pass as `zarr_format`
_FORMAT_ALIASES: dict[Any, str] = {3: V3, "3": V3, 2: V2, "2": V2}


def format_name(zarr_format: Any) -> str:
    """The format's name from what users pass as `zarr_format` (3, 2, "3", or a name); None is
    the `default_zarr_format` setting (zarr-python's key of that name), 3 unless changed."""
    if zarr_format is None:
        zarr_format = config.get().default_zarr_format
    name = _FORMAT_ALIASES.get(zarr_format, zarr_format)
    if not isinstance(name, str):
        raise InvalidArgumentError(
            f"zarr_format must be 3, 2 or {V3_DRAFT_2020!r}, got {zarr_format!r}"
        )
    check_format(name)
    get_format(name)  # NotImplementedError when this installation lacks the format
    return name


def write_group(
    store: Store,
    path: str,
    *,
    attributes: Mapping[str, Any] | None = None,
    zarr_format: Any = None,
    overwrite: bool = False,
) -> GroupMetadata:
    """Write a new group's document at `path` (a normalized path in an open store), making
    room for it and creating its missing ancestors, and return its metadata."""
    fmt = format_name(zarr_format)
    format_module = get_format(fmt)
    doc = format_module.group_document(attributes)
    where = f"new group {path or '/'!r}"
    check_nesting(doc, where)  # (parsing recurses once per level)
    metadata: GroupMetadata = format_module.parse_group(doc, where)
    prepare_path(store, path, fmt, overwrite=overwrite)
    format_module.write_metadata(store, path, doc)
    return metadata


# -- making room for a node -------------------------------------------------------------------
def prepare_path(store: Store, path: str, fmt: str, *, overwrite: bool) -> None:
    """Make room for a new node at `path` and create its missing ancestor groups. At a
    store's root, a store that can tell in one request that it is empty (`Store.is_empty`:
    an object store's listing) is asked that instead of reading each format's keys."""
    store.require("write", f"create a node at {path or '/'!r}")
    format_module = get_format(fmt)
    check_node_fits(store, path, format_module)  # (its ancestors' keys hold shorter names)
    if not path and store.is_empty("") is True:
        return  # an empty store root: no node of any format in the way, and no ancestors
    # ancestors first: under an array, `path` may be where its chunks are, not a node to erase
    parts = path.split("/") if path else []
    ancestors = ["/".join(parts[:i]) for i in range(len(parts))]
    found_at = _nodes(store, [*ancestors, path])
    missing = []
    for ancestor in ancestors:
        found = found_at(ancestor)
        if found is None:
            missing.append(ancestor)
        elif isinstance(found, ArrayMetadata):
            raise ContainsArrayError(f"cannot create {path!r}: {ancestor or '/'!r} is an array")
    existing = found_at(path)
    if existing is not None:
        if not overwrite:
            raise contains_error(existing.node_type)(
                f"{'an' if existing.node_type == 'array' else 'a'} {existing.node_type} already exists at {path or '/'!r} "
                f"in {store}; pass overwrite=True to replace it"
            )
        get_format(existing.format).erase_node(store, path)
    elif overwrite and path:
        format_module.erase_node(store, path)
    if format_module.implicit_groups:
        return  # the format implies ancestors from their descendants (the 2020 draft)
    for ancestor in missing:
        format_module.write_metadata(store, ancestor, format_module.group_document(None))


def _nodes(store: Store, paths: list[str]) -> Any:
    """A lookup of the node (its metadata, or None) at each of `paths`, from one batched read
    of the keys that mark a node in each format rather than a probe of each format per path:
    on a file system every probe walks the whole path, so a node 400 levels down cost 1,600
    walks of up to 400 folders, and on an object store each probe is a request. The batch
    holds only the marker keys (`Format.marker_keys`) and the keys saying whether the store
    holds a hierarchy with implicit groups (the 2020 draft's entry point, the root's
    `zarr.json` that v3 reads anyway); only such a hierarchy is probed by its format, which
    alone can find its implicit groups. A new node at a store's root costs three reads in
    one round trip."""
    keys: dict[str, list[tuple[str, Any]]] = {}
    implicit_formats = []
    for name in available():
        module = get_format(name)
        if module.implicit_groups:
            implicit_formats.append(module)
            for key in module.entry_keys:
                keys.setdefault(key, [])
            continue
        for p in paths:
            for key in module.marker_keys(p):
                keys.setdefault(key, []).append((p, module))
    values = store.get_many(list(keys))
    marked: dict[str, list[Any]] = {}
    for key in values:
        for path, module in keys[key]:
            marked.setdefault(path, []).append(module)
    implicit = next((m for m in implicit_formats if m.holds_hierarchy(values)), None)
    read = _Prefetched(store, values, frozenset(keys))

    def found(path: str) -> ArrayMetadata | GroupMetadata | None:
        for module in marked.get(path, []):
            metadata: ArrayMetadata | GroupMetadata | None = module.read_metadata(read, path)
            if metadata is not None:
                return metadata
        if implicit is not None and implicit.probe(store, path):
            found_implicit: ArrayMetadata | GroupMetadata | None = implicit.read_metadata(
                store, path
            )
            return found_implicit
        return None

    return found


class _Prefetched(Store):
    """`store` as a format reads a node through it (`read_metadata`: reads only), answering
    the keys of creation's batch from what that batch read (`values`; a key of `asked` not
    among them is absent), so a node found in the way is not read twice."""

    def __init__(self, store: Store, values: Mapping[str, bytes], asked: frozenset[str]):
        self._store, self._values, self._asked = store, values, asked

    def get(self, key: str, byte_range: Range | None = None) -> bytes | None:
        if byte_range is None and key in self._asked:
            return self._values.get(key)
        return self._store.get(key, byte_range)

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes]:
        keys = list(keys)
        out = {k: self._values[k] for k in keys if k in self._values}
        out.update(self._store.get_many([k for k in keys if k not in self._asked]))
        return out

    def exists(self, key: str) -> bool:
        return key in self._values if key in self._asked else self._store.exists(key)

    def __repr__(self) -> str:
        return repr(self._store)
