"""Copying whole hierarchies between stores and converting them between Zarr formats.

Everything is planned before anything is written: each node's target document is built from the
canonical metadata (`ArrayMetadata` is the same for every format), so a node that cannot be
expressed in the target format (a codec or data type with no name there, sharding in v2, ...)
stops the transfer with the reason while the target is still untouched. Then nodes are written
metadata first and chunks in bounded batches. When the source and target codec chains decode
alike, encoded chunk bytes are copied untouched; otherwise each chunk is decoded and re-encoded.

An interrupted transfer resumes (`resume=True`): the planned documents must match what the
target already holds, and chunks the target already has are skipped (chunk writes are whole, so
an existing chunk is a complete one).
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from os.path import commonpath
from typing import Any

import numpy as np

import zarrkit
from zarrkit import Array, Group, hooks, registry
from zarrkit.abc.codec import ChunkSpec, Codec, V3Equivalent
from zarrkit.abc.extension import V2, V3, V3_DRAFT_2020, check_format
from zarrkit.abc.format import ArrayMetadata, GroupMetadata, thaw
from zarrkit.api.consolidation import consolidate_group
from zarrkit.errors import (
    ContainsNodeError,
    MetadataError,
    NodeNotFoundError,
    TransferError,
)
from zarrkit.helpers import (
    CONSOLIDATED_FIELD,
    CodecChain,
    build,
    evolve_codecs,
    extension_from_arg,
    get_format,
    normalize_path,
    open_store,
    read_metadata,
)

from . import xarray_conventions

#: bytes of decoded chunks one batch may hold; bounds a transfer's memory
_BATCH_BYTES = 64 << 20
_MAX_BATCH_CHUNKS = 256

#: what `to=` accepts
_FORMAT_ALIASES = {3: V3, "3": V3, 2: V2, "2": V2, "v3-draft": V3_DRAFT_2020}

Progress = Callable[[str, int, int], None]
"""A progress callback: called with a node's path, the bytes done and the bytes in all."""


@dataclass(frozen=True)
class NodePlan:
    """One node of a transfer: its path, and its metadata in the source and in the target."""

    path: str
    source: ArrayMetadata | GroupMetadata
    target: ArrayMetadata | GroupMetadata
    document: dict
    #: encoded chunk bytes are copied untouched (True) or re-encoded (False)
    raw: bool = True
    why_reencode: str | None = None

    @property
    def is_array(self) -> bool:
        return isinstance(self.source, ArrayMetadata)


@dataclass
class TransferReport:
    """What `convert` or `copy` did: the nodes, the chunks copied as encoded, re-encoded or
    already present, the bytes written, and what verification found."""

    format: str
    nodes: list[NodePlan] = field(default_factory=list)
    chunks_copied: int = 0
    chunks_reencoded: int = 0
    chunks_skipped: int = 0
    bytes_written: int = 0
    mismatches: list[str] = field(default_factory=list)
    verified: bool = False

    def summary(self) -> str:
        arrays = sum(p.is_array for p in self.nodes)
        text = (
            f"{len(self.nodes)} node(s), {arrays} array(s), to zarr format {self.format}: "
            f"{self.chunks_copied} chunks copied as encoded, {self.chunks_reencoded} "
            f"re-encoded, {self.chunks_skipped} already present; "
            f"{self.bytes_written} bytes written"
        )
        if self.verified:
            text += (
                "; verified: all values equal"
                if not self.mismatches
                else f"; verify found {len(self.mismatches)} differences"
            )
        return text


# -- the public functions ---------------------------------------------------------------------
def convert(
    source: Any,
    target: Any,
    *,
    to: Any,
    path: str = "",
    target_path: str | None = None,
    verify: bool = False,
    resume: bool = False,
    overwrite: bool = False,
    progress: Progress | None = None,
    storage_options: dict | None = None,
    target_storage_options: dict | None = None,
    codecs: Sequence[Any] | None = None,
    batch_bytes: int = _BATCH_BYTES,
) -> TransferReport:
    """Convert the hierarchy (or array) at `path` of `source` into zarr format `to` in `target`.

    `codecs` (v3 codec JSON: array -> array, one array -> bytes, bytes -> bytes) replaces every
    array's codecs, e.g. to recompress while converting; chunks are then re-encoded."""
    fmt = _format_name(to)
    return _transfer(
        source,
        target,
        fmt,
        path,
        target_path,
        verify=verify,
        resume=resume,
        codecs=codecs,
        overwrite=overwrite,
        progress=progress,
        keep_documents=False,
        storage_options=storage_options,
        target_storage_options=target_storage_options,
        batch_bytes=batch_bytes,
    )


def copy(
    source: Any,
    target: Any,
    *,
    path: str = "",
    target_path: str | None = None,
    verify: bool = False,
    resume: bool = False,
    overwrite: bool = False,
    progress: Progress | None = None,
    storage_options: dict | None = None,
    target_storage_options: dict | None = None,
    batch_bytes: int = _BATCH_BYTES,
) -> TransferReport:
    """Copy the hierarchy (or array) at `path` to `target` in the same format, documents and
    encoded chunks byte for byte."""
    return _transfer(
        source,
        target,
        None,
        path,
        target_path,
        verify=verify,
        resume=resume,
        overwrite=overwrite,
        progress=progress,
        keep_documents=True,
        storage_options=storage_options,
        target_storage_options=target_storage_options,
        batch_bytes=batch_bytes,
    )


def _format_name(to: Any) -> str:
    name = _FORMAT_ALIASES.get(to, to)
    if not isinstance(name, str):
        raise ValueError(f"unknown zarr format {to!r}")
    check_format(name)
    get_format(name)
    return name


def _transfer(
    source: Any,
    target: Any,
    fmt: str | None,
    path: str,
    target_path: str | None,
    *,
    verify: bool,
    resume: bool,
    overwrite: bool,
    progress: Progress | None,
    keep_documents: bool,
    storage_options: dict | None,
    target_storage_options: dict | None,
    batch_bytes: int,
    codecs: Sequence[Any] | None = None,
) -> TransferReport:
    src_store = open_store(source, mode="r", storage_options=storage_options)
    path = normalize_path(path)
    dst_root = normalize_path(path if target_path is None else target_path)
    root = _open_root(src_store, path)
    fmt = fmt or root.metadata.format
    nodes = list(walk(root))
    plans = [
        _plan(node, _relocate(node.path, path, dst_root), fmt, keep_documents, codecs)
        for node in nodes
    ]
    dst_store = open_store(target, mode="a", storage_options=target_storage_options)
    dst_store.require("write", f"write the converted hierarchy into {dst_store}")
    _prepare_target(dst_store, dst_root, plans, resume=resume, overwrite=overwrite)
    report = TransferReport(fmt, plans)
    for node, plan in zip(nodes, plans):
        if not _resumed_node(dst_store, plan, resume):
            get_format(fmt).write_metadata(dst_store, plan.path, plan.document)
        if isinstance(node, Array):
            _transfer_chunks(
                node,
                dst_store,
                plan,
                report,
                resume=resume,
                progress=progress,
                batch_bytes=batch_bytes,
            )
    if not keep_documents:  # (a copy keeps the documents, consolidated ones included)
        _consolidate_like_source(dst_store, plans)
    if verify:
        report.verified = True
        report.mismatches = compare(src_store, path, dst_store, dst_root)
    return report


def _open_root(store: Any, path: str) -> Array | Group:
    """The node to walk. Where the store can list, its members are what it holds, not what
    consolidated metadata (perhaps older) says: nothing written since is left behind."""
    node = zarrkit.open(store, path=path, mode="r")
    if isinstance(node, Group) and store.capabilities.listable:
        # (its document kept whole: a copy keeps it, and convert consolidates the target
        # where the source was consolidated)
        return node.with_listed_members()
    return node


def _relocate(node_path: str, src_root: str, dst_root: str) -> str:
    rest = node_path[len(src_root) :].lstrip("/") if src_root else node_path
    return "/".join(p for p in (dst_root, rest) if p)


def walk(node: Array | Group) -> Iterator[Array | Group]:
    """A node and everything below it, parents before children, members sorted by name
    (`Group.members` walks without recursion, so any depth is walked)."""
    yield node
    if isinstance(node, Group):
        for _path, member in node.members(max_depth=None):
            yield member


# -- planning ---------------------------------------------------------------------------------
def _plan(
    node: Array | Group,
    path: str,
    fmt: str,
    keep_documents: bool,
    codecs: Sequence[Any] | None = None,
) -> NodePlan:
    meta = node.metadata
    module = get_format(fmt)
    where = f"{node.name!r} converted to zarr format {fmt}"
    if keep_documents:
        doc = meta.to_json()
    elif isinstance(meta, GroupMetadata):
        doc = module.group_document(thaw(meta.attributes))
    else:
        doc = _array_document(meta, fmt, where, codecs)
    try:
        target = module.parse_node(module.load_document(module.encode_document(doc), where), where)
    except MetadataError as exc:
        raise TransferError(
            f"{node.name!r} cannot be written in zarr format {fmt}: {exc}"
        ) from None
    if isinstance(meta, GroupMetadata):
        return NodePlan(path, meta, target, doc)
    assert isinstance(target, ArrayMetadata)  # (parsed from an array's document)
    why = _why_reencode(meta, target)
    return NodePlan(path, meta, target, doc, raw=why is None, why_reencode=why)


def _array_document(
    meta: ArrayMetadata, fmt: str, where: str, new_codecs: Sequence[Any] | None = None
) -> dict:
    """The canonical pieces of an array, re-expressed in `fmt`; refuses with the reason."""
    ndim = len(meta.shape)
    chunk_shape = meta.chunk_grid.uniform_chunk_shape or meta.chunk_grid.chunk_shape((0,) * ndim)
    spec = ChunkSpec(chunk_shape, meta.data_type, meta.fill_value)
    try:
        if new_codecs is not None:
            chosen = [
                extension_from_arg("codec", c, V3, key=f"codecs[{i}]")
                for i, c in enumerate(new_codecs)
            ]
        else:
            chosen = _codecs_for(meta.codecs, ndim, fmt)
        codecs = evolve_codecs(chosen, spec)
        if meta.skipped:
            names = ", ".join(repr(s.name) for s in meta.skipped)
            raise MetadataError(
                f"it uses extensions this installation does not understand "
                f"({names}); converting would drop them"
            )
        # xarray's dimension names and missing-value mask live in other places per format
        placed = xarray_conventions.place(meta, fmt, thaw(meta.attributes))
        doc: dict[str, Any] = get_format(fmt).array_document(
            shape=meta.shape,
            data_type=meta.data_type,
            chunk_grid=meta.chunk_grid,
            chunk_key_encoding=_key_encoding_for(meta, fmt, chunk_shape),
            fill_value=placed.fill_value,
            codecs=codecs,
            attributes=placed.attributes,
            dimension_names=placed.dimension_names,
            storage_transformers=meta.storage_transformers,
        )
        if placed.null_fill:
            doc["fill_value"] = None
        return doc
    except MetadataError as exc:
        raise TransferError(f"{where} is not possible: {exc}") from None


def _codecs_for(codecs: Sequence[Codec], ndim: int, fmt: str) -> list[Any]:
    """The chain with memory-layout steps spelled as codecs when the target is v3 (v3 has no
    memory layouts); other formats get the chain as is and express it themselves."""
    if fmt != V3:
        return list(codecs)
    out: list[Any] = []
    for codec in codecs:
        if not isinstance(codec, V3Equivalent):
            out.append(codec)
            continue
        equivalent = codec.v3_codecs(ndim)
        if equivalent is None:
            raise MetadataError(f"the memory layout {codec.to_json()!r} has no v3 equivalent")
        for i, item in enumerate(equivalent):
            cls = registry.lookup("codec", item["name"], V3)
            out.append(
                build(
                    cls,
                    item["name"],
                    item.get("configuration") or {},
                    V3,
                    key=f"codecs[{i}]",
                    where="the v3 form of a memory layout",
                )
            )
    return out


def _key_encoding_for(meta: ArrayMetadata, fmt: str, chunk_shape: tuple[int, ...]) -> Any:
    """The source's chunk key encoding when the target format can name it, else the target's
    default (keys are mapped chunk by chunk, so they may differ)."""
    encoding = meta.chunk_key_encoding
    if type(encoding).names.written(fmt) is not None:
        return encoding
    default = hooks.array_defaults(fmt, meta.data_type, chunk_shape).get("chunk_key_encoding")
    if default is None:
        return encoding  # let the format say whether it can express it
    return extension_from_arg("chunk_key_encoding", default, fmt, key="chunk_key_encoding")


def _why_reencode(source: ArrayMetadata, target: ArrayMetadata) -> str | None:
    """None when an encoded chunk of `source` decodes to the same values under `target`."""
    if source.data_type.native != target.data_type.native:
        return "the data types differ"
    a, b = _chain_signature(source), _chain_signature(target)
    if a != b:
        return f"the codec chains differ ({a} vs {b})"
    return None


def _has_v3(ext: Any) -> bool:
    return type(ext).names.written(V3) is not None


def _chain_signature(meta: ArrayMetadata) -> list[str]:
    """The codec chain as v3 JSON (memory layouts expanded), after defaults are filled in."""
    ndim = len(meta.shape)
    chunk_shape = meta.chunk_grid.uniform_chunk_shape or meta.chunk_grid.chunk_shape((0,) * ndim)
    spec = ChunkSpec(chunk_shape, meta.data_type, meta.fill_value)
    out = []
    for codec in evolve_codecs(meta.codecs, spec):
        if isinstance(codec, V3Equivalent):
            items = codec.v3_codecs(ndim)
            if items is None:  # (spelled alike whatever the chain's format)
                out.append(repr((type(codec).__qualname__, codec.to_json(V3))))
                continue
            out.extend(json.dumps(_normalized(i), sort_keys=True) for i in items)
        elif _has_v3(codec):
            out.append(json.dumps(_normalized(codec.to_json(V3)), sort_keys=True))
        else:
            out.append(repr((type(codec).__qualname__, codec.to_json(meta.format))))
    return out


def _normalized(item: Any) -> Any:
    if isinstance(item, str):
        return {"name": item, "configuration": {}}
    return {"name": item.get("name"), "configuration": item.get("configuration") or {}}


# -- writing ----------------------------------------------------------------------------------
def _consolidate_like_source(store: Any, plans: list[NodePlan]) -> None:
    """Consolidate, in the target, each group whose source held consolidated metadata (the
    deepest first, so an outer group's documents are read after the inner ones are written):
    readers such as xarray open the result as they opened the source, with one read."""
    held = [
        p
        for p in plans
        if isinstance(p.source, GroupMetadata)
        and p.source.document.get(CONSOLIDATED_FIELD) is not None
    ]
    for plan in sorted(held, key=lambda p: -p.path.count("/") - bool(p.path)):
        if plan.target.format in (V2, V3):  # the formats with a consolidated form
            consolidate_group(store, plan.path)


def _prepare_target(
    store: Any, root: str, plans: list[NodePlan], *, resume: bool, overwrite: bool
) -> None:
    existing = read_metadata(store, root)
    if existing is None:
        return
    if resume:
        return
    if not overwrite:
        raise ContainsNodeError(
            f"the target {store} already holds a {existing.node_type} at "
            f"{root or '/'!r}; overwrite (--overwrite) replaces it, resume "
            f"(--resume) finishes an interrupted transfer"
        )
    get_format(existing.format).erase_node(store, root)


def _resumed_node(store: Any, plan: NodePlan, resume: bool) -> bool:
    """Whether the node is already in the target as planned (resume); refuse a different one."""
    if not resume:
        return False
    found = read_metadata(store, plan.path)
    if found is None:
        return False
    if found.format != plan.target.format or not _same_node(found, plan.target):
        raise TransferError(
            f"cannot resume: the target's {found.node_type} at "
            f"{plan.path or '/'!r} differs from what this transfer writes; "
            f"start over with overwrite=True"
        )
    return True


def _same_node(a: ArrayMetadata | GroupMetadata, b: ArrayMetadata | GroupMetadata) -> bool:
    """Same document, attributes compared as values (a format may leave empty ones out)."""
    docs = [m.to_json() for m in (a, b)]
    for doc in docs:
        doc.pop("attributes", None)
    return docs[0] == docs[1] and thaw(a.attributes) == thaw(b.attributes)


def _transfer_chunks(
    node: Array,
    dst_store: Any,
    plan: NodePlan,
    report: TransferReport,
    *,
    resume: bool,
    progress: Progress | None,
    batch_bytes: int,
) -> None:
    src_meta, dst_meta = plan.source, plan.target
    assert isinstance(src_meta, ArrayMetadata) and isinstance(dst_meta, ArrayMetadata)
    src_keys = _KeyMaker(node.store, node.path, src_meta)
    dst_keys = _KeyMaker(dst_store, plan.path, dst_meta)
    # chunks are read and written through each array's storage transformers, which may keep
    # them under other keys than the chunk keys (or change the bytes); the source array's
    # `read_stored_chunks` reads through its own
    dst_chunks = _through_transformers(dst_store, plan.path, dst_meta)
    grid_shape = src_meta.chunk_grid.grid_shape(src_meta.shape)
    total = math.prod(grid_shape)
    present = _present_keys(dst_chunks, dst_keys, grid_shape) if resume else set()
    src_chain = CodecChain(src_meta.codecs, src_meta.data_type, src_meta.fill_value)
    dst_chain = CodecChain(dst_meta.codecs, dst_meta.data_type, dst_meta.fill_value)
    batch = _batch_size(src_meta, batch_bytes)
    refill = not _same_values(src_meta.fill_value, dst_meta.fill_value, src_meta.dtype)
    done = 0
    coords_iter = itertools.product(*(range(n) for n in grid_shape))
    while chunk := list(itertools.islice(coords_iter, batch)):
        pairs = [(src_keys(c), dst_keys(c), c) for c in chunk]
        todo = [p for p in pairs if not _present(dst_chunks, p[1], present)]
        report.chunks_skipped += len(pairs) - len(todo)
        blobs = node.read_stored_chunks([c for _, _, c in todo])
        out = {}
        for src_key, dst_key, coords in todo:
            blob = blobs.get(coords)
            if blob is None:
                if refill:  # a missing chunk reads as the source's fill: the target's differs
                    shape = src_meta.chunk_grid.chunk_shape(coords)
                    out[dst_key] = dst_chain.bind(shape).encode(
                        np.full(shape, src_meta.fill_value, dtype=src_meta.dtype)
                    )
                continue
            if plan.raw:
                out[dst_key] = blob
            else:
                shape = src_meta.chunk_grid.chunk_shape(coords)
                values = src_chain.bind(shape).decode(blob, src_key)
                out[dst_key] = dst_chain.bind(shape).encode(np.ascontiguousarray(values))
        if out:
            dst_chunks.set_many(out)
            report.bytes_written += sum(len(memoryview(v).cast("B")) for v in out.values())
            if plan.raw:
                report.chunks_copied += len(out)
            else:
                report.chunks_reencoded += len(out)
        done += len(pairs)
        if progress is not None:
            progress("/" + plan.path, done, total)
    if progress is not None and total == 0:
        progress("/" + plan.path, 0, 0)


def _through_transformers(store: Any, path: str, meta: ArrayMetadata) -> Any:
    """`store` as the array at `path` reads and writes its chunks: wrapped by each of its
    storage transformers in order (as `Array.chunk_store`)."""
    for transformer in meta.storage_transformers:
        store = transformer.wrap(store, path)
    return store


def _present(store: Any, key: str, present: set[str] | None) -> bool:
    """Whether the target already has a chunk (resume); per key when the store cannot list."""
    return store.exists(key) if present is None else key in present


def _present_keys(store: Any, keys: _KeyMaker, grid_shape: tuple[int, ...]) -> set[str] | None:
    """The array's chunk keys already in the target, from one listing of the prefix its first
    and last chunk keys share; None when the store cannot list."""
    if not store.capabilities.listable:
        return None
    if not all(grid_shape):
        return set()
    first, last = keys((0,) * len(grid_shape)), keys(tuple(n - 1 for n in grid_shape))
    common = commonpath([first, last])
    prefix = common[: common.rfind("/") + 1]
    return set(store.list_prefix(prefix))


def _batch_size(meta: ArrayMetadata, batch_bytes: int) -> int:
    """Chunks per batch, so that a batch's decoded chunks stay within `batch_bytes`."""
    chunk_shape = meta.chunk_grid.uniform_chunk_shape
    item = meta.data_type.stored_size or 64
    nbytes = math.prod(chunk_shape) * item if chunk_shape else batch_bytes
    return max(1, min(_MAX_BATCH_CHUNKS, batch_bytes // max(1, nbytes)))


class _KeyMaker:
    """Chunk coordinates -> the store key of that chunk for one array in one format."""

    def __init__(self, store: Any, path: str, meta: ArrayMetadata):
        self._format = get_format(meta.format)
        self._path = path
        self._encoding = meta.chunk_key_encoding

    def __call__(self, coords: tuple[int, ...]) -> str:
        key: str = self._format.chunk_key(self._path, self._encoding.encode(coords))
        return key


# -- verifying --------------------------------------------------------------------------------
def compare(src_store: Any, src_path: str, dst_store: Any, dst_path: str) -> list[str]:
    """Differences between two hierarchies: nodes, attributes, shapes, data types, values."""
    problems: list[str] = []
    src_root = _open_root(src_store, src_path)
    for node in walk(src_root):
        path = _relocate(node.path, src_path, dst_path)
        try:
            other = _open_root(dst_store, path)
        except NodeNotFoundError:
            problems.append(f"{node.name}: missing in the target")
            continue
        problems.extend(_compare_nodes(node, other))
    return problems


def _compare_nodes(a: Array | Group, b: Array | Group) -> list[str]:
    where = a.name
    # by kind, not class: a group read through consolidated metadata is a Group subclass
    if a.metadata.node_type != b.metadata.node_type:
        return [f"{where}: a {a.metadata.node_type} became a {b.metadata.node_type}"]
    out = []
    if isinstance(a, Group) or isinstance(b, Group):
        assert isinstance(a, Group) and isinstance(b, Group)  # (same node type, checked above)
        if dict(a.attrs) != dict(b.attrs):
            out.append(f"{where}: attributes differ")
        if sorted(a.keys()) != sorted(b.keys()):
            out.append(f"{where}: members differ ({sorted(a.keys())} vs {sorted(b.keys())})")
        return out
    # xarray's names and mask may have changed places with the format (xarray_conventions)
    names_a, attrs_a, mask_a = xarray_conventions.comparable(a.metadata)
    names_b, attrs_b, mask_b = xarray_conventions.comparable(b.metadata)
    if thaw(attrs_a) != thaw(attrs_b):
        out.append(f"{where}: attributes differ")
    if names_a != names_b:
        out.append(f"{where}: dimension names differ ({names_a} vs {names_b})")
    if a.shape != b.shape or a.dtype != b.dtype:
        return out + [f"{where}: shape/dtype {a.shape} {a.dtype} vs {b.shape} {b.dtype}"]
    if mask_a[0] != mask_b[0] or (mask_a[0] and not _same_values(mask_a[1], mask_b[1], a.dtype)):
        out.append(f"{where}: missing-value masks differ ({mask_a} vs {mask_b})")
    elif names_a is None and not _same_values(a.fill_value, b.fill_value, a.dtype):
        out.append(f"{where}: fill values differ")
    assert isinstance(a.metadata, ArrayMetadata)
    grid = a.metadata.chunk_grid
    for coords in itertools.product(*(range(n) for n in grid.grid_shape(a.shape))):
        region = tuple(
            slice(
                int(grid.chunk_start(d, np.asarray(c))), int(grid.chunk_start(d, np.asarray(c))) + n
            )
            for d, (c, n) in enumerate(zip(coords, grid.chunk_shape(coords)))
        )
        if not _same_values(a[region], b[region], a.dtype):
            out.append(f"{where}: values differ in chunk {coords}")
    return out


def _same_values(x: Any, y: Any, dtype: np.dtype) -> bool:
    x, y = np.asarray(x, dtype=dtype), np.asarray(y, dtype=dtype)
    if x.shape != y.shape:
        return False
    if dtype.hasobject:
        return bool(np.array_equal(x, y))
    return np.ascontiguousarray(x).tobytes() == np.ascontiguousarray(y).tobytes()
