"""A codec's names outside v3: its numcodecs id (v2) and the 2020 draft's URI made of it.

Zarr v2 names a codec by its numcodecs id (`{"id": "gzip", "level": 1}`); the 2020 v3 draft
by a URI made of that id (`https://purl.org/zarr/spec/codec/gzip/1.0`, as zarr-python 2.x's
experimental v3 wrote it), with numcodecs' configuration minus the id. Keeping the rule here
means a codec declares only its numcodecs id.
"""

from __future__ import annotations

import re

DRAFT_PREFIX = "https://purl.org/zarr/spec/codec/"
#: the draft URI of any numcodecs id; group 1 is the id
DRAFT_PATTERN = re.escape(DRAFT_PREFIX) + r"([A-Za-z0-9_.\-]+)/1\.0"


def draft_uri(codec_id: str) -> str:
    return f"{DRAFT_PREFIX}{codec_id}/1.0"


def draft_id(uri: str) -> str | None:
    """The numcodecs id inside a draft codec URI, or None when it is not one."""
    match = re.fullmatch(DRAFT_PATTERN, uri)
    return match.group(1) if match else None
