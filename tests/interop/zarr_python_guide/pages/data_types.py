# Examples from zarr-python's user guide, docs/user-guide/data_types.md, taken as they are (each
# ```python exec="true"``` block of the page, in order; the markdown between them left out).
# Source: https://github.com/zarr-developers/zarr-python (commit d44f9f92ab4f12a8008de2553a7c9988669e3910, the 3.4 line:
# the guide zarr-python 3.4 publishes). Copyright (c) 2015-2025 Zarr Developers, MIT licence
# (https://github.com/zarr-developers/zarr-python/blob/main/LICENSE.txt), reproduced here
# under that licence's terms.
#
# Each `# %% <name> session=<session>` line starts one example; the examples of a session run in
# order in one namespace. tests/interop/test_zarr_python_guide.py runs them once with zarr-python
# and once with zarrkit and compares what each prints.

# %% data_types-01 session=data_types (Data types in Zarr version 2)
import zarr
import numpy as np
import json

store = {}
np_dtype = np.dtype('int64')
print(np_dtype.str)

# %% data_types-02 session=data_types (Data types in Zarr version 2)
z = zarr.create_array(store=store, shape=(1,), dtype=np_dtype, zarr_format=2)
dtype_meta = json.loads(store['.zarray'].to_bytes())["dtype"]
print(dtype_meta)

# %% data_types-03 session=data_types (Structured data type)
store = {}
np_dtype = np.dtype([('field_a', '>i2'), ('field_b', [('subfield_c', '>f4'), ('subfield_d', 'i2')])])
print(np_dtype.str)

# %% data_types-04 session=data_types (Structured data type)
z = zarr.create_array(store=store, shape=(1,), dtype=np_dtype, zarr_format=2)
dtype_meta = json.loads(store['.zarray'].to_bytes())["dtype"]
print(dtype_meta)

# %% data_types-05 session=data_types (Example usage)
from zarr.dtype import Int8
import numpy as np
int8 = Int8.from_native_dtype(np.dtype('int8'))

# %% data_types-06 session=data_types (Example usage)
native_dtype = int8.to_native_dtype()
assert native_dtype == np.dtype('int8')

# %% data_types-07 session=data_types (Example usage)
default_value = int8.default_scalar()
assert default_value == np.int8(0)

# %% data_types-08 session=data_types (Example usage)
json_v2 = int8.to_json(zarr_format=2)
print(json_v2)

# %% data_types-09 session=data_types (Example usage)
json_v3 = int8.to_json(zarr_format=3)
print(json_v3)

# %% data_types-10 session=data_types (Example usage)
json_value = int8.to_json_scalar(42, zarr_format=3)
print(json_value)

# %% data_types-11 session=data_types (Example usage)
scalar_value = int8.from_json_scalar(42, zarr_format=3)
assert scalar_value == np.int8(42)

# %% data_types-12 session=data_types (Data type resolution)
from zarr import create_array
import numpy as np
a = create_array({}, shape=(10,), dtype=np.dtype('int'))
print(a)

# %% data_types-13 session=data_types (Data type resolution)
a = create_array({}, shape=(10,), dtype='<i8')
print(a)

# %% data_types-14 session=data_types (Data type resolution)
print(type(a.dtype))

# %% data_types-15 session=data_types (Data type resolution)
from zarr import create_array
import numpy as np
a = create_array({}, shape=(10,), dtype=[('a', 'f8'), ('b', 'i8')])
print(a.dtype) # this is the NumPy data type

# %% data_types-16 session=data_types (Data type resolution)
print(a.metadata.data_type) # this is the Zarr data type

# %% data_types-17 session=data_types (Data type resolution)
import numpy as np
from zarr.dtype import parse_dtype
my_dtype = np.dtype('>M8[10s]')
print(parse_dtype(my_dtype, zarr_format=2))

# %% data_types-18 session=data_types (Data type resolution)
dtype_str = '>M8[10s]'
print(parse_dtype(dtype_str, zarr_format=2))

# %% data_types-19 session=data_types (Data type resolution)
from zarr.dtype import DateTime64
zdt = DateTime64(endianness='big', scale_factor=10, unit='s')
print(parse_dtype(zdt, zarr_format=2)) # Use a ZDType (this is a no-op)

# %% data_types-20 session=data_types (Data type resolution)
dt_dict = {"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 10}}
print(parse_dtype(dt_dict, zarr_format=3))

# %% data_types-21 session=data_types (Data type resolution)
print(parse_dtype(dt_dict, zarr_format=3).to_json(zarr_format=3))
