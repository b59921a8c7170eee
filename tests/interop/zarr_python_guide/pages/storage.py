# Examples from zarr-python's user guide, docs/user-guide/storage.md, taken as they are (each
# ```python exec="true"``` block of the page, in order; the markdown between them left out).
# Source: https://github.com/zarr-developers/zarr-python (commit d44f9f92ab4f12a8008de2553a7c9988669e3910, the 3.4 line:
# the guide zarr-python 3.4 publishes). Copyright (c) 2015-2025 Zarr Developers, MIT licence
# (https://github.com/zarr-developers/zarr-python/blob/main/LICENSE.txt), reproduced here
# under that licence's terms.
#
# Each `# %% <name> session=<session>` line starts one example; the examples of a session run in
# order in one namespace. tests/interop/test_zarr_python_guide.py runs them once with zarr-python
# and once with zarrkit and compares what each prints.

# %% storage-01 session=storage (Implicit Store Creation)
import zarr

# Implicitly creates a writable LocalStore
group = zarr.create_group(store='data/foo/bar')
print(group)

# %% storage-02 session=storage (Implicit Store Creation)
# Implicitly creates a read-only FsspecStore
# Note: requires s3fs to be installed
group = zarr.open_group(
   store='s3://noaa-nwm-retro-v2-zarr-pds',
   mode='r',
   storage_options={'anon': True}
)
print(group)

# %% storage-03 session=storage (Implicit Store Creation)
# Implicitly creates a MemoryStore
data = {}
group = zarr.create_group(store=data)
print(group)

# %% storage-04 session=storage (StoreLike {#user-guide-store-like})
group = zarr.open_group(store='data/foo/bar')
print(group)

# %% storage-05 session=storage (StoreLike {#user-guide-store-like})
from pathlib import Path
group = zarr.open_group(store=Path('data/foo/bar'))
print(group)

# %% storage-06 session=storage (StoreLike {#user-guide-store-like})
# Note: requires s3fs to be installed
group = zarr.open_group(
   store='s3://noaa-nwm-retro-v2-zarr-pds',
   mode='r',
   storage_options={'anon': True}
)
print(group)

# %% storage-07 session=storage (StoreLike {#user-guide-store-like})
group = zarr.create_group(store={})
print(group)

# %% storage-08 session=storage (StoreLike {#user-guide-store-like})
group = zarr.create_group(store=None)
print(group)

# %% storage-09 session=storage (Local Store)
store = zarr.storage.LocalStore('data/foo/bar', read_only=True)
group = zarr.open_group(store=store, mode='r')
print(group)

# %% storage-10 session=storage (Zip Store)
store = zarr.storage.ZipStore('data.zip', mode='w')
array = zarr.create_array(store=store, shape=(2,), dtype='float64')
print(array)

# %% storage-11 session=storage (Zip Store)
store.close()
f = open('data.zip', mode='rb')  # must stay open while the store is used
array = zarr.open_array(store=zarr.storage.ZipStore(f), mode='r')
print(array[:])
f.close()

# %% storage-12 session=storage (Remote Store)
# Note: requires s3fs to be installed
store = zarr.storage.FsspecStore.from_url(
   's3://noaa-nwm-retro-v2-zarr-pds',
   read_only=True,
   storage_options={'anon': True}
)
group = zarr.open_group(store=store, mode='r')
print(group)

# %% storage-13 session=storage (Remote Store)
# Note: requires s3fs to be installed
import fsspec
fs = fsspec.filesystem('s3', anon=True, asynchronous=True)
store = zarr.storage.FsspecStore(fs, path='noaa-nwm-retro-v2-zarr-pds', read_only=True)
print(store)

# %% storage-14 session=storage (Memory Store)
data = {}
store = zarr.storage.MemoryStore(data)
array = zarr.create_array(store=store, shape=(2,), dtype='float64')
print(array)

# %% storage-15 session=storage (Object Store)
from zarr.storage import ObjectStore
from obstore.store import MemoryStore

store = ObjectStore(MemoryStore())
array = zarr.create_array(store=store, shape=(2,), dtype='float64')
print(array)

# %% storage-16 session=storage (Object Store)
from zarr.storage import ObjectStore
from obstore.store import S3Store

s3_store = S3Store('noaa-nwm-retro-v2-zarr-pds', skip_signature=True, region="us-west-2")
store = zarr.storage.ObjectStore(store=s3_store, read_only=True)
group = zarr.open_group(store=store, mode='r')
print(group.info)
