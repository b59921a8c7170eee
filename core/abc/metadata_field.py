"""The metadata-field contract: a top-level field of a node's document (`zarr.json`) that a
package understands, and reads and writes (entry-point group `zarrkit.metadata_fields`)."""

from __future__ import annotations

from ..metadata_field import FieldSite, MetadataField

__all__ = ["FieldSite", "MetadataField"]
