"""softmax, log_softmax, logsumexp, cumsum and cumprod against NumPy (stability included)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dynamo_lite as dl
from dynamo_lite.tensor.tensor import from_array

from .oracle import assert_close, layouts, make, seeds, shapes


def _softmax(a, axis):
    shifted = a - a.max(axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)


@settings(max_examples=30, deadline=None)
@given(shape=shapes(min_dims=1), dtype=st.sampled_from([np.float32, np.float64, np.float16]), layout=layouts,
       seed=seeds, data=st.data())
def test_softmax_family(shape, dtype, layout, seed, data):
    rng = np.random.default_rng(seed)
    x, a = make(rng, shape, dtype, layout)
    a = a * 30  # large logits: the naive formula would overflow in float16/float32
    x = x * 30
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    axis = dim % len(shape)
    wide = a.astype(np.float64)
    soft = x.softmax(dim)
    assert soft.dtype.numpy == dtype and soft.is_contiguous()
    assert_close(soft, _softmax(wide, axis).astype(dtype))
    assert_close(dl.log_softmax(x, dim), np.log(_softmax(wide, axis)).astype(dtype), atol=1e-2 if dtype == np.float16 else 1e-4)
    peak = wide.max(axis=axis, keepdims=True)
    lse = np.log(np.exp(wide - peak).sum(axis=axis, keepdims=True)) + peak
    assert_close(dl.logsumexp(x, dim, keepdim=True), lse.astype(dtype), rtol=1e-2 if dtype == np.float16 else 1e-5)
    assert_close(dl.logsumexp(x, dim), np.squeeze(lse, axis).astype(dtype), rtol=1e-2 if dtype == np.float16 else 1e-5)


def test_softmax_extremes_are_stable():
    x = dl.tensor([[1000.0, 1001.0], [-1000.0, -1000.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(x.softmax(1).numpy(), [[0.26894142, 0.73105858], [0.5, 0.5]], rtol=1e-6)
        np.testing.assert_allclose(x.log_softmax(1).numpy(), [[-1.3132616, -0.3132616], [-0.6931472, -0.6931472]], rtol=1e-6)
        assert dl.logsumexp(dl.tensor([float("-inf"), float("-inf")]), 0).item() == float("-inf")
        assert dl.logsumexp(dl.tensor([float("inf"), 1.0]), 0).item() == float("inf")
        assert dl.softmax(dl.ones(0, 3), 0).shape == (0, 3)


def test_softmax_dtype_argument_and_integer_inputs():
    ints = dl.tensor([1, 2, 3])
    result = ints.softmax(0, dtype=dl.float64)
    assert result.dtype is dl.float64
    np.testing.assert_allclose(result.numpy(), _softmax(np.array([1.0, 2.0, 3.0]), 0))
    assert dl.logsumexp(ints, 0).dtype is dl.float32
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        ints.softmax(0)


def test_softmax_of_a_channels_last_tensor_is_contiguous():
    x, a = make(np.random.default_rng(1), (2, 3, 4, 5), np.float32, "channels_last")
    result = x.softmax(1)
    assert result.stride() == (60, 20, 5, 1)
    assert_close(result, _softmax(a, 1))


@settings(max_examples=25, deadline=None)
@given(shape=shapes(min_dims=1), dtype=st.sampled_from([np.float32, np.int32, np.bool_, np.int64]), layout=layouts,
       seed=seeds, data=st.data())
def test_cumsum_cumprod(shape, dtype, layout, seed, data):
    rng = np.random.default_rng(seed)
    x, a = make(rng, shape, dtype, layout)
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    out_dtype = np.float32 if dtype == np.float32 else np.int64
    assert_close(x.cumsum(dim), np.cumsum(a, axis=dim % len(shape), dtype=out_dtype), dtype=out_dtype)
    assert_close(dl.cumprod(x, dim), np.cumprod(a, axis=dim % len(shape), dtype=out_dtype), dtype=out_dtype, rtol=1e-4)
    assert x.cumsum(dim, dtype=dl.float64).dtype is dl.float64


def test_half_cumsum_accumulates_in_float32_and_empty_softmax_of_ints():
    x = from_array(np.full(2048, 0.1, np.float16))
    assert x.cumsum(0).dtype is dl.float16
    np.testing.assert_allclose(float(x.cumsum(0)[-1].item()), 2048 * float(np.float16(0.1)), rtol=1e-3)
    assert dl.ones(0, 3, dtype=dl.int64).softmax(1).shape == (0, 3)  # nothing to compute: no dtype error


def test_dim_errors():
    with pytest.raises(IndexError, match="Dimension out of range"):
        dl.ones(2, 3).softmax(2)
    with pytest.raises(TypeError):
        dl.softmax(dl.ones(3))  # dim is required
    assert from_array(np.array(2.0)).softmax(0).item() == 1.0
