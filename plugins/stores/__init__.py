"""zarrkit's store plugins, by family, each store reached only through its entry point:

- `memory`: values in a dict of this process.
- `local/`: this machine's files: a folder (`local`, with `beneath` for symlink-safe paths and
  `keylocks` for cross-process chunk updates), a zip archive (`zip`), an LMDB environment
  (`lmdb`), and the temp-file-then-rename steps they share (`fileops`).
- `remote/`: over a network: plain HTTP (`http`, with `http_rules` for redirects and
  credentials), fsspec's filesystems (`fsspec`, `s3_updates`) and obstore's object stores
  (`objectstore`, `obstore_updates`), the routing of `s3://`, `gs://` and `az://` between them
  (`s3_routing`, `cloud_routing`, `s3_options`), and what they share: byte-range merging
  (`ranges`) and the failure policy (`retrying`).
- `wrappers/`: stores over another store (`wrapper`): `cache`, `metrics`.
- `adapters/`: stores over other libraries' objects: any `Mapping` (`mapping`) and any
  zarr-python store (`zarr_python`).
- `pickling`: how every shipped store pickles (as the arguments that open it again).
"""
