"""The public functions: open arrays and groups in any store (zarr-python 3's call shapes),
and the creation functions of `zarrkit.creation` and `zarrkit.api.shortcuts`, re-exported.

`store` is a path, a URL or a store object; `codecs`, `dtype`, `chunk_grid` and
`chunk_key_encoding` take the spec's JSON form, a bare name, or a plugin object.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from zarrkit.abc.format import NodeMetadata
from zarrkit.api.arrays import Array, public
from zarrkit.api.consolidation import apply_use_consolidated, consolidate_group
from zarrkit.api.creation import (
    ARRAY_ARGUMENTS,
    check_arguments,
    create_array,
    data_type_from_arg,
    extension_from_arg,
    format_name,
    write_group,
)
from zarrkit.api.groups import Group, public_node
from zarrkit.api.shortcuts import (
    array,
    create,
    empty,
    empty_like,
    from_array,
    full,
    full_like,
    like_arguments,
    ones,
    ones_like,
    zeros,
    zeros_like,
)
from zarrkit.array import ArrayConfig
from zarrkit.errors import ArgumentError, NodeNotFoundError, contains_error
from zarrkit.hierarchy import (
    node_from_metadata,
    open_node,
    read_metadata,
)
from zarrkit.paths import normalize_path
from zarrkit.store_opening import check_mode, open_store

__all__ = [
    "Array",
    "ArrayConfig",
    "Group",
    "array",
    "consolidate_metadata",
    "create",
    "create_array",
    "create_group",
    "data_type_from_arg",
    "empty",
    "empty_like",
    "extension_from_arg",
    "from_array",
    "full",
    "full_like",
    "group",
    "load",
    "ones",
    "ones_like",
    "open",
    "open_array",
    "open_consolidated",
    "open_group",
    "open_like",
    "save",
    "save_array",
    "save_group",
    "zeros",
    "zeros_like",
]

#: kept for callers that imported the private name
_format_name = format_name


def create_group(
    store: Any = None,
    *,
    path: str | None = "",
    attributes: Mapping[str, Any] | None = None,
    zarr_format: Any = None,
    overwrite: bool = False,
    storage_options: dict[str, Any] | None = None,
) -> Group:
    """Create a group (and any missing ancestor groups) and return it open for writing.

    Args:
        store: Where the node lives: a path, a URL (the scheme picks the store plugin:
            `memory://`, `zip://`, `s3://`, ...), a zarrkit store, or an object a store
            plugin adapts (a dict, an fsspec mapper, an obstore or zarr-python store). None: a new in-memory store, as in zarr-python.
        path: The node's path inside the store ("" or None: its root).
        attributes: The group's attributes (JSON values).
        zarr_format: 3 (the `default_zarr_format` setting when None), 2 or "v3-draft-2020".
        overwrite: Replace a node already at `path` (else it is an error).
        storage_options: Options for the store a URL opens (for `s3://`, credentials and
            endpoint); ignored for a store object.

    Returns:
        The new group.

    Raises:
        ContainsArrayError: a node is already at `path` and `overwrite` is false
            (`ContainsGroupError` for a group).
        NodeNameError: `path` is not a valid node path.
        ReadOnlyError: the store cannot be written.
        StoreError: the store failed.
    """
    opened = open_store(
        "memory://" if store is None else store, mode="a", storage_options=storage_options
    )
    path = normalize_path(path)
    metadata = write_group(
        opened,
        path,
        attributes=attributes,
        zarr_format=zarr_format,
        overwrite=overwrite,
    )
    return Group(opened, path, metadata)


# -- opening ----------------------------------------------------------------------------------
#: what zarr-python's opening functions take beside creation's arguments
_OPEN_ARGUMENTS = ("store", "path", "mode", "storage_options", "zarr_format", "config")


def open_array(
    store: Any,
    *,
    path: str | None = "",
    mode: str = "r",
    storage_options: dict[str, Any] | None = None,
    zarr_format: Any = None,
    config: Any = None,
    **create_kwargs: Any,
) -> Array:
    """Open an array, or create one in the modes that create.

    Args:
        store: Where the node lives: a path, a URL (the scheme picks the store plugin:
            `memory://`, `zip://`, `s3://`, ...), a zarrkit store, or an object a store
            plugin adapts (a dict, an fsspec mapper, an obstore or zarr-python store).
        path: The node's path inside the store ("" or None: its root).
        mode: "r" (read-only), "r+" (read and write; must exist), "a" (create if
            missing), "w" (replace) or "w-" (create; fail if present).
        storage_options: Options for the store a URL opens (for `s3://`, credentials and
            endpoint); ignored for a store object.
        zarr_format: The format to create in; when opening, the format the array must have.
        config: zarr-python's runtime settings for the handle returned (`order`,
            `write_empty_chunks`), an `ArrayConfig` or a dict.
        **create_kwargs: `create_array`'s arguments (`shape`, `dtype`, `chunks`, ...),
            used when the mode creates the array.

    Returns:
        The array.

    Raises:
        InvalidArgumentError: `mode` is not one of the five.
        ArgumentError: an argument this call does not take, or creation arguments with mode
            "r" or "r+".
        NodeNotFoundError: nothing to open at `path` in mode "r" or "r+" (its subclasses
            `StoreNotFoundError`, `NotZarrError` and `PermissionDeniedError` say why).
        ContainsArrayError: mode "w-" and an array is already there (`ContainsGroupError`
            for a group).
        MetadataError: the stored metadata is invalid (the message names the field);
            `UnknownExtensionError` and `MustUnderstandError` for extensions this
            installation lacks.
        StoreError: the store failed (the message names the key and the operation).
    """
    node = _open_or_create(
        store, path, mode, storage_options, "array", zarr_format, create_kwargs, config
    )
    if not isinstance(node, Array):
        raise NodeNotFoundError(path or "/", node.store, what="array (found a group)")
    return node


def open_group(
    store: Any = None,
    *,
    path: str | None = "",
    mode: str | None = None,
    storage_options: dict[str, Any] | None = None,
    use_consolidated: bool | None = None,
    zarr_format: Any = None,
    **create_kwargs: Any,
) -> Group:
    """Open a group, or create one in the modes that create.

    Args:
        store: Where the node lives: a path, a URL (the scheme picks the store plugin:
            `memory://`, `zip://`, `s3://`, ...), a zarrkit store, or an object a store
            plugin adapts (a dict, an fsspec mapper, an obstore or zarr-python store). None: a new in-memory store, as in zarr-python.
        path: The node's path inside the store ("" or None: its root).
        mode: As for `open_array`; None is "r", or "a" for a new in-memory store (which
            has no group to read).
        storage_options: Options for the store a URL opens (for `s3://`, credentials and
            endpoint); ignored for a store object.
        use_consolidated: Use the group's consolidated metadata when it has some (None),
            require it (True) or ignore it (False), as in zarr-python.
        zarr_format: The format to create in; when opening, the format the group must have.
        **create_kwargs: `attributes` (and `zarr_format`) for a group the mode creates.

    Returns:
        The group.

    Raises:
        InvalidArgumentError: `mode` is not one of the five.
        ArgumentError: an argument this call does not take, or creation arguments with mode
            "r" or "r+".
        NodeNotFoundError: nothing to open at `path` in mode "r" or "r+" (its subclasses
            `StoreNotFoundError`, `NotZarrError` and `PermissionDeniedError` say why).
        ContainsArrayError: mode "w-" and an array is already there (`ContainsGroupError`
            for a group).
        MetadataError: the stored metadata is invalid (the message names the field);
            `UnknownExtensionError` and `MustUnderstandError` for extensions this
            installation lacks.
        StoreError: the store failed (the message names the key and the operation).
    """
    if mode is None:
        mode = "a" if store is None else "r"
    if store is None:
        store = "memory://"
    node = _open_or_create(
        store, path, mode, storage_options, "group", zarr_format, create_kwargs, None
    )
    if not isinstance(node, Group):
        raise NodeNotFoundError(path or "/", node.store, what="group (found an array)")
    # (the kernel builds its nodes as the API layer's classes: `register_node_class`)
    return apply_use_consolidated(node, use_consolidated)


def open_consolidated(
    store: Any,
    *,
    path: str | None = "",
    mode: str = "r",
    storage_options: dict[str, Any] | None = None,
    zarr_format: Any = None,
    use_consolidated: bool = True,
) -> Group:
    """Open a group through its consolidated metadata: members come from one document, so a
    store that cannot list (HTTP) can be browsed.

    Args:
        store: Where the node lives: a path, a URL (the scheme picks the store plugin:
            `memory://`, `zip://`, `s3://`, ...), a zarrkit store, or an object a store
            plugin adapts (a dict, an fsspec mapper, an obstore or zarr-python store).
        path: The node's path inside the store ("" or None: its root).
        mode: As for `open_group`.
        storage_options: Options for the store a URL opens (for `s3://`, credentials and
            endpoint); ignored for a store object.
        zarr_format: The format the group must have (None: any).
        use_consolidated: True only (zarr-python's signature).

    Returns:
        The group, its members read from the consolidated metadata.

    Raises:
        ArgumentError: `use_consolidated` is not True.
        MetadataError: the group has no consolidated metadata, or it is invalid.
        NodeNotFoundError: no group at `path`.
        StoreError: the store failed.
    """
    if use_consolidated is not True:
        raise ArgumentError("open_consolidated takes use_consolidated=True only")
    return open_group(
        store,
        path=path,
        mode=mode,
        storage_options=storage_options,
        zarr_format=zarr_format,
        use_consolidated=True,
    )


def consolidate_metadata(
    store: Any,
    path: str | None = "",
    zarr_format: Any = None,
    *,
    storage_options: dict[str, Any] | None = None,
) -> Group:
    """Write the metadata of every node below the group at `path` into that group (v3:
    `consolidated_metadata` in its zarr.json; v2: `.zmetadata`), as zarr-python does.

    Args:
        store: Where the node lives: a path, a URL (the scheme picks the store plugin:
            `memory://`, `zip://`, `s3://`, ...), a zarrkit store, or an object a store
            plugin adapts (a dict, an fsspec mapper, an obstore or zarr-python store).
        path: The node's path inside the store ("" or None: its root).
        zarr_format: The format the group must have (None: any).
        storage_options: Options for the store a URL opens (for `s3://`, credentials and
            endpoint); ignored for a store object.

    Returns:
        The group, opened through its new consolidated metadata.

    Raises:
        NodeNotFoundError: no group at `path` (or not one of `zarr_format`).
        ReadOnlyError: the store cannot be written.
        StoreError: the store failed.
    """
    if zarr_format is not None:
        node = open_group(store, path=path, storage_options=storage_options)
        if node.metadata.format != format_name(zarr_format):
            raise NodeNotFoundError(
                path or "/", node.store, what=f"zarr format {zarr_format} group"
            )
    return consolidate_group(store, normalize_path(path), storage_options=storage_options)


def open(
    store: Any = None,
    *,
    path: str | None = "",
    mode: str = "r",
    storage_options: dict[str, Any] | None = None,
    zarr_format: Any = None,
    config: Any = None,
    **create_kwargs: Any,
) -> Array | Group:
    """Open whatever node is at `path`: an array or a group.

    When the mode creates the node, it is an array if `shape` is given, else a group.

    Args:
        store: Where the node lives: a path, a URL (the scheme picks the store plugin:
            `memory://`, `zip://`, `s3://`, ...), a zarrkit store, or an object a store
            plugin adapts (a dict, an fsspec mapper, an obstore or zarr-python store). None: a new in-memory store.
        path: The node's path inside the store ("" or None: its root).
        mode: As for `open_array`.
        storage_options: Options for the store a URL opens (for `s3://`, credentials and
            endpoint); ignored for a store object.
        zarr_format: The format to create in; when opening, the format the node must have.
        config: Runtime settings for an array handle (as for `open_array`).
        **create_kwargs: `create_array`'s or `create_group`'s arguments, for a node the
            mode creates.

    Returns:
        The array or group.

    Raises:
        InvalidArgumentError: `mode` is not one of the five.
        ArgumentError: an argument this call does not take, or creation arguments with mode
            "r" or "r+".
        NodeNotFoundError: nothing to open at `path` in mode "r" or "r+" (its subclasses
            `StoreNotFoundError`, `NotZarrError` and `PermissionDeniedError` say why).
        ContainsArrayError: mode "w-" and an array is already there (`ContainsGroupError`
            for a group).
        MetadataError: the stored metadata is invalid (the message names the field);
            `UnknownExtensionError` and `MustUnderstandError` for extensions this
            installation lacks.
        StoreError: the store failed (the message names the key and the operation).
    """
    kind = "array" if "shape" in create_kwargs else "group"
    return _open_or_create(
        "memory://" if store is None else store,
        path,
        mode,
        storage_options,
        kind,
        zarr_format,
        create_kwargs,
        config,
    )


def open_like(
    a: Any, path: str, *, zarr_format: Any = None, store: Any = None, **kwargs: Any
) -> Array:
    """zarr-python's `zarr.open_like`: open (or create, as `open_array`) the array at `path`
    in `store` (None: a new in-memory store, as zarr-python has it) with `a`'s shape, chunks,
    dtype and fill value unless given."""
    new = like_arguments(a, zarr_format)
    new.update(kwargs)
    new.setdefault("mode", "a")
    return open_array("memory://" if store is None else store, path=path, **new)


def group(
    store: Any = None,
    *,
    overwrite: bool = False,
    path: str | None = "",
    zarr_format: Any = None,
    attributes: Mapping[str, Any] | None = None,
    storage_options: dict[str, Any] | None = None,
    **runtime: Any,
) -> Group:
    """zarr-python's `zarr.group`: the group at `path`, created when missing (replaced with
    `overwrite`); `store` None is a new in-memory store."""
    check_arguments(runtime, ("chunk_store", "cache_attrs", "synchronizer", "meta_array"), "group")
    _no_runtime(runtime, "group")
    target = "memory://" if store is None else store
    if overwrite:
        return create_group(
            target,
            path=path,
            attributes=attributes,
            zarr_format=zarr_format,
            overwrite=True,
            storage_options=storage_options,
        )
    create: dict[str, Any] = {"attributes": attributes} if attributes is not None else {}
    return open_group(
        target,
        path=path,
        mode="a",
        zarr_format=zarr_format,
        storage_options=storage_options,
        **create,
    )


def _no_runtime(runtime: Mapping[str, Any], call: str) -> None:
    given = sorted(k for k, v in runtime.items() if v is not None)
    if given:
        raise ArgumentError(
            f"{call}() got {', '.join(given)}: zarr-python 2 runtime settings that zarrkit "
            f"does not have (leave them out)"
        )


# -- saving and loading -----------------------------------------------------------------------
def save_array(
    store: Any,
    arr: Any,
    *,
    zarr_format: Any = None,
    path: str | None = "",
    storage_options: dict[str, Any] | None = None,
    **kwargs: Any,
) -> None:
    """zarr-python's `zarr.save_array`: `arr` as a new array at `path` (replacing what is
    there unless `mode` says otherwise)."""
    mode = kwargs.pop("mode", "a")
    if not hasattr(arr, "shape") or not hasattr(arr, "dtype"):
        raise ArgumentError(f"save_array takes an array with shape and dtype, got {arr!r}")
    data = arr if isinstance(arr, Array) else np.asanyarray(arr)
    overwrite = kwargs.pop("overwrite", None) or mode in ("a", "w")
    opened = open_store(store, mode="a", storage_options=storage_options)
    chunks = getattr(arr, "chunks", None)
    kwargs.setdefault("chunks", chunks if isinstance(chunks, tuple) else "auto")
    create_array(
        opened,
        path=path,
        data=data,
        zarr_format=zarr_format,
        overwrite=overwrite,
        **kwargs,
    )


def save_group(
    store: Any,
    *args: Any,
    zarr_format: Any = None,
    path: str | None = "",
    storage_options: dict[str, Any] | None = None,
    **kwargs: Any,
) -> None:
    """zarr-python's `zarr.save_group`: a new group at `path` (replacing what is there) holding
    each positional array as `arr_0`, `arr_1`, ... and each keyword array by its name."""
    if not args and not kwargs:
        raise ArgumentError("save_group needs at least one array to save")
    named = {f"arr_{i}": a for i, a in enumerate(args)}
    named.update(kwargs)
    arrays = {k: v if isinstance(v, Array) else np.asanyarray(v) for k, v in named.items()}
    for name, value in arrays.items():  # refuse a bad value before anything is replaced
        data_type_from_arg(value.dtype, format_name(zarr_format))
        normalize_path(name)
    opened = open_store(store, mode="w", storage_options=storage_options)
    root = create_group(opened, path=path, zarr_format=zarr_format, overwrite=True)
    for name, value in arrays.items():
        save_array(opened, value, zarr_format=zarr_format, path=f"{root.path}/{name}".strip("/"))


def save(
    store: Any,
    *args: Any,
    zarr_format: Any = None,
    path: str | None = "",
    storage_options: dict[str, Any] | None = None,
    **kwargs: Any,
) -> None:
    """zarr-python's `zarr.save`: one positional array and no keyword arrays is
    `save_array`; anything else is `save_group`."""
    if len(args) == 1 and not kwargs:
        save_array(
            store, args[0], zarr_format=zarr_format, path=path, storage_options=storage_options
        )
    else:
        save_group(
            store,
            *args,
            zarr_format=zarr_format,
            path=path,
            storage_options=storage_options,
            **kwargs,
        )


def load(
    store: Any,
    path: str | None = "",
    zarr_format: Any = None,
    *,
    storage_options: dict[str, Any] | None = None,
) -> Any:
    """zarr-python's `zarr.load`: the values of the array at `path`, or of each array directly
    in the group there (a dict by name, read now)."""
    node = open(store, path=path, zarr_format=zarr_format, storage_options=storage_options)
    if isinstance(node, Array):
        return node[...]
    return {name: member[...] for name, member in node.arrays()}


def _open_or_create(
    store: Any,
    path: str | None,
    mode: str,
    storage_options: dict[str, Any] | None,
    kind: str,
    zarr_format: Any,
    create_kwargs: dict[str, Any],
    config: Any,
) -> Array | Group:
    check_mode(mode)
    opened = open_store(store, mode=mode, storage_options=storage_options)
    path = normalize_path(path)
    read_only = mode == "r"
    if kind == "array":
        check_arguments(create_kwargs, sorted(ARRAY_ARGUMENTS), "open_array")
    else:
        check_arguments(create_kwargs, ("attributes", "zarr_format"), "open_group")
    node: Array | Group
    if mode in ("r", "r+"):
        if create_kwargs:
            raise ArgumentError(
                f"creation arguments {sorted(create_kwargs)} need mode 'a', 'w' or 'w-'"
            )
        node = _opened(opened, path, read_only, zarr_format)
    elif mode == "a" and (found := read_metadata(opened, path)) is not None:
        node = _opened(opened, path, False, zarr_format, found)  # (read once, not again)
    else:
        if mode == "w-" and (there := read_metadata(opened, path)) is not None:
            raise contains_error(there.node_type)(
                f"a node already exists at {path or '/'!r} in {opened}"
            )
        overwrite = mode == "w"
        if zarr_format is not None:
            create_kwargs = {**create_kwargs, "zarr_format": zarr_format}
        if kind == "array":
            if config is not None:
                create_kwargs = {**create_kwargs, "config": config}
            return public(create_array(opened, path=path, overwrite=overwrite, **create_kwargs))
        return Group(opened, path, write_group(opened, path, overwrite=overwrite, **create_kwargs))
    if config is not None and isinstance(node, Array):
        return node.with_config(config)
    return node


def _opened(
    store: Any,
    path: str,
    read_only: bool,
    zarr_format: Any,
    metadata: NodeMetadata | None = None,
) -> Array | Group:
    """The node at `path`, which must have `zarr_format` when one is given (`metadata`: its
    metadata, when the caller has just read it)."""
    node = (
        open_node(store, path, read_only=read_only)
        if metadata is None
        else node_from_metadata(store, path, metadata, read_only)
    )
    if zarr_format is not None and node.metadata.format != format_name(zarr_format):
        raise NodeNotFoundError(
            path or "/",
            store,
            what=f"zarr format {zarr_format} node (found {node.metadata.format})",
        )
    return public_node(node)
