"""zarrkit for xarray: `xr.open_dataset(..., engine="zarrkit")` (and `open_datatree`,
`open_groups`, `open_mfdataset`) reads Zarr through zarrkit; `to_zarrkit(ds, store, ...)` (a
Dataset or a DataArray) and `datatree_to_zarrkit(tree, store, ...)` write as `to_zarr` does,
through zarrkit.

This is an integration, not a plugin: plugins (`zarrkit.plugins`) extend zarrkit through its
registries, while this package extends xarray through xarray's (`xarray.backends`). It is the
only part of zarrkit that imports xarray; `import zarrkit` does not import it.
"""

from __future__ import annotations

from .write import datatree_to_zarrkit, to_zarrkit

__all__ = ["datatree_to_zarrkit", "to_zarrkit"]
