# Examples from zarr-python's user guide, docs/user-guide/groups.md, taken as they are (each
# ```python exec="true"``` block of the page, in order; the markdown between them left out).
# Source: https://github.com/zarr-developers/zarr-python (commit d44f9f92ab4f12a8008de2553a7c9988669e3910, the 3.4 line:
# the guide zarr-python 3.4 publishes). Copyright (c) 2015-2025 Zarr Developers, MIT licence
# (https://github.com/zarr-developers/zarr-python/blob/main/LICENSE.txt), reproduced here
# under that licence's terms.
#
# Each `# %% <name> session=<session>` line starts one example; the examples of a session run in
# order in one namespace. tests/interop/test_zarr_python_guide.py runs them once with zarr-python
# and once with zarrkit and compares what each prints.

# %% groups-01 session=groups (Working with groups)
import zarr
root = zarr.create_group(store="memory://groups-demo")
print(root)

# %% groups-02 session=groups (Working with groups)
foo = root.create_group('foo')
bar = foo.create_group('bar')

# %% groups-03 session=groups (Working with groups)
z1 = bar.create_array(name='baz', shape=(10000, 10000), chunks=(1000, 1000), dtype='int32')
print(z1)

# %% groups-04 session=groups (Working with groups)
print(root['foo'])

# %% groups-05 session=groups (Working with groups)
print(root['foo/bar'])

# %% groups-06 session=groups (Working with groups)
print(root['foo/bar/baz'])

# %% groups-07 session=groups (Working with groups)
print(root.get_group('foo'))

# %% groups-08 session=groups (Working with groups)
print(root.get_array('foo/bar/baz'))

# %% groups-09 session=groups (Working with groups)
from zarr.errors import ContainsGroupError

try:
    root.get_array('foo')
except ContainsGroupError as e:
    print(e)

# %% groups-10 session=groups (Working with groups)
print(root.tree())

# %% groups-11 session=groups (Working with groups)
root = zarr.open_group('data/group.zarr', mode='w')
print(root)

# %% groups-12 session=groups (Working with groups)
z = root.create_array(name='foo/bar/baz', shape=(10000, 10000), chunks=(1000, 1000), dtype='int32')
print(z)

# %% groups-13 session=groups (Exploring group contents)
print(list(root.keys()))
print('foo' in root)

# %% groups-14 session=groups (Exploring group contents)
for name, member in root.members():
    print(name, member)

# %% groups-15 session=groups (Exploring group contents)
for name, member in root.members(max_depth=None):
    print(name, member)

# %% groups-16 session=groups (Exploring group contents)
del root['foo/bar/baz']
for name, member in root.members(max_depth=None):
    print(name, member)

# %% groups-17 session=groups (Batch group creation)
from zarr import create_hierarchy
from zarr.core.group import GroupMetadata
from zarr.storage import LocalStore

from pprint import pprint
import io

node_spec = {'a/b/c': GroupMetadata()}
nodes_created = dict(create_hierarchy(store=LocalStore(root='data'), nodes=node_spec))
# Report nodes (pprint is used for cleaner rendering in the docs)
output = io.StringIO()
pprint(nodes_created, stream=output, width=60)
print(output.getvalue())

# %% groups-18 session=groups (Array and group diagnostics)
root = zarr.group(store="memory://diagnostics-demo")
foo = root.create_group('foo')
bar = foo.create_array(name='bar', shape=1000000, chunks=100000, dtype='int64')
bar[:] = 42
baz = foo.create_array(name='baz', shape=(1000, 1000), chunks=(100, 100), dtype='float32')
baz[:] = 4.2
print(root.info)

# %% groups-19 session=groups (Array and group diagnostics)
print(foo.info)

# %% groups-20 session=groups (Array and group diagnostics)
print(bar.info_complete())

# %% groups-21 session=groups (Array and group diagnostics)
print(baz.info)

# %% groups-22 session=groups (Array and group diagnostics)
print(root.tree())
