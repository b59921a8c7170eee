"""Codecs written for zarr-python 3, usable in zarrkit: any `zarr.abc.codec` class that
zarr-python knows by a v3 name, whether a package declares it in zarr-python's `zarr.codecs`
entry points (or a `zarr.codecs.<name>` group) or a program registers it at run time
(`zarr.registry.register_codec`).

The codec is built by its own `from_dict` from the metadata as stored and written back by its
own `to_dict`, so the metadata is what zarr-python writes. zarrkit hands it chunks as
zarr-python would: the chunk spec as an `ArraySpec`, arrays as `NDBuffer`s and bytes as
`Buffer`s; a codec with synchronous methods (`_encode_sync`/`_decode_sync`) runs in zarrkit's
own threads, one with only coroutines (`_encode_single`/`_decode_single`) runs on zarr-python's
event loop thread, as zarr-python's own synchronous API runs it.

A generic provider: it answers only names nothing more specific does, so it yields to

- any zarrkit codec whose entry point has the exact name (zarr-python's own codecs, `bytes`,
  `zstd`, `sharding_indexed`, ..., all have first-party ones, which the registry finds first);
- zarr-python's own codec classes whatever the name (`endian` is `bytes`'s alias in zarrkit,
  and each of zarr-python's codecs is one of zarrkit's first-party ones or numcodecs');
- the numcodecs bridge, for every `numcodecs.<id>` that numcodecs knows (zarr-python's
  `zarr.codecs.numcodecs` classes, once `numcodecs.zarr3`, wrap the same numcodecs codec);
- classes defined in zarrkit (`zarrkit.zarr_python.codecs`, zarrkit's codecs presented to
  zarr-python), which would only lead back to the zarrkit codec they present;
- and, as `generic` declares, any provider that names the extension.

zarr-python is optional and imported only when a name is looked up that a `zarr.codecs` entry
point declares, or once zarr-python is imported anyway (only then can codecs be registered
with it at run time), so a lookup that misses elsewhere costs no import of zarr-python.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import math
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from zarrkit.abc import (
    V3,
    ArrayArrayCodec,
    ArrayBytesCodec,
    BytesBytesCodec,
    ChunkSpec,
    Codec,
    CodecKind,
    as_bytes_view,
    named_config,
    names,
    settings,
)
from zarrkit.errors import (
    ChunkDecodeError,
    MetadataError,
    UnknownExtensionError,
    ValueCastError,
    ZarrkitError,
)
from zarrkit.helpers import data_type_from_native, extension_from_json
from zarrkit.plugins.codecs.numcodecs_bridge import PREFIX as NUMCODECS_PREFIX
from zarrkit.plugins.codecs.numcodecs_bridge import known_ids
from zarrkit.plugins.zarr_python_loop import run_on_zarr_loop

#: zarr-python's entry-point group for codecs (and `zarr.codecs.<name>` groups of one codec)
GROUP = "zarr.codecs"
INSTALL = "pip install 'zarrkit[zarr-python]'"
#: modules whose codec classes this bridge leaves alone (see the module docstring)
_NOT_BRIDGED = ("zarr", "zarrkit")
_SPECS_KEPT = 64  # chunk specs converted per codec instance before the cache starts over


_read: tuple[tuple, dict[str, list[importlib.metadata.EntryPoint]]] | None = None


def _entry_points(name: str) -> list[importlib.metadata.EntryPoint]:
    """The `zarr.codecs` entry points that declare `name`, as zarr-python reads them (a
    `zarr.codecs.<name>` group names its codec by the group's third part)."""
    global _read
    state = _path_state()
    if _read is None or _read[0] != state:
        table: dict[str, list[importlib.metadata.EntryPoint]] = {}
        installed = importlib.metadata.entry_points()  # one scan of every distribution
        for group in installed.groups:
            if group == GROUP:
                for ep in installed.select(group=group):
                    table.setdefault(ep.name, []).append(ep)
            elif group.startswith(GROUP + "."):
                table.setdefault(group.split(".")[2], []).extend(installed.select(group=group))
        _read = (state, table)
    return _read[1].get(name, [])


def _path_state() -> tuple:
    """What says whether the installed distributions changed: each folder of `sys.path` and
    its modification time (installing or removing a distribution changes its folder's)."""
    state: list[tuple[str, int | None]] = []
    for entry in sys.path:
        try:
            state.append((entry, os.stat(entry or ".").st_mtime_ns))
        except OSError:
            state.append((entry, None))
    return tuple(state)


def _describe(eps: list[importlib.metadata.EntryPoint]) -> str:
    return ", ".join(
        f"{ep.name} = {ep.value!r} from {ep.dist.name if ep.dist else 'an unknown distribution'}"
        for ep in eps
    )


def _zarr(name: str, eps: list[importlib.metadata.EntryPoint]) -> Any:
    """zarr-python's registry, codec bases and event loop; a clear error without it."""
    try:
        import zarr.abc.codec
        import zarr.core.sync
        import zarr.registry
    except ImportError as exc:
        raise UnknownExtensionError(
            "codec",
            name,
            V3,
            hint=f"it is a codec for zarr-python ({_describe(eps)}), which is not installed "
            f"here ({exc}): {INSTALL}",
        ) from None
    return zarr


def _qualname(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _bridged(cls: Any) -> bool:
    module = str(getattr(cls, "__module__", "")).split(".")[0]
    return isinstance(cls, type) and module not in _NOT_BRIDGED


def zarr_codec_class(name: str) -> type | None:
    """zarr-python's class for the v3 codec `name` when this bridge is the one to present it
    (see the module docstring), else None. Raises a zarrkit error, naming the entry point, when
    zarr-python declares the codec but it cannot be had (zarr-python missing, a broken entry
    point), so that the lookup reports that rather than an unknown codec."""
    if name.startswith(NUMCODECS_PREFIX) and name[len(NUMCODECS_PREFIX) :] in known_ids():
        return None
    eps = _entry_points(name)
    if not eps and "zarr.registry" not in sys.modules:
        return None  # no entry point, and nothing registered at run time without zarr imported
    zarr = _zarr(name, eps)
    try:  # zarr-python's own choice: run-time registrations, and its config among several
        cls = zarr.registry.get_codec_class(name)
    except Exception:  # unknown to it: an entry point installed since zarr-python read them
        cls = None
    if cls is None and eps:
        try:
            cls = eps[0].load()
        except Exception as exc:
            raise UnknownExtensionError(
                "codec",
                name,
                V3,
                hint=f"its zarr-python entry point ({_describe(eps[:1])}) failed to load: "
                f"{type(exc).__name__}: {exc}",
            ) from None
    return cls if _bridged(cls) else None


@dataclass(frozen=True, eq=False)
class ZarrPythonCodec(Codec):
    """A zarr-python codec; `from_json` returns the subclass of its kind."""

    names = names(pattern=r"\S+")  # v3 only; which names, `matches_name` asks zarr-python
    #: answers for names through another library's registry: any provider naming one wins
    generic: ClassVar[bool] = True
    kind: ClassVar[CodecKind] = CodecKind.BYTES_BYTES  # the kind subclasses say theirs

    codec_name: str
    impl: Any = field(repr=False)
    _specs: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    # -- names --------------------------------------------------------------------------
    @classmethod
    def matches_name(cls, name: str, format: str) -> bool:
        if format != V3 or re.fullmatch(r"\S+", name) is None:
            return False
        try:
            return zarr_codec_class(name) is not None
        except ZarrkitError:  # declared for zarr-python, unusable here: `from_json` says why
            return True

    def written_name(self, format: str = V3) -> str:
        if format != V3:
            raise MetadataError(
                f"zarr-python codec {self.codec_name!r} has no name in zarr format {format}"
            )
        return self.codec_name

    # -- zarr-python's codec objects as arguments -----------------------------------------
    @classmethod
    def adapt(cls, obj: object, format: str = V3) -> Codec | None:
        """zarr-python's codec object (`zarr.codecs.GzipCodec(level=1)`, ...) as the codec
        zarrkit uses for its name: zarrkit's own plugin for the names zarrkit has (so the
        array writes and runs what zarrkit's plugin does), else this bridge over the object."""
        bases = sys.modules.get("zarr.abc.codec")  # (not imported: it cannot be its object)
        if bases is None or not isinstance(obj, bases.BaseCodec):
            return None
        return _adapted(obj)

    # -- JSON ---------------------------------------------------------------------------
    @classmethod
    def from_json(
        cls, name: str, configuration: Mapping[str, Any], format: str = V3
    ) -> ZarrPythonCodec:
        if format != V3:
            raise MetadataError(f"zarr-python codecs have v3 names only, not {name!r} ({format})")
        zarr_cls: Any = zarr_codec_class(name)
        if zarr_cls is None:
            raise UnknownExtensionError("codec", name, V3, hint="zarr-python knows no such codec")
        try:
            impl = zarr_cls.from_dict({"name": name, "configuration": dict(configuration)})
        except Exception as exc:
            raise MetadataError(
                f"zarr-python codec {name!r} ({_qualname(zarr_cls)}) refused its configuration "
                f"{dict(configuration)!r}: {type(exc).__name__}: {exc}",
                field="configuration",
            ) from None
        return wrap(name, impl)

    def configuration(self, format: str = V3) -> dict:
        written = self.impl.to_dict()
        return _plain(written.get("configuration") or {}) if isinstance(written, Mapping) else {}

    # -- running the zarr-python codec --------------------------------------------------
    def evolve(self, spec: ChunkSpec) -> ZarrPythonCodec:
        evolved = self._call("evolve_from_array_spec", self._array_spec(spec))
        return self if evolved is self.impl else wrap(self.codec_name, evolved)

    def _array_spec(self, spec: ChunkSpec) -> Any:
        """`spec` as zarr-python's `ArraySpec` (converted once per spec and codec)."""
        key = (spec.shape, spec.data_type, _fill_key(spec.fill_value))
        found = self._specs.get(key)
        if found is None:
            from zarr.core.array_spec import ArrayConfig, ArraySpec
            from zarr.core.buffer import default_buffer_prototype
            from zarr.core.dtype import get_data_type_from_native_dtype

            try:
                dtype = get_data_type_from_native_dtype(spec.dtype)
                fill = dtype.cast_scalar(spec.fill_value)
            except Exception as exc:
                raise ValueCastError(
                    f"zarr-python codec {self.codec_name!r}: zarr-python has no data type "
                    f"for {spec.data_type.describe()}: {type(exc).__name__}: {exc}"
                ) from None
            config = ArrayConfig(order="C", write_empty_chunks=True)
            found = ArraySpec(spec.shape, dtype, fill, config, default_buffer_prototype())
            if len(self._specs) >= _SPECS_KEPT:
                self._specs.clear()
            self._specs[key] = found
        return found

    def _call(self, method: str, *args: Any) -> Any:
        try:
            return getattr(self.impl, method)(*args)
        except ZarrkitError:
            raise
        except Exception as exc:
            raise MetadataError(
                f"zarr-python codec {self._label()}: {method} failed: {type(exc).__name__}: {exc}",
                field="codecs",
            ) from None

    def _label(self) -> str:
        return f"{self.codec_name!r} ({_qualname(type(self.impl))})"

    def _run(self, encoding: bool, value: Any, spec: ChunkSpec) -> Any:
        """The codec's encode or decode of one chunk: its synchronous method when it has one
        that can run, else its coroutine on zarr-python's event loop thread."""
        array_spec = self._array_spec(spec)
        impl = self.impl
        try:
            if _runs_synchronously(impl):
                if encoding:
                    return impl._encode_sync(value, array_spec)
                return impl._decode_sync(value, array_spec)
            # the one-chunk coroutine itself, awaited in the bridge's guard: a batch call runs
            # it in tasks of its own, where a SystemExit would stop zarr-python's loop
            single = impl._encode_single if encoding else impl._decode_single
            return run_on_zarr_loop(single(value, array_spec), _deadline())
        except ZarrkitError:
            raise
        except (Exception, SystemExit, GeneratorExit) as exc:
            # a foreign codec's SystemExit is its failure, not this process's end
            if encoding:
                raise ValueCastError(
                    f"zarr-python codec {self._label()} failed to encode a chunk of "
                    f"{spec.shape} {spec.data_type.describe()}: {type(exc).__name__}: {exc}"
                ) from None
            raise ChunkDecodeError(
                f"zarr-python codec {self._label()} failed to decode it: "
                f"{type(exc).__name__}: {exc}"
            ) from None

    def _buffer(self, data: Any) -> Any:
        from zarr.core.buffer import default_buffer_prototype

        return default_buffer_prototype().buffer.from_bytes(as_bytes_view(data))

    def _nd_buffer(self, data: np.ndarray) -> Any:
        from zarr.core.buffer import default_buffer_prototype

        return default_buffer_prototype().nd_buffer.from_numpy_array(data)


def _deadline() -> float:
    """How long a foreign codec's coroutine may take for one chunk: as long as a network
    request with every retry (it may read from one), then it is refused, not waited on."""
    config = settings()
    return config.io_timeout * (config.io_retries + 1)


def _runs_synchronously(impl: Any) -> bool:
    """zarr-python's own test (`zarr.abc.codec._codec_supports_sync`), kept here: the
    synchronous methods, and no `_sync_capable` saying they cannot run."""
    return (
        callable(getattr(impl, "_encode_sync", None))
        and callable(getattr(impl, "_decode_sync", None))
        and bool(getattr(impl, "_sync_capable", True))
    )


class _ArrayArrayZarrCodec(ZarrPythonCodec, ArrayArrayCodec):
    kind = CodecKind.ARRAY_ARRAY

    def encoded_spec(self, spec: ChunkSpec) -> ChunkSpec:
        key = ("encoded", spec.shape, spec.data_type, _fill_key(spec.fill_value))
        found: ChunkSpec | None = self._specs.get(key)
        if found is None:  # once per spec, as `_array_spec`: `encode` asks for every chunk
            resolved = self._call("resolve_metadata", self._array_spec(spec))
            data_type = data_type_from_native(resolved.dtype.to_native_dtype())
            fill = np.asarray(resolved.fill_value, dtype=data_type.native)[()]
            found = self._specs[key] = ChunkSpec(tuple(resolved.shape), data_type, fill)
        return found

    def encode(self, data: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        out = self._run(True, self._nd_buffer(np.ascontiguousarray(data)), spec)
        return _as_chunk(out.as_numpy_array(), self.encoded_spec(spec), self)

    def decode(self, data: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        out = self._run(False, self._nd_buffer(np.ascontiguousarray(data)), spec)
        return _as_chunk(out.as_numpy_array(), spec, self)


class _ArrayBytesZarrCodec(ZarrPythonCodec, ArrayBytesCodec):
    kind = CodecKind.ARRAY_BYTES

    def encode(self, data: np.ndarray, spec: ChunkSpec) -> Any:
        out = self._run(True, self._nd_buffer(np.ascontiguousarray(data)), spec)
        return None if out is None else out.as_numpy_array()

    def decode(self, data: Any, spec: ChunkSpec) -> np.ndarray:
        out = self._run(False, self._buffer(data), spec)
        return _as_chunk(out.as_numpy_array(), spec, self)


class _BytesBytesZarrCodec(ZarrPythonCodec, BytesBytesCodec):
    kind = CodecKind.BYTES_BYTES

    def encode(self, data: Any, spec: ChunkSpec) -> Any:
        return self._run(True, self._buffer(data), spec).as_numpy_array()

    def decode(self, data: Any, spec: ChunkSpec) -> Any:
        return self._run(False, self._buffer(data), spec).as_numpy_array()


def _adapted(obj: Any) -> Codec:
    """A zarr-python codec object as a zarrkit codec (see `ZarrPythonCodec.adapt`).

    Fields zarr-python leaves to be chosen from the data type (its `_tunable_attrs`: blosc's
    `typesize` and `shuffle` when not given, which `to_dict` shows as placeholders until
    `evolve_from_array_spec`) are left out of the configuration, so that zarrkit's plugin
    fills them in its `evolve` from the array's data type, as zarr-python would have. The
    inner codecs of sharding are adapted one by one for the same reason."""
    try:
        written = obj.to_dict()
    except Exception as exc:
        raise MetadataError(
            f"zarr-python codec {_qualname(type(obj))}: to_dict failed: "
            f"{type(exc).__name__}: {exc}",
            field="codecs",
        ) from None
    name = written.get("name") if isinstance(written, Mapping) else None
    if not isinstance(name, str):
        raise MetadataError(
            f"zarr-python codec {_qualname(type(obj))} names no codec: {written!r}", field="codecs"
        )
    configuration = _plain(written.get("configuration") or {})
    for tunable in getattr(obj, "_tunable_attrs", ()):
        configuration.pop(tunable, None)
    codec: Any = extension_from_json("codec", named_config(name, configuration), V3, key="codecs")
    if isinstance(codec, ZarrPythonCodec):  # (a codec only zarr-python has: run the object)
        return wrap(name, obj)
    if name == "sharding_indexed" and dataclasses.is_dataclass(type(codec)):
        codec = dataclasses.replace(
            codec,
            codecs=tuple(_adapted(c) for c in obj.codecs),
            index_codecs=tuple(_adapted(c) for c in obj.index_codecs),
        )
    adapted: Codec = codec
    return adapted


def wrap(name: str, impl: Any) -> ZarrPythonCodec:
    """The bridge codec of the kind of `impl`, a zarr-python codec instance."""
    import zarr.abc.codec as bases

    for base, kind_class in (
        (bases.ArrayArrayCodec, _ArrayArrayZarrCodec),
        (bases.ArrayBytesCodec, _ArrayBytesZarrCodec),
        (bases.BytesBytesCodec, _BytesBytesZarrCodec),
    ):
        if isinstance(impl, base):
            codec: ZarrPythonCodec = kind_class(name, impl)
            return codec
    raise MetadataError(
        f"zarr-python codec {name!r} ({_qualname(type(impl))}) is none of zarr.abc.codec's "
        f"ArrayArrayCodec, ArrayBytesCodec, BytesBytesCodec"
    )


def _as_chunk(out: np.ndarray, spec: ChunkSpec, codec: ZarrPythonCodec) -> np.ndarray:
    """The codec's array as a chunk of `spec`, or a ChunkDecodeError saying what differs."""
    n = math.prod(spec.shape)
    if out.size != n:
        raise ChunkDecodeError(
            f"zarr-python codec {codec._label()} gave {out.size} elements, a chunk of "
            f"shape {spec.shape} has {n}"
        )
    if out.dtype != spec.dtype:
        if out.dtype.kind != spec.dtype.kind or out.dtype.itemsize != spec.dtype.itemsize:
            raise ChunkDecodeError(
                f"zarr-python codec {codec._label()} gave {out.dtype} values, the chunk holds "
                f"{spec.data_type.describe()}"
            )
        out = out.astype(spec.dtype)
    return out.reshape(spec.shape)


def _fill_key(value: Any) -> Any:
    """A hashable key for a fill value that tells NaNs and -0.0 apart as stored bytes do."""
    if isinstance(value, np.generic) and value.dtype.kind != "O":
        return (value.dtype.str, value.tobytes())
    return repr(value)


def _plain(value: Any) -> Any:
    """zarr-python's `to_dict` (tuples, numpy scalars) as plain JSON values."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value
