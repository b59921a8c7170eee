"""The names `engine/awaiting.py` imports from here; the codec contract is defined in
`zarrkit.abc.codec`. (Kept until that module, which another change is rewriting, imports them
from there.)"""

from __future__ import annotations

from .abc.codec import CacheableRange, RangeReads, lockstep

__all__ = ["CacheableRange", "RangeReads", "lockstep"]
