"""Reductions against NumPy: dims, keepdim, dtypes, layouts, named results and errors."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dynamo_lite as dl
from dynamo_lite.tensor.tensor import from_array

from .oracle import assert_close, layouts, make, seeds, shapes, to_numpy


@st.composite
def shape_and_dims(draw, min_dims=1):
    shape = draw(shapes(min_dims=min_dims, max_dims=4))
    ndim = len(shape)
    if ndim == 0 or draw(st.booleans()):
        return shape, None
    dims = draw(st.lists(st.integers(-ndim, ndim - 1), min_size=1, max_size=ndim, unique_by=lambda d: d % ndim))
    return shape, tuple(dims) if len(dims) > 1 or draw(st.booleans()) else dims[0]


def _axis(dims, ndim):
    if dims is None:
        return None
    dims = (dims,) if isinstance(dims, int) else dims
    return tuple(d % ndim for d in dims)


SUM_DTYPE = {np.dtype(np.float32): np.float32, np.dtype(np.float64): np.float64, np.dtype(np.float16): np.float16}


@settings(max_examples=40, deadline=None)
@given(spec=shape_and_dims(), dtype=st.sampled_from([np.float32, np.float64, np.float16, np.int32, np.uint8, np.bool_]),
       layout=layouts, keepdim=st.booleans(), seed=seeds)
def test_sum_prod_mean_amax_amin(spec, dtype, layout, keepdim, seed):
    shape, dims = spec
    rng = np.random.default_rng(seed)
    x, a = make(rng, shape, dtype, layout)
    axis = _axis(dims, len(shape))
    accumulate = SUM_DTYPE.get(np.dtype(dtype), np.int64)  # ints and bools sum in int64
    wide = a.astype(np.float64) if accumulate != np.int64 else a.astype(np.int64)
    assert_close(x.sum(dims, keepdim), np.sum(wide, axis=axis, keepdims=keepdim).astype(accumulate), dtype=accumulate)
    assert_close(dl.amax(x, () if dims is None else dims, keepdim), np.amax(a, axis=axis, keepdims=keepdim), dtype=dtype)
    assert_close(x.amin(() if dims is None else dims, keepdim), np.amin(a, axis=axis, keepdims=keepdim), dtype=dtype)
    if np.dtype(dtype).kind == "f":
        assert_close(x.mean(dims, keepdim), np.mean(wide, axis=axis, keepdims=keepdim).astype(dtype), dtype=dtype)
    if dims is None or isinstance(dims, int):
        expected = np.prod(wide, axis=axis, keepdims=keepdim).astype(accumulate)
        assert_close(x.prod(dims, keepdim), expected, dtype=accumulate, rtol=1e-3 if dtype == np.float16 else None)


@settings(max_examples=30, deadline=None)
@given(spec=shape_and_dims(), dtype=st.sampled_from([np.float32, np.float64]), layout=layouts,
       keepdim=st.booleans(), correction=st.sampled_from([0, 1, 2]), seed=seeds)
def test_var_std(spec, dtype, layout, keepdim, correction, seed):
    shape, dims = spec
    rng = np.random.default_rng(seed)
    x, a = make(rng, shape, dtype, layout)
    axis = _axis(dims, len(shape))
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        var = np.var(a.astype(np.float64), axis=axis, ddof=correction, keepdims=keepdim).astype(dtype)
    kwargs = {"correction": correction}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # too few elements give NaN silently, as in torch
        assert_close(x.var(dims, keepdim=keepdim, **kwargs), var, dtype=dtype)
        assert_close(dl.std(x, dims, keepdim=keepdim, **kwargs), np.sqrt(var), dtype=dtype)
        variance, mean = dl.var_mean(x, dims, keepdim=keepdim, **kwargs)
    assert_close(variance, var)
    assert_close(mean, np.mean(a, axis=axis, keepdims=keepdim))


def test_var_spellings():
    x = dl.tensor([[1.0, 2.0, 4.0], [0.0, 0.0, 3.0]])
    a = x.numpy()
    np.testing.assert_allclose(x.var().item(), np.var(a, ddof=1), rtol=1e-6)
    np.testing.assert_allclose(x.var(False).item(), np.var(a), rtol=1e-6)           # var(unbiased)
    np.testing.assert_allclose(x.var(1, False).numpy(), np.var(a, axis=1), rtol=1e-6)  # var(dim, unbiased)
    np.testing.assert_allclose(x.std(1, unbiased=True).numpy(), np.std(a, axis=1, ddof=1), rtol=1e-6)
    assert np.isnan(dl.tensor([1.0]).var().item())


@settings(max_examples=30, deadline=None)
@given(shape=shapes(min_dims=1), dtype=st.sampled_from([np.float32, np.int64, np.float64]), layout=layouts,
       keepdim=st.booleans(), seed=seeds, data=st.data())
def test_max_min_argmax_argmin(shape, dtype, layout, keepdim, seed, data):
    rng = np.random.default_rng(seed)
    x, a = make(rng, shape, dtype, layout)
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    axis = dim % len(shape)
    result = dl.max(x, dim, keepdim)
    assert type(result).__name__ == "max" and result._fields == ("values", "indices")
    values, indices = result
    assert_close(values, np.amax(a, axis=axis, keepdims=keepdim), dtype=dtype)
    assert_close(indices, np.argmax(a, axis=axis, keepdims=keepdim), dtype=np.int64)
    low = x.min(dim, keepdim=keepdim)
    assert_close(low.values, np.amin(a, axis=axis, keepdims=keepdim))
    assert_close(low.indices, np.argmin(a, axis=axis, keepdims=keepdim))
    assert x.max().item() == a.max() and x.min().item() == a.min()
    assert x.argmax().item() == np.argmax(a) and dl.argmin(x).item() == np.argmin(a)
    assert_close(x.argmax(dim, keepdim), np.argmax(a, axis=axis, keepdims=keepdim))


def test_reductions_of_zero_dim_tensors_accept_dim_0_and_minus_1():
    x = dl.tensor(3.0)
    assert x.sum(0).item() == 3.0 and x.sum(-1, keepdim=True).shape == ()
    assert x.max(0).indices.item() == 0
    assert x.argmax(0).item() == 0 and x.mean().item() == 3.0
    with pytest.raises(IndexError, match=r"expected to be in range of \[-1, 0\], but got 1"):
        x.sum(1)


def test_nan_propagation():
    x = dl.tensor([1.0, float("nan"), 3.0])
    assert np.isnan(x.max().item()) and np.isnan(x.amax().item()) and np.isnan(x.sum().item())
    assert x.max(0).indices.item() == 1 and x.argmax().item() == 1


@settings(max_examples=25, deadline=None)
@given(spec=shape_and_dims(), dtype=st.sampled_from([np.float32, np.int64, np.bool_, np.uint8]), layout=layouts,
       keepdim=st.booleans(), seed=seeds)
def test_all_any(spec, dtype, layout, keepdim, seed):
    shape, dims = spec
    rng = np.random.default_rng(seed)
    x, a = make(rng, shape, dtype, layout)
    axis = _axis(dims, len(shape))
    out_dtype = np.uint8 if dtype == np.uint8 else np.bool_
    assert_close(x.all(dims, keepdim), np.all(a, axis=axis, keepdims=keepdim).astype(out_dtype), dtype=out_dtype)
    assert_close(dl.any(x, dims, keepdim), np.any(a, axis=axis, keepdims=keepdim).astype(out_dtype), dtype=out_dtype)


def test_sum_dtype_argument_and_empty_dim_list():
    x = dl.tensor([[1, 2], [3, 4]], dtype=dl.int32)
    assert x.sum(dtype=dl.float64).dtype is dl.float64
    assert x.sum(()).item() == 10  # an empty dim list reduces everything, as in torch
    assert dl.sum(dl.ones(2, 3, dtype=dl.bool)).item() == 6


def test_float16_accumulates_in_float32():
    x = from_array(np.full(4096, 0.1, np.float16))
    assert x.dtype is dl.float16
    np.testing.assert_allclose(float(x.sum().item()), 4096 * float(np.float16(0.1)), rtol=1e-3)
    np.testing.assert_allclose(float(x.mean().item()), float(np.float16(0.1)), rtol=1e-3)


def test_reduction_outputs_are_contiguous():
    x, _ = make(np.random.default_rng(0), (2, 3, 4, 5), np.float32, "channels_last")
    assert x.sum(1, keepdim=True).stride() == (20, 20, 5, 1)
    assert x.mean((2, 3), keepdim=True).stride() == (3, 1, 1, 1)
    assert x.max(1, keepdim=True).values.stride() == (20, 20, 5, 1)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: dl.ones(3, 2).sum(2), IndexError, r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"),
        (lambda: dl.ones(3, 2).sum((0, 0)), RuntimeError, "dim 0 appears multiple times in the list of dims"),
        (lambda: dl.arange(3).mean(), RuntimeError, "mean\\(\\): could not infer output dtype.*Got: Long"),
        (lambda: dl.arange(3).var(), RuntimeError, "std and var only support floating point and complex dtypes"),
        (lambda: dl.ones(0).max(), RuntimeError, "max\\(\\): Expected reduction dim to be specified for input.numel\\(\\) == 0"),
        (lambda: dl.ones(0, 3).amax(0), IndexError, "amax\\(\\): Expected reduction dim 0 to have non-zero size."),
        (lambda: dl.ones(0, 3).max(0), IndexError, "max\\(\\): Expected reduction dim 0 to have non-zero size."),
        (lambda: dl.ones(0, 3).argmax(), IndexError, "argmax\\(\\): Expected reduction dim to be specified"),
        (lambda: dl.ones(2, dtype=dl.bool).argmax(), RuntimeError, "argmax\\(\\): does not support bool input"),
        (lambda: dl.ones(2).var(0, True, correction=1), RuntimeError, "Cannot specify both unbiased and correction"),
    ],
)
def test_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_empty_reductions_give_identities_or_nan_silently():
    x = dl.ones(0, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert x.sum(0).tolist() == [0.0] * 3 and x.prod(0).tolist() == [1.0] * 3
        assert np.isnan(to_numpy(x.mean(0))).all()
        assert x.all(0).tolist() == [True] * 3 and x.any(0).tolist() == [False] * 3
