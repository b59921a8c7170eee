"""Process-wide settings, each overridable by a `ZARRKIT_*` environment variable.

Kept deliberately small: a setting belongs here only when it is not a property of one array.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

from . import forksafe


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"environment variable {name} must be an integer, got {raw!r}") from None


def _env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return float(raw)
    except ValueError:
        raise ValueError(f"environment variable {name} must be a number, got {raw!r}") from None


def _env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    return raw.strip().lower() in {"1", "true", "yes", "on"}


def _env_prefer() -> dict[tuple[str, str], str]:
    """ZARRKIT_PREFER="codec:gzip=some-dist;data_type:int2=other-dist"."""
    table: dict[tuple[str, str], str] = {}
    for item in filter(None, (p.strip() for p in os.environ.get("ZARRKIT_PREFER", "").split(";"))):
        try:
            target, dist = item.split("=", 1)
            kind, name = target.split(":", 1)
        except ValueError:
            raise ValueError(
                f"ZARRKIT_PREFER entry {item!r} must look like 'kind:name=distribution'"
            ) from None
        table[(kind.strip(), name.strip())] = dist.strip()
    return table


def _env_schemes() -> dict[str, str]:
    """ZARRKIT_STORE_SCHEMES="s3=obstore+s3;gs=obstore+gs"."""
    table: dict[str, str] = {}
    for item in filter(
        None, (p.strip() for p in os.environ.get("ZARRKIT_STORE_SCHEMES", "").split(";"))
    ):
        scheme, sep, target = item.partition("=")
        if not sep or not scheme.strip() or not target.strip():
            raise ValueError(
                f"ZARRKIT_STORE_SCHEMES entry {item!r} must look like 'scheme=other-scheme'"
            )
        table[scheme.strip().lower()] = target.strip().lower()
    return table


@dataclass(frozen=True)
class Settings:
    threads: int = field(default_factory=lambda: _env_int("ZARRKIT_THREADS", os.cpu_count() or 1))
    write_empty_chunks: bool = field(
        default_factory=lambda: _env_bool("ZARRKIT_WRITE_EMPTY_CHUNKS", False)
    )
    prefer: dict[tuple[str, str], str] = field(default_factory=_env_prefer)
    #: write chunks and shards that a write covers partly through `Store.update_many`, so
    #: writers in other processes of a store with `safe_updates` never lose each other's updates
    safe_updates: bool = field(default_factory=lambda: _env_bool("ZARRKIT_SAFE_UPDATES", True))
    #: wrap every store opened by URL or path in the store registry's `metrics` wrapper
    store_metrics: bool = field(default_factory=lambda: _env_bool("ZARRKIT_STORE_METRICS", False))
    #: requests a network store keeps in flight at once, and selections `Array.get_many`
    #: reads at once: waiting on the network costs no CPU, so this is not the thread count.
    #: The default lets a group of up to 128 members have all their documents read in one
    #: round trip, while keeping under S3's rate per prefix (5,500 GETs a second) at a first
    #: byte after 25 ms; obstore and tensorstore's S3 driver set no bound of their own.
    io_concurrency: int = field(default_factory=lambda: _env_int("ZARRKIT_IO_CONCURRENCY", 128))
    #: seconds a network request may go without progress (connecting, or waiting for the next
    #: bytes of an answer) before it fails as timed out; read when a network store is opened,
    #: and given to its client unless the store's own options set the client's equivalent
    io_timeout: float = field(default_factory=lambda: _env_float("ZARRKIT_IO_TIMEOUT", 30.0))
    #: attempts after the first that a network store makes of a request that failed in a way
    #: worth another try (a 5xx answer, throttling, a connection fault or timeout, a body cut
    #: short), backing off exponentially with jitter; read when a network store is opened
    io_retries: int = field(default_factory=lambda: _env_int("ZARRKIT_IO_RETRIES", 4))
    #: URL schemes opened as another scheme: {"s3": "obstore+s3"} picks the store behind s3://
    store_schemes: dict[str, str] = field(default_factory=_env_schemes)
    #: whether an array handle keeps the shard indexes it read: "remote" (stores whose calls
    #: are round trips, `preferred_fetch_bytes` set), "always" or "never". A kept index misses
    #: a shard rewritten through another handle until the array is opened again.
    index_cache: str = field(
        default_factory=lambda: os.environ.get("ZARRKIT_INDEX_CACHE") or "remote"
    )
    #: the most bytes a chunk's decoding may produce at a step whose size the chunk spec does not
    #: fix (variable-length types such as strings, codecs that cannot state a bound): a stored
    #: value that decodes to more is refused as corrupt rather than exhausting memory. Read when
    #: an array's codec chain is bound (when the array is opened).
    max_chunk_bytes: int = field(
        default_factory=lambda: _env_int("ZARRKIT_MAX_CHUNK_BYTES", 512 << 20)
    )
    #: what arrays of variable-length strings (v3 `string`, v2 `|O` with vlen-utf8) read as:
    #: "StringDType", numpy's variable-width strings (numpy >= 2), as zarr-python 3 returns
    #: them; or "object", arrays of Python `str` (always, with numpy 1). Writes take either.
    #: Read when an array is opened or created.
    string_dtype: str = field(
        default_factory=lambda: os.environ.get("ZARRKIT_STRING_DTYPE") or "StringDType"
    )

    def __post_init__(self) -> None:
        if not self.io_timeout > 0:  # (also refuses NaN)
            raise ValueError(
                f"io_timeout (ZARRKIT_IO_TIMEOUT) must be > 0 seconds, got {self.io_timeout!r}"
            )
        if self.io_retries < 0:
            raise ValueError(
                f"io_retries (ZARRKIT_IO_RETRIES) must be >= 0, got {self.io_retries!r}"
            )
        if self.string_dtype not in STRING_DTYPES:
            raise ValueError(
                f"string_dtype (ZARRKIT_STRING_DTYPE) must be one of {STRING_DTYPES}, "
                f"got {self.string_dtype!r}"
            )


#: the choices of the `string_dtype` setting
STRING_DTYPES = ("StringDType", "object")


_lock = forksafe.lock()
_current = Settings()


def get() -> Settings:
    return _current


def set(**changes: Any) -> Settings:
    """Replace settings for the whole process; returns the previous ones."""
    global _current
    with _lock:
        previous = _current
        _current = replace(_current, **changes)
    return previous


@contextmanager
def override(**changes: Any) -> Iterator[Settings]:
    global _current
    previous = set(**changes)
    try:
        yield _current
    finally:
        with _lock:
            _current = previous


def prefer(kind: str, name: str, distribution: str) -> None:
    """Choose which distribution provides `name` when several installed ones do."""
    set(prefer={**_current.prefer, (kind, name): distribution})
