"""Zarr formats other than v3, each a `zarrkit.formats` entry point: v2 (`.zarray`, `.zgroup`,
`.zattrs`, `.zmetadata`) and the 2020 editor's draft of v3 (`draft_2020`). `layout_codec` is
what both use for a chunk's memory layout, which neither format writes as a codec."""
