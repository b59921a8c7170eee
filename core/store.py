"""The names `engine/awaiting.py` imports from here; the store contract is defined in
`zarrkit.abc.store`. (Kept until that module, which another change is rewriting, imports them
from there.)"""

from __future__ import annotations

from .abc.store import AwaitableReads, Range

__all__ = ["AwaitableReads", "Range"]
