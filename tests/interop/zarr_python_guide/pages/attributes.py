# Examples from zarr-python's user guide, docs/user-guide/attributes.md, taken as they are (each
# ```python exec="true"``` block of the page, in order; the markdown between them left out).
# Source: https://github.com/zarr-developers/zarr-python (commit d44f9f92ab4f12a8008de2553a7c9988669e3910, the 3.4 line:
# the guide zarr-python 3.4 publishes). Copyright (c) 2015-2025 Zarr Developers, MIT licence
# (https://github.com/zarr-developers/zarr-python/blob/main/LICENSE.txt), reproduced here
# under that licence's terms.
#
# Each `# %% <name> session=<session>` line starts one example; the examples of a session run in
# order in one namespace. tests/interop/test_zarr_python_guide.py runs them once with zarr-python
# and once with zarrkit and compares what each prints.

# %% attributes-01 session=attributes (Working with attributes)
import zarr
root = zarr.create_group(store="memory://attributes-demo")
root.attrs['foo'] = 'bar'
z = root.create_array(name='zzz', shape=(10000, 10000), dtype='int32')
z.attrs['baz'] = 42
z.attrs['qux'] = [1, 4, 7, 12]
print(sorted(root.attrs))

# %% attributes-02 session=attributes (Working with attributes)
print('foo' in root.attrs)

# %% attributes-03 session=attributes (Working with attributes)
print(root.attrs['foo'])

# %% attributes-04 session=attributes (Working with attributes)
print(sorted(z.attrs))

# %% attributes-05 session=attributes (Working with attributes)
print(z.attrs['baz'])

# %% attributes-06 session=attributes (Working with attributes)
print(z.attrs['qux'])

# %% attributes-07 session=attributes (Working with attributes)
del z.attrs['baz']
print(sorted(z.attrs))

# %% attributes-08 session=attributes (Working with attributes)
z = z.update_attributes({'baz': 43, 'quux': True})
print(sorted(z.attrs))
