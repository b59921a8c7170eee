"""`zarrkit check URL`: decode every chunk, verify checksums and shard indexes, and report each
chunk that is corrupt or missing, by key.

What counts, for each chunk of each array's grid (each shard, for a sharded array):

- absent: its key is not in the store. Zarr reads an absent chunk as the fill value, so this is
  legal and only counted, unless `--require-all` says the data set must be dense; then each
  absent chunk (and each inner chunk a shard index marks absent) is reported as missing.
- checksum: an encoded value whose last codec is crc32c (a chunk, an inner chunk, a shard
  index) does not match its checksum.
- index: a shard shorter than its index, or an index entry with only one half marked absent.
- missing: a shard index says an inner chunk is stored, but its byte range lies outside the
  shard's data (a truncated or overwritten shard): the bytes the index points to are not there.
- corrupt: decoding fails (a codec refuses the bytes, a size does not match, ...).

Every stored chunk is decoded through the array itself (as any reader would), on `--jobs`
threads; checksums and shard indexes are read from the stored bytes first, so each problem is
named precisely rather than as the decode error it causes. Exit code 1 when anything is found.
"""

from __future__ import annotations

import argparse
import itertools
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any, TypeAlias

import numpy as np

from zarrkit.errors import ZarrkitError

from . import chunks as chunk_store
from . import progress, shard_index
from .common import (
    FOUND,
    OK,
    add_url_arguments,
    default_jobs,
    fail,
    open_node,
    positive,
    print_json,
    printable,
)
from .nodes import Array, Group

Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


@dataclass(frozen=True)
class Fault:
    """One corrupt or missing chunk (or inner chunk of a shard), or an unreadable node."""

    array: str
    key: str
    inner: tuple[int, ...] | None
    kind: str  # "corrupt", "missing", "checksum", "index" or "metadata"
    message: str

    def __str__(self) -> str:
        inner = f" inner chunk {self.inner}" if self.inner is not None else ""
        return f"{self.kind}: {self.key}{inner} ({self.array}): {self.message}"


@dataclass
class ArrayReport:
    path: str
    chunks: int = 0
    stored: int = 0
    absent: int = 0
    #: elements of the array the stored chunks cover (what the progress bar has counted)
    stored_elements: int = 0
    inner_chunks_checked: int = 0
    bytes_stored: int = 0
    faults: list[Fault] = field(default_factory=list)


def add_command(commands: Commands) -> None:
    cmd = commands.add_parser(
        "check",
        help="decode every chunk; verify checksums and shard indexes",
        description="Check every array at or below URL: read and decode every stored chunk "
        "(in parallel), verify crc32c checksums and shard indexes, and report each corrupt or "
        "missing chunk by key. Exit code 1 if any is found, 2 if the check could not run.",
        epilog="An absent chunk is legal (it reads as the fill value) and only counted, unless "
        "--require-all. 'missing' is a chunk a shard index says is stored whose bytes are not "
        "in the shard.",
    )
    add_url_arguments(cmd)
    cmd.add_argument(
        "--require-all",
        action="store_true",
        help="every chunk must be stored: report each absent chunk (and inner chunk) as missing",
    )
    cmd.add_argument(
        "--jobs",
        type=positive,
        default=default_jobs(),
        help="chunks checked at once (default: %(default)s)",
    )
    cmd.add_argument("--json", action="store_true", help="print a JSON report")
    progress.add_arguments(cmd)
    cmd.set_defaults(run=run_check)


def run_check(args: argparse.Namespace) -> int:
    try:
        node = open_node(args.url, args.path, args.storage_options)
    except ZarrkitError as exc:
        return fail(args, exc)
    arrays, faults = _arrays(node)
    show = progress.wanted(args.progress)
    with progress.Progress(sum(a.nbytes for a in arrays), enabled=show) as bar:
        reports = [
            check_array(array, jobs=args.jobs, bar=bar, dense=args.require_all) for array in arrays
        ]
    faults += [f for r in reports for f in r.faults]
    if args.json:
        print_json(
            {
                "ok": not faults,
                "faults": [_fault_json(f) for f in faults],
                "arrays": [_report_json(r) for r in reports],
            }
        )
    else:
        for fault in faults:
            print(printable(str(fault)))
        print(_summary(reports, faults))
    return FOUND if faults else OK


def _fault_json(fault: Fault) -> dict[str, Any]:
    out = asdict(fault)
    out["inner"] = None if fault.inner is None else list(fault.inner)
    return out


def _report_json(report: ArrayReport) -> dict[str, Any]:
    out = asdict(report)
    out["faults"] = len(report.faults)
    del out["stored_elements"]  # the progress bar's bookkeeping, not a finding
    return out


def _summary(reports: list[ArrayReport], faults: list[Fault]) -> str:
    chunks = sum(r.chunks for r in reports)
    stored = sum(r.stored for r in reports)
    absent = sum(r.absent for r in reports)
    verdict = "no problems found" if not faults else f"{len(faults)} problem(s) found"
    return (
        f"{len(reports)} array(s), {chunks} chunk(s): {stored} stored and checked, "
        f"{absent} absent (read as the fill value); {verdict}"
    )


def _arrays(node: Array | Group) -> tuple[list[Array], list[Fault]]:
    """The arrays at or below `node`; a group whose members cannot be read is a fault. Walked
    with a stack of groups, not recursion, so a hierarchy of any depth is checked."""
    arrays: list[Array] = []
    faults: list[Fault] = []
    pending: list[Array | Group] = [node]
    while pending:
        current = pending.pop()
        if isinstance(current, Array):
            arrays.append(current)
            continue
        # reversed onto the stack, so members come off it in their order
        pending.extend(reversed(list(_members(current, faults))))
    return arrays, faults


def _members(group: Group, faults: list[Fault]) -> Iterator[Array | Group]:
    try:
        names = group.keys()
    except ZarrkitError as exc:
        faults.append(Fault(group.name, group.path or "/", None, "metadata", str(exc)))
        return
    for name in names:
        try:
            yield group[name]
        except ZarrkitError as exc:
            path = f"{group.path}/{name}" if group.path else name
            faults.append(Fault("/" + path, path, None, "metadata", str(exc)))


# -- one array ------------------------------------------------------------------------------------
def check_array(
    array: Array, *, jobs: int, bar: progress.Progress, dense: bool = False
) -> ArrayReport:
    report = ArrayReport(array.name)
    report.chunks = chunk_store.chunk_count(array)
    sharding = _sharding(array)
    lay = None
    if sharding is not None and array.shards is not None:
        lay = shard_index.layout(sharding, array.shards)
    checksummed = array.metadata.format == "v3" and _last_codec(array) == "crc32c"
    itemsize = array.dtype.itemsize

    def one(chunk: chunk_store.Chunk) -> tuple[int, int, int, list[Fault]]:
        data = array.chunk_store.get(chunk.key)
        if data is None:
            faults = [Fault(array.name, chunk.key, None, "missing", "chunk is not stored")]
            return 0, 0, 0, faults if dense else []
        view = memoryview(data).cast("B")
        if sharding is not None:
            faults, inner = _check_shard(array, chunk, view, lay, dense)
        else:
            faults, inner = _check_chunk(array, chunk, view, checksummed), 0
        return 1, len(view), inner, faults

    # `dense` reports every absent chunk, so it walks the grid; otherwise only what is stored
    chunks = chunk_store.grid(array) if dense else chunk_store.held(array)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        # a window of chunks at a time: a grid of millions never becomes millions of futures
        while window := list(itertools.islice(chunks, 8 * jobs)):
            for chunk, result in zip(window, pool.map(one, window)):
                _count(report, chunk, result, bar, array.name, itemsize)
    if not dense:
        report.absent = report.chunks - report.stored
        # the absent chunks' part of the array, checked by being absent
        bar.update(max(0, array.nbytes - report.stored_elements * itemsize), desc=array.name)
    return report


def _count(
    report: ArrayReport,
    chunk: chunk_store.Chunk,
    result: tuple[int, int, int, list[Fault]],
    bar: progress.Progress,
    name: str,
    itemsize: int,
) -> None:
    stored, nbytes, inner, faults = result
    report.stored += stored
    report.stored_elements += chunk.nbytes_hint if stored else 0
    report.absent += 1 - stored
    report.bytes_stored += nbytes
    report.inner_chunks_checked += inner
    report.faults += faults
    bar.update(
        chunk.nbytes_hint * itemsize,
        desc=name,
        note=f"{len(report.faults)} problem(s)" if report.faults else None,
    )


def _check_chunk(
    array: Array, chunk: chunk_store.Chunk, view: memoryview, checksummed: bool
) -> list[Fault]:
    if checksummed:
        why = shard_index.checksum_problem(view)
        if why is not None:
            return [Fault(array.name, chunk.key, None, "checksum", why)]
    why = _decode_problem(array, chunk.region)
    return [] if why is None else [Fault(array.name, chunk.key, None, "corrupt", why)]


def _check_shard(
    array: Array,
    chunk: chunk_store.Chunk,
    view: memoryview,
    lay: shard_index.Layout | None,
    dense: bool,
) -> tuple[list[Fault], int]:
    """Faults of one shard, and how many inner chunks were decoded."""
    if lay is None:  # index codecs not read here: judge the shard by decoding it
        why = _decode_problem(array, chunk.region)
        return ([] if why is None else [Fault(array.name, chunk.key, None, "corrupt", why)]), 0
    entries, problems = shard_index.read(view, lay)
    faults = [Fault(array.name, chunk.key, p.coords, p.kind, p.message) for p in problems]
    if any(p.coords is None for p in problems):
        return faults, 0  # the index itself is unreadable: its entries mean nothing
    if dense:
        listed = {e.coords for e in entries} | {p.coords for p in problems if p.coords}
        faults += [
            Fault(array.name, chunk.key, coords, "missing", "index marks it absent")
            for coords in shard_index.inner_coords(lay.per_shard)
            if coords not in listed and _inner_region(chunk, lay, coords, array.shape)
        ]
    decoded = 0
    for entry in entries:
        region = _inner_region(chunk, lay, entry.coords, array.shape)
        if lay.inner_checksummed:
            why = shard_index.checksum_problem(view[entry.offset : entry.offset + entry.nbytes])
            if why is not None:
                faults.append(Fault(array.name, chunk.key, entry.coords, "checksum", why))
                continue
        if region is None:
            continue  # stored beyond the array's edge: nothing reads it
        decoded += 1
        why = _decode_problem(array, region)
        if why is not None:
            faults.append(Fault(array.name, chunk.key, entry.coords, "corrupt", why))
    return faults, decoded


def _inner_region(
    chunk: chunk_store.Chunk,
    lay: shard_index.Layout,
    coords: tuple[int, ...],
    shape: tuple[int, ...],
) -> tuple[slice, ...] | None:
    """The part of the array an inner chunk covers; None when it lies past the array's edge."""
    region = []
    for outer, c, n, limit in zip(chunk.region, coords, lay.inner_shape, shape):
        start = outer.start + c * n
        if start >= limit:
            return None
        region.append(slice(start, min(start + n, limit)))
    return tuple(region)


def _decode_problem(array: Array, region: tuple[slice, ...]) -> str | None:
    """Why reading `region` (one chunk) through the array fails; None when it decodes."""
    try:
        values = array[region]
        np.asarray(values)
    except ZarrkitError as exc:
        return str(exc)
    except Exception as exc:  # a codec library's own error: still this chunk's fault
        return f"{type(exc).__name__}: {exc}"
    return None


def _codec_json(array: Array) -> list[Any]:
    return [c.to_json(array.metadata.format) for c in array.codecs]


def _sharding(array: Array) -> dict[str, Any] | None:
    """The sharding codec's v3 JSON when the array is sharded (its array -> bytes codec)."""
    if array.metadata.format != "v3":
        return None
    for codec in _codec_json(array):
        if isinstance(codec, dict) and codec.get("name") == "sharding_indexed":
            return codec
    return None


def _last_codec(array: Array) -> str | None:
    codecs = _codec_json(array)
    if not codecs:
        return None
    last = codecs[-1]
    name = last if isinstance(last, str) else last.get("name") or last.get("id")
    return str(name) if name is not None else None
