"""Tensor dtypes, the default dtype and torch's type-promotion rules."""
from __future__ import annotations

import numpy as np

from .symint import SymInt


class dtype:
    """A tensor element type (``dl.float32`` ...), mapped one-to-one onto a NumPy dtype."""

    __slots__ = ("name", "numpy", "itemsize", "is_floating_point", "is_complex", "is_signed", "_category")

    def __init__(self, name: str, numpy_dtype, category: int):
        self.name = name
        self.numpy = np.dtype(numpy_dtype)
        self.itemsize = self.numpy.itemsize
        self._category = category  # 0 bool, 1 integer, 2 floating, 3 complex
        self.is_floating_point = category == 2
        self.is_complex = category == 3
        self.is_signed = category >= 2 or self.numpy.kind == "i"

    def __repr__(self) -> str:
        return f"dynamo_lite.{self.name}"

    def __reduce__(self):
        return (_lookup_name, (self.name,))


float16 = dtype("float16", np.float16, 2)
float32 = dtype("float32", np.float32, 2)
float64 = dtype("float64", np.float64, 2)
int8 = dtype("int8", np.int8, 1)
int16 = dtype("int16", np.int16, 1)
int32 = dtype("int32", np.int32, 1)
int64 = dtype("int64", np.int64, 1)
uint8 = dtype("uint8", np.uint8, 1)
bool_ = dtype("bool", np.bool_, 0)
bfloat16 = dtype("bfloat16", np.uint16, 2)  # raw bits; computed in float32 (NOTE: [bfloat16])
complex64 = dtype("complex64", np.complex64, 3)
complex128 = dtype("complex128", np.complex128, 3)

half, float, double = float16, float32, float64
short, int, long = int16, int32, int64
cfloat, cdouble = complex64, complex128

# The dtypes with a NumPy twin (bfloat16 has none: its arrays hold raw bits).
ALL_DTYPES = (float16, float32, float64, int8, int16, int32, int64, uint8, bool_, complex64, complex128)
# complex <-> the real type of its parts (float16 has no complex partner here: complex32 is not supported).
COMPLEX_OF = {float16: complex64, bfloat16: complex64, float32: complex64, float64: complex128}
REAL_OF = {complex64: float32, complex128: float64}
_BY_NUMPY = {d.numpy: d for d in ALL_DTYPES}
_BY_NAME = {d.name: d for d in ALL_DTYPES + (bfloat16,)}


def _lookup_name(name: str) -> dtype:
    return _BY_NAME[name]


def from_numpy_dtype(np_dtype) -> dtype:
    """Return the dl dtype for a NumPy dtype, or raise TypeError naming it."""
    try:
        return _BY_NUMPY[np.dtype(np_dtype)]
    except (KeyError, TypeError):
        raise TypeError(
            f"can't convert np.ndarray of type {np.dtype(np_dtype)}. The only supported types are: "
            "float64, float32, float16, complex64, complex128, int64, int32, int16, int8, uint8, and bool."
        ) from None


def as_dtype(value) -> dtype:
    """Accept a dl dtype, a NumPy dtype or the Python types float/int/bool."""
    if isinstance(value, dtype):
        return value
    import builtins

    python_types = {builtins.float: float64, builtins.int: int64, builtins.bool: bool_, builtins.complex: complex128}
    if value in python_types:
        return python_types[value]
    try:
        return from_numpy_dtype(value)
    except TypeError:
        raise TypeError(f"expected a dtype, got {value!r}") from None


class _DefaultDtype:
    """Holds the default floating dtype; a visible object instead of a hidden global."""

    def __init__(self):
        self.value = float32


DEFAULT = _DefaultDtype()


def get_default_dtype() -> dtype:
    """Return the dtype used for Python floats and float factories (float32 unless changed)."""
    return DEFAULT.value


def set_default_dtype(d: dtype) -> None:
    """Set the default floating dtype; only floating dtypes are allowed, as in torch."""
    d = as_dtype(d)
    if not d.is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    DEFAULT.value = d


def promote_types(a: dtype, b: dtype) -> dtype:
    """Promote two dtypes as torch does: the higher category wins outright (but a complex
    type widens to hold a wider float: complex64 with float64 is complex128), else NumPy's rule.

    Example:
        >>> dl.promote_types(dl.int32, dl.float16)
        dynamo_lite.float16
    """
    a, b = as_dtype(a), as_dtype(b)
    if a is b:
        return a
    if a._category != b._category:
        high, low = (a, b) if a._category > b._category else (b, a)
        if high.is_complex and low.is_floating_point:
            return COMPLEX_OF[promote_types(REAL_OF[high], low)]
        return high
    return _BY_NUMPY[np.promote_types(a.numpy, b.numpy)]


def scalar_category(value) -> int:
    import builtins

    if isinstance(value, (builtins.bool, np.bool_)):
        return 0
    if isinstance(value, (builtins.int, np.integer, SymInt)):
        return 1
    if isinstance(value, (builtins.float, np.floating)):
        return 2
    if isinstance(value, (builtins.complex, np.complexfloating)):
        return 3
    raise TypeError(f"unsupported scalar type {type(value).__name__}")


_SCALAR_DEFAULT = {0: lambda: bool_, 1: lambda: int64, 2: get_default_dtype,
                   3: lambda: COMPLEX_OF[get_default_dtype()]}


def result_type(*operands) -> dtype:
    """torch.result_type over tensors (or TensorMetas) and Python scalars.

    Priority: dimensioned tensors, then zero-dim tensors, then Python scalars; a
    lower-priority operand only matters if its category (bool < int < float < complex) is higher.
    """
    groups: list = [None, None, None]  # dim>0, dim==0, scalars
    for op in operands:
        if op is None:
            continue
        if hasattr(op, "dtype") and hasattr(op, "shape") and isinstance(op.dtype, dtype):
            idx = 0 if len(op.shape) > 0 else 1
            d = op.dtype
        else:
            idx = 2
            d = _SCALAR_DEFAULT[scalar_category(op)]()
        groups[idx] = d if groups[idx] is None else promote_types(groups[idx], d)
    result = None
    for d in groups:
        if d is not None and (result is None or d._category > result._category):
            # A complex operand of lower priority keeps a float result's precision.
            result = COMPLEX_OF[result] if d.is_complex and result is not None and result.is_floating_point else d
    if result is None:
        raise TypeError("result_type needs at least one operand")
    return result
