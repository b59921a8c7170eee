# Examples from zarr-python's user guide, docs/user-guide/consolidated_metadata.md, taken as they are (each
# ```python exec="true"``` block of the page, in order; the markdown between them left out).
# Source: https://github.com/zarr-developers/zarr-python (commit d44f9f92ab4f12a8008de2553a7c9988669e3910, the 3.4 line:
# the guide zarr-python 3.4 publishes). Copyright (c) 2015-2025 Zarr Developers, MIT licence
# (https://github.com/zarr-developers/zarr-python/blob/main/LICENSE.txt), reproduced here
# under that licence's terms.
#
# Each `# %% <name> session=<session>` line starts one example; the examples of a session run in
# order in one namespace. tests/interop/test_zarr_python_guide.py runs them once with zarr-python
# and once with zarrkit and compares what each prints.

# %% consolidated_metadata-01 session=consolidated_metadata (Usage)
import zarr
import warnings

warnings.filterwarnings("ignore", category=UserWarning)
group = zarr.create_group(store="memory://consolidated-metadata-demo")
print(group)
array = group.create_array(shape=(1,), name='a', dtype='float64')
print(array)

# %% consolidated_metadata-02 session=consolidated_metadata (Usage)
array = group.create_array(shape=(2, 2), name='b', dtype='float64')
print(array)

# %% consolidated_metadata-03 session=consolidated_metadata (Usage)
array = group.create_array(shape=(3, 3, 3), name='c', dtype='float64')
print(array)

# %% consolidated_metadata-04 session=consolidated_metadata (Usage)
result = zarr.consolidate_metadata("memory://consolidated-metadata-demo")
print(result)

# %% consolidated_metadata-05 session=consolidated_metadata (Usage)
from pprint import pprint
import io

consolidated = zarr.open_group(store="memory://consolidated-metadata-demo")
consolidated_metadata = consolidated.metadata.consolidated_metadata.metadata

output = io.StringIO()
pprint(dict(sorted(consolidated_metadata.items())), stream=output, width=60)
print(output.getvalue())

# %% consolidated_metadata-06 session=consolidated_metadata (Usage)
print(consolidated['a'])  # no read / HTTP request to the Store is required

# %% consolidated_metadata-07 session=consolidated_metadata (Usage)
child = group.create_group('child', attributes={'kind': 'child'})
grandchild = child.create_group('grandchild', attributes={'kind': 'grandchild'})
consolidated = zarr.consolidate_metadata("memory://consolidated-metadata-demo")

output = io.StringIO()
pprint(consolidated['child'].metadata.consolidated_metadata, stream=output, width=60)
print(output.getvalue())

# %% consolidated_metadata-08 session=consolidated_metadata (Controlling the use of consolidated metadata)
group = zarr.open_group(store="memory://consolidated-metadata-demo", use_consolidated=False)
print(group.metadata.consolidated_metadata)
