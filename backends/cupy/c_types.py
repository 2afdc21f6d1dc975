"""C types of dtypes in generated CUDA source: storage, compute type, literals and casts."""
from __future__ import annotations

import math
import struct
from dataclasses import dataclass

import numpy as np

from dynamo_lite.tensor.dtype import bool_, float16, float32, float64, int8, int16, int32, int64, uint8


@dataclass(frozen=True)
class CType:
    """How one dtype appears in a kernel.

    Attributes:
        storage: the element type of pointers to this dtype's memory.
        compute: the type values are computed in (float16 computes in float, as torch's
            CUDA kernels do, and is rounded once when stored).
        load: format string turning a storage value into a compute value.
        store: format string turning a compute value into a storage value.
        is_float: a floating compute type (math functions take the ``f`` suffix for float).
    """

    storage: str
    compute: str
    load: str = "{}"
    store: str = "{}"
    is_float: bool = False

    @property
    def itemsize(self) -> int:
        return _ITEMSIZE[self.storage]

    @property
    def compute_itemsize(self) -> int:
        return _ITEMSIZE[self.compute]


# NOTE: [float16 without headers] float16 is stored as the raw 16 bits
# (``unsigned short``) and converted with one PTX ``cvt`` each way (``dl_h2f``/``dl_f2h``
# in the preamble), so the kernels need no CUDA header and compile with bare NVRTC.
C_TYPES = {
    float16: CType("unsigned short", "float", "dl_h2f({})", "dl_f2h({})", True),
    float32: CType("float", "float", is_float=True),
    float64: CType("double", "double", is_float=True),
    int8: CType("signed char", "signed char"),
    int16: CType("short", "short"),
    int32: CType("int", "int"),
    int64: CType("long long", "long long"),
    uint8: CType("unsigned char", "unsigned char"),
    bool_: CType("bool", "bool"),
}
_ITEMSIZE = {"unsigned short": 2, "float": 4, "double": 8, "signed char": 1, "short": 2, "int": 4,
             "long long": 8, "unsigned char": 1, "bool": 1}
# The dtype of each storage C type, for reading a kernel signature back.
STORAGE_DTYPES = {ct.storage: dt for dt, ct in C_TYPES.items()}


def ctype(dtype) -> CType:
    """The CType of a dtype; KeyError names the dtype if it has none."""
    try:
        return C_TYPES[dtype]
    except KeyError:
        raise KeyError(f"no CUDA C type for dtype {dtype}") from None


def math_fn(name: str, dtype) -> str:
    """``expf`` for float compute types, ``exp`` for double."""
    return name + "f" if ctype(dtype).compute == "float" else name


def literal(value, dtype) -> str:
    """A C expression for the Python scalar ``value`` converted to ``dtype``'s compute type.

    Floats are written as exact hexadecimal literals; inf and NaN by their bit patterns
    (bare NVRTC has no ``INFINITY`` macro).

    Example:
        >>> literal(1.5, float32)
        '0x1.8000000000000p+0f'
    """
    ct = ctype(dtype)
    if dtype is bool_:
        return "true" if value else "false"
    if not ct.is_float:
        number = int(value)
        return f"(({ct.compute}){number}LL)" if number >= 0 else f"(({ct.compute})({number}LL))"
    number = float(value)
    if ct.compute == "float":
        with np.errstate(over="ignore"):
            # Round once to the tensor's own precision (float16 too), as eager does with a scalar.
            single = np.float32(dtype.numpy.type(number))
        if math.isfinite(single):
            return f"{float(single).hex()}f"
        return f"__int_as_float({int(single.view(np.uint32)):#010x})"
    if math.isfinite(number):
        return number.hex()
    bits = struct.unpack("<q", struct.pack("<d", number))[0]
    return f"__longlong_as_double({bits}LL)"


def cast(expr: str, source, target) -> str:
    """Convert a compute value of dtype ``source`` into ``target``'s compute type."""
    src, dst = ctype(source), ctype(target)
    if src.compute == dst.compute:
        return expr
    if target is bool_:
        return f"(({expr}) != 0)"
    return f"(({dst.compute})({expr}))"
