"""The zip store: conformance, rewrite-on-flush semantics, other processes as readers, archives
written elsewhere (deflate, hostile member names, corruption), ZIP64, and interop with
zarr-python's ZipStore and tensorstore's zip kvstore."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest
from zarrkit_testing.store_tests import StoreTests

import zarrkit as zk
from zarrkit.abc.store import ByteRange, Store, SuffixRange
from zarrkit.errors import StoreError
from zarrkit.plugins.stores.local.zip import ZipStore


class TestZipStore(StoreTests):
    @pytest.fixture
    def store(self, tmp_path: Path) -> ZipStore:
        return ZipStore(tmp_path / "store.zip", mode="w")

    def store_reopen(self, store: Store) -> Store:
        assert isinstance(store, ZipStore)
        return ZipStore(store.path, mode="r")


class TestZipStoreAfterFlush(StoreTests):
    """The same, with every value read back from the archive on disk rather than pending."""

    concurrent_writers = (4, 10)  # each write rewrites the archive

    @pytest.fixture
    def store(self, tmp_path: Path) -> Store:
        return _Flushing(tmp_path / "store.zip")

    def store_reopen(self, store: Store) -> Store:
        assert isinstance(store, ZipStore)
        return ZipStore(store.path, mode="r")


class _Flushing(ZipStore):
    def __init__(self, path: Path) -> None:
        super().__init__(path, mode="w", fsync=False)

    def set_many(self, items):  # type: ignore[no-untyped-def]
        super().set_many(items)
        self.flush()

    def erase_many(self, keys):  # type: ignore[no-untyped-def]
        super().erase_many(keys)
        self.flush()

    def erase_prefix(self, prefix: str) -> None:
        super().erase_prefix(prefix)
        self.flush()


def _run(code: str, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


READ_IN_OTHER_PROCESS = """
    import sys
    from zarrkit.plugins.stores.local.zip import ZipStore
    store = ZipStore(sys.argv[1])
    print(repr({k: store.get(k) for k in sorted(store.list())}))
"""


# -- writing: nothing touches the archive before a flush -----------------------------------------------
def test_other_processes_see_only_flushed_archives(tmp_path: Path) -> None:
    path = tmp_path / "data.zip"
    store = ZipStore(path, mode="w")
    store.set("a", b"1")
    assert not path.exists()
    store.flush()
    store.set("a", b"2")
    store.set("b", b"3")
    assert _run(READ_IN_OTHER_PROCESS, str(path)).strip() == "{'a': b'1'}"
    store.flush()
    assert _run(READ_IN_OTHER_PROCESS, str(path)).strip() == "{'a': b'2', 'b': b'3'}"


def test_rewriting_a_key_leaves_one_member(tmp_path: Path) -> None:
    path = tmp_path / "data.zip"
    with ZipStore(path, mode="w") as store:
        for round in range(3):
            store.set("c/0", bytes([round]) * 10)
            store.set(f"only-{round}", b"x")
            store.flush()
        store.erase("only-1")
    with zipfile.ZipFile(path) as archive:
        assert sorted(archive.namelist()) == ["c/0", "only-0", "only-2"]  # no duplicate names
        assert archive.read("c/0") == bytes([2]) * 10
        assert archive.testzip() is None


def test_flush_replaces_the_archive_atomically(tmp_path: Path) -> None:
    """A reader that opened the old archive keeps reading it whole, then moves to the new one."""
    path = tmp_path / "data.zip"
    with ZipStore(path, mode="w") as store:
        store.set_many({f"k{i}": bytes([i]) * 1000 for i in range(20)})
    old = path.open("rb")
    with ZipStore(path, mode="a") as store:
        store.set_many({f"k{i}": bytes([100 + i]) * 1000 for i in range(20)})
    with zipfile.ZipFile(old) as previous:  # the replaced archive is still whole
        assert previous.read("k3") == bytes([3]) * 1000
    old.close()
    assert [p.name for p in tmp_path.iterdir()] == ["data.zip"]  # no temporary left behind
    seen = ast.literal_eval(_run(READ_IN_OTHER_PROCESS, str(path)))
    assert seen == {f"k{i}": bytes([100 + i]) * 1000 for i in range(20)}


def test_closing_the_last_handle_flushes(tmp_path: Path) -> None:
    """Also at interpreter exit: a script that never closes its store loses nothing."""
    path = tmp_path / "data.zip"
    _run(
        """
        import sys, numpy as np, zarrkit as zk
        array = zk.create_array("zip://" + sys.argv[1], shape=(6,), chunks=(2,), dtype="i2")
        array[:] = np.arange(6)
    """,
        str(path),
    )
    np.testing.assert_array_equal(zk.open_array(f"zip://{path}")[...], np.arange(6))


def test_handles_in_one_process_share_pending_writes(tmp_path: Path) -> None:
    url = f"zip://{tmp_path / 'data.zip'}"
    group = zk.open_group(url, mode="w")
    array = zk.create_array(url, path="a", shape=(4,), dtype="u1")  # a second handle
    array[:] = 7
    assert [name for name, _ in group.members()] == ["a"]
    group.store.close()
    array.store.close()
    np.testing.assert_array_equal(zk.open_array(url, path="a")[...], [7, 7, 7, 7])


def test_missing_or_broken_archives_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no zip archive"):
        ZipStore(tmp_path / "missing.zip")
    (tmp_path / "not.zip").write_bytes(b"this is not a zip archive at all")
    with pytest.raises(StoreError, match="not a readable zip archive"):
        ZipStore(tmp_path / "not.zip")
    with pytest.raises(ValueError):
        ZipStore(tmp_path / "x.zip", mode="w", compression="rar")


# -- archives written elsewhere ---------------------------------------------------------------------
def test_deflated_and_other_compressions_are_read(tmp_path: Path) -> None:
    path = tmp_path / "other.zip"
    value = bytes(range(256)) * 10
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("deflated", value, compress_type=zipfile.ZIP_DEFLATED)
        archive.writestr("bzip2", value, compress_type=zipfile.ZIP_BZIP2)
        archive.writestr("lzma", value, compress_type=zipfile.ZIP_LZMA)
    store = ZipStore(path)
    for key in ("deflated", "bzip2", "lzma"):
        assert store.get(key) == value
        assert store.get(key, ByteRange(300, 10)) == value[300:310]
        assert store.get(key, SuffixRange(4)) == value[-4:]
    with ZipStore(path, mode="a") as writer:  # a flush keeps their compression
        writer.set("new", b"n")
    with zipfile.ZipFile(path) as archive:
        assert archive.getinfo("lzma").compress_type == zipfile.ZIP_LZMA
        assert archive.read("bzip2") == value


def test_member_names_that_escape_are_unreachable_but_kept(tmp_path: Path) -> None:
    path = tmp_path / "hostile.zip"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with zipfile.ZipFile(path, "w") as archive:
            for name in ("../evil", "/abs", "a/../../x", "dir/", "ok/k"):
                archive.writestr(name, name.encode())
    store = ZipStore(path, mode="a")
    assert list(store.list()) == ["ok/k"]
    assert store.list_dir("") == ([], ["ok"])
    for key in ("../evil", "/abs", "a/../../x"):
        with pytest.raises(ValueError):
            store.get(key)
    store.set("new", b"1")
    store.close()
    with zipfile.ZipFile(path) as archive:
        assert sorted(archive.namelist()) == ["../evil", "/abs", "a/../../x", "dir/", "new", "ok/k"]
    assert not (tmp_path.parent / "evil").exists()


def test_corrupt_member_is_a_store_error_not_data(tmp_path: Path) -> None:
    path = tmp_path / "data.zip"
    with ZipStore(path, mode="w") as store:
        store.set("k", b"A" * 1000)
    raw = bytearray(path.read_bytes())
    raw[raw.index(b"A" * 1000) + 500] ^= 0xFF
    path.write_bytes(bytes(raw))
    with pytest.raises(StoreError, match="CRC") as info:
        ZipStore(path).get("k")
    assert info.value.key == "k"


def test_truncated_archive_is_a_store_error(tmp_path: Path) -> None:
    path = tmp_path / "data.zip"
    with ZipStore(path, mode="w") as store:
        store.set("k", b"A" * 1000)
    path.write_bytes(path.read_bytes()[:600])
    with pytest.raises(StoreError):
        ZipStore(path)


def test_a_store_collected_while_another_opens_does_not_hang(tmp_path: Path) -> None:
    """The garbage collector may finalize a forgotten store (its last handle flushes and
    closes its archive) at any allocation, also while this thread opens another store and
    holds the lock of the open archives: that must not deadlock, and the collected store's
    pending write must still reach its archive."""
    from store_finalizing import opens_while_collecting

    from zarrkit.plugins.stores.local.zip import _Archive

    forgotten = ZipStore(tmp_path / "a.zip", mode="w")
    forgotten.set("k", b"pending")
    forgotten.cycle = forgotten  # only the garbage collector can free it
    del forgotten
    assert opens_while_collecting(
        _Archive._open_lock, lambda: ZipStore(tmp_path / "b.zip", mode="w").close()
    ), "finalizing a zip store while opening another deadlocked"
    assert ZipStore(tmp_path / "a.zip").get("k") == b"pending"


@pytest.mark.slow
def test_zip64_archive_with_more_than_65535_members(tmp_path: Path) -> None:
    path = tmp_path / "many.zip"
    count = 70_000
    with ZipStore(path, mode="w") as store:
        store.set_many({f"c/{i}": i.to_bytes(4, "little") for i in range(count)})
    assert b"PK\x06\x06" in path.read_bytes()[-200:]  # the ZIP64 end of central directory
    reader = ZipStore(path)
    assert sum(1 for _ in reader.list_prefix("c/")) == count
    assert reader.get_many(["c/0", "c/65536", "c/69999"]) == {
        "c/0": (0).to_bytes(4, "little"),
        "c/65536": (65536).to_bytes(4, "little"),
        "c/69999": (69999).to_bytes(4, "little"),
    }


# -- arrays and interop ------------------------------------------------------------------------------
def _write_with_zarrkit(url: str) -> np.ndarray:
    data = np.arange(15 * 14, dtype="<i4").reshape(15, 14)
    root = zk.open_group(url, mode="w", attributes={"origin": "zarrkit"})
    array = root.create_array(
        "x", shape=data.shape, chunks=(4, 5), dtype="i4", fill_value=0, attributes={"units": "K"}
    )
    array[:] = data
    root.store.close()
    return data


@pytest.mark.interop
def test_zarr_python_reads_what_zarrkit_zipped(tmp_path: Path) -> None:
    import zarr

    path = tmp_path / "data.zip"
    data = _write_with_zarrkit(f"zip://{path}")
    store = zarr.storage.ZipStore(path, mode="r")
    group = zarr.open_group(store=store, mode="r")
    assert group.attrs["origin"] == "zarrkit"
    np.testing.assert_array_equal(group["x"][...], data)
    assert group["x"].attrs["units"] == "K"
    store.close()


@pytest.mark.interop
def test_tensorstore_reads_what_zarrkit_zipped(tmp_path: Path) -> None:
    ts = pytest.importorskip("tensorstore")
    path = tmp_path / "data.zip"
    data = _write_with_zarrkit(f"zip://{path}")
    spec = {"driver": "zarr3", "kvstore": {"driver": "zip", "base": f"file://{path}", "path": "x/"}}
    np.testing.assert_array_equal(ts.open(spec).result().read().result(), data)


@pytest.mark.interop
def test_zarrkit_reads_and_updates_what_zarr_python_zipped(tmp_path: Path) -> None:
    import zarr

    path = tmp_path / "theirs.zip"
    data = np.linspace(-1, 1, 80, dtype="f4").reshape(8, 10)
    store = zarr.storage.ZipStore(path, mode="w")
    theirs = zarr.create_array(
        store, name="y", shape=data.shape, chunks=(3, 3), dtype="f4", shards=(6, 6)
    )
    theirs[...] = data
    store.close()
    mine = zk.open_array(f"zip://{path}", path="y", mode="r+")
    np.testing.assert_array_equal(mine[...], data)
    mine[0, :] = 5
    mine.store.close()
    data[0, :] = 5
    again = zarr.open_array(store=zarr.storage.ZipStore(path, mode="r"), path="y")
    np.testing.assert_array_equal(again[...], data)
