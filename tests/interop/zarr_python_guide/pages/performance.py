# Examples from zarr-python's user guide, docs/user-guide/performance.md, taken as they are (each
# ```python exec="true"``` block of the page, in order; the markdown between them left out).
# Source: https://github.com/zarr-developers/zarr-python (commit d44f9f92ab4f12a8008de2553a7c9988669e3910, the 3.4 line:
# the guide zarr-python 3.4 publishes). Copyright (c) 2015-2025 Zarr Developers, MIT licence
# (https://github.com/zarr-developers/zarr-python/blob/main/LICENSE.txt), reproduced here
# under that licence's terms.
#
# Each `# %% <name> session=<session>` line starts one example; the examples of a session run in
# order in one namespace. tests/interop/test_zarr_python_guide.py runs them once with zarr-python
# and once with zarrkit and compares what each prints.

# %% performance-01 session=performance (Chunk size and shape)
import zarr
z1 = zarr.create_array(store={}, shape=(10000, 10000), chunks=(100, 10000), dtype='int32')
print(z1.chunks)

# %% performance-02 session=performance (Chunk size and shape)
z2 = zarr.create_array(store={}, shape=(10000, 10000), chunks=(10000, 100), dtype='int32')
print(z2.chunks)

# %% performance-03 session=performance (Chunk size and shape)
z3 = zarr.create_array(store={}, shape=(10000, 10000), chunks=(1000, 1000), dtype='int32')
print(z3.chunks)

# %% performance-04 session=performance (Chunk size and shape)
z4 = zarr.create_array(store={}, shape=(10000, 10000), chunks='auto', dtype='int32')
print(z4.chunks)

# %% performance-05 session=performance (Chunk size and shape)
z5 = zarr.create_array(store={}, shape=(10000, 10000), chunks=(10000, 10000), dtype='int32')
print(z5.chunks)

# %% performance-06 session=performance (Sharding)
z6 = zarr.create_array(store={}, shape=(10000, 10000, 1000), shards=(1000, 1000, 1000), chunks=(100, 100, 100), dtype='uint8')
print(z6.info)

# %% performance-07 session=performance (Chunk memory layout)
import numpy as np

c = zarr.create_array(store={}, shape=(10000, 10000), chunks=(1000, 1000), dtype='int32', config={'order': 'C'})
print(c[:100, :100].flags.c_contiguous)

# %% performance-08 session=performance (Chunk memory layout)
with zarr.config.set({'array.order': 'F'}):
    f = zarr.create_array(store={}, shape=(10000, 10000), chunks=(1000, 1000), dtype='int32')
print(f[:100, :100].flags.f_contiguous)

# %% performance-09 session=performance (Empty chunks)
arr = zarr.create_array(store={}, shape=(1,), dtype='uint8')
assert arr.config.write_empty_chunks == False

# %% performance-10 session=performance (Empty chunks)
import zarr
import numpy as np
import time

def timed_write(write_empty_chunks):
    """
    Measure the time required and number of objects created when writing
    to a Zarr array with random ints or fill value.
    """
    chunks = (8192,)
    shape = (chunks[0] * 1024,)
    data = np.random.randint(0, 255, shape)
    dtype = 'uint8'
    arr = zarr.create_array(
        f'data/example-{write_empty_chunks}.zarr',
        shape=shape,
        chunks=chunks,
        dtype=dtype,
        fill_value=0,
        config={'write_empty_chunks': write_empty_chunks}
     )
    # initialize all chunks
    arr[:] = 100
    result = []
    for value in (data, arr.fill_value):
        start = time.time()
        arr[:] = value
        elapsed = time.time() - start
        result.append((elapsed, arr.nchunks_initialized))
    return result

# log results
for write_empty_chunks in (True, False):
    full, empty = timed_write(write_empty_chunks)
    print(f'\nwrite_empty_chunks={write_empty_chunks}:\n\tRandom Data: {full[0]:.4f}s, {full[1]} objects stored\n\t Empty Data: {empty[0]:.4f}s, {empty[1]} objects stored\n')

# %% performance-11 session=perf-concurrency (Concurrent I/O operations)
import zarr

# Set concurrency for the current session
zarr.config.set({'async.concurrency': 128})

# Or use environment variable
# export ZARR_ASYNC_CONCURRENCY=128

# %% performance-12 session=perf-workers (Thread pool size (`threading.max_workers`))
import zarr

zarr.config.set({'threading.max_workers': 8})

# %% performance-13 session=performance (Pickle support)
import pickle
data = np.arange(100000)
z1 = zarr.create_array(store='data/perf-example-2.zarr', shape=data.shape, chunks=data.shape, dtype=data.dtype)
z1[:] = data
s = pickle.dumps(z1)
z2 = pickle.loads(s)
assert z1 == z2
print(np.all(z1[:] == z2[:]))
