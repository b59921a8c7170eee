"""Reading an obstore answer's body without letting its headers size an allocation: the
obstore store's reads and its conditional updates' (`obstore_objects`, `obstore_updates`)."""

from __future__ import annotations

from typing import Any

from zarrkit.plugins.stores.remote.http_rules import TooLong

#: the most bytes of a body obstore gathers into one piece before handing it on (`collect`)
_PIECE = 8 << 20


async def collect(result: Any, limit: int) -> bytes:
    """The body of an obstore `get_async` answer, holding at most `limit` bytes: the length
    its headers declare is checked before any of the body is read (obstore's own `bytes()`
    allocates that length at once: a `Content-Length` of 2**62 aborts the process), and the
    body is then read in pieces of at most `_PIECE` bytes and refused one piece past the
    declared length (obstore believes a `Content-Length` longer than the range it answers).
    A refused answer's stream is dropped at once, which closes its connection; the store
    reports the refusal (`http_rules.TooLong`) as a `ValueTooLargeError`."""
    start, stop = result.range
    declared = stop - start
    if declared > limit:
        raise TooLong(
            f"the answer declares {declared} bytes, more than the {limit} bytes the read can hold"
        )
    stream = result.stream(min_chunk_size=max(1, min(declared, _PIECE)))
    pieces: list[bytes] = []
    held = 0
    try:
        async for piece in stream:
            held += len(piece)
            if held > declared:
                break
            pieces.append(piece)
    finally:
        del stream  # (a traceback keeps this frame: not the connection with it)
    if held > declared:
        pieces.clear()
        raise TooLong(f"the body runs past the {declared} bytes its answer declares")
    return pieces[0] if len(pieces) == 1 else b"".join(pieces)
