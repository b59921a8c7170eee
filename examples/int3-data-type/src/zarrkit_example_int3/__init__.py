"""`example.int3`: a signed 3-bit integer (-4..3), as a zarrkit data type plugin.

In numpy the values live in int8, one per byte. zarrkit's `bytes` codec stores that byte;
its `packbits` codec stores only the 3 meaningful bits, because the type says so through
`bit_layout`. Neither codec names this type. Values outside -4..3 are refused on write and in
metadata, with the field named.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from zarrkit.abc import V3, DataType, names
from zarrkit.errors import MetadataError

LOW, HIGH = -4, 3


class Int3(DataType):
    names = names("example.int3")
    # no numpy_keys: numpy int8 stays zarrkit's `int8`; users ask for "example.int3" by name

    @property
    def native(self) -> np.dtype:
        return np.dtype("int8")

    @property
    def int_range(self) -> tuple[int, int]:
        return LOW, HIGH  # writes of values outside it are refused

    @property
    def bit_layout(self) -> tuple[int, int, bool]:
        return 3, 1, True  # 3 bits, one component, sign-extended on decode

    def default_fill(self) -> Any:
        return np.int8(0)

    def fill_from_json(self, value: Any, format: str = V3) -> Any:
        if isinstance(value, bool) or not isinstance(value, int) or not LOW <= value <= HIGH:
            raise MetadataError(
                f"the fill value of example.int3 is an integer in {LOW}..{HIGH}, got {value!r}",
                field="fill_value",
            )
        return np.int8(value)

    def fill_to_json(self, value: Any, format: str = V3) -> Any:
        return int(value)
