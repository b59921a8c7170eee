"""Copying whole hierarchies between stores and converting them between Zarr formats: an
application on zarrkit, shipped in the same distribution but outside the kernel (the kernel never
imports it). See `hierarchies` for how a transfer is planned, written, resumed and verified."""

from zarrkit.errors import TransferError

from .hierarchies import (
    NodePlan,
    Progress,
    TransferReport,
    compare,
    convert,
    copy,
    walk,
)

__all__ = [
    "NodePlan",
    "Progress",
    "TransferError",
    "TransferReport",
    "compare",
    "convert",
    "copy",
    "walk",
]
