"""Stores over other libraries' objects: Python mappings and zarr-python stores."""
