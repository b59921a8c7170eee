# Examples from zarr-python's user guide, docs/user-guide/arrays.md, taken as they are (each
# ```python exec="true"``` block of the page, in order; the markdown between them left out).
# Source: https://github.com/zarr-developers/zarr-python (commit d44f9f92ab4f12a8008de2553a7c9988669e3910, the 3.4 line:
# the guide zarr-python 3.4 publishes). Copyright (c) 2015-2025 Zarr Developers, MIT licence
# (https://github.com/zarr-developers/zarr-python/blob/main/LICENSE.txt), reproduced here
# under that licence's terms.
#
# Each `# %% <name> session=<session>` line starts one example; the examples of a session run in
# order in one namespace. tests/interop/test_zarr_python_guide.py runs them once with zarr-python
# and once with zarrkit and compares what each prints.

# %% arrays-01 session=arrays (Creating an array)
import shutil
shutil.rmtree('data', ignore_errors=True)
import numpy as np

# %% arrays-02 session=arrays (Creating an array)
import zarr
z = zarr.create_array(store="memory://arrays-demo", shape=(10000, 10000), chunks=(1000, 1000), dtype='int32')
print(z)

# %% arrays-03 session=arrays (Reading and writing data)
z[:] = 42

# %% arrays-04 session=arrays (Reading and writing data)
import numpy as np

z[0, :] = np.arange(10000)
z[:, 0] = np.arange(10000)

# %% arrays-05 session=arrays (Reading and writing data)
print(z[0, 0])

# %% arrays-06 session=arrays (Reading and writing data)
print(z[-1, -1])

# %% arrays-07 session=arrays (Reading and writing data)
print(z[0, :])

# %% arrays-08 session=arrays (Reading and writing data)
print(z[:, 0])

# %% arrays-09 session=arrays (Reading and writing data)
print(z[:])

# %% arrays-10 session=arrays (Persistent arrays)
z1 = zarr.create_array(store='data/example-1.zarr', shape=(10000, 10000), chunks=(1000, 1000), dtype='int32')

# %% arrays-11 session=arrays (Persistent arrays)
z1[:] = 42
z1[0, :] = np.arange(10000)
z1[:, 0] = np.arange(10000)

# %% arrays-12 session=arrays (Persistent arrays)
z2 = zarr.open_array('data/example-1.zarr', mode='r')
print(np.all(z1[:] == z2[:]))

# %% arrays-13 session=arrays (Persistent arrays)
a = np.arange(10)
zarr.save('data/example-2.zarr', a)
print(zarr.load('data/example-2.zarr'))

# %% arrays-14 session=arrays (Resizing and appending)
z = zarr.create_array(store='data/example-3.zarr', shape=(10000, 10000), dtype='int32', chunks=(1000, 1000))
z[:] = 42
print(f"Original shape: {z.shape}")
z.resize((20000, 10000))
print(f"New shape: {z.shape}")

# %% arrays-15 session=arrays (Resizing and appending)
a = np.arange(10000000, dtype='int32').reshape(10000, 1000)
z = zarr.create_array(store='data/example-4.zarr', shape=a.shape, dtype=a.dtype, chunks=(1000, 100))
z[:] = a
print(f"Original shape: {z.shape}")
z.append(a)
print(f"Shape after first append: {z.shape}")
z.append(np.vstack([a, a]), axis=1)
print(f"Shape after second append: {z.shape}")

# %% arrays-16 session=arrays (Runtime configuration)
arr = zarr.create_array({}, shape=(10,), dtype='int8', config={"write_empty_chunks": True})
print(arr.config)

# %% arrays-17 session=arrays (Runtime configuration)
arr_f = arr.with_config({"order": "F"})
print(arr_f.config)

# %% arrays-18 session=arrays (Compressors)
compressors = zarr.codecs.BloscCodec(cname='zstd', clevel=3, shuffle='bitshuffle')
data = np.arange(100000000, dtype='int32').reshape(10000, 10000)
z = zarr.create_array(store='data/example-5.zarr', shape=data.shape, dtype=data.dtype, chunks=(1000, 1000), compressors=compressors)
z[:] = data
print(z.compressors)

# %% arrays-19 session=arrays (Compressors)
print(z.info)

# %% arrays-20 session=arrays (Compressors)
print(z.info_complete())

# %% arrays-21 session=arrays (Compressors)
z_no_compress = zarr.create_array(store='data/example-uncompressed.zarr', shape=(10000, 10000), chunks=(1000, 1000), dtype='int32', compressors=None)
print(f"Compressors: {z_no_compress.compressors}")

# %% arrays-22 session=arrays (Compressors)
data = np.arange(100000000, dtype='int32').reshape(10000, 10000)
z = zarr.create_array(store='data/example-6.zarr', shape=data.shape, dtype=data.dtype, chunks=(1000, 1000), compressors=zarr.codecs.GzipCodec(level=1))
z[:] = data
print(f"Compressors: {z.compressors}")

# %% arrays-23 session=arrays (Compressors)
import lzma
from zarr.codecs.numcodecs import LZMA

lzma_filters = [dict(id=lzma.FILTER_DELTA, dist=4), dict(id=lzma.FILTER_LZMA2, preset=1)]
compressors = LZMA(filters=lzma_filters)
data = np.arange(100000000, dtype='int32').reshape(10000, 10000)
z = zarr.create_array(store='data/example-7.zarr', shape=data.shape, dtype=data.dtype, chunks=(1000, 1000), compressors=compressors)
print(f"Compressors: {z.compressors}")

# %% arrays-24 session=arrays (Filters)
from zarr.codecs.numcodecs import Delta

filters = [Delta(dtype='int32')]
compressors = zarr.codecs.BloscCodec(cname='zstd', clevel=1, shuffle='shuffle')
data = np.arange(100000000, dtype='int32').reshape(10000, 10000)
z = zarr.create_array(store='data/example-9.zarr', shape=data.shape, dtype=data.dtype, chunks=(1000, 1000), filters=filters, compressors=compressors)
print(z.info_complete())

# %% arrays-25 session=arrays (Indexing with coordinate arrays)
data = np.arange(10) ** 2
z = zarr.create_array(store='data/example-10.zarr', shape=data.shape, dtype=data.dtype)
z[:] = data
print(z[:])
print(z.get_coordinate_selection([2, 5]))

# %% arrays-26 session=arrays (Indexing with coordinate arrays)
z.set_coordinate_selection([2, 5], [-1, -2])
print(z[:])

# %% arrays-27 session=arrays (Indexing with coordinate arrays)
data = np.arange(15).reshape(3, 5)
z = zarr.create_array(store='data/example-11.zarr', shape=data.shape, dtype=data.dtype)
z[:] = data
print(z[:])

# %% arrays-28 session=arrays (Indexing with coordinate arrays)
print(z.get_coordinate_selection(([0, 2], [1, 3])))

# %% arrays-29 session=arrays (Indexing with coordinate arrays)
z.set_coordinate_selection(([0, 2], [1, 3]), [-1, -2])
print(z[:])

# %% arrays-30 session=arrays (Indexing with coordinate arrays)
print(z.vindex[[0, 2], [1, 3]])
z.vindex[[0, 2], [1, 3]] = [-3, -4]

# %% arrays-31 session=arrays (Indexing with coordinate arrays)
print(z[:])

# %% arrays-32 session=arrays (Indexing with coordinate arrays)
print(z[[0, 2], [1, 3]])

# %% arrays-33 session=arrays (Indexing with coordinate arrays)
print(z[1, [1, 3]])
print(z[[1, 1], [1, 3]])

# %% arrays-34 session=arrays (Indexing with a mask array)
data = np.arange(10) ** 2
z = zarr.create_array(store='data/example-12.zarr', shape=data.shape, dtype=data.dtype)
z[:] = data
print(z[:])

# %% arrays-35 session=arrays (Indexing with a mask array)
sel = np.zeros_like(z, dtype=bool)
sel[2] = True
sel[5] = True
print(z.get_mask_selection(sel))

# %% arrays-36 session=arrays (Indexing with a mask array)
z.set_mask_selection(sel, [-1, -2])
print(z[:])

# %% arrays-37 session=arrays (Indexing with a mask array)
data = np.arange(15).reshape(3, 5)
z = zarr.create_array(store='data/example-13.zarr', shape=data.shape, dtype=data.dtype)
z[:] = data
print(z[:])

# %% arrays-38 session=arrays (Indexing with a mask array)
sel = np.zeros_like(z, dtype=bool)
sel[0, 1] = True
sel[2, 3] = True
print(z.get_mask_selection(sel))

# %% arrays-39 session=arrays (Indexing with a mask array)
z.set_mask_selection(sel, [-1, -2])
print(z[:])

# %% arrays-40 session=arrays (Indexing with a mask array)
print(z.vindex[sel])

# %% arrays-41 session=arrays (Indexing with a mask array)

z.vindex[sel] = [-3, -4]
print(z[:])

# %% arrays-42 session=arrays (Orthogonal indexing)
data = np.arange(15).reshape(3, 5)
z = zarr.create_array(store='data/example-14.zarr', shape=data.shape, dtype=data.dtype)
z[:] = data
print(z[:])

# %% arrays-43 session=arrays (Orthogonal indexing)
print(z.get_orthogonal_selection(([0, 2], slice(None))))  # select first and third rows

# %% arrays-44 session=arrays (Orthogonal indexing)
print(z.get_orthogonal_selection((slice(None), [1, 3])))  # select second and fourth columns

# %% arrays-45 session=arrays (Orthogonal indexing)
print(z.get_orthogonal_selection(([0, 2], [1, 3])))  # select rows [0, 2] and columns [1, 3]

# %% arrays-46 session=arrays (Orthogonal indexing)
z.set_orthogonal_selection(([0, 2], [1, 3]), [[-1, -2], [-3, -4]])

# %% arrays-47 session=arrays (Orthogonal indexing)
data = np.arange(15).reshape(3, 5)
z = zarr.create_array(store='data/example-15.zarr', shape=data.shape, dtype=data.dtype)
z[:] = data
print(z.oindex[[0, 2], :])  # select first and third rows

# %% arrays-48 session=arrays (Orthogonal indexing)
print(z.oindex[:, [1, 3]])  # select second and fourth columns

# %% arrays-49 session=arrays (Orthogonal indexing)
print(z.oindex[[0, 2], [1, 3]])  # select rows [0, 2] and columns [1, 3]

# %% arrays-50 session=arrays (Orthogonal indexing)
z.oindex[[0, 2], [1, 3]] = [[-1, -2], [-3, -4]]
print(z[:])

# %% arrays-51 session=arrays (Orthogonal indexing)
data = np.arange(15).reshape(3, 5)
z = zarr.create_array(store='data/example-16.zarr', shape=data.shape, dtype=data.dtype)
z[:] = data
print(np.all(z.oindex[[0, 2], :] == z[[0, 2], :]))

# %% arrays-52 session=arrays (Block indexing)
data = np.arange(100).reshape(10, 10)
z = zarr.create_array(store='data/example-17.zarr', shape=data.shape, dtype=data.dtype, chunks=(3, 3))
z[:] = data

# %% arrays-53 session=arrays (Block indexing)
print(z.get_block_selection(1))

# %% arrays-54 session=arrays (Block indexing)
print(z[3:6])

# %% arrays-55 session=arrays (Block indexing)
print(z.blocks[1])

# %% arrays-56 session=arrays (Block indexing)
print(z.blocks[0, 1:3])

# %% arrays-57 session=arrays (Block indexing)
z = zarr.create_array(store='data/example-18.zarr', shape=(6, 6), dtype=int, chunks=(2, 2))

# %% arrays-58 session=arrays (Block indexing)
z.set_block_selection((1, 0), 1)
print(z[...])

# %% arrays-59 session=arrays (Block indexing)
z.blocks[:, 2] = 7
print(z[...])

# %% arrays-60 session=arrays (Block indexing)
print(z.blocks[2, 1:3])

# %% arrays-61 session=arrays (Sharding)
a = zarr.create_array('data/example-20.zarr', shape=(10000, 10000), shards=(1000, 1000), chunks=(100, 100), dtype='uint8')
a[:] = (np.arange(10000 * 10000) % 256).astype('uint8').reshape(10000, 10000)
print(a.info_complete())

# %% arrays-62 session=arrays (Rectilinear (variable) chunk grids)
import zarr
zarr.config.set({"array.rectilinear_chunks": True})

# %% arrays-63 session=arrays (Creating arrays with rectilinear chunks)
z = zarr.create_array(
    store=zarr.storage.MemoryStore(),
    shape=(60, 100),
    chunks=[[10, 20, 30], [50, 50]],
    dtype='int32',
)
print(z.info)

# %% arrays-64 session=arrays (Reading and writing data)
import numpy as np
data = np.arange(60 * 100, dtype='int32').reshape(60, 100)
z[:] = data
# Read a slice that spans the first two chunks (sizes 10 and 20) along axis 0
print(z[5:25, 0:5])

# %% arrays-65 session=arrays (Inspecting chunk sizes)
print(z.write_chunk_sizes)

# %% arrays-66 session=arrays (Inspecting chunk sizes)
z_regular = zarr.create_array(
    store=zarr.storage.MemoryStore(),
    shape=(100, 80),
    chunks=(30, 40),
    dtype='int32',
)
print(z_regular.write_chunk_sizes)

# %% arrays-67 session=arrays (Resizing and appending)
z = zarr.create_array(
    store=zarr.storage.MemoryStore(),
    shape=(30,),
    chunks=[[10, 20]],
    dtype='float64',
)
z[:] = np.arange(30, dtype='float64')
print(f"Before resize: chunk_sizes={z.write_chunk_sizes}")
z.resize((50,))
print(f"After resize:  chunk_sizes={z.write_chunk_sizes}")

# %% arrays-68 session=arrays (Resizing and appending)
z.append(np.arange(10, dtype='float64'))
print(f"After append:  shape={z.shape}, chunk_sizes={z.write_chunk_sizes}")

# %% arrays-69 session=arrays (Compressors and filters)
z = zarr.create_array(
    store=zarr.storage.MemoryStore(),
    shape=(60, 100),
    chunks=[[10, 20, 30], [50, 50]],
    dtype='float64',
    filters=[zarr.codecs.TransposeCodec(order=(1, 0))],
    compressors=[zarr.codecs.BloscCodec(cname='zstd', clevel=3)],
)
z[:] = np.arange(60 * 100, dtype='float64').reshape(60, 100)
np.testing.assert_array_equal(z[:], np.arange(60 * 100, dtype='float64').reshape(60, 100))
print("Roundtrip OK")

# %% arrays-70 session=arrays (Rectilinear shard boundaries)
z = zarr.create_array(
    store=zarr.storage.MemoryStore(),
    shape=(120, 100),
    chunks=(10, 10),
    shards=[[60, 40, 20], [50, 50]],
    dtype='int32',
)
z[:] = np.arange(120 * 100, dtype='int32').reshape(120, 100)
print(z[50:70, 40:60])
