"""A store in one zip archive: `zip:///path/data.zip` or `ZipStore("data.zip", mode="a")`.

A zip member cannot be replaced in place, and appending a second member of the same name only
hides the first (zarr-python warns about that). So writes never touch the archive:

- `set` / `erase` are recorded in this process (values in an unnamed scratch file), and every
  read here sees them at once;
- `flush()` (and `close()`, and as a safety net the last handle's garbage collection or the end
  of the interpreter) writes a complete new archive beside the old one, fsyncs it and renames it
  over the old one. Each key appears once, so rewriting a chunk is just another `set`.

A writer killed at any moment leaves the archive as it was at the last flush, every chunk its
old or its new value and the archive always readable; the only trace is a `.*.partial` file
beside it. Readers, in this process or others, see one flushed archive at a time: a reader
notices a new archive on its next read (one `stat` per call) and switches to it.

All handles on one path in a process share their pending changes. Two processes writing one
archive at once is not supported: the last flush wins (neither archive is torn).

A handle opened for reading pickles (as its path and options; the unpickled one opens the
archive on first use). One opened for writing pickles too, but unpickles only in the process
that pickled it (a copy, `copy.deepcopy`, zarr-python's store checks), where it shares the
pending changes like any other handle on the path: elsewhere they do not exist, and another
process flushing its own would lose them, so unpickling there is a `StoreError`. A child forked from a writer
starts without the parent's pending changes (it reads the archive as last flushed, and can
never publish the parent's unflushed writes), with its own file handles and locks.

Members are stored uncompressed by default (chunks are already compressed by their codecs), so
a byte range is one `pread`. Archives from elsewhere may use deflate, bzip2 or lzma; those
members are decompressed whole, a block at a time and never past what the archive's index
says the member holds (a member that inflates further is a `ValueTooLargeError`: a bomb stops
one byte past its declared size), nor past the read's `value_limit()` (the chunk engine sets
it from the chunk's size): a member declaring more is refused before anything is inflated.
ZIP64 is written when an archive needs it (over 65535 members or 4 GiB) and read always.
Member names that are not valid keys (`../x`, `/x`, directories) can never be read through the
store and are not listed, but a flush keeps them.
"""

from __future__ import annotations

import builtins
import bz2
import io
import lzma
import os
import struct
import tempfile
import time
import weakref
import zipfile
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Protocol

from zarrkit.abc import (
    Range,
    Store,
    StoreCapabilities,
    at_fork,
    check_key,
    check_prefix,
    is_valid_key,
    names,
    rlock,
    value_limit,
)
from zarrkit.errors import StoreError, ValueTooLargeError
from zarrkit.plugins.stores.local.fileops import fsync_dir as _fsync_dir
from zarrkit.plugins.stores.local.fileops import remove_quietly as _remove_quietly

_COMPRESSION = {
    "stored": zipfile.ZIP_STORED,
    "deflate": zipfile.ZIP_DEFLATED,
    "bzip2": zipfile.ZIP_BZIP2,
    "lzma": zipfile.ZIP_LZMA,
}
_LOCAL_HEADER = struct.Struct("<4s22xHH")  # signature ... name length, extra length
_BLOCK = 1 << 20
#: compressed bytes fed to a decompressor at a time (its output is capped separately)
_FEED = 64 * 1024


class ZipStore(Store):
    names = names("zip")
    #: (a compressed member is read from its start, whatever range is asked of it)
    capabilities = StoreCapabilities(range_reads=False)

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        mode: str = "r",
        compression: str = "stored",
        fsync: bool = True,
    ) -> None:
        self.capabilities = self.capabilities.opened(mode)
        if compression not in _COMPRESSION:
            raise ValueError(
                f"compression must be one of {sorted(_COMPRESSION)}, got {compression!r}"
            )
        self.path = Path(path).absolute()
        #: the path as the caller wrote it, which is what prints (zarr-python's `zip://data.zip`)
        self._shown = Path(path)
        self.compression = _COMPRESSION[compression]
        self.fsync = fsync
        self._acquire()

    def _acquire(self) -> _Archive:
        archive = self._archive = _Archive.acquire(self.path)
        self._release = weakref.finalize(self, archive.release)
        if self.read_only and not archive.known():
            self._release()
            raise StoreError("no zip archive there", store=self, operation="open")
        return archive

    def __getattr__(self, name: str) -> Any:
        """An unpickled handle acquires its archive on first use (see `__reduce__`)."""
        if name == "_archive" and "path" in self.__dict__:
            return self._acquire()
        raise AttributeError(name)

    def __reduce__(self) -> tuple[Any, ...]:
        compression = next(k for k, v in _COMPRESSION.items() if v == self.compression)
        if not self.read_only:  # (the writer's process: only there do its pending changes live)
            return _unpickle_writer, (self.path, compression, self.fsync, os.getpid())
        return _unpickle, (self.path, compression, self.fsync)

    @classmethod
    def from_url(cls, url: str, *, mode: str = "r", **options: Any) -> ZipStore:
        """`zip://relative/x.zip` or `zip:///absolute/x.zip`."""
        if not url.startswith("zip://") or url == "zip://":
            raise ValueError(f"a zip store URL looks like zip:///path/to/data.zip, got {url!r}")
        return cls(url[len("zip://") :], mode=mode, **options)

    @property
    def url(self) -> str:
        return f"zip://{self.path}"

    # -- publishing ------------------------------------------------------------------------------
    def flush(self) -> None:
        """Write the pending changes as a new archive, atomically replacing the old one."""
        self._archive.flush(self.fsync, self)

    def close(self) -> None:
        """Flush, then let go of the archive (closing it once no handle in this process uses it)."""
        release = self.__dict__.get("_release")
        if release is not None and release.alive:
            try:
                if not self.read_only:
                    self.flush()
            finally:
                release()

    # -- readable --------------------------------------------------------------------------------
    def get(self, key: str, byte_range: Range | None = None) -> bytes | None:
        source = self._archive.locate(check_key(key), self)
        return None if source is None else source.read(key, byte_range, self)

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes]:
        sources = self._archive.locate_many([check_key(k) for k in keys], self)
        return {k: s.read(k, None, self) for k, s in sources.items() if s is not None}

    def get_ranges(self, requests: Sequence[tuple[str, Range | None]]) -> list[bytes | None]:
        sources = self._archive.locate_many([check_key(k) for k, _ in requests], self)
        return [_read(sources[k], k, r, self) for k, r in requests]

    def exists(self, key: str) -> bool:
        return self._archive.locate(check_key(key), self) is not None

    # -- writeable -------------------------------------------------------------------------------
    def set(self, key: str, value: Any) -> None:
        self.set_many({key: value})

    def set_many(self, items: Mapping[str, Any]) -> None:
        """All keys are checked before any value is recorded."""
        self.require("write", "set keys")
        values = [(check_key(k), _bytes_view(v)) for k, v in items.items()]
        self._archive.record(values, self.compression, self)

    def erase(self, key: str) -> None:
        self.require("write", f"erase {key!r}")
        self._archive.erase([check_key(key)], self)

    def erase_many(self, keys: Iterable[str]) -> None:
        self.require("write", "erase keys")
        self._archive.erase([check_key(k) for k in keys], self)

    def erase_prefix(self, prefix: str) -> None:
        self.require("write", f"erase prefix {prefix!r}")
        check_prefix(prefix)
        self._archive.erase(self._archive.keys(self, prefix), self)

    # -- listable --------------------------------------------------------------------------------
    def list(self) -> Iterator[str]:
        return iter(self._archive.keys(self))

    def list_prefix(self, prefix: str) -> Iterator[str]:
        return iter(self._archive.keys(self, prefix))

    def list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        return super().list_dir(check_prefix(prefix))

    # -- identity --------------------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ZipStore):
            return NotImplemented
        return self._archive is other._archive

    def __hash__(self) -> int:
        return hash(self.path)

    def __str__(self) -> str:
        # zarr-python's form: the path as given, `zip://data.zip` or `zip:///absolute/x.zip`
        return f"zip://{self.__dict__.get('_shown', self.path).as_posix()}"

    def __repr__(self) -> str:
        return f"ZipStore('{self}')"


def _unpickle(path: Path, compression: str, fsync: bool) -> ZipStore:
    """A read-only handle that acquires its archive when first used."""
    store = ZipStore.__new__(ZipStore)
    store.capabilities = ZipStore.capabilities.opened("r")
    store.path, store.compression, store.fsync = path, _COMPRESSION[compression], fsync
    return store


def _unpickle_writer(path: Path, compression: str, fsync: bool, pid: int) -> ZipStore:
    """A writing handle again, in the process that pickled it (sharing its pending changes)."""
    if pid != os.getpid():
        raise StoreError(
            "a zip store open for writing unpickles only in the process that pickled it: "
            "its pending changes live there. Write from one process, flush() or close() it, "
            "then pickle a handle opened with mode='r'",
            store=f"zip://{path}",
            operation="unpickle",
        )
    return ZipStore(path, mode="a", compression=compression, fsync=fsync)


# == the archive and its pending changes, shared by the handles of one process ====================
class _Archive:
    _open: ClassVar[dict[Path, _Archive]] = {}
    #: reentrant: a handle the garbage collector finalizes releases its archive from whatever
    #: the thread was doing, and that may be `acquire` or `release` with this lock held (a
    #: plain lock hung the test run there: a handle left in a cycle by a failed open, collected
    #: while the next store was being opened)
    _open_lock = rlock()

    @classmethod
    def acquire(cls, path: Path) -> _Archive:
        with cls._open_lock:
            archive = cls._open.get(path)
            if archive is None:
                archive = cls._open[path] = cls(path)
            archive._handles += 1
            return archive

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = rlock()
        self._handles = 0
        self._disk: _Disk | None = None
        self._scratch = _Scratch(path.parent if path.parent.is_dir() else None)
        self._pending: dict[str, tuple[int, int, int]] = {}  # key -> (offset, size, compression)
        self._erased: set[str] = set()
        self._dirty = False

    @classmethod
    def _after_fork(cls) -> None:
        """In a forked child: the parent's pending changes are the parent's to publish (a child
        flushing them, late, would undo what the parent wrote since), and the open archive
        file shares its position with the parent's, so each is dropped and reopened anew."""
        for archive in cls._open.values():
            archive._pending.clear()
            archive._erased.clear()
            archive._dirty = False
            archive._scratch = _Scratch(archive._scratch.directory)
            archive._disk = None

    def release(self) -> None:
        """One handle fewer; the last one flushes what is pending (if anything) and closes."""
        with _Archive._open_lock:
            self._handles -= 1
            last = self._handles == 0
            if last:
                del _Archive._open[self.path]
        if last:
            self.flush(True, None)

    def known(self) -> bool:
        """Whether there is an archive to read: on disk, or being written in this process."""
        with self._lock:
            return self._handles > 1 or self._dirty or self._current(None) is not None

    # -- reading ---------------------------------------------------------------------------------
    def _current(self, store: Store | None) -> _Disk | None:
        """The archive on disk now (reopened when another writer replaced it)."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            self._disk = None
            return None
        identity = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        if self._disk is None or self._disk.identity != identity:
            self._disk = _Disk(self.path, store)
        return self._disk

    def locate(self, key: str, store: Store) -> _Source | None:
        return self.locate_many([key], store)[key]

    def locate_many(self, keys: list[str], store: Store) -> dict[str, _Source | None]:
        with self._lock:
            disk = self._current(store)
            out: dict[str, _Source | None] = {}
            for key in keys:
                pending = self._pending.get(key)
                if pending is not None:
                    out[key] = _Pending(self._scratch, pending[0], pending[1])
                elif disk is not None and key not in self._erased and key in disk.members:
                    out[key] = _Member(disk, disk.members[key])
                else:
                    out[key] = None
            return out

    def keys(self, store: Store, prefix: str = "") -> list[str]:
        with self._lock:
            disk = self._current(store)
            on_disk = (
                []
                if disk is None
                else [k for k in disk.members if k not in self._erased and k not in self._pending]
            )
            return [k for k in [*on_disk, *self._pending] if k.startswith(prefix)]

    # -- recording changes -------------------------------------------------------------------------
    def record(self, values: list[tuple[str, memoryview]], compression: int, store: Store) -> None:
        with self._lock:
            for key, data in values:
                offset = self._scratch.append(data, store)
                self._pending[key] = (offset, data.nbytes, compression)
                self._erased.discard(key)
            self._dirty = True

    def erase(self, keys: list[str], store: Store) -> None:
        with self._lock:
            disk = self._current(store)
            for key in keys:
                if self._pending.pop(key, None) is not None:
                    self._dirty = True
                if disk is not None and key in disk.members and key not in self._erased:
                    self._erased.add(key)
                    self._dirty = True

    # -- flushing ------------------------------------------------------------------------------------
    def flush(self, fsync: bool, store: Store | None) -> None:
        with self._lock:
            if not self._dirty:
                return
            disk = self._current(store)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.parent / f".{self.path.name}.{os.urandom(8).hex()}.partial"
            try:
                with open(tmp, "xb") as f:
                    self._write(f, disk, store)
                    if fsync:
                        f.flush()
                        os.fsync(f.fileno())
                os.replace(tmp, self.path)
            except BaseException as exc:
                _remove_quietly(tmp)
                if isinstance(exc, OSError):
                    raise StoreError(str(exc), store=store, operation="flush") from exc
                raise
            if fsync:
                _fsync_dir(self.path.parent)
            self._pending.clear()
            self._erased.clear()
            self._dirty = False
            self._scratch = _Scratch(self.path.parent)
            self._disk = None  # the new archive is opened when next read

    def _write(self, f: io.BufferedWriter, disk: _Disk | None, store: Store | None) -> None:
        now = time.localtime(time.time())[:6]
        with zipfile.ZipFile(f, "w", allowZip64=True) as out:
            if disk is not None:
                for info in disk.infos:
                    if info.filename not in self._erased and info.filename not in self._pending:
                        _copy_member(disk, info, out, store)
            for key, (offset, size, compression) in self._pending.items():
                info = zipfile.ZipInfo(key, date_time=now)
                info.compress_type = compression
                info.file_size = size
                info.external_attr = 0o644 << 16
                if size <= _BLOCK:
                    out.writestr(info, self._scratch.read(offset, size, store))
                    continue
                with out.open(info, "w") as dst:  # a large value: streamed, never held whole
                    for start in range(0, size, _BLOCK):
                        dst.write(
                            self._scratch.read(offset + start, min(_BLOCK, size - start), store)
                        )


def _copy_member(
    disk: _Disk, info: zipfile.ZipInfo, out: zipfile.ZipFile, store: Store | None
) -> None:
    """Copy one member (recompressed as it was), streaming, so no member is held whole."""
    copy = zipfile.ZipInfo(info.filename, date_time=info.date_time)
    copy.compress_type = info.compress_type
    copy.external_attr = info.external_attr
    copy.comment = info.comment
    copy.file_size = info.file_size
    if info.is_dir() or info.file_size <= _BLOCK:
        out.writestr(copy, b"".join(disk.stream(info, store)))
        return
    with out.open(copy, "w") as dst:
        for block in disk.stream(info, store):
            dst.write(block)


# == what a key's value is read from ===============================================================
class _Source:
    def read(self, key: str, rng: Range | None, store: Store) -> bytes:
        raise NotImplementedError


class _Pending(_Source):
    __slots__ = ("offset", "scratch", "size")

    def __init__(self, scratch: _Scratch, offset: int, size: int) -> None:
        self.scratch, self.offset, self.size = scratch, offset, size

    def read(self, key: str, rng: Range | None, store: Store) -> bytes:
        part = slice(0, self.size) if rng is None else rng.slice(self.size)
        return self.scratch.read(self.offset + part.start, max(0, part.stop - part.start), store)


class _Member(_Source):
    __slots__ = ("disk", "info")

    def __init__(self, disk: _Disk, info: zipfile.ZipInfo) -> None:
        self.disk, self.info = disk, info

    def read(self, key: str, rng: Range | None, store: Store) -> bytes:
        return self.disk.read(self.info, rng, store)


class _Scratch:
    """An unnamed temporary file the pending values are appended to (gone when closed, or when
    the process dies)."""

    def __init__(self, directory: Path | None) -> None:
        self.fd = -1
        self.directory = directory
        self.end = 0

    def append(self, data: memoryview, store: Store) -> int:
        if self.fd < 0:
            fd, name = tempfile.mkstemp(
                prefix=".zarrkit-zip-", suffix=".scratch", dir=self.directory
            )
            os.unlink(name)
            self.fd = fd
        offset = self.end
        try:
            written = 0
            while written < data.nbytes:
                written += os.pwrite(self.fd, data[written:], offset + written)
        except OSError as exc:
            raise StoreError(str(exc), store=store, operation="write") from exc
        self.end += data.nbytes
        return offset

    def read(self, offset: int, size: int, store: Store | None) -> bytes:
        return _pread(self.fd, size, offset) if size else b""

    def __del__(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)


class _Disk:
    """One archive file as opened: its central directory and a handle to read members."""

    def __init__(self, path: Path, store: Store | None) -> None:
        try:
            self.file = open(path, "rb")  # noqa: SIM115  (the archive reads through it until close())
        except OSError as exc:
            raise StoreError(str(exc), store=store, operation="open") from exc
        st = os.fstat(self.file.fileno())
        self.identity = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        try:
            self.zip = zipfile.ZipFile(self.file)
        except (zipfile.BadZipFile, OSError, ValueError) as exc:
            self.file.close()
            raise StoreError(
                f"not a readable zip archive ({exc})", store=store, operation="open"
            ) from exc
        self.infos = self.zip.infolist()
        self.members: dict[str, zipfile.ZipInfo] = {}
        for info in self.infos:  # a later member of one name hides an earlier one, as in zipfile
            if is_valid_key(info.filename):
                self.members[info.filename] = info
        self._data_offsets: dict[str, int] = {}

    def __del__(self) -> None:
        file = getattr(self, "file", None)
        if file is not None:
            file.close()

    def read(self, info: zipfile.ZipInfo, rng: Range | None, store: Store | None) -> bytes:
        key = info.filename
        if info.flag_bits & 0x1:
            raise StoreError("the member is encrypted", key=key, store=store, operation="read")
        limit = value_limit()
        if info.compress_type != zipfile.ZIP_STORED:
            if info.file_size > limit:
                raise ValueTooLargeError(
                    f"the member declares {info.file_size} bytes, more than "
                    f"the {limit} bytes the read can hold",
                    key=key,
                    store=store,
                    operation="read",
                )
            data = b"".join(self._inflate(info, store))
            return data if rng is None else data[rng.slice(len(data))]
        start = self._data_offset(info, store)
        self._check_span(info, start, store)
        part = slice(0, info.file_size) if rng is None else rng.slice(info.file_size)
        size = max(0, part.stop - part.start)
        if size > limit:
            raise ValueTooLargeError(
                f"{size} bytes asked of the member, more than the {limit} bytes the read can hold",
                key=key,
                store=store,
                operation="read",
            )
        data = _pread(self.file.fileno(), size, start + part.start)
        if len(data) != size:
            raise StoreError("the archive is truncated", key=key, store=store, operation="read")
        if rng is None and zlib.crc32(data) != info.CRC:
            raise StoreError(
                "CRC-32 mismatch: the member is corrupt", key=key, store=store, operation="read"
            )
        return data

    def stream(self, info: zipfile.ZipInfo, store: Store | None) -> Iterator[bytes]:
        if info.flag_bits & 0x1:
            raise StoreError(
                "the member is encrypted", key=info.filename, store=store, operation="read"
            )
        if info.compress_type != zipfile.ZIP_STORED:
            yield from self._inflate(info, store)
            return
        start = self._data_offset(info, store)
        self._check_span(info, start, store)
        for offset in range(0, info.file_size, _BLOCK):
            yield _pread(self.file.fileno(), min(_BLOCK, info.file_size - offset), start + offset)

    def _check_span(self, info: zipfile.ZipInfo, start: int, store: Store | None) -> None:
        """A member's stored bytes lie inside the archive (a size field may lie)."""
        if start + info.compress_size > self.identity[2]:
            raise StoreError(
                f"the member claims {info.compress_size} stored bytes at offset "
                f"{start}, past the end of the {self.identity[2]}-byte archive",
                key=info.filename,
                store=store,
                operation="read",
            )

    def _inflate(self, info: zipfile.ZipInfo, store: Store | None) -> Iterator[bytes]:
        """A compressed member's bytes, a block at a time, checked against the index: never
        more than `info.file_size` bytes are produced (one more is the error), and what comes
        out must be exactly that long and match the CRC-32."""
        key = info.filename
        start = self._data_offset(info, store)
        self._check_span(info, start, store)
        try:
            inflater = _inflater(info.compress_type, self.file.fileno(), start)
        except (NotImplementedError, lzma.LZMAError, ValueError) as exc:
            raise StoreError(
                f"cannot decompress the member ({exc})", key=key, store=store, operation="read"
            ) from exc
        offset = start + inflater.header
        end = start + info.compress_size
        produced = crc = 0
        try:
            while not inflater.eof:
                if inflater.needs_input:
                    if offset >= end:
                        raise StoreError(
                            "the compressed data ends early", key=key, store=store, operation="read"
                        )
                    fed = os.pread(self.file.fileno(), min(_FEED, end - offset), offset)
                    offset += len(fed)
                else:
                    fed = b""
                block = inflater.decompress(fed, min(_BLOCK, info.file_size + 1 - produced))
                produced += len(block)
                if produced > info.file_size:
                    raise ValueTooLargeError(
                        f"the member inflates to more than the "
                        f"{info.file_size} bytes the archive's index says",
                        key=key,
                        store=store,
                        operation="read",
                    )
                crc = zlib.crc32(block, crc)
                if block:
                    yield block
        except (zlib.error, lzma.LZMAError, OSError, EOFError) as exc:
            raise StoreError(
                f"cannot decompress the member ({type(exc).__name__}: {exc})",
                key=key,
                store=store,
                operation="read",
            ) from exc
        if produced != info.file_size:
            raise StoreError(
                f"the member inflates to {produced} bytes, not the "
                f"{info.file_size} the archive's index says",
                key=key,
                store=store,
                operation="read",
            )
        if crc != info.CRC:
            raise StoreError(
                "CRC-32 mismatch: the member is corrupt", key=key, store=store, operation="read"
            )

    def _data_offset(self, info: zipfile.ZipInfo, store: Store | None) -> int:
        offset = self._data_offsets.get(info.filename)
        if offset is None or self.members.get(info.filename) is not info:
            header = _pread(self.file.fileno(), _LOCAL_HEADER.size, info.header_offset)
            if len(header) != _LOCAL_HEADER.size:
                raise StoreError(
                    "the archive is truncated", key=info.filename, store=store, operation="read"
                )
            signature, name_length, extra_length = _LOCAL_HEADER.unpack(header)
            if signature != b"PK\x03\x04":
                raise StoreError(
                    "bad local file header", key=info.filename, store=store, operation="read"
                )
            offset = info.header_offset + _LOCAL_HEADER.size + name_length + extra_length
            if self.members.get(info.filename) is info:
                self._data_offsets[info.filename] = offset
        return offset


class _Inflater(Protocol):
    header: int  # bytes before the compressed stream (lzma's properties)

    @property
    def eof(self) -> bool: ...

    @property
    def needs_input(self) -> bool: ...

    def decompress(self, data: bytes, max_length: int) -> bytes: ...


class _Zlib:
    """zlib's raw inflater with the interface of bz2's and lzma's decompressors."""

    header = 0

    def __init__(self) -> None:
        self._inflate = zlib.decompressobj(-15)
        self.needs_input = True

    @property
    def eof(self) -> bool:
        return self._inflate.eof

    def decompress(self, data: bytes, max_length: int) -> bytes:
        out = self._inflate.decompress(self._inflate.unconsumed_tail + data, max_length)
        self.needs_input = not self._inflate.unconsumed_tail and len(out) < max_length
        return out


class _Lzma:
    """A zip member's LZMA stream: a 4-byte header, the filter properties, then raw LZMA1."""

    def __init__(self, fd: int, start: int) -> None:
        head = _pread(fd, 4, start)
        if len(head) != 4:
            raise ValueError("truncated LZMA header")
        size = struct.unpack("<H", head[2:4])[0]
        props = _pread(fd, size, start + 4)
        if len(props) != size:
            raise ValueError("truncated LZMA properties")
        self.header = 4 + size
        # (the properties' parser is private in lzma; zipfile uses it the same way)
        decode = lzma._decode_filter_properties  # type: ignore[attr-defined]
        self._lzma = lzma.LZMADecompressor(
            lzma.FORMAT_RAW, filters=[decode(lzma.FILTER_LZMA1, props)]
        )

    @property
    def eof(self) -> bool:
        return self._lzma.eof

    @property
    def needs_input(self) -> bool:
        return self._lzma.needs_input

    def decompress(self, data: bytes, max_length: int) -> bytes:
        return self._lzma.decompress(data, max_length)


class _Bz2:
    header = 0

    def __init__(self) -> None:
        self._bz2 = bz2.BZ2Decompressor()

    @property
    def eof(self) -> bool:
        return self._bz2.eof

    @property
    def needs_input(self) -> bool:
        return self._bz2.needs_input

    def decompress(self, data: bytes, max_length: int) -> bytes:
        return self._bz2.decompress(data, max_length)


def _inflater(compress_type: int, fd: int, start: int) -> _Inflater:
    """A decompressor whose output per call is capped (zipfile's are not, for bzip2 and lzma:
    a few kB of a bzip2 bomb inflate to gigabytes in one call there)."""
    if compress_type == zipfile.ZIP_DEFLATED:
        return _Zlib()
    if compress_type == zipfile.ZIP_BZIP2:
        return _Bz2()
    if compress_type == zipfile.ZIP_LZMA:
        return _Lzma(fd, start)
    raise NotImplementedError(f"compression method {compress_type} is not supported")


at_fork(_Archive._after_fork)


def _read(source: _Source | None, key: str, rng: Range | None, store: Store) -> bytes | None:
    return None if source is None else source.read(key, rng, store)


def _bytes_view(value: Any) -> memoryview:
    """Any buffer as flat bytes in C order, copying only when the layout demands it."""
    view = memoryview(value)
    return view.cast("B") if view.c_contiguous else memoryview(view.tobytes())


def _pread(fd: int, size: int, offset: int) -> bytes:
    chunks = []
    while size > 0:
        chunk = os.pread(fd, size, offset)
        if not chunk:
            break
        chunks.append(chunk)
        size -= len(chunk)
        offset += len(chunk)
    return b"".join(chunks) if len(chunks) != 1 else chunks[0]
