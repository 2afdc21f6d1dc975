"""Unary ops against NumPy and math: result dtypes, layouts, special values, erf/gelu accuracy."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dynamo_lite as dl
from dynamo_lite.tensor.tensor import from_array

from .oracle import assert_close, layouts, make, seeds, shapes, to_numpy

FLOATS_OF = {np.dtype(np.float16): np.float16, np.dtype(np.float64): np.float64}


def _float_of(dtype):
    return FLOATS_OF.get(np.dtype(dtype), np.float32)


# name -> (NumPy oracle on float values, input domain transform)
FLOAT_FUNCTIONS = {
    "exp": (np.exp, None),
    "log": (np.log, np.abs),
    "log1p": (np.log1p, np.abs),
    "log2": (np.log2, np.abs),
    "expm1": (np.expm1, None),
    "sqrt": (np.sqrt, np.abs),
    "rsqrt": (lambda v: 1 / np.sqrt(v), lambda v: np.abs(v) + 0.5),
    "sin": (np.sin, None),
    "cos": (np.cos, None),
    "tan": (np.tan, None),
    "sinh": (np.sinh, None),
    "cosh": (np.cosh, None),
    "tanh": (np.tanh, None),
    "sigmoid": (lambda v: 1 / (1 + np.exp(-v)), None),
    "reciprocal": (np.reciprocal, lambda v: np.where(v == 0, 1, v)),
}


@settings(max_examples=30, deadline=None)
@given(name=st.sampled_from(sorted(FLOAT_FUNCTIONS)), shape=shapes(),
       dtype=st.sampled_from([np.float32, np.float64, np.float16, np.int64, np.int32, np.uint8, np.bool_]),
       layout=layouts, seed=seeds)
def test_float_functions_match_numpy(name, shape, dtype, layout, seed):
    oracle, domain = FLOAT_FUNCTIONS[name]
    rng = np.random.default_rng(seed)
    x, a = make(rng, shape, dtype, layout)
    if domain is not None and a.dtype.kind != "b":
        a = domain(a).astype(a.dtype)
        x = from_array(a.copy()) if layout == "expanded" else make_like(a, layout)
    result = getattr(dl, name)(x)
    out_dtype = _float_of(dtype)
    assert result.dtype.numpy == out_dtype  # integer and bool inputs compute in the default float
    with np.errstate(all="ignore"):
        expected = oracle(a.astype(np.float64)).astype(out_dtype)
    assert_close(result, expected, rtol=2e-3 if out_dtype == np.float16 else 1e-5)


def make_like(arr, layout):
    from .oracle import laid_out

    return laid_out(arr, layout)


SAME_DTYPE = {
    "neg": np.negative,
    "abs": np.abs,
    "relu": lambda v: np.maximum(v, 0).astype(v.dtype),
    "floor": np.floor,
    "ceil": np.ceil,
    "round": np.rint,
    "trunc": np.trunc,
    "sign": np.sign,
}


@settings(max_examples=30, deadline=None)
@given(name=st.sampled_from(sorted(SAME_DTYPE)), shape=shapes(),
       dtype=st.sampled_from([np.float32, np.float64, np.int64, np.int8, np.uint8]), layout=layouts, seed=seeds)
def test_dtype_preserving_functions_match_numpy(name, shape, dtype, layout, seed):
    rng = np.random.default_rng(seed)
    x, a = make(rng, shape, dtype, layout)
    result = getattr(dl, name)(x)
    assert result.dtype.numpy == np.dtype(dtype)
    assert_close(result, SAME_DTYPE[name](a).astype(dtype))


def test_special_values():
    x = dl.tensor([float("nan"), float("inf"), float("-inf"), 0.0, -0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # torch never warns about IEEE specials
        assert to_numpy(dl.sign(x)).tolist()[0] == 0.0  # sign(NaN) is 0, as in torch
        np.testing.assert_array_equal(to_numpy(dl.sigmoid(x))[1:4], [1.0, 0.0, 0.5])
        np.testing.assert_array_equal(to_numpy(dl.log(x))[1:4], [np.inf, np.nan, -np.inf])
        np.testing.assert_array_equal(to_numpy(dl.reciprocal(x))[3:], [np.inf, -np.inf])
        assert np.isnan(to_numpy(dl.relu(x))[0])
    assert dl.isnan(x).tolist() == [True, False, False, False, False]
    assert dl.isinf(x).tolist() == [False, True, True, False, False]
    assert dl.isfinite(x).tolist() == [False, False, False, True, True]


def test_sigmoid_is_accurate_in_the_tails():
    x = from_array(np.array([-30.0, -700.0, 30.0]))
    np.testing.assert_allclose(dl.sigmoid(x).numpy(), [1 / (1 + math.exp(30)), 1 / (1 + math.exp(700)), 1 / (1 + math.exp(-30))], rtol=1e-12)


def test_integer_and_bool_rules():
    assert dl.square(dl.tensor([True, False])).dtype is dl.int64
    assert dl.sign(dl.tensor([True, False])).tolist() == [True, False]
    assert dl.abs(from_array(np.array([-128], np.int8))).tolist() == [-128]  # wraps like C
    assert dl.neg(from_array(np.array([1], np.uint8))).tolist() == [255]
    assert dl.exp(dl.tensor([0, 1])).dtype is dl.float32
    dl.set_default_dtype(dl.float64)
    try:
        assert dl.sqrt(dl.tensor([4])).dtype is dl.float64
    finally:
        dl.set_default_dtype(dl.float32)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: -dl.ones(2, dtype=dl.bool), RuntimeError, "Negation, the `-` operator, on a bool tensor"),
        (lambda: dl.abs(dl.ones(2, dtype=dl.bool)), NotImplementedError, "not implemented for 'Bool'"),
        (lambda: dl.relu(dl.ones(2, dtype=dl.bool)), RuntimeError, "Boolean inputs not supported for relu"),
        (lambda: dl.gelu(dl.arange(3)), NotImplementedError, "\"GeluKernelImpl\" not implemented for 'Long'"),
        (lambda: dl.silu(dl.arange(3)), NotImplementedError, "not implemented for 'Long'"),
        (lambda: dl.gelu(dl.ones(2), approximate="x"), RuntimeError, "approximate argument must be either none or tanh."),
        (lambda: +dl.ones(2, dtype=dl.bool), TypeError, "bool"),
    ],
)
def test_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


# -- erf and gelu -----------------------------------------------------------------------------
def test_erf_float64_against_math():
    grid = np.concatenate([np.linspace(-8, 8, 20001), np.geomspace(1e-300, 3, 2000), -np.geomspace(1e-12, 3, 500)])
    expected = np.array([math.erf(v) for v in grid])
    result = dl.erf(from_array(grid)).numpy()
    np.testing.assert_allclose(result, expected, rtol=1e-13, atol=5e-15)
    assert np.abs(result - expected).max() < 1e-7


@pytest.mark.parametrize("name", ["erf", "gelu", "sigmoid", "silu", "rsqrt", "sign", "exp"])
def test_zero_dim_inputs(name):
    result = getattr(dl, name)(dl.tensor(0.75, dtype=dl.float64))
    assert result.shape == () and result.dtype is dl.float64
    expected = {"erf": math.erf(0.75), "gelu": 0.75 * 0.5 * math.erfc(-0.75 / math.sqrt(2)),
                "sigmoid": 1 / (1 + math.exp(-0.75)), "silu": 0.75 / (1 + math.exp(-0.75)),
                "rsqrt": 0.75 ** -0.5, "sign": 1.0, "exp": math.exp(0.75)}[name]
    assert result.item() == pytest.approx(expected, rel=1e-12)


def test_erf_float32_and_specials():
    grid = np.linspace(-5, 5, 2001, dtype=np.float32)
    expected = np.array([math.erf(float(v)) for v in grid])
    result = dl.erf(from_array(grid))
    assert result.dtype is dl.float32
    np.testing.assert_allclose(result.numpy(), expected, rtol=2e-7, atol=1e-7)
    specials = dl.erf(dl.tensor([float("inf"), float("-inf"), float("nan")])).tolist()
    assert specials[:2] == [1.0, -1.0] and math.isnan(specials[2])


def _gelu_exact(v):
    return v * 0.5 * math.erfc(-v / math.sqrt(2))  # 1 + erf(x) cancels for very negative x


def _gelu_tanh(v):
    return 0.5 * v * (1 + math.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v**3)))


@pytest.mark.parametrize("approximate, reference", [("none", _gelu_exact), ("tanh", _gelu_tanh)])
@pytest.mark.parametrize("dtype, rtol, atol", [(np.float64, 1e-12, 1e-15), (np.float32, 1e-5, 1e-6), (np.float16, 2e-3, 1e-3)])
def test_gelu_against_its_formula(approximate, reference, dtype, rtol, atol):
    grid = np.concatenate([np.linspace(-10, 10, 4001), [-40.0, 40.0]]).astype(dtype)
    expected = np.array([reference(float(v)) for v in grid])
    result = dl.gelu(from_array(grid), approximate=approximate)
    assert result.dtype.numpy == dtype
    # (the tanh form's 1 + tanh(u) cancels for negative x: an absolute error of a few ulp of 1)
    np.testing.assert_allclose(result.numpy().astype(np.float64), expected, rtol=rtol, atol=atol)


def test_gelu_and_silu_keep_layouts():
    x, a = make(np.random.default_rng(3), (2, 3, 4, 5), np.float32, "channels_last")
    for result in (dl.gelu(x), dl.silu(x)):
        assert result.stride() == x.stride()
    assert_close(dl.silu(x), a / (1 + np.exp(-a)))


# -- in place --------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["exp_", "sigmoid_", "tanh_", "relu_", "neg_", "sqrt_", "abs_", "erf_", "log1p_"])
def test_inplace_unary_writes_through_a_transposed_view(name):
    base = from_array(np.abs(np.random.default_rng(4).standard_normal((3, 4))).astype(np.float32))
    expected = getattr(dl, name[:-1])(base)
    view = base.t()
    version = base._version
    assert getattr(view, name)() is view
    assert_close(base, to_numpy(expected))
    assert base._version == version + 1


def test_inplace_float_function_on_int_tensor_fails():
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        dl.arange(3).exp_()
