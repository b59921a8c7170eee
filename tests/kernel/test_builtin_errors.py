"""zarrkit's errors are also the built-in exceptions zarr-python (and so xarray's engine="zarr")
raise for the same condition, so code written against either catches zarrkit's: each case is
one call made through both libraries on a fresh store, and the error each raises must be an
instance of the built-in class (zarrkit's also of its own class, its message unchanged)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import zarrkit as zk
from zarrkit.errors import (
    ContainsNodeError,
    NodeNotFoundError,
    NotJSONError,
    ShardShapeError,
    StoreNotFoundError,
    ZarrkitError,
)


@dataclass(frozen=True)
class Case:
    """One condition: `call(lib, folder)` makes the same call through zarrkit (`lib` is
    `zarrkit`) or zarr-python (`lib` is `zarr`), whose APIs agree on these calls."""

    call: Callable[[Any, Path], Any]
    zarrkit_class: type[ZarrkitError]
    builtin: type[Exception]
    message: str  # part of zarrkit's own message, which must not change


def _existing_group(lib: Any, d: Path) -> Any:
    lib.create_group(str(d / "g.zarr"))
    return lib.open_group(str(d / "g.zarr"), mode="w-")


def _array_over_group(lib: Any, d: Path) -> Any:
    lib.create_group(str(d / "g.zarr"))
    return lib.create_array(str(d / "g.zarr"), shape=(2,), dtype="i4")


def _group_over_member(lib: Any, d: Path) -> Any:
    root = lib.create_group(str(d / "g.zarr"))
    root.create_group("sub")
    return root.create_group("sub")


def _missing_group(lib: Any, d: Path) -> Any:
    return lib.open_group(str(d / "missing.zarr"), mode="r")


def _missing_array(lib: Any, d: Path) -> Any:
    return lib.open_array(str(d / "missing.zarr"), mode="r")


def _attribute_not_json(lib: Any, d: Path) -> Any:
    root = lib.create_group(str(d / "g.zarr"))
    root.attrs["a"] = object()


def _array_attributes_not_json(lib: Any, d: Path) -> Any:
    return lib.create_array(str(d / "a.zarr"), shape=(2,), dtype="i4", attributes={"a": {1j}})


def _shards_not_a_multiple(lib: Any, d: Path) -> Any:
    return lib.create_array(str(d / "s.zarr"), shape=(10,), chunks=(3,), shards=(4,), dtype="i4")


CASES = {
    "w- on an existing store": Case(
        _existing_group, ContainsNodeError, FileExistsError, "already exists"
    ),
    "array where a group is": Case(
        _array_over_group, ContainsNodeError, ValueError, "already exists"
    ),
    "group where a group is": Case(
        _group_over_member, ContainsNodeError, ValueError, "already exists"
    ),
    "missing store (group)": Case(
        _missing_group, StoreNotFoundError, FileNotFoundError, "does not exist"
    ),
    "missing store (array)": Case(
        _missing_array, StoreNotFoundError, FileNotFoundError, "does not exist"
    ),
    "attribute not JSON": Case(
        _attribute_not_json, NotJSONError, TypeError, "not representable as JSON"
    ),
    "array attributes not JSON": Case(
        _array_attributes_not_json, NotJSONError, TypeError, "not representable as JSON"
    ),
    "shards not a multiple of chunks": Case(
        _shards_not_a_multiple, ShardShapeError, ValueError, "must be a multiple"
    ),
}


@pytest.mark.parametrize("case", CASES.values(), ids=list(CASES))
def test_zarrkit_raises_its_own_class_that_is_also_the_builtin(tmp_path, case):
    with pytest.raises(case.zarrkit_class, match=case.message) as info:
        case.call(zk, tmp_path)
    assert isinstance(info.value, case.builtin)


@pytest.mark.interop
@pytest.mark.parametrize("case", CASES.values(), ids=list(CASES))
def test_zarr_python_raises_the_same_builtin(tmp_path, case):
    zarr = pytest.importorskip("zarr")
    with pytest.raises(case.builtin):
        case.call(zarr, tmp_path)


def test_a_missing_member_is_a_key_error_and_a_file_not_found_error(tmp_path):
    """`group[name]` behaves as a mapping (KeyError) while opening a missing path is a
    FileNotFoundError; zarrkit's one class is both, and `in`/`get` still answer quietly."""
    root = zk.create_group(str(tmp_path / "g.zarr"))
    with pytest.raises(NodeNotFoundError) as info:
        root["nope"]
    assert isinstance(info.value, KeyError)
    assert isinstance(info.value, FileNotFoundError)
    assert str(info.value).startswith("no node at path 'nope'")  # not KeyError's repr
    assert "nope" not in root
    assert root.get("nope") is None


def test_builtin_bases_keep_messages_and_pickle(tmp_path):
    """OSError's formatting of (errno, strerror) must not reach zarrkit's messages."""
    import pickle

    err = ContainsNodeError("a node already exists at 'x'")
    assert str(err) == "a node already exists at 'x'"
    again = pickle.loads(pickle.dumps(err))
    assert type(again) is ContainsNodeError and str(again) == str(err)
    missing = NodeNotFoundError("a/b", "store")
    assert str(missing) == "no node at path 'a/b' in store"
    assert missing.errno is None
