"""What every face of `zarrkit.codecs` shares: building the registered codec plugin by name,
and `isinstance` answered by that plugin's class."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from zarrkit.errors import ZarrkitError

if TYPE_CHECKING:  # (not at run time: `zarrkit.codecs` is reached without numpy's import)
    from zarrkit.abc import Codec

#: the format the faces build codecs in (`zarrkit.abc.V3`, named here so that reaching
#: `zarrkit.codecs` imports none of the contracts, and so not numpy)
V3 = "v3"


class CodecFace(type):
    """The class of a face: `isinstance(c, zarrkit.codecs.GzipCodec)` holds for a codec of the
    plugin registered for the face's `codec_name` that writes that name (the numcodecs bridge
    answers for every `numcodecs.*` name; the name tells `Zlib` from `Zstd`)."""

    codec_name: str

    def __instancecheck__(cls, obj: object) -> bool:
        from zarrkit import registry

        try:
            plugin = registry.lookup("codec", cls.codec_name)
        except ZarrkitError:  # (the plugin's optional library is not installed)
            return False
        return isinstance(obj, plugin) and _written_name(obj) == cls.codec_name

    def __subclasscheck__(cls, sub: type) -> bool:
        from zarrkit import registry

        try:
            plugin = registry.lookup("codec", cls.codec_name)
        except ZarrkitError:
            return False
        return issubclass(sub, plugin)


def _written_name(obj: Any) -> str | None:
    try:
        name: str = obj.written_name(V3)
    except ZarrkitError:
        return None
    return name


def build(name: str, configuration: Mapping[str, Any]) -> Codec:
    """The registered plugin for codec `name`, built from `configuration` as its metadata
    would be: the plugin checks every field, exactly as when it reads a stored document."""
    from zarrkit.helpers import extension_from_arg

    codec: Codec = extension_from_arg(
        "codec", {"name": name, "configuration": dict(configuration)}, V3, key=name
    )
    return codec


def codec_of(value: Any, key: str) -> Codec:
    """One codec from what zarr-python takes inside another codec's arguments (sharding's
    `codecs=`): a codec these faces built, a zarr-python codec object, a JSON object."""
    from zarrkit.helpers import extension_from_arg

    codec: Codec = extension_from_arg("codec", value, V3, key=key)
    return codec


def literal(value: Any) -> Any:
    """An enum member as its value: zarr-python takes `BloscShuffle.bitshuffle` (a string in
    3.4) and any other enum whose value is the literal."""
    from enum import Enum

    return value.value if isinstance(value, Enum) else value
