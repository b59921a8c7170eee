# Examples from zarr-python's user guide, docs/user-guide/config.md, taken as they are (each
# ```python exec="true"``` block of the page, in order; the markdown between them left out).
# Source: https://github.com/zarr-developers/zarr-python (commit d44f9f92ab4f12a8008de2553a7c9988669e3910, the 3.4 line:
# the guide zarr-python 3.4 publishes). Copyright (c) 2015-2025 Zarr Developers, MIT licence
# (https://github.com/zarr-developers/zarr-python/blob/main/LICENSE.txt), reproduced here
# under that licence's terms.
#
# Each `# %% <name> session=<session>` line starts one example; the examples of a session run in
# order in one namespace. tests/interop/test_zarr_python_guide.py runs them once with zarr-python
# and once with zarrkit and compares what each prints.

# %% config-01 session=config (Runtime configuration)
import zarr

zarr.config.set({'array.order': 'F'})

print(zarr.config.get('array.order'))

# %% config-02 session=config (Runtime configuration)
zarr.config.reset()

with zarr.config.set({'array.order': 'F'}):
    print(zarr.config.get('array.order'))

print(zarr.config.get('array.order'))

# %% config-03 session=config (Runtime configuration)
from pprint import pprint
import io
output = io.StringIO()
zarr.config.pprint(stream=output, width=60)
print(output.getvalue())
