"""Helpers for array kernels: compute dtypes, IEEE-warning suppression, half-precision upcasting."""
from __future__ import annotations

import contextlib

import numpy as np

from ...tensor.dtype import from_numpy_dtype, result_type

_NULL_CONTEXT = contextlib.nullcontext()


try:  # NumPy >= 2 keeps its error state in a context variable
    from numpy._core._ufunc_config import _extobj_contextvar, _make_extobj
except ImportError:  # pragma: no cover - NumPy 1.x
    _extobj_contextvar = _make_extobj = None

# NOTE: [quiet error state] Every pointwise kernel runs under "ignore all" (torch never warns).
# ``np.errstate`` rebuilds its error-state object on each entry; ``_Quiet`` keeps, per error
# state it meets (which also carries the user's ``seterrcall`` and buffer size), the matching
# all-ignore state and sets the context variable to it, exactly what ``np.errstate(all="ignore")``
# would set, at the cost of a dict lookup.
_QUIET_STATES: dict = {}
_QUIET_STATES_LIMIT = 64


class _Quiet:
    """``np.errstate(all="ignore")`` with the all-ignore state cached (NOTE: [quiet error state])."""

    __slots__ = ("_token",)

    def __enter__(self):
        current = _extobj_contextvar.get()
        state = _QUIET_STATES.get(current)
        if state is None:
            if len(_QUIET_STATES) >= _QUIET_STATES_LIMIT:
                _QUIET_STATES.clear()
            state = _make_extobj(all="ignore")
            _QUIET_STATES[current] = state
            _QUIET_STATES[state] = state  # nested: already quiet
        self._token = _extobj_contextvar.set(state)

    def __exit__(self, *exc_info):
        _extobj_contextvar.reset(self._token)


def quiet(xp):
    """A context that silences NumPy's divide/overflow/invalid warnings (torch never warns).

    Only NumPy has error states; other array modules get a no-op context.
    """
    if xp is np:
        if _make_extobj is not None:
            return _Quiet()
        return np.errstate(divide="ignore", over="ignore", invalid="ignore", under="ignore")
    return _NULL_CONTEXT


_KIND_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def _scalar_category(value) -> int:
    if isinstance(value, (bool, np.bool_)):
        return 0
    if isinstance(value, (int, np.integer)):
        return 1
    if isinstance(value, (complex, np.complexfloating)):
        return 3
    return 2


class _Operand:
    """An array's dtype and rank, shaped like a TensorMeta for ``result_type``."""

    __slots__ = ("dtype", "shape")

    def __init__(self, array):
        self.dtype = from_numpy_dtype(array.dtype)
        self.shape = array.shape


def promoted_dtype(*operands):
    """torch's result type over arrays (0-dim arrays are 0-dim tensors) and Python scalars.

    Returns a NumPy dtype. Fast when all arrays share one dtype and no scalar is present.
    """
    arrays = [op for op in operands if hasattr(op, "dtype") and hasattr(op, "shape")]
    first = arrays[0].dtype
    if all(a.dtype == first for a in arrays):
        # One array dtype: a scalar only matters if its category is higher.
        category = _KIND_CATEGORY[first.kind]
        highest = max((_scalar_category(op) for op in operands if op is not None and not hasattr(op, "shape")), default=-1)
        if highest <= category:
            return first
    wrapped = [_Operand(op) if hasattr(op, "dtype") and hasattr(op, "shape") else op for op in operands]
    return result_type(*wrapped).numpy


_SCALAR_TYPE_CATEGORY = {bool: 0, int: 1, float: 2, complex: 3}


def binary_dtype(a, b):
    """``promoted_dtype(a, b)`` with fast paths for equal dtypes and array-with-scalar."""
    if hasattr(a, "dtype"):
        if hasattr(b, "dtype"):
            if a.dtype == b.dtype:
                return a.dtype
        elif _SCALAR_TYPE_CATEGORY.get(type(b), 3) <= _KIND_CATEGORY[a.dtype.kind]:
            return a.dtype
    elif hasattr(b, "dtype") and _SCALAR_TYPE_CATEGORY.get(type(a), 3) <= _KIND_CATEGORY[b.dtype.kind]:
        return b.dtype
    return promoted_dtype(a, b)


_INT_BOUNDS = {
    np.dtype(t): (int(np.iinfo(t).min), int(np.iinfo(t).max))
    for t in (np.int8, np.int16, np.int32, np.int64, np.uint8)
}


def fit_scalar(value, dtype):
    """A Python int outside ``dtype``'s range wrapped into it (``uint8_tensor * -3`` as in torch).

    NumPy refuses out-of-range Python ints; torch casts the scalar like C does.
    """
    if type(value) is int:
        bounds = _INT_BOUNDS.get(dtype)
        if bounds is not None and not bounds[0] <= value <= bounds[1]:
            return np.array(value).astype(dtype)[()]
    return value


def compute_dtype(a, b, out):
    """The dtype a binary arithmetic kernel computes in.

    Out of place, the meta rule already chose it: ``out``'s dtype. In place (``a`` is
    ``out``), torch computes in the promoted type and casts into ``a``.
    """
    if a is not out:
        return out.dtype
    return binary_dtype(a, b)


def as_dtype(xp, value, dtype):
    """``value`` (array or scalar) in ``dtype``; arrays are cast only when they differ."""
    if hasattr(value, "dtype") and hasattr(value, "shape"):
        return value if value.dtype == dtype else value.astype(dtype)
    return value


def half_as_float(fn):
    """Run a composite float kernel ``fn(xp, x, out)`` in float32 when ``out`` is float16.

    Chains of float16 roundings lose accuracy; torch evaluates half ops in float32.
    """

    def kernel(xp, x, out):
        if out.dtype != np.float16:
            return fn(xp, x, out)
        tmp = xp.empty(out.shape, dtype=np.float32)
        fn(xp, x.astype(np.float32) if hasattr(x, "astype") else x, tmp)
        out[...] = tmp
        return out

    kernel.__name__ = getattr(fn, "__name__", "kernel")
    return kernel


def integer_zero_check(xp, divisor, dtype, out) -> None:
    """Integer division by zero is an error in torch (floats give inf/nan instead).

    Only divisors that are used count: an empty output divides nothing.
    """
    if np.dtype(dtype).kind not in "iub" or out.size == 0:
        return
    if hasattr(divisor, "shape"):
        if divisor.size and bool(xp.any(divisor == 0)):
            raise RuntimeError("ZeroDivisionError")
    elif divisor == 0:
        raise RuntimeError("ZeroDivisionError")
