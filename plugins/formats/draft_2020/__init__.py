"""The 2020 editor's draft of the v3 core protocol (`v3-draft-2020`), as zarr-python 2.x's
experimental v3 mode wrote it: the `zarr.json` entry point (`entry`), the `meta/root/` and
`data/root/` keys (`keys`), core data type identifiers (`types`) and the format (`format`)."""
