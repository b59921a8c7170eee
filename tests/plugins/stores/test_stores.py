"""The first-party stores: the shared conformance suite, then what is special to each."""

from __future__ import annotations

import os
import threading
import time
import uuid
from pathlib import Path

import numpy as np
import pytest
from zarrkit_testing.store_tests import StoreTests

import zarrkit as zk
from zarrkit import registry
from zarrkit.abc.store import Store, SuffixRange, check_key, check_prefix
from zarrkit.errors import (
    CapabilityError,
    InvalidKeyError,
    ReadOnlyError,
    StoreError,
    UnknownExtensionError,
    ZarrkitError,
)
from zarrkit.plugins.stores.local.local import LocalStore
from zarrkit.plugins.stores.memory import MemoryStore
from zarrkit.store_opening import open_store


def _unique_name() -> str:
    return f"test-{uuid.uuid4().hex}"


class TestMemoryStore(StoreTests):
    @pytest.fixture
    def store(self) -> MemoryStore:
        return MemoryStore.from_url(f"memory://{_unique_name()}", mode="w")

    def store_reopen(self, store: Store) -> Store:
        assert isinstance(store, MemoryStore)
        return MemoryStore.from_url(store.url, mode="r")


class TestLocalStore(StoreTests):
    @pytest.fixture
    def store(self, tmp_path: Path) -> LocalStore:
        return LocalStore(tmp_path / "root", mode="w")  # the root is made by the first write

    def store_reopen(self, store: Store) -> Store:
        assert isinstance(store, LocalStore)
        return LocalStore(store.root, mode="r")


class TestPortableLocalStore(StoreTests):
    """The local store's way for an OS that cannot open files relative to a folder
    (Windows), made directly here: the same contract over checked paths."""

    @pytest.fixture
    def store(self, tmp_path: Path) -> LocalStore:
        from zarrkit.plugins.stores.local.portable import PortableLocalStore

        return PortableLocalStore(tmp_path / "root", mode="w")

    def store_reopen(self, store: Store) -> Store:
        from zarrkit.plugins.stores.local.portable import PortableLocalStore

        assert isinstance(store, PortableLocalStore)
        return PortableLocalStore(store.root, mode="r")


# -- memory:// ---------------------------------------------------------------------------------
def test_memory_url_shares_data_by_name() -> None:
    url = f"memory://{_unique_name()}"
    writer = MemoryStore.from_url(url, mode="w")
    reader = MemoryStore.from_url(url)
    writer.set("k", b"v")
    assert reader.get("k") == b"v"
    assert reader == writer
    assert repr(reader) == f"ManagedMemoryStore({url!r})"  # (zarr-python's named memory store)
    with pytest.raises(ReadOnlyError):
        reader.set("k", b"other")  # mode defaults to "r"


def test_memory_names_are_isolated() -> None:
    one = MemoryStore.from_url(f"memory://{_unique_name()}", mode="w")
    two = MemoryStore.from_url(f"memory://{_unique_name()}", mode="w")
    one.set("k", b"v")
    assert two.get("k") is None
    assert one != two


def test_bare_memory_url_is_private() -> None:
    one = MemoryStore.from_url("memory://", mode="w")
    two = MemoryStore.from_url("memory://", mode="w")
    one.set("k", b"v")
    assert two.get("k") is None
    assert MemoryStore().get("k") is None
    assert one != two


@pytest.mark.parametrize(
    "url,mode,options",
    [
        ("file:///x", "w", {}),
        ("memory://x", "rw", {}),
        ("memory://x", "w", {"compress": True}),
    ],
)
def test_memory_from_url_refuses_bad_arguments(url: str, mode: str, options: dict) -> None:
    with pytest.raises((ValueError, TypeError)):
        MemoryStore.from_url(url, mode=mode, **options)


# -- file:// -----------------------------------------------------------------------------------
def test_missing_root_reads_as_empty_and_is_not_created(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "absent")
    assert store.get("zarr.json") is None
    assert list(store.list()) == []
    assert store.list_dir("") == ([], [])
    assert not (tmp_path / "absent").exists()


def test_file_urls(tmp_path: Path) -> None:
    root = tmp_path / "with space"
    store = LocalStore.from_url(root.as_uri(), mode="w")
    assert store.root == root
    assert store.url == root.as_uri()
    assert LocalStore.from_url(str(root)) == store
    assert LocalStore.from_url(f"file://localhost{root}") == store
    assert repr(store) == f"LocalStore('file://{root}')"  # (zarr-python's text: not encoded)
    with pytest.raises(ValueError):
        LocalStore.from_url("file://elsewhere/data")
    with pytest.raises(ValueError):
        LocalStore(root, mode="rw")


def _files_under(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


@pytest.mark.parametrize("sized_as", [-5000, 0, 7000], ids=["grew", "same", "shrank"])
def test_buffered_read_takes_the_file_as_it_is_when_it_changed_size(
    tmp_path: Path, sized_as: int
) -> None:
    """A file sized, then rewritten before it is read: the read gives what is there now."""
    from zarrkit.plugins.stores.local.posix import _read_into_buffer

    value = os.urandom((4 << 20) + 11)
    (tmp_path / "k").write_bytes(value)
    fd = os.open(tmp_path / "k", os.O_RDONLY)
    try:
        assert bytes(_read_into_buffer(fd, len(value) + sized_as)) == value
    finally:
        os.close(fd)


def test_writes_leave_no_temporary_files(tmp_path: Path) -> None:
    store = LocalStore(tmp_path, mode="w", fsync=True)
    for i in range(20):
        store.set(f"c/{i % 3}", bytes(i))
        store.set_many({"zarr.json": b"{}", ".zattrs": bytes(i)})
    assert _files_under(tmp_path) == [".zattrs", "c/0", "c/1", "c/2", "zarr.json"]


def test_failed_write_keeps_old_value_and_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = LocalStore(tmp_path, mode="w")
    store.set("k", b"old")

    def disk_full(src: str, dst: str, **folders: int) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", disk_full)
    with pytest.raises(StoreError, match="disk full") as info:
        store.set("k", b"new")
    assert (info.value.key, info.value.operation) == ("k", "write")
    assert store.get("k") == b"old"
    assert _files_under(tmp_path) == ["k"]


@pytest.mark.parametrize("existing", [False, True], ids=["new-key", "existing-key"])
def test_write_failing_midway_leaves_the_old_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, existing: bool
) -> None:
    store = LocalStore(tmp_path, mode="w")
    if existing:
        store.set("c/k", b"old")
    real_write = os.write

    def fails_after_a_few_bytes(fd: int, data) -> int:
        real_write(fd, bytes(memoryview(data)[:3]))
        raise OSError("disk full")

    monkeypatch.setattr(os, "write", fails_after_a_few_bytes)
    with pytest.raises(StoreError, match="disk full"):
        store.set("c/k", b"new value")
    monkeypatch.undo()
    assert store.get("c/k") == (b"old" if existing else None)
    assert _files_under(tmp_path) == (["c/k"] if existing else [])


def test_short_writes_are_carried_on_until_the_value_is_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write the OS cuts short (a signal, a pipe-like file system) is continued, for every
    kind of value the engine hands over: bytes, a 2-D array, a strided view of one."""
    store = LocalStore(tmp_path, mode="w")
    whole = np.arange(32 * 32, dtype="<f4").reshape(32, 32)
    values = {
        "bytes": bytes(range(200)),
        "array": whole,
        "view": whole[8:24, 4:20],
        "transposed": whole.T,
    }
    real_write = os.write
    monkeypatch.setattr(os, "write", lambda fd, data: real_write(fd, bytes(memoryview(data)[:7])))
    store.set_many(values)
    monkeypatch.undo()
    assert store.get_many(list(values)) == {
        k: np.ascontiguousarray(v).tobytes() for k, v in values.items()
    }


def test_a_value_that_is_no_buffer_stops_the_batch_before_any_write(tmp_path: Path) -> None:
    store = LocalStore(tmp_path, mode="w")
    with pytest.raises(TypeError):
        store.set_many({"a/k": b"fine", "b/k": object()})  # type: ignore[dict-item]
    assert list(store.list()) == []


def test_written_files_get_the_usual_permissions(tmp_path: Path) -> None:
    store = LocalStore(tmp_path, mode="w")
    store.set("a/k", b"x")
    store.set("a/k", b"y")  # an overwrite takes the other way: linked beside, then renamed
    (tmp_path / "plain").write_bytes(b"z")
    expected = (tmp_path / "plain").stat().st_mode
    assert (tmp_path / "a" / "k").stat().st_mode == expected
    assert store.get("a/k") == b"y"


@pytest.mark.skipif(not hasattr(os, "O_TMPFILE"), reason="no unnamed temporary files here")
def test_writes_fall_back_to_renaming_where_unnamed_files_fail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file system without O_TMPFILE, and a folder pruned by a concurrent erase between
    creating the unnamed file and naming it: the value is written the renaming way."""
    import errno

    from zarrkit.plugins.stores.local import posix

    store = LocalStore(tmp_path, mode="w")

    def gone(fd: int, folder: int, name: str) -> None:
        raise FileNotFoundError(errno.ENOENT, "pruned", name)

    monkeypatch.setattr(posix, "_link_fd", gone)
    store.set("c/0", b"first")
    assert store.get("c/0") == b"first" and store._unnamed  # only this write went around

    def unsupported(folder: int) -> int:
        raise OSError(errno.EOPNOTSUPP, "not on this file system")

    monkeypatch.setattr(posix, "_open_unnamed", unsupported)
    store.set_many({"c/1": b"second", "c/0": b"third"})
    assert not store._unnamed
    assert store.get_many(["c/0", "c/1"]) == {"c/0": b"third", "c/1": b"second"}
    assert _files_under(tmp_path) == ["c/0", "c/1"]


def test_an_overwrite_cut_short_leaves_nothing_listed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An overwrite that dies between naming its new file and renaming it over the key (here:
    the rename fails and the clean-up is lost, as after a crash) leaves a name listings skip."""
    from zarrkit.plugins.stores.local import posix

    store = LocalStore(tmp_path, mode="w")
    store.set("a/k", b"old")

    def crash(src: str, dst: str, **folders: int) -> None:
        raise OSError("killed")

    monkeypatch.setattr(os, "replace", crash)
    monkeypatch.setattr(posix, "_remove_quietly", lambda path, **folder: None)
    with pytest.raises(StoreError, match="killed"):
        store.set("a/k", b"new")
    monkeypatch.undo()
    assert len(list((tmp_path / "a").iterdir())) == 2  # the key and the leftover
    assert list(store.list()) == ["a/k"] and store.list_dir("a/") == (["k"], [])
    assert store.get("a/k") == b"old"


@pytest.mark.parametrize("removed", ["c/0", "c", "."], ids=["folder", "parent", "root"])
def test_a_run_of_writes_makes_again_a_folder_removed_under_it(
    tmp_path: Path, removed: str
) -> None:
    """A run keeps its folders open; one removed meanwhile (an erase elsewhere pruned it)
    is made again rather than written into while deleted (where ext4 refuses a new file
    with EPERM and tmpfs takes it, to be lost)."""
    import shutil

    store = LocalStore(tmp_path / "root", mode="w")
    with store.writing() as target:
        target.set_many({"c/0/a": b"1", "top": b"t"})
        shutil.rmtree(tmp_path / "root" / removed)
        target.set_many({"c/0/b": b"2", "top": b"u"})
    assert store.get_many(["c/0/b", "top"]) == {"c/0/b": b"2", "top": b"u"}


def test_listings_skip_leftover_temporary_files(tmp_path: Path) -> None:
    store = LocalStore(tmp_path, mode="w")
    store.set("a/.zattrs", b"{}")
    (tmp_path / "a" / ".0123456789abcdef.partial").write_bytes(b"torn")  # left by a crash
    assert list(store.list()) == ["a/.zattrs"]
    assert store.list_dir("a/") == ([".zattrs"], [])


def test_overwrite_is_atomic_for_concurrent_readers(tmp_path: Path) -> None:
    store = LocalStore(tmp_path, mode="w")
    old, new = b"o" * (1 << 20), b"n" * ((1 << 20) + 1)
    store.set("k", old)
    stop = time.monotonic() + 1.0
    seen: list[bytes | None] = []

    def read() -> None:
        while time.monotonic() < stop:
            value = store.get("k")
            if value not in (old, new):
                seen.append(value)
                return
            seen.append(None)

    reader = threading.Thread(target=read)
    reader.start()
    while time.monotonic() < stop:
        store.set("k", new)
        store.set("k", old)
    reader.join()
    assert len(seen) > 10  # the reader really raced the writer
    assert all(value is None for value in seen), "a reader saw a torn or missing value"


@pytest.fixture
def escape(tmp_path: Path) -> tuple[LocalStore, Path]:
    """A store whose root holds symlinks to a directory and a file outside it."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_bytes(b"secret")
    root = tmp_path / "root"
    root.mkdir()
    (root / "dir_link").symlink_to(outside, target_is_directory=True)
    (root / "file_link").symlink_to(outside / "secret")
    return LocalStore(root, mode="w"), outside


@pytest.mark.parametrize(
    "operation",
    [
        lambda s: s.get("dir_link/secret"),
        lambda s: s.get("file_link", SuffixRange(2)),
        lambda s: s.exists("file_link"),
        lambda s: s.set("dir_link/new", b"x"),
        lambda s: s.erase_prefix("dir_link/"),
        lambda s: s.list_dir("dir_link/"),
        lambda s: s.list_prefix("dir_link/"),
        lambda s: _in_run(s.reading(), lambda r: r.read_many(["k", "dir_link/secret"])),
        lambda s: _in_run(s.writing(), lambda w: w.set_many({"k": b"1", "dir_link/new": b"x"})),
    ],
    ids=[
        "get",
        "get-range",
        "exists",
        "set-through-dir",
        "erase-prefix",
        "list-dir",
        "list-prefix",
        "run-of-reads",
        "run-of-writes",
    ],
)
def test_symlink_out_of_root_is_refused(escape: tuple[LocalStore, Path], operation) -> None:
    store, outside = escape
    with pytest.raises(ValueError, match="outside"):
        operation(store)
    assert _files_under(outside) == ["secret"]
    assert (outside / "secret").read_bytes() == b"secret"


def _in_run(run, operation):
    with run as target:
        return operation(target)


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts open files in /proc")
def test_a_run_of_reads_keeps_few_folders_open(tmp_path: Path) -> None:
    """A run of reads keeps the key folders it opened for its next calls, but not without
    bound: a share spread over many folders must not run the process out of files."""
    store = LocalStore(tmp_path, mode="w")
    store.set_many({f"c/{i}/0": bytes([i]) for i in range(200)})
    before = len(os.listdir("/proc/self/fd"))
    most = 0
    with store.reading() as source:
        for start in range(0, 200, 4):
            keys = [f"c/{i}/0" for i in range(start, start + 4)]
            assert sorted(source.read_many(keys)) == sorted(keys)
            most = max(most, len(os.listdir("/proc/self/fd")) - before)
    assert 4 <= most <= 32 + 4 + 1
    assert len(os.listdir("/proc/self/fd")) == before


def test_set_replaces_a_symlink_rather_than_writing_through_it(
    escape: tuple[LocalStore, Path],
) -> None:
    """Writes are a rename over the key's name, so a symlinked key becomes a plain file and
    the file it pointed to, outside the root, is untouched."""
    store, outside = escape
    store.set("file_link", b"x")
    assert not (store.root / "file_link").is_symlink()
    assert store.get("file_link") == b"x"
    assert (outside / "secret").read_bytes() == b"secret"


def test_listings_do_not_follow_symlinks(escape: tuple[LocalStore, Path]) -> None:
    store, _ = escape
    store.set("k", b"v")
    assert list(store.list()) == ["k"]
    assert store.list_dir("") == (["k"], [])


def test_erase_removes_a_symlink_not_what_it_points_to(escape: tuple[LocalStore, Path]) -> None:
    store, outside = escape
    store.erase("file_link")
    assert not (store.root / "file_link").is_symlink()
    assert (outside / "secret").read_bytes() == b"secret"


def test_symlink_inside_root_is_readable(tmp_path: Path) -> None:
    store = LocalStore(tmp_path, mode="w")
    store.set("real/k", b"v")
    (tmp_path / "alias").symlink_to(tmp_path / "real", target_is_directory=True)
    assert store.get("alias/k") == b"v"


@pytest.fixture
def links_inside(tmp_path: Path) -> LocalStore:
    """Symlinks that stay inside the root, absolute and relative, to folders and to files,
    some through other links or '..'."""
    root = tmp_path / "root"
    store = LocalStore(root, mode="w")
    store.set_many({"real/k": b"v", "real/sub/j": b"w", "top": b"t"})
    (root / "absolute").symlink_to(root / "real", target_is_directory=True)
    (root / "relative").symlink_to("real", target_is_directory=True)
    (root / "real" / "up").symlink_to("../real/sub", target_is_directory=True)
    (root / "via").symlink_to("absolute/up", target_is_directory=True)
    (root / "real" / "file").symlink_to("../top")
    (root / "chained").symlink_to("real/file")
    return store


@pytest.mark.parametrize(
    "key,value",
    [
        ("absolute/k", b"v"),
        ("relative/k", b"v"),
        ("real/up/j", b"w"),
        ("via/j", b"w"),
        ("real/file", b"t"),
        ("chained", b"t"),
        ("relative/file", b"t"),
    ],
)
def test_symlinks_that_stay_inside_are_followed_by_every_read(
    links_inside: LocalStore, key: str, value: bytes
) -> None:
    store = links_inside
    assert store.get(key) == value
    assert store.get(key, SuffixRange(1)) == value[-1:]
    assert store.exists(key)
    assert store.get_many([key, "real/k"])[key] == value
    assert store.get_ranges([(key, None)]) == [value]
    with store.reading() as source:
        assert source.read_many([key]) == {key: value}


def test_writes_and_erases_through_a_linked_folder_land_in_the_real_one(
    links_inside: LocalStore,
) -> None:
    store = links_inside
    store.set("relative/new", b"n")
    assert (store.root / "real" / "new").read_bytes() == b"n"
    with store.writing() as target:
        target.set_many({"via/new": b"m"})
    assert (store.root / "real" / "sub" / "new").read_bytes() == b"m"
    store.erase("absolute/new")
    assert not (store.root / "real" / "new").exists()
    assert store.list_dir("via/") == (["j", "new"], [])
    assert sorted(store.list_prefix("relative/s")) == ["relative/sub/j", "relative/sub/new"]
    store.erase_prefix("via/")
    assert not (store.root / "real" / "sub").exists() and (store.root / "via").is_symlink()
    assert sorted(store.list()) == ["real/k", "top"]  # links neither followed nor shown


@pytest.mark.parametrize(
    "target",
    ["../outside", "real/../../outside", "loop", "real/../.."],
    ids=["up-and-out", "through-a-folder", "loop", "above-the-root"],
)
def test_relative_symlinks_that_lead_out_are_refused(tmp_path: Path, target: str) -> None:
    root = tmp_path / "root"
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "k").write_bytes(b"secret")
    store = LocalStore(root, mode="w")
    store.set("real/x", b"x")
    (root / "link").symlink_to(target, target_is_directory=True)
    (root / "loop").symlink_to("link", target_is_directory=True)
    for operation in (
        lambda: store.get("link/k"),
        lambda: store.set("link/k", b"w"),
        lambda: store.list_dir("link/"),
        lambda: store.erase_prefix("link/"),
        lambda: store.get_many(["link/k"]),
        lambda: store.erase("link/k"),
    ):
        with pytest.raises(InvalidKeyError):
            operation()
    assert (tmp_path / "outside" / "k").read_bytes() == b"secret"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["outside", "root"]


def test_the_checked_path_way_refuses_symlinks_out_too(escape: tuple[LocalStore, Path]) -> None:
    """Where the OS cannot open relative to a folder (Windows), paths are checked before use:
    the same static escapes are refused, and the store works (run here with that way made
    directly, as Windows is not at hand)."""
    from zarrkit.plugins.stores.local.portable import PortableLocalStore

    posix_store, outside = escape
    store = PortableLocalStore(posix_store.root, mode="w")
    assert isinstance(store, LocalStore) and store == posix_store
    store.set_many({"a/k": b"1", "b": b"2"})
    assert store.get_many(["a/k", "b"]) == {"a/k": b"1", "b": b"2"}
    assert store.get_ranges([("a/k", SuffixRange(1))]) == [b"1"]
    assert sorted(store.list()) == ["a/k", "b"] and store.list_dir("") == (["b"], ["a"])
    for operation in (
        lambda: store.get("dir_link/secret"),
        lambda: store.get("file_link"),
        lambda: store.set("dir_link/new", b"x"),
        lambda: store.list_dir("dir_link/"),
        lambda: store.erase_prefix("dir_link/"),
    ):
        with pytest.raises(InvalidKeyError, match="outside"):
            operation()
    store.set("file_link", b"replaced")
    assert store.get("file_link") == b"replaced"
    store.erase("a/k")
    store.erase_prefix("")
    assert list(store.root.iterdir()) == [] and _files_under(outside) == ["secret"]


def test_erase_prefix_everything_keeps_root(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "root", mode="w")
    store.set_many({"a/b": b"1", "c": b"2"})
    store.erase_prefix("")
    assert store.root.is_dir()
    assert list(store.root.iterdir()) == []


# -- discovery ---------------------------------------------------------------------------------
@pytest.mark.parametrize("scheme,cls", [("file", LocalStore), ("memory", MemoryStore)])
def test_stores_resolve_by_url_scheme(scheme: str, cls: type) -> None:
    assert registry.lookup("store", scheme) is cls


@pytest.mark.parametrize(
    "scheme,module,cls_name",
    [
        ("zip", "local.zip", "ZipStore"),
        ("lmdb", "local.lmdb", "LmdbStore"),
        ("http", "remote.http", "HttpStore"),
        ("https", "remote.http", "HttpStore"),
        ("s3", "remote.s3_routing", "S3Backends"),  # obstore's store or fsspec's, by the options
        ("fsspec+s3", "remote.fsspec", "FsspecStore"),
        ("obstore+s3", "remote.objectstore", "ObstoreStore"),
        ("gs", "remote.cloud_routing", "CloudBackends"),  # fsspec's where gcsfs is, else obstore's
        ("gcs", "remote.cloud_routing", "CloudBackends"),
        ("az", "remote.cloud_routing", "CloudBackends"),
        ("fsspec+gs", "remote.fsspec", "FsspecStore"),
        ("fsspec+https", "remote.fsspec", "FsspecStore"),
        ("fsspec+memory", "remote.fsspec", "FsspecStore"),
        ("cache", "wrappers.cache", "CachingStore"),
        ("metrics", "wrappers.metrics", "MetricsStore"),
    ],
)
def test_every_backend_resolves_by_url_scheme(scheme: str, module: str, cls_name: str) -> None:
    cls = registry.lookup("store", scheme)
    assert (cls.__module__, cls.__name__) == (f"zarrkit.plugins.stores.{module}", cls_name)


def test_unknown_scheme_is_refused_by_name() -> None:
    with pytest.raises(UnknownExtensionError) as info:
        open_store("nosuchscheme://x")
    assert (info.value.kind, info.value.name) == ("store", "nosuchscheme")


THIRD_PARTY_STORE = '''
from zarrkit.abc import names
from zarrkit.plugins.stores.memory import MemoryStore

class VaultStore(MemoryStore):
    """A third party's store: one entry point makes vault:// work everywhere."""
    names = names("vault")

    @classmethod
    def from_url(cls, url, *, mode="r", **options):
        store = cls(url[len("vault://"):], mode=mode)
        store.options = options
        return store
'''


def test_a_third_party_scheme_needs_one_entry_point(fake_distribution) -> None:
    fake_distribution(
        "zarrkit-vault",
        entry_points={"zarrkit.stores": {"vault": "vault_store:VaultStore"}},
        modules={"vault_store": THIRD_PARTY_STORE},
    )
    url = f"vault://{_unique_name()}"
    array = zk.create_array(url, shape=(3,), dtype="i2", storage_options={"token": "t"})
    array[:] = [1, 2, 3]
    assert type(array.store).__name__ == "VaultStore" and array.store.options == {"token": "t"}
    assert zk.open_array(url)[...].tolist() == [1, 2, 3]


# -- keys ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "key", ["", "/a", "a/", "a//b", "../x", "a/./b", "a/../b", "a\\b", "a\x00b"]
)
def test_invalid_keys_are_a_zarrkit_error_and_a_value_error(key: str) -> None:
    with pytest.raises(InvalidKeyError) as info:
        check_key(key)
    assert isinstance(info.value, ValueError) and isinstance(info.value, ZarrkitError)


@pytest.mark.parametrize("prefix", ["a", "/a/", "../", "a//"])
def test_invalid_prefixes_are_refused(prefix: str) -> None:
    with pytest.raises(InvalidKeyError):
        check_prefix(prefix)


def test_store_error_names_key_store_and_operation() -> None:
    error = StoreError("HTTP 503", key="c/0", store="S3Store('s3://b/x')", operation="read")
    assert str(error) == "cannot read 'c/0' in S3Store('s3://b/x'): HTTP 503"
    assert (error.key, error.operation) == ("c/0", "read")


# -- capabilities ------------------------------------------------------------------------------------
def test_every_store_declares_its_capabilities_and_the_mode_sets_read_only(tmp_path: Path) -> None:
    from zarrkit.abc import StoreCapabilities

    writer = LocalStore(tmp_path / "data", mode="a")
    reader = LocalStore(tmp_path / "data", mode="r")
    assert isinstance(LocalStore.capabilities, StoreCapabilities)
    assert LocalStore.capabilities.blocking_writes and not MemoryStore.capabilities.blocking_writes
    assert not writer.capabilities.read_only and reader.capabilities.read_only
    assert reader.read_only and reader.capabilities.writeable  # (its older name reads it)
    with pytest.raises(ReadOnlyError):
        reader.set("k", b"1")
    with pytest.raises(AttributeError):
        reader.capabilities.read_only = False  # type: ignore[misc]  # frozen


def test_a_store_written_before_capabilities_declares_them_by_its_older_names() -> None:
    """A store plugin that sets `writeable = False` on its class, or `self.listable = False`
    on an instance, has those capabilities: the kernel refuses what it cannot do."""

    class Older(Store):
        writeable = False
        safe_updates = True

        def __init__(self) -> None:
            self.listable = False

        def get(self, key: str, byte_range: object = None) -> bytes | None:
            return None

    store = Older()
    assert Older.capabilities.safe_updates and not Older.capabilities.writeable
    assert not store.capabilities.listable and store.capabilities.readable
    with pytest.raises(ReadOnlyError):
        store.set_many({"k": b"1"})
    with pytest.raises(CapabilityError):
        store.list_dir("")
    assert Store.capabilities.writeable  # (the base keeps its own)


def test_a_wrapper_can_do_what_it_wraps(tmp_path: Path) -> None:
    reader = open_store(f"cache://file://{tmp_path}", mode="r")
    assert reader.capabilities == reader.inner.capabilities  # type: ignore[attr-defined]
    assert reader.capabilities.read_only and reader.capabilities.blocking_writes
