"""The `blosc` codec (bytes -> bytes), through numcodecs' blosc, which releases the GIL, and
python-blosc where installed for decoding into a buffer (`_python_blosc_into`).

Blosc's shuffle works on elements of `typesize` bytes. Stored metadata must name it; when a
user leaves it (or the shuffle) out, `evolve` fills it in from the data type.

Blosc's own threads stay off (`_leave_threads_to_the_engine`): zarrkit spreads chunks over
its own threads (the `threads` setting), and the caller of a read or write works through a
share of the chunks itself. numcodecs' default (`use_threads = None`) gives calls made on the
main thread blosc's global context, with its pool of up to 8 threads (one per core) and a
global lock, and calls from other threads a context of one thread. A parallel read of chunks
of several blosc blocks then ran blosc's pool beside zarrkit's other worker: more threads than
cores, woken and put to sleep on every chunk, and the caller's encodes took numcodecs' lock.
One thread per call is what every chunk already got on the engine's other threads. A user's
explicit `numcodecs.blosc.use_threads` (True or False) is left as it is.
"""

from __future__ import annotations

import ctypes
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from numcodecs import blosc

from zarrkit.abc import (
    V3,
    BytesBytesCodec,
    BytesBytesDecodeInto,
    ChunkSpec,
    Codec,
    as_bytes_view,
    check_known_fields,
    config_value,
    decoded_too_large,
    names,
)
from zarrkit.errors import ChunkDecodeError, CodecChainError, MetadataError
from zarrkit.plugins.codecs.codec_ids import draft_uri

_SHUFFLES = {"noshuffle": 0, "shuffle": 1, "bitshuffle": 2}
#: numcodecs (v2, the draft) writes the shuffle as an int; -1 means "by the element size"
_SHUFFLE_CODES = {**_SHUFFLES, "auto": -1}
_CNAMES = ("lz4", "lz4hc", "blosclz", "zstd", "snappy", "zlib")
#: blosc's worst case: a header and the data stored as it is (BLOSC_MAX_OVERHEAD)
_MAX_OVERHEAD = 16
_HEADER_SIZE = 16  # version, versionlz, flags, typesize, then nbytes, blocksize, cbytes (u32 LE)


def _leave_threads_to_the_engine() -> None:
    """numcodecs' blosc with one thread per call, unless the user chose (see the docstring).
    zarr-python sets the same on import of its blosc codec, unconditionally."""
    if blosc.use_threads is None:
        blosc.use_threads = False


_leave_threads_to_the_engine()


def _python_blosc_into() -> Callable[[Any, memoryview], None] | None:
    """Decoding into a caller's buffer through python-blosc (None: not installed).

    Both bindings run the same c-blosc; they differ in the work around a call, done with the
    GIL held: numcodecs checks the destination in Python, python-blosc takes an address. On
    two threads the GIL-held part of each chunk is what the other thread waits for, so the
    lighter call reads a blosc array faster (bench/README.md). python-blosc keeps two
    settings per process, both set here for what the engine needs: the GIL released while
    c-blosc decodes (it then decodes with a context of its own per call, not under c-blosc's
    global lock), and one thread per call (its default is one per core, started for each
    call of a chunk of several blocks)."""
    try:
        import blosc as python_blosc
    except ImportError:
        return None
    python_blosc.set_releasegil(True)
    python_blosc.set_nthreads(1)
    decompress_ptr = python_blosc.decompress_ptr
    char, address = ctypes.c_char, ctypes.addressof

    def into(view: Any, out: memoryview) -> None:
        decompress_ptr(view, address(char.from_buffer(out)))

    return into


_decode_into = _python_blosc_into()


@dataclass(frozen=True, eq=False)
class BloscCodec(BytesBytesCodec, BytesBytesDecodeInto):
    names = names("blosc", v2="blosc", draft=draft_uri("blosc"))
    releases_gil = True
    cname: str = "zstd"
    clevel: int = 5
    shuffle: str | None = None
    typesize: int | None = None
    blocksize: int = 0
    #: read from numcodecs' form (v2, the draft), where the element size of the chunk is the
    #: typesize, so none has to be stored
    numcodecs_form: bool = field(default=False, repr=False, compare=False)

    @classmethod
    def from_json(cls, name: str, configuration: Mapping[str, Any], format: str = V3) -> BloscCodec:
        if format != V3:
            return cls._from_numcodecs(configuration)
        owner = "blosc codec"
        check_known_fields(
            configuration, {"cname", "clevel", "shuffle", "typesize", "blocksize"}, owner=owner
        )
        codec = cls(
            cname=config_value(
                configuration, "cname", str, owner=owner, choices=_CNAMES, default="zstd"
            ),
            clevel=config_value(
                configuration, "clevel", int, owner=owner, choices=tuple(range(10)), default=5
            ),
            shuffle=config_value(
                configuration, "shuffle", str, owner=owner, choices=tuple(_SHUFFLES), default=None
            ),
            typesize=config_value(configuration, "typesize", int, owner=owner, default=None),
            blocksize=config_value(configuration, "blocksize", int, owner=owner, default=0),
        )
        return codec._checked()

    def _checked(self) -> BloscCodec:
        """Refuse sizes c-blosc cannot take (they are C ints): numcodecs raised OverflowError
        on the first write for a blocksize of 2**31, RuntimeError for a typesize of 2**31."""
        if self.typesize is not None and not 1 <= self.typesize < 2**31:
            raise MetadataError(
                f"blosc codec: 'typesize' must be an integer from 1 to "
                f"2**31 - 1, got {self.typesize}",
                field="configuration.typesize",
            )
        if not 0 <= self.blocksize < 2**31:
            raise MetadataError(
                f"blosc codec: 'blocksize' must be an integer from 0 (automatic) "
                f"to 2**31 - 1, got {self.blocksize}",
                field="configuration.blocksize",
            )
        return self

    @classmethod
    def _from_numcodecs(cls, configuration: Mapping[str, Any]) -> BloscCodec:
        """numcodecs' form: an int shuffle, its defaults (lz4, 5, shuffle), no typesize (the
        element size of the chunk is used, as numcodecs takes it from the array it is given)."""
        owner = "blosc codec"
        check_known_fields(
            configuration, {"cname", "clevel", "shuffle", "blocksize", "typesize"}, owner=owner
        )
        codes = {code: label for label, code in _SHUFFLE_CODES.items()}
        shuffle = config_value(
            configuration, "shuffle", int, owner=owner, choices=tuple(codes), default=1
        )
        return cls(
            cname=config_value(
                configuration, "cname", str, owner=owner, choices=_CNAMES, default="lz4"
            ),
            clevel=config_value(
                configuration, "clevel", int, owner=owner, choices=tuple(range(10)), default=5
            ),
            shuffle=codes[shuffle],
            typesize=config_value(
                configuration, "typesize", (int, type(None)), owner=owner, default=None
            ),
            blocksize=config_value(configuration, "blocksize", int, owner=owner, default=0),
            numcodecs_form=True,
        )._checked()

    def __repr__(self) -> str:
        # zarr-python's text: its fields in its order, led by `_tunable_attrs`, the fields
        # still to be chosen from the data type (empty once an array has chosen them)
        tunable = [f for f in ("shuffle", "typesize") if getattr(self, f) is None]
        shown = "{" + ", ".join(map(repr, tunable)) + "}" if tunable else "set()"
        return (
            f"BloscCodec(_tunable_attrs={shown}, "
            f"typesize={self.typesize!r}, cname={self.cname!r}, clevel={self.clevel!r}, "
            f"shuffle={self.shuffle!r}, blocksize={self.blocksize!r})"
        )

    def validate(self, spec: ChunkSpec) -> None:
        # a stored chain must say how it shuffles, and how wide the elements are; a new one
        # gets both from evolve()
        if self.shuffle is None:
            raise CodecChainError("blosc codec: 'shuffle' is required", field="codecs")
        if (
            self.shuffle not in ("noshuffle", "auto")
            and not self.typesize
            and not self.numcodecs_form
        ):
            raise CodecChainError(
                "blosc codec: 'typesize' is required unless shuffle is 'noshuffle'", field="codecs"
            )

    def configuration(self, format: str = V3) -> dict:
        if format != V3:
            # no typesize: numcodecs takes the element size from the array (and versions
            # before 0.16 refuse the field)
            return {
                "cname": self.cname,
                "clevel": self.clevel,
                "shuffle": _SHUFFLE_CODES[self.shuffle or "noshuffle"],
                "blocksize": self.blocksize,
            }
        out = {"cname": self.cname, "clevel": self.clevel, "shuffle": self.shuffle or "noshuffle"}
        if self.typesize is not None:
            out["typesize"] = self.typesize
        out["blocksize"] = self.blocksize
        return out

    def evolve(self, spec: ChunkSpec) -> BloscCodec:
        item = spec.data_type.stored_size or 1
        typesize = self.typesize or item
        shuffle = self.shuffle if self.shuffle not in (None, "auto") else _auto_shuffle(item)
        return BloscCodec(self.cname, self.clevel, shuffle, typesize, self.blocksize)

    def encode(self, data: Any, spec: ChunkSpec) -> bytes:
        item = self.typesize or spec.data_type.stored_size or 1
        shuffle = self.shuffle or "noshuffle"
        if shuffle == "auto":
            shuffle = _auto_shuffle(item)
        out: bytes = blosc.compress(
            data,
            self.cname.encode(),
            self.clevel,
            _SHUFFLES[shuffle],
            self.blocksize,
            typesize=item,
        )
        return out

    def decode(self, data: Any, spec: ChunkSpec) -> bytes:
        view = _flat(data)
        _decoded_size(view)
        out: bytes = blosc.decompress(view)
        return out

    def decode_bounded(self, data: Any, spec: ChunkSpec, max_size: int) -> bytes:
        out: bytes = blosc.decompress(checked_frame(data, max_size, self))
        return out

    def max_encoded_size(self, nbytes: int) -> int:
        return nbytes + _MAX_OVERHEAD

    def decode_into(self, data: Any, out: memoryview, spec: ChunkSpec) -> bool:
        view = _flat(data)
        if _decoded_size(view) != len(out):
            return False
        if _decode_into is not None and len(out):
            _decode_into(view, out)
        elif len(out) < _INTO_FROM:  # small: decoding and copying beats decoding in place
            out[:] = blosc.decompress(view)
        else:
            blosc.decompress(view, out)
        return True


#: decoded sizes from which numcodecs' blosc decodes into the caller's buffer faster than it
#: decodes and copies
_INTO_FROM = 64 << 10

#: a blosc header's sizes (u32 LE): decoded bytes at 4, stored bytes at 12
_SIZES = struct.Struct("<4xI4xI")


def _flat(data: Any) -> Any:
    """A chunk's bytes as one flat buffer: a `bytes` (what stores return) as it is, with no
    view made per chunk."""
    return data if type(data) is bytes else as_bytes_view(data)


def _decoded_size(view: Any) -> int:
    """The decoded size the header of a flat blosc frame gives; the frame refused when the
    header's stored size does not match it (blosc trusts it and would read past a truncated
    buffer)."""
    if len(view) < _HEADER_SIZE:
        raise ChunkDecodeError(f"blosc: {len(view)} bytes is too short for a blosc header")
    nbytes, cbytes = _SIZES.unpack_from(view)
    if cbytes != len(view):
        raise ChunkDecodeError(
            f"blosc: the header gives {cbytes} compressed bytes, the chunk "
            f"has {len(view)} (truncated or corrupt)"
        )
    return nbytes  # type: ignore[no-any-return]


def checked_frame(data: Any, max_size: int, codec: Codec) -> Any:
    """The chunk as one flat buffer, refused when its header does not match its length or
    declares more decoded bytes (which blosc allocates) than `max_size`."""
    view = _flat(data)
    nbytes = _decoded_size(view)
    if nbytes > max_size:
        raise decoded_too_large(codec, max_size, nbytes)
    return view


def _auto_shuffle(item_size: int) -> str:
    """numcodecs' AUTOSHUFFLE: bit shuffle for one-byte elements, byte shuffle otherwise."""
    return "bitshuffle" if item_size == 1 else "shuffle"
