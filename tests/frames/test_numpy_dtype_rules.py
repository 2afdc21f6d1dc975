"""NumPy's dtype rules in compiled code, checked against NumPy itself: every modelled ufunc over
arrays of several dtypes with arrays and Python scalars (NEP 50), and a tensor with NumPy scalars.
Compiled and eager must give the same type, dtype and values, or raise the same error (a call
the graph cannot lower exactly, such as integer division by an array that may hold 0, breaks)."""
from __future__ import annotations

import operator
import warnings

import numpy as np
import pytest

import dynamo_lite as dl
from dynamo_lite.frames.tracing.variables.numpy_calls import UFUNCS

DTYPES = [np.float32, np.float64, np.int64, np.int32, np.uint8, np.bool_, np.float16]
OPERANDS = ["same", np.float64, np.int32, 2, 2.5, True, -3]


def array(dtype, seed: int, shape=(2, 3)):
    values = np.random.default_rng(seed).standard_normal(shape) * 3  # ints include 0 and negatives
    return dl.from_numpy(np.ascontiguousarray((values > 0) if dtype is np.bool_ else values.astype(dtype)))


def outcome(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(*args), None
        except Exception as exc:  # the comparison is the point
            return None, type(exc)


def assert_same(fn, *args):
    expected, expected_error = outcome(fn, *args)
    dl.reset()
    actual, actual_error = outcome(dl.compile(fn, backend="eager"), *args)
    assert actual_error == expected_error, (actual_error, expected_error)
    assert not dl.stats().fallbacks, dl.stats()
    if expected_error is None:
        assert type(actual) is type(expected), (type(actual), type(expected))
        assert actual.dtype == expected.dtype and np.shape(actual) == np.shape(expected), (actual, expected)
        np.testing.assert_allclose(np.asarray(actual, dtype=np.float64), np.asarray(expected, dtype=np.float64),
                                   rtol=2e-3, atol=1e-3, equal_nan=True)


@pytest.mark.parametrize("ufunc", sorted(UFUNCS, key=lambda u: u.__name__), ids=lambda u: u.__name__)
def test_ufunc_dtypes_follow_numpy(ufunc):
    for dtype in DTYPES:
        if ufunc.nin == 1:
            assert_same(lambda x: ufunc(x.numpy()), array(dtype, 0))
            continue
        for other in OPERANDS:
            if other == "same" or isinstance(other, type):
                second = dtype if other == "same" else other
                assert_same(lambda x, y: ufunc(x.numpy(), y.numpy()), array(dtype, 0), array(second, 1))
            else:
                assert_same(lambda x, o=other: ufunc(x.numpy() + 0, o), array(dtype, 0))


@pytest.mark.parametrize("op", [operator.add, operator.mul, operator.truediv, operator.lt, operator.pow],
                         ids=lambda o: o.__name__)
def test_tensor_with_numpy_scalar(op):
    """``tensor <op> np_scalar`` is a tensor op taking the scalar as a Python number;
    ``np_scalar <op> tensor`` is NumPy's ufunc on the tensor's array."""
    for dtype in (dl.float32, dl.int32, dl.bool, dl.float16, dl.int64):
        for scalar in (np.float64(2.5), np.float32(2.5), np.int64(3), np.int8(3), np.bool_(True)):
            x = (dl.arange(3) + 1).to(dtype)
            assert_same(lambda t, s: op(t, s), x, scalar)
            assert_same(lambda t, s: op(s, t), x, scalar)
