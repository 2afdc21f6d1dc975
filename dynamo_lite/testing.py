"""dl.testing.assert_close: torch's closeness assertion for tensors, numbers and containers of them."""
from __future__ import annotations

import collections.abc
import numbers

import numpy as np

from .tensor import dtype as D
from .tensor.tensor import Tensor

#: Default (rtol, atol) per dtype, as torch chooses them; exact for the others (integers, bool).
DEFAULT_TOLERANCES = {
    D.float16: (1e-3, 1e-5), D.bfloat16: (1.6e-2, 1e-5), D.float32: (1.3e-6, 1e-5), D.float64: (1e-7, 1e-7),
    D.complex64: (1.3e-6, 1e-5), D.complex128: (1e-7, 1e-7),
}
#: Python numbers compare with the tolerances of their double-precision dtype.
SCALAR_DTYPES = {bool: D.bool_, int: D.int64, float: D.float64, complex: D.complex128}


def assert_close(actual, expected, *, allow_subclasses: bool = True, rtol=None, atol=None, equal_nan: bool = False,
                 check_device: bool = True, check_dtype: bool = True, check_layout: bool = True,
                 check_stride: bool = False, msg=None) -> None:
    """Assert that ``actual`` and ``expected`` are close: ``|actual - expected| <= atol + rtol * |expected|``.

    Tensors must also agree in shape (and dtype, device, strides when asked); sequences and
    mappings are compared item by item. Without ``rtol``/``atol`` the tolerances of the
    dtype are used (``DEFAULT_TOLERANCES``; integers and bool compare exactly).

    Args:
        actual, expected: tensors, Python numbers, or sequences/mappings of them.
        rtol, atol: the tolerances; give both or neither.
        equal_nan: NaNs at the same positions count as equal.
        check_device, check_dtype, check_stride: also compare these attributes.
        msg: a string replacing the message, or a callable mapping the message to one.

    Raises:
        AssertionError: naming what differs, in torch's wording.
        ValueError: only one of ``rtol``/``atol`` given.
        TypeError: inputs that cannot be compared (a tensor against a list).

    Example:
        >>> dl.testing.assert_close(dl.tensor([1.0, 2.0]), dl.tensor([1.0, 2.0 + 1e-7]))   # passes
    """
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, "
                         f"but got no {'rtol' if rtol is None else 'atol'}.")
    options = dict(rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=check_device, check_dtype=check_dtype,
                   check_stride=check_stride)
    pending = [((), actual, expected)]
    while pending:
        path, a, e = pending.pop(0)
        try:
            children = _children(path, a, e)
            if children is None:
                _compare_leaves(a, e, **options)
            else:
                pending[:0] = children
        except AssertionError as failure:
            message = str(failure) + (f"\n\nThe failure occurred for item {''.join(f'[{k!r}]' for k in path)}"
                                      if path else "")
            if msg is not None:
                message = msg(message) if callable(msg) else msg
            raise AssertionError(message) from None


def _children(path, actual, expected):
    """The item pairs of two sequences or mappings (None for leaves)."""
    if isinstance(actual, (str, bytes)) or isinstance(expected, (str, bytes)):
        return None
    if isinstance(actual, collections.abc.Sequence) and isinstance(expected, collections.abc.Sequence):
        if len(actual) != len(expected):
            raise AssertionError(f"The length of the sequences mismatch: {len(actual)} != {len(expected)}")
        return [((*path, i), a, e) for i, (a, e) in enumerate(zip(actual, expected))]
    if isinstance(actual, collections.abc.Mapping) and isinstance(expected, collections.abc.Mapping):
        if set(actual) != set(expected):
            raise AssertionError("The keys of the mappings do not match:\n"
                                 f"Missing keys in the actual mapping: {sorted(set(expected) - set(actual))}\n"
                                 f"Additional keys in the actual mapping: {sorted(set(actual) - set(expected))}")
        return [((*path, k), actual[k], expected[k]) for k in expected]
    return None


def _compare_leaves(actual, expected, *, rtol, atol, equal_nan, check_device, check_dtype, check_stride):
    if isinstance(actual, Tensor) and isinstance(expected, Tensor):
        _compare_tensors(actual, expected, rtol, atol, equal_nan, check_device, check_dtype, check_stride)
    elif _is_number(actual) and _is_number(expected):
        if check_dtype and type(actual) is not type(expected):
            raise AssertionError(f"The (d)types do not match: {type(actual)} != {type(expected)}.")
        dtype = SCALAR_DTYPES[max(type(actual), type(expected), key=list(SCALAR_DTYPES).index)]
        rtol, atol = (rtol, atol) if rtol is not None else DEFAULT_TOLERANCES.get(dtype, (0.0, 0.0))
        _compare_scalars(actual, expected, rtol, atol, equal_nan)
    else:
        raise TypeError(f"No comparison pair was able to handle inputs of type {type(actual)} and {type(expected)}.")


def _is_number(value) -> bool:
    return isinstance(value, numbers.Number) and type(value) in SCALAR_DTYPES


def _check_attribute(name, actual, expected) -> None:
    if actual != expected:
        raise AssertionError(f"The values for attribute '{name}' do not match: {actual} != {expected}.")


def _compare_tensors(actual, expected, rtol, atol, equal_nan, check_device, check_dtype, check_stride):
    _check_attribute("shape", actual.shape, expected.shape)
    if check_device:
        _check_attribute("device", actual.device, expected.device)
    if check_dtype:
        _check_attribute("dtype", actual.dtype, expected.dtype)
    if check_stride:
        _check_attribute("stride()", actual.stride(), expected.stride())
    dtype = D.promote_types(actual.dtype, expected.dtype)
    if rtol is None:
        rtol, atol = DEFAULT_TOLERANCES.get(dtype, (0.0, 0.0))
    a, e = (_values(t, dtype) for t in (actual, expected))
    close = _isclose(a, e, rtol, atol, equal_nan)
    if close.all():
        return
    if not close.shape:  # a 0-d tensor is reported as a number
        return _compare_scalars(a.item(), e.item(), rtol, atol, equal_nan)
    if a.dtype == np.bool_:  # differences of booleans are taken as integers
        a, e = a.astype(np.int64), e.astype(np.int64)
    abs_diff = np.abs(a - e).reshape(-1)
    exact_values = not np.issubdtype(abs_diff.dtype, np.inexact)  # divided in float32, the default dtype
    with np.errstate(divide="ignore", invalid="ignore"):
        rel_diff = (abs_diff.astype(np.float32) / np.abs(e).reshape(-1).astype(np.float32) if exact_values
                    else abs_diff / np.abs(e).reshape(-1))
    mismatches = int((~close).sum())
    lines = [f"Tensor-likes are not {_verb(rtol, atol)}!", "",
             f"Mismatched elements: {mismatches} / {close.size} ({100 * mismatches / close.size:.1f}%)",
             _difference_line("Greatest absolute difference", abs_diff, close.shape, atol, rtol, atol),
             _difference_line("Greatest relative difference", rel_diff, close.shape, rtol, rtol, atol)]
    raise AssertionError("\n".join(lines))


def _values(tensor, dtype):
    tensor = tensor.detach().cpu()
    if dtype == D.bfloat16:  # no NumPy bfloat16: its float32 values are exact
        return tensor.to(D.float32).numpy()
    return tensor.to(dtype).numpy()


def _isclose(a, e, rtol, atol, equal_nan):
    if rtol == 0 and atol == 0 and not np.issubdtype(a.dtype, np.inexact):
        return np.asarray(a == e)
    return np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan)


def _verb(rtol, atol) -> str:
    return "equal" if rtol == 0 and atol == 0 else "close"


def _difference_line(title, diff, shape, allowed, rtol, atol) -> str:
    flat = int(np.argmax(diff)) if not np.isnan(diff).any() else int(np.flatnonzero(np.isnan(diff))[0])
    index = tuple(int(i) for i in np.unravel_index(flat, shape))
    tolerance = f" (up to {allowed} allowed)" if rtol or atol else ""
    return f"{title}: {diff[flat].item()} at index {index}{tolerance}"


def _compare_scalars(actual, expected, rtol, atol, equal_nan):
    close = _isclose(np.asarray(actual), np.asarray(expected), rtol, atol, equal_nan)
    if close.all():
        return
    diff = abs(actual - expected)
    relative = diff / abs(expected) if expected else float("inf") if diff else float("nan")
    exact = not (rtol or atol)
    raise AssertionError("\n".join([
        f"Scalars are not {_verb(rtol, atol)}!", "", f"Expected {expected} but got {actual}.",
        f"Absolute difference: {diff}" + ("" if exact else f" (up to {atol} allowed)"),
        f"Relative difference: {relative}" + ("" if exact else f" (up to {rtol} allowed)")]))
