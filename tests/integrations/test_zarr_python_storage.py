"""zarr-python's way of building stores (`zarr.storage.MemoryStore()`, `LocalStore(path)`,
`ZipStore(path, mode=...)`, `FsspecStore.from_url(...)`, `ObjectStore(obstore_store)`), run
unchanged against `zarr` and `zarrkit`: each script builds its stores from `zk.storage`, writes
and reads through `zk`'s own functions, and both runs must read the same values, answer
`isinstance` and `read_only` alike, write the same keys and refuse the same things."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrkit

zarr = pytest.importorskip("zarr")

pytestmark = [pytest.mark.interop, pytest.mark.filterwarnings("ignore:::zarr")]

LIBRARIES = pytest.mark.parametrize("zk", [zarr, zarrkit], ids=["zarr", "zarrkit"])
DATA = np.arange(24, dtype="i4").reshape(4, 6)


def write_and_read(zk: Any, store: Any) -> np.ndarray:
    a = zk.create_array(store, shape=(4, 6), chunks=(2, 3), dtype="i4")
    a[...] = DATA
    return np.asarray(zk.open_array(store, mode="r")[...])


def files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def both(script: Any, tmp_path: Path) -> tuple[Any, Any]:
    results = []
    for zk in (zarr, zarrkit):
        folder = tmp_path / zk.__name__
        folder.mkdir()
        results.append(script(zk, folder))
    return results[0], results[1]


def test_memory_store(tmp_path: Path) -> None:
    def script(zk: Any, _: Path) -> Any:
        store = zk.storage.MemoryStore()
        return (
            write_and_read(zk, store).tolist(),
            isinstance(store, zk.storage.MemoryStore),
            isinstance(store, zk.storage.LocalStore),
            store.read_only,
        )

    theirs, ours = both(script, tmp_path)
    assert ours == theirs == (DATA.tolist(), True, False, False)


def test_difference_memory_store_equality() -> None:
    """zarr-python's memory stores are equal when their contents are; zarrkit's when they are
    one store (docs/zarr-python.md)."""
    assert zarr.storage.MemoryStore() == zarr.storage.MemoryStore()
    assert zarrkit.storage.MemoryStore() != zarrkit.storage.MemoryStore()
    store = zarrkit.storage.MemoryStore()
    assert store == store


def test_local_store_and_its_read_only_twin(tmp_path: Path) -> None:
    def script(zk: Any, root: Path) -> Any:
        store = zk.storage.LocalStore(root / "data", read_only=False)
        values = write_and_read(zk, store).tolist()
        reader = zk.storage.LocalStore(str(root / "data"), read_only=True)
        again = np.asarray(zk.open_array(reader)[...]).tolist()
        with pytest.raises(Exception):  # noqa: B017  (each library's own error)
            zk.open_array(reader, mode="r+")[0, 0] = 9
        return values, again, reader.read_only, isinstance(reader, zk.storage.LocalStore)

    theirs, ours = both(script, tmp_path)
    assert ours == theirs
    assert files(tmp_path / "zarrkit" / "data") == files(tmp_path / "zarr" / "data")


@pytest.mark.parametrize("compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_zip_store_written_then_read(tmp_path: Path, compression: int) -> None:
    def script(zk: Any, root: Path) -> Any:
        store = zk.storage.ZipStore(root / "data.zip", mode="w", compression=compression)
        a = zk.create_array(store, shape=(4, 6), chunks=(2, 3), dtype="i4")
        a[...] = DATA
        store.close()
        with zk.storage.ZipStore(root / "data.zip", mode="r") as reader:
            values = np.asarray(zk.open_array(reader)[...]).tolist()
            read_only = reader.read_only
        with zipfile.ZipFile(root / "data.zip") as archive:
            names = sorted(archive.namelist())
            kinds = {info.compress_type for info in archive.infolist()}
        return values, read_only, names, kinds

    theirs, ours = both(script, tmp_path)
    assert ours == theirs
    assert ours[3] == {compression}


@LIBRARIES
def test_zip_mode_w_starts_empty_and_x_refuses_an_archive(zk: Any, tmp_path: Path) -> None:
    path = tmp_path / "data.zip"
    store = zk.storage.ZipStore(path, mode="w")
    zk.create_array(store, name="old", shape=(2,), dtype="i1")
    store.close()
    store = zk.storage.ZipStore(path, mode="w")
    zk.create_array(store, name="new", shape=(2,), dtype="i1")
    store.close()
    with zipfile.ZipFile(path) as archive:
        assert not [n for n in archive.namelist() if n.startswith("old")]
    with pytest.raises(FileExistsError):  # (zarrkit: at once; zarr-python: at first use)
        zk.create_group(zk.storage.ZipStore(path, mode="x"))


def test_fsspec_store_from_url(tmp_path: Path) -> None:
    def script(zk: Any, root: Path) -> Any:
        store = zk.storage.FsspecStore.from_url(
            f"file://{root}/data", storage_options={"auto_mkdir": True}, read_only=False
        )
        values = write_and_read(zk, store).tolist()
        reader = zk.storage.FsspecStore.from_url(
            f"file://{root}/data", storage_options={"auto_mkdir": False}, read_only=True
        )
        return (
            values,
            np.asarray(zk.open_array(reader)[...]).tolist(),
            reader.read_only,
            isinstance(reader, zk.storage.FsspecStore),
        )

    theirs, ours = both(script, tmp_path)
    assert ours == theirs
    assert files(tmp_path / "zarrkit" / "data") == files(tmp_path / "zarr" / "data")


@pytest.mark.filterwarnings("ignore:fs .* was not created with `asynchronous=True`")
def test_fsspec_store_over_a_filesystem(tmp_path: Path) -> None:
    fsspec = pytest.importorskip("fsspec")
    from fsspec.implementations.asyn_wrapper import AsyncFileSystemWrapper

    def script(zk: Any, root: Path) -> Any:
        fs = AsyncFileSystemWrapper(fsspec.filesystem("file", auto_mkdir=True))
        store = zk.storage.FsspecStore(fs, path=str(root / "data"))
        return write_and_read(zk, store).tolist(), store.read_only

    theirs, ours = both(script, tmp_path)
    assert ours == theirs


def test_object_store(tmp_path: Path) -> None:
    obstore = pytest.importorskip("obstore.store")

    def script(zk: Any, root: Path) -> Any:
        (root / "data").mkdir()
        store = zk.storage.ObjectStore(obstore.LocalStore(root / "data"))
        values = write_and_read(zk, store).tolist()
        reader = zk.storage.ObjectStore(obstore.LocalStore(root / "data"), read_only=True)
        return (
            values,
            np.asarray(zk.open_array(reader)[...]).tolist(),
            reader.read_only,
            isinstance(reader, zk.storage.ObjectStore),
        )

    theirs, ours = both(script, tmp_path)
    assert ours == theirs
    assert files(tmp_path / "zarrkit" / "data") == files(tmp_path / "zarr" / "data")


def test_a_dict_given_to_memory_store_holds_the_data() -> None:
    """zarr-python keeps `Buffer`s in the dict, zarrkit bytes (docs/zarr-python.md);
    both use the dict they were given."""
    for zk in (zarr, zarrkit):
        data: dict[str, Any] = {}
        write_and_read(zk, zk.storage.MemoryStore(data))
        assert "zarr.json" in data and "c/0/0" in data
    assert isinstance(data["zarr.json"], bytes)


def test_a_face_builds_the_store_plugin_it_names() -> None:
    store = zarrkit.storage.MemoryStore()
    assert isinstance(store, zarrkit.abc.Store)
    assert type(store) is zarrkit.registry.lookup("store", "memory")
    assert issubclass(type(store), zarrkit.storage.MemoryStore)


# -- StorePath (issue 42, item 3) ------------------------------------------------------------------
@LIBRARIES
def test_a_store_path_is_a_place_in_a_store_and_taken_as_a_store(zk: Any, tmp_path: Path) -> None:
    """zarr-python's `StorePath`: `/` joins, its coroutines act on the key it names, and a
    function given it as `store` works at its path."""
    import asyncio

    local = zk.storage.LocalStore(str(tmp_path / zk.__name__))
    root = zk.storage.StorePath(local, "data")
    assert (root.path, (root / "a" / "b").path) == ("data", "data/a/b")
    assert root.store == local and root / "a" == zk.storage.StorePath(local, "data/a")
    assert repr(root / "a") == f"StorePath(LocalStore, 'file://{tmp_path / zk.__name__}/data/a')"
    np.testing.assert_array_equal(write_and_read(zk, root / "a"), DATA)
    assert zk.open_array(local, path="data/a", mode="r")[1, 2] == DATA[1, 2]
    assert files(tmp_path / zk.__name__) >= {"data/a/zarr.json", "data/a/c/1/0"}

    async def keys() -> tuple[bool, bool, bytes | None]:
        note = root / "note"
        value = zarr.core.buffer.cpu.Buffer.from_bytes(b"hello")
        await note.set(value)
        there, absent = await note.exists(), await (root / "nothing").exists()
        got = await note.get(zarr.core.buffer.default_buffer_prototype())
        await note.delete()
        gone = await note.get(zarr.core.buffer.default_buffer_prototype())
        assert gone is None and not await note.exists()
        return there, absent, None if got is None else got.to_bytes()

    assert asyncio.run(keys()) == (True, False, b"hello")


@LIBRARIES
def test_store_path_open_modes(zk: Any, tmp_path: Path) -> None:
    import asyncio

    url = str(tmp_path / zk.__name__)
    zk.create_group(url, path="g")
    with pytest.raises(FileExistsError, match="'g' with mode 'w-' because it already contains"):
        asyncio.run(zk.storage.StorePath.open(zk.storage.LocalStore(url), path="g", mode="w-"))
    # no mode changes the store: "w" leaves what is there (as zarr-python documents)
    kept = asyncio.run(zk.storage.StorePath.open(zk.storage.LocalStore(url), path="g", mode="w"))
    assert kept.path == "g" and asyncio.run((kept / "zarr.json").exists())
