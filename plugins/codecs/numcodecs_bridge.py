"""Every codec in numcodecs' registry, as `numcodecs.<id>` (v3), `<id>` (v2) and the draft URI.

One plugin claims the whole family through name patterns, so a codec numcodecs (or a package
registering into numcodecs' own `numcodecs.codecs` entry points) knows is usable in zarrkit
without a line of code for it. The codec is built by `numcodecs.get_codec` from the
configuration exactly as stored, and written back exactly as given, which is how zarr-python's
`zarr.codecs.numcodecs` reads and writes them.

numcodecs does not say which of Zarr's three kinds a codec is, so two small tables name the
exceptions to "a numcodecs codec compresses bytes": its filters (array -> array) and its codecs
that serialise whole arrays (array -> bytes). What an array -> array codec produces (its dtype,
its fill value, its size) is learnt by encoding the fill value, so a filter that changes the
data type (`astype`, `fixedscaleoffset` with `astype`, `categorize`) or the size (`packbits`)
needs no special case either.

The bridge is `generic`: any codec that names an id itself wins over it, whether first-party
(`numcodecs.bitround` is `plugins/codecs/bitround.py`) or from another package (an LZ4 plugin
that reads `lz4` and `numcodecs.lz4` as aliases), so installing such a package never makes
data the bridge read before ambiguous.
"""

from __future__ import annotations

import inspect
import math
import re
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from zarrkit.abc import (
    V2,
    V3,
    V3_DRAFT_2020,
    ArrayArrayCodec,
    ArrayArrayElementwise,
    ArrayBytesCodec,
    BytesBytesCodec,
    ChunkSpec,
    Codec,
    CodecKind,
    DataType,
    names,
)
from zarrkit.errors import ChunkDecodeError, CodecChainError, MetadataError, ZarrkitError
from zarrkit.helpers import data_type_from_native
from zarrkit.plugins.codecs.codec_ids import DRAFT_PATTERN, draft_id, draft_uri
from zarrkit.plugins.codecs.numcodecs_bounded import BOUNDED, BOUNDED_CHUNKS, max_encoded_size

PREFIX = "numcodecs."
_ID = r"[A-Za-z0-9_.\-]+"

#: numcodecs' filters: they take and give arrays
ARRAY_ARRAY_IDS = frozenset(
    {"astype", "bitround", "categorize", "delta", "fixedscaleoffset", "packbits", "quantize"}
)
#: the filters that map every element on its own, so a part of a chunk decodes alone (partial
#: decoding passes through them); not delta (a running sum), packbits or categorize (object)
ELEMENTWISE_IDS = frozenset({"astype", "bitround", "fixedscaleoffset", "quantize"})
#: numcodecs' codecs that turn a whole array into bytes (object arrays, or shaped numbers)
ARRAY_BYTES_IDS = frozenset(
    {"json2", "msgpack2", "pcodec", "pickle", "vlen-array", "vlen-bytes", "vlen-utf8", "zfpy"}
)
#: compressors whose C code (or the zlib/bz2/lzma/crc32c libraries) runs without the GIL
RELEASES_GIL_IDS = frozenset(
    {"adler32", "blosc", "bz2", "crc32", "crc32c", "gzip", "lz4", "lzma", "zlib", "zstd"}
)
#: checksums: a fixed number of bytes added to their input
FIXED_OVERHEAD = {"adler32": 4, "crc32": 4, "crc32c": 4, "fletcher32": 4, "jenkins_lookup3": 4}
#: constructor parameters that the chunk's data type determines; `evolve` fills them in at
#: creation when left out (as zarr-python does for delta, fixedscaleoffset, quantize, astype,
#: shuffle), so `{"name": "numcodecs.delta"}` is enough to create an array
_FROM_SPEC: dict[str, Callable[[ChunkSpec], Any]] = {
    "dtype": lambda spec: str(spec.dtype),
    "decode_dtype": lambda spec: str(spec.dtype),
    "elementsize": lambda spec: spec.data_type.stored_size,
}
_PROBE = 64  # elements encoded to learn what a filter produces


def known_ids() -> set[str]:
    """Codec ids numcodecs can build here: its registry plus its entry points."""
    from numcodecs import registry

    return set(registry.codec_registry) | set(registry.entries)


def codec_id(name: str, format: str) -> str | None:
    """The numcodecs id a name spells in a format, or None when it spells none."""
    if format == V3:
        return name[len(PREFIX) :] if name.startswith(PREFIX) else None
    if format == V2:
        return name
    if format == V3_DRAFT_2020:
        return draft_id(name)
    return None


def kind_of(cid: str) -> CodecKind:
    if cid in ARRAY_ARRAY_IDS:
        return CodecKind.ARRAY_ARRAY
    if cid in ARRAY_BYTES_IDS:
        return CodecKind.ARRAY_BYTES
    return CodecKind.BYTES_BYTES


@dataclass(frozen=True, eq=False)
class NumcodecsCodec(Codec):
    """A numcodecs codec; `from_json` returns the subclass of its kind."""

    names = names(pattern=re.escape(PREFIX) + _ID, v2_pattern=_ID, draft_pattern=DRAFT_PATTERN)
    generic = True  # answers for every numcodecs id: a codec that names one wins over it
    kind: ClassVar[CodecKind] = CodecKind.BYTES_BYTES  # the kind subclasses say theirs

    codec_id: str
    config: dict = field(default_factory=dict)
    _impl: Any = field(default=None, repr=False, compare=False)
    _resolved: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # per codec, not per class: blosc releases the GIL, delta does not
        object.__setattr__(self, "releases_gil", self.codec_id in RELEASES_GIL_IDS)

    def __repr__(self) -> str:
        # zarr-python's text for its `zarr.codecs.numcodecs` classes, which are named as
        # numcodecs names its own: `Zlib(codec_name='numcodecs.zlib', codec_config={...})`
        from numcodecs.registry import codec_registry

        cls = codec_registry.get(self.codec_id)
        label = cls.__name__ if cls is not None else self.codec_id
        return f"{label}(codec_name={PREFIX + self.codec_id!r}, codec_config={self.config!r})"

    # -- names --------------------------------------------------------------------------
    @classmethod
    def matches_name(cls, name: str, format: str) -> bool:
        cid = codec_id(name, format)
        return cid is not None and re.fullmatch(_ID, cid) is not None and cid in known_ids()

    def written_name(self, format: str = V3) -> str:
        if format == V2:
            return self.codec_id
        if format == V3_DRAFT_2020:
            return draft_uri(self.codec_id)
        return PREFIX + self.codec_id

    # -- JSON ---------------------------------------------------------------------------
    @classmethod
    def from_json(
        cls, name: str, configuration: Mapping[str, Any], format: str = V3
    ) -> NumcodecsCodec:
        cid = codec_id(name, format)
        if cid is None:
            raise MetadataError(f"{name!r} is not a numcodecs codec name in zarr format {format}")
        config = dict(configuration)
        if config.get("id", cid) != cid:
            raise MetadataError(
                f"{name}: configuration 'id' {config['id']!r} differs from the "
                f"name's codec id {cid!r}",
                field="configuration.id",
            )
        config.pop("id", None)
        return for_id(cid, config)

    def configuration(self, format: str = V3) -> dict:
        return dict(self.config)

    def to_json(self, format: str = V3) -> Any:
        if format == V3:  # zarr-python refuses a numcodecs.* codec without "configuration"
            return {"name": self.written_name(V3), "configuration": dict(self.config)}
        return super().to_json(format)

    # -- building the numcodecs object --------------------------------------------------
    @property
    def impl(self) -> Any:
        if self._impl is None:
            missing = ", ".join(repr(p) for p in _missing_from_spec(self.codec_id, self.config))
            raise CodecChainError(
                f"{self.written_name()}: configuration lacks {missing}, which "
                f"is filled in only when an array is created",
                field="codecs",
            )
        return self._impl

    def evolve(self, spec: ChunkSpec) -> NumcodecsCodec:
        missing = _missing_from_spec(self.codec_id, self.config)
        if not missing:
            return self
        config = {**self.config, **{p: _FROM_SPEC[p](spec) for p in missing}}
        return for_id(self.codec_id, config)

    def encoded_size(self, nbytes: int) -> int | None:
        extra = FIXED_OVERHEAD.get(self.codec_id)
        return None if extra is None else nbytes + extra


def for_id(cid: str, config: dict) -> NumcodecsCodec:
    """The bridge codec for a numcodecs id and its configuration (without the id)."""
    impl = None
    if not _missing_from_spec(cid, config):
        impl = _build(cid, config)
    if cid in ELEMENTWISE_IDS:
        return _ElementwiseNumcodec(cid, config, impl)
    return _KIND_CLASSES[kind_of(cid)](cid, config, impl)


def _build(cid: str, config: dict) -> Any:
    from numcodecs import get_codec
    from numcodecs.errors import UnknownCodecError

    try:
        return get_codec({"id": cid, **config})
    except UnknownCodecError:
        raise MetadataError(f"numcodecs has no codec {cid!r} here") from None
    except Exception as exc:  # numcodecs' constructors raise TypeError/ValueError/...
        raise MetadataError(
            f"numcodecs.{cid}: bad configuration {config!r}: {type(exc).__name__}: {exc}",
            field="configuration",
        ) from None


def _missing_from_spec(cid: str, config: Mapping[str, Any]) -> list[str]:
    """Parameters the data type determines, that numcodecs requires or zarr-python fills in,
    and that the configuration leaves out."""
    from numcodecs import registry

    cls = registry.codec_registry.get(cid)
    if cls is None:
        return []
    try:
        params = inspect.signature(cls.__init__).parameters
    except (TypeError, ValueError):
        return []
    return [p for p in _FROM_SPEC if p in params and config.get(p) is None]


#: numcodecs' array codecs that take booleans; the others compute on numbers, and got
#: booleans or raw bytes wrong, silently (delta) or with a TypeError at the first write
_TAKES_BOOL = frozenset({"packbits"})


#: numcodecs' array codecs that take only some numbers: the (kind, itemsize) of each
_ONLY_NUMBERS = {
    "zfpy": {("i", 4), ("i", 8), ("f", 4), ("f", 8)},
    "pcodec": {(kind, size) for kind in "iuf" for size in (2, 4, 8)},
}


def _refuse_non_numbers(codec: NumcodecsCodec, data_type: DataType) -> None:
    """Refuse, when an array is created, a type the numcodecs codec would get wrong or fail
    on at the first write."""
    native = data_type.native
    kind = native.kind
    if kind == "V" or (kind == "b" and codec.codec_id not in _TAKES_BOOL):
        raise codec.refuse(data_type, "numcodecs' array codecs compute on numbers")
    only = _ONLY_NUMBERS.get(codec.codec_id)
    if only is not None and (kind, native.itemsize) not in only:
        taken = ", ".join(sorted(f"{k}{n}" for k, n in only))
        raise codec.refuse(data_type, f"numcodecs' {codec.codec_id} takes {taken}")


class _ArrayArrayNumcodec(NumcodecsCodec, ArrayArrayCodec):
    kind = CodecKind.ARRAY_ARRAY

    def check_data_type(self, data_type: DataType) -> None:
        _refuse_non_numbers(self, data_type)

    def encoded_spec(self, spec: ChunkSpec) -> ChunkSpec:
        _refuse_non_numbers(self, spec.data_type)  # (asked before `check_data_type`)
        found = self._resolved.get(spec)
        if found is None:
            found = self._resolved[spec] = self._probe(spec)
        return found

    def _probe(self, spec: ChunkSpec) -> ChunkSpec:
        """The encoded spec, learnt by encoding the fill value (a few elements, and the whole
        chunk only when the few show that the size changes)."""
        n = math.prod(spec.shape)
        few = min(n, _PROBE) or 1
        out = self._encode_quietly(np.full(few, spec.fill_value, dtype=spec.dtype))
        shape = spec.shape
        if out.size != few:
            out = self._encode_quietly(np.full(spec.shape, spec.fill_value, dtype=spec.dtype))
            shape = (out.size,)
        data_type = data_type_from_native(out.dtype.newbyteorder("="))
        fill = out.reshape(-1)[0] if out.size else data_type.default_fill()
        return ChunkSpec(tuple(shape), data_type, data_type.native.type(fill))

    def _encode_quietly(self, data: np.ndarray) -> np.ndarray:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return np.asarray(self.impl.encode(data))

    def validate(self, spec: ChunkSpec) -> None:
        for param in ("dtype", "decode_dtype"):  # v2-style filters name the type they expect
            declared = self.config.get(param)
            if declared is not None and not _same_type(declared, spec.dtype):
                raise CodecChainError(
                    f"{self.written_name()}: its {param} {declared!r} is not the "
                    f"chunk's {spec.data_type.describe()}",
                    field="codecs",
                )
        try:
            self.encoded_spec(spec)
        except ZarrkitError as exc:
            raise CodecChainError(
                f"{self.written_name()} cannot encode {spec.data_type.describe()}: {exc}",
                field="codecs",
            ) from None
        except Exception as exc:
            raise CodecChainError(
                f"{self.written_name()} cannot encode {spec.data_type.describe()}"
                f": {type(exc).__name__}: {exc}",
                field="codecs",
            ) from None

    def encode(self, data: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        out = np.asarray(self.impl.encode(np.ascontiguousarray(data)))
        return out.reshape(self.encoded_spec(spec).shape)

    def decode(self, data: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        out = np.asarray(self.impl.decode(np.ascontiguousarray(data)))
        return _as_chunk(out, spec, self)


class _ElementwiseNumcodec(_ArrayArrayNumcodec, ArrayArrayElementwise):
    """A numcodecs filter that maps every element on its own (`ELEMENTWISE_IDS`)."""


class _ArrayBytesNumcodec(NumcodecsCodec, ArrayBytesCodec):
    kind = CodecKind.ARRAY_BYTES

    def check_data_type(self, data_type: DataType) -> None:
        _refuse_non_numbers(self, data_type)

    def encode(self, data: np.ndarray, spec: ChunkSpec) -> Any:
        out = self.impl.encode(np.ascontiguousarray(data))
        return out.reshape(-1).view(np.uint8) if isinstance(out, np.ndarray) else out

    def decode(self, data: Any, spec: ChunkSpec) -> np.ndarray:
        bounded = BOUNDED_CHUNKS.get(self.codec_id)
        if bounded is not None and spec.data_type.stored_size is not None:
            return _as_chunk(bounded(self, data, spec), spec, self)
        return _as_chunk(np.asarray(self.impl.decode(data)), spec, self)


class _BytesBytesNumcodec(NumcodecsCodec, BytesBytesCodec):
    kind = CodecKind.BYTES_BYTES

    def encode(self, data: Any, spec: ChunkSpec) -> Any:
        out = self.impl.encode(data)
        return out.reshape(-1).view(np.uint8) if isinstance(out, np.ndarray) else out

    def decode(self, data: Any, spec: ChunkSpec) -> Any:
        return self.impl.decode(data)

    def decode_bounded(self, data: Any, spec: ChunkSpec, max_size: int) -> Any:
        bounded = BOUNDED.get(self.codec_id)
        if bounded is None:  # decoded by numcodecs, checked after (see numcodecs_bounded)
            return super().decode_bounded(data, spec, max_size)
        return bounded(self, self.impl, data, max_size)

    def max_encoded_size(self, nbytes: int) -> int | None:
        if self.codec_id in BOUNDED:
            return max_encoded_size(nbytes)
        return super().max_encoded_size(nbytes)


_KIND_CLASSES = {
    CodecKind.ARRAY_ARRAY: _ArrayArrayNumcodec,
    CodecKind.ARRAY_BYTES: _ArrayBytesNumcodec,
    CodecKind.BYTES_BYTES: _BytesBytesNumcodec,
}


def _as_chunk(out: np.ndarray, spec: ChunkSpec, codec: NumcodecsCodec) -> np.ndarray:
    """numcodecs decodes to a flat array of its own dtype; give the chunk's shape and dtype."""
    n = math.prod(spec.shape)
    if out.size != n:
        raise ChunkDecodeError(
            f"{codec.written_name()} decoded {out.size} elements, a chunk of "
            f"shape {spec.shape} has {n}"
        )
    if out.dtype != spec.dtype:
        if out.dtype.kind != spec.dtype.kind or out.dtype.itemsize != spec.dtype.itemsize:
            raise ChunkDecodeError(
                f"{codec.written_name()} decoded {out.dtype} values, the chunk holds {spec.dtype}"
            )
        out = out.astype(spec.dtype)
    return out.reshape(spec.shape)


def _same_type(declared: Any, dtype: np.dtype) -> bool:
    """Whether a filter's declared dtype is the chunk's (byte order aside: chunks are native)."""
    try:
        ours = np.dtype(declared)
    except TypeError:
        return False
    return bool(ours.kind == dtype.kind and ours.itemsize == dtype.itemsize)
