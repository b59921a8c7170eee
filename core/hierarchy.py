"""Groups, node paths and the node-name rules; creating and opening nodes in a store."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .array import Array
from .errors import ContainsNodeError, InvalidKeyError, NodeNameError, NodeNotFoundError
from .formats import DETECTION_ORDER, RESERVED_NAMES, available, check_node_fits, get_format
from .metadata import ArrayMetadata, GroupMetadata
from .node import Node
from .store import check_fits


def check_name(name: str) -> str:
    """A node name per the v3 spec (not empty, no '/', not only periods, not '__'-prefixed),
    valid Unicode, and not the name of a metadata document (which no store can hold as a node:
    `InvalidKeyError`)."""
    if not isinstance(name, str):
        raise NodeNameError(f"node names are strings, got {name!r}")
    if not name:
        raise NodeNameError("a node name must not be empty")
    if "/" in name:
        raise NodeNameError(f"node name {name!r} must not contain '/'")
    if set(name) == {"."}:
        raise NodeNameError(f"node name {name!r} must not consist of periods only")
    if name.startswith("__"):
        raise NodeNameError(f"node name {name!r} must not start with '__' (reserved)")
    if not name.isascii():
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:
            raise NodeNameError(
                f"node name {name!r} is not valid Unicode (a lone surrogate)"
            ) from None
    if name in RESERVED_NAMES:
        raise InvalidKeyError(
            f"node name {name!r} is the name of a metadata document; a "
            f"store cannot hold a node there"
        )
    return name


def normalize_path(path: str | None) -> str:
    """'/a/b/' -> 'a/b'; '' is the root. Each segment must be a valid node name."""
    if path is None:
        return ""
    if not isinstance(path, str):
        raise NodeNameError(f"node paths are strings, got {path!r}")
    stripped = path.strip("/")
    if not stripped:
        return ""
    for segment in stripped.split("/"):
        check_name(segment)
    return stripped


def join(parent: str, name: str) -> str:
    return f"{parent}/{name}" if parent else name


def read_metadata(
    store: Any, path: str, expected: Any = None
) -> ArrayMetadata | GroupMetadata | None:
    check_fits(store, path)
    return _read_metadata(store, path, expected)


def _read_metadata(
    store: Any, path: str, expected: Any = None
) -> ArrayMetadata | GroupMetadata | None:
    """`read_metadata` of a path already checked against the store's name limit: the node
    at `path`. `expected`: the format module the node most likely has (a group's
    member usually has the group's format), read first without probing the others, so that
    on an object store opening a member costs one request rather than one per probe."""
    tried = None
    if expected is not None and path:
        found = expected.read_metadata(store, path)
        if found is not None:
            return found
        tried = expected
    for name in DETECTION_ORDER:
        try:
            module = get_format(name)
        except NotImplementedError:
            continue
        if module is tried:
            continue
        if getattr(module, "READ_PROBES", False):  # its read is its probe: one request
            found = module.read_metadata(store, path)
            if found is not None:
                return found
        elif module.probe(store, path):
            return module.read_metadata(store, path)
    return None


def node_from_metadata(store: Any, path: str, metadata: Any, read_only: bool) -> Array | Group:
    if isinstance(metadata, ArrayMetadata):
        return Array(store, path, metadata, read_only=read_only)
    from .formats.consolidated import group_for  # a group holding consolidated metadata

    return group_for(store, path, metadata, read_only)


def open_node(store: Any, path: str, *, read_only: bool, expected: Any = None) -> Array | Group:
    metadata = read_metadata(store, path, expected)
    if metadata is None:
        raise NodeNotFoundError(path or "/", store)
    return node_from_metadata(store, path, metadata, read_only)


def prepare_path(store: Any, path: str, fmt: str, *, overwrite: bool) -> None:
    """Make room for a new node at `path` and create its missing ancestor groups."""
    store.require("write", f"create a node at {path or '/'!r}")
    format_module = get_format(fmt)
    check_node_fits(store, path, format_module)  # (its ancestors' keys hold shorter names)
    # ancestors first: under an array, `path` may be where its chunks are, not a node to erase
    parts = path.split("/") if path else []
    ancestors = ["/".join(parts[:i]) for i in range(len(parts))]
    candidates = _candidates(store, [*ancestors, path])
    missing = []
    for ancestor in ancestors:
        found = _read_metadata(store, ancestor) if ancestor in candidates else None
        if found is None:
            missing.append(ancestor)
        elif isinstance(found, ArrayMetadata):
            raise ContainsNodeError(f"cannot create {path!r}: {ancestor or '/'!r} is an array")
    existing = _read_metadata(store, path) if path in candidates else None
    if existing is not None:
        if not overwrite:
            raise ContainsNodeError(
                f"a {existing.node_type} already exists at {path or '/'!r} "
                f"in {store}; pass overwrite=True to replace it"
            )
        get_format(existing.format).erase_node(store, path)
    elif overwrite and path:
        format_module.erase_node(store, path)
    if getattr(format_module, "IMPLICIT_GROUPS", False):
        return  # the format implies ancestors from their descendants (the 2020 draft)
    for ancestor in missing:
        format_module.write_metadata(store, ancestor, format_module.group_document(None))


def _candidates(store: Any, paths: list[str]) -> set[str]:
    """The paths among `paths` where a node may be, from one batched read of the keys that
    mark a node in each format rather than a probe of each format per path: on a file system
    every probe walks the whole path, so a node 400 levels down cost 1,600 walks of up to 400
    folders. Every path when the store holds a hierarchy with implicit groups (the 2020
    draft), which only that format's own probe can find."""
    keys: dict[str, str] = {}
    for name in available():
        module = get_format(name)
        if getattr(module, "IMPLICIT_GROUPS", False):
            if module.probe(store, ""):
                return set(paths)
            continue
        keys.update((key, p) for p in paths for key in module.node_keys(p))
    return {keys[key] for key in store.get_many(list(keys))}


class Group(Node):
    # -- members -----------------------------------------------------------------------------
    def _child_path(self, name: str) -> str:
        """The path of a member: a name, or a relative path 'a/b' to a deeper one (never '')."""
        relative = normalize_path(name)
        if not relative:  # '' or '/' would name this group itself (the root: the whole store)
            raise NodeNameError(f"{name!r} does not name a member of group {self.name!r}")
        return join(self._path, relative)

    def keys(self) -> list[str]:
        return sorted(self._format.children(self._store, self._path))

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self.keys())

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        try:
            return read_metadata(self._store, self._child_path(name), self._format) is not None
        except (NodeNameError, InvalidKeyError):  # no member can have such a name
            return False

    def __getitem__(self, name: str) -> Array | Group:
        return open_node(
            self._store, self._child_path(name), read_only=self._read_only, expected=self._format
        )

    def get(self, name: str, default: Any = None) -> Any:
        try:
            return self[name]
        except NodeNotFoundError:
            return default

    def members(self) -> Iterator[tuple[str, Array | Group]]:
        """(name, node) for each child, sorted by name. A format that reads its children's
        metadata in the listing (`child_metadata`, one concurrent batch) is asked for them
        there, rather than once more per child."""
        batched = getattr(self._format, "child_metadata", None)
        if batched is not None:
            for name, metadata in sorted(batched(self._store, self._path).items()):
                yield (
                    name,
                    node_from_metadata(
                        self._store, join(self._path, name), metadata, self._read_only
                    ),
                )
            return
        for name in self.keys():
            path = join(self._path, name)
            metadata = read_metadata(self._store, path, self._format)
            if metadata is not None:
                yield name, node_from_metadata(self._store, path, metadata, self._read_only)

    def arrays(self) -> Iterator[tuple[str, Array]]:
        return ((n, m) for n, m in self.members() if isinstance(m, Array))

    def groups(self) -> Iterator[tuple[str, Group]]:
        return ((n, m) for n, m in self.members() if isinstance(m, Group))

    def array_keys(self) -> list[str]:
        return [n for n, _ in self.arrays()]

    def group_keys(self) -> list[str]:
        return [n for n, _ in self.groups()]

    def create_array(self, name: str, **kwargs: Any) -> Array:
        from .api import _create_array_in

        self._check_writeable()
        kwargs.setdefault("zarr_format", self._meta.format)
        return _create_array_in(self._store, self._child_path(name), **kwargs)

    def create_group(
        self, name: str, *, attributes: dict | None = None, overwrite: bool = False
    ) -> Group:
        from .api import _create_group_in

        self._check_writeable()
        return _create_group_in(
            self._store,
            self._child_path(name),
            attributes=attributes,
            overwrite=overwrite,
            zarr_format=self._meta.format,
        )

    def require_group(self, name: str) -> Group:
        node = self.get(name)
        if isinstance(node, Group):
            return node
        if node is not None:
            raise ContainsNodeError(f"{self._child_path(name)!r} is an array, not a group")
        return self.create_group(name)

    def __delitem__(self, name: str) -> None:
        self._check_writeable()
        path = self._child_path(name)
        metadata = read_metadata(self._store, path)
        if metadata is None:
            raise NodeNotFoundError(path, self._store)
        get_format(metadata.format).erase_node(self._store, path)

    def tree(self) -> str:
        lines = [self.name]
        self._tree_lines(lines, "")
        return "\n".join(lines)

    def _tree_lines(self, lines: list[str], indent: str) -> None:
        members = list(self.members())
        for i, (name, node) in enumerate(members):
            last = i == len(members) - 1
            branch = "└── " if last else "├── "
            if isinstance(node, Group):
                lines.append(f"{indent}{branch}{name}")
                node._tree_lines(lines, indent + ("    " if last else "│   "))
            else:
                lines.append(f"{indent}{branch}{name} {node.shape} {node.dtype}")

    def __repr__(self) -> str:
        return f"<zarrkit.Group {self.name!r} store={self._store}>"
