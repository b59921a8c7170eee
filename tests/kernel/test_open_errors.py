"""Opening what is not a Zarr node says what is there instead: a missing path, a folder of other
files, a plain file, a missing bucket and a refused permission each have their own error (all
still `NodeNotFoundError`, so `except` clauses written for that keep working)."""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import Any

import pytest
from store_servers import Moto, obstore_s3_options, s3_options

import zarrkit as zk
from zarrkit.errors import (
    NodeNotFoundError,
    NotZarrError,
    PermissionDeniedError,
    StoreNotFoundError,
)

BUCKET = "zarrkit-open-errors"


def test_missing_path(tmp_path: Path) -> None:
    where = tmp_path / "nowhere" / "data.zarr"
    with pytest.raises(StoreNotFoundError, match=f"{where} does not exist"):
        zk.open(str(where))
    assert not where.exists()  # opening to read made nothing


def test_directory_that_is_not_zarr(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    (tmp_path / "images").mkdir()
    with pytest.raises(NotZarrError, match=r"not a Zarr store: it holds 'images/', 'notes.txt'"):
        zk.open_group(str(tmp_path))


def test_plain_file_instead_of_directory(tmp_path: Path) -> None:
    plain = tmp_path / "data.zarr"
    plain.write_bytes(b"not a folder")
    with pytest.raises(NotZarrError, match=f"{plain} is a file, not a directory"):
        zk.open_array(str(plain))
    with pytest.raises(NotZarrError, match=f"{plain} is a file, not a directory"):
        zk.open(str(plain / "inner"))


def test_empty_directory_and_missing_member_keep_the_plain_message(tmp_path: Path) -> None:
    with pytest.raises(NodeNotFoundError, match="the store is empty") as caught:
        zk.open(str(tmp_path))
    assert type(caught.value) is NodeNotFoundError
    group = zk.create_group(str(tmp_path / "g"))
    with pytest.raises(KeyError) as missing:
        group["absent"]
    assert str(missing.value) == f"no node at path 'absent' in {group.store}"


def test_old_except_clauses_still_catch_them(tmp_path: Path) -> None:
    for error in (StoreNotFoundError, NotZarrError, PermissionDeniedError):
        assert issubclass(error, NodeNotFoundError) and issubclass(error, KeyError)
    with pytest.raises(NodeNotFoundError):
        zk.open(str(tmp_path / "missing"))


def test_missing_bucket_and_missing_prefix_on_s3(moto: Moto) -> None:
    options = s3_options(moto.endpoint)
    with pytest.raises(StoreNotFoundError, match="the bucket 'no-such-bucket' does not exist"):
        zk.open("s3://no-such-bucket/data.zarr", storage_options=options)
    url = f"s3://{BUCKET}/{uuid.uuid4().hex}/data.zarr"
    with pytest.raises(StoreNotFoundError, match=f"nothing is stored under {url}"):
        zk.open(url, storage_options=options)
    zk.create_group(url, storage_options=options)
    assert isinstance(zk.open(url, storage_options=options), zk.Group)


def test_missing_bucket_through_obstore(moto: Moto) -> None:
    pytest.importorskip("obstore")
    options: dict[str, Any] = obstore_s3_options(moto.endpoint)
    with pytest.raises(StoreNotFoundError, match="bucket .* does not exist"):
        zk.open("obstore+s3://no-such-bucket/data.zarr", storage_options=options)


def _as_nobody(paths: list[str]) -> list[str]:
    """What opening each path raises in a child process without root's permissions (as
    root, permission bits are not enforced): the child is forked after zarrkit has loaded
    everything it needs, then gives up root."""
    zk.open(paths[-1])  # a readable node: every plugin the opens need is loaded here
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover (the child)
        os.close(read)
        out = []
        try:
            if os.getuid() == 0:
                os.setgid(65534)
                os.setuid(65534)
            for path in paths[:-1]:
                try:
                    zk.open(path)
                    out.append("opened")
                except Exception as exc:
                    out.append(f"{type(exc).__name__}: {exc}")
        finally:
            os.write(write, "\n".join(out).encode())
            os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    with os.fdopen(read) as answer:
        return answer.read().splitlines()


@pytest.fixture
def open_dir() -> Any:
    """A folder every user may enter (pytest's own are its owner's only)."""
    folder = Path(tempfile.mkdtemp(prefix="zarrkit-perm-"))
    folder.chmod(0o755)
    yield folder
    for path in folder.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    shutil.rmtree(folder)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_permission_denied(open_dir: Path) -> None:
    tmp_path = open_dir
    closed = tmp_path / "closed.zarr"
    zk.create_group(str(closed))
    closed.chmod(0o700)
    unreadable = tmp_path / "unreadable.zarr"
    zk.create_group(str(unreadable))
    (unreadable / "zarr.json").chmod(0o600)
    if os.getuid() != 0:
        closed.chmod(0o000)
        (unreadable / "zarr.json").chmod(0o000)
    readable = tmp_path / "readable.zarr"
    zk.create_group(str(readable))
    readable.chmod(0o755)
    (readable / "zarr.json").chmod(0o644)
    try:
        answers = _as_nobody([str(closed), str(unreadable), str(readable)])
    finally:
        closed.chmod(0o755)
    denied = "PermissionDeniedError: no node at path '/' in file://"
    assert answers == [
        f"{denied}{closed}: permission denied: cannot list {closed}",
        f"{denied}{unreadable}: zarr.json is there but cannot be read (no permission?)",
    ]


@pytest.mark.parametrize(
    "change, says",
    [
        ("missing", "field 'zarr_format': expected 3: required field is missing"),
        (2, "field 'zarr_format': expected 3, got 2"),
        (None, "field 'zarr_format': expected 3, got None"),
    ],
)
@pytest.mark.parametrize("node", ["array", "group"])
def test_a_root_zarr_json_without_its_format_is_a_metadata_error(
    tmp_path: Path, node: str, change: Any, says: str
) -> None:
    """Not "cannot be read (no permission?)": the document was read, and its field is what
    is wrong. (A string there is the 2020 draft's entry point, which `test_format_draft`
    covers.)"""
    import json

    from zarrkit.errors import MetadataError

    place = tmp_path / "data.zarr"
    if node == "array":
        zk.create_array(str(place), shape=(4,), dtype="u1")
    else:
        zk.create_group(str(place))
    doc = json.loads((place / "zarr.json").read_text())
    if change == "missing":
        del doc["zarr_format"]
    else:
        doc["zarr_format"] = change
    (place / "zarr.json").write_text(json.dumps(doc))
    for opening in (zk.open, zk.open_array if node == "array" else zk.open_group):
        with pytest.raises(MetadataError, match=says) as info:
            opening(str(place))
        assert info.value.field == "zarr_format" and "zarr.json" in str(info.value)
