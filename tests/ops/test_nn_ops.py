"""layer_norm, embedding and dropout against NumPy references."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dynamo_lite as dl
from dynamo_lite.tensor.tensor import from_array

from .oracle import assert_close, layouts, make, seeds, shapes, to_numpy


def reference_layer_norm(a, count, weight, bias, eps):
    axes = tuple(range(a.ndim - count, a.ndim))
    wide = a.astype(np.float64)
    mean = wide.mean(axis=axes, keepdims=True)
    var = ((wide - mean) ** 2).mean(axis=axes, keepdims=True)
    out = (wide - mean) / np.sqrt(var + eps)
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


@settings(max_examples=30, deadline=None)
@given(shape=shapes(min_dims=1, max_dims=4), layout=layouts, dtype=st.sampled_from([np.float32, np.float64, np.float16]),
       affine=st.booleans(), eps=st.sampled_from([1e-5, 0.1]), seed=seeds, data=st.data())
def test_layer_norm(shape, layout, dtype, affine, eps, seed, data):
    rng = np.random.default_rng(seed)
    x, a = make(rng, shape, dtype, layout)
    count = data.draw(st.integers(1, len(shape)))
    normalized = shape[len(shape) - count:]
    w, wa = make(rng, normalized, dtype, "contiguous")
    b, ba = make(rng, normalized, dtype, "contiguous")
    result = dl.layer_norm(x, normalized, w if affine else None, b if affine else None, eps)
    expected = reference_layer_norm(a, count, wa if affine else None, ba if affine else None, eps)
    assert result.dtype.numpy == dtype and result.is_contiguous()
    tol = 2e-2 if dtype == np.float16 else 1e-4
    assert_close(result, expected.astype(dtype), rtol=tol, atol=tol)


def test_layer_norm_is_stable_for_large_offsets():
    a = np.random.default_rng(0).standard_normal((4, 64)) + 1e4
    result = dl.layer_norm(from_array(a.astype(np.float32)), (64,))
    assert_close(result, reference_layer_norm(a.astype(np.float32), 1, None, None, 1e-5).astype(np.float32), rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: dl.layer_norm(dl.ones(2, 3, 5), (10,)), RuntimeError,
         r"Given normalized_shape=\[10\], expected input with shape \[\*, 10\], but got input of size\[2, 3, 5\]"),
        (lambda: dl.layer_norm(dl.ones(2, 3, 5), (5,), dl.ones(4)), RuntimeError,
         r"Expected weight to be of same shape as normalized_shape, but got weight of shape \[4\] and normalized_shape = \[5\]"),
        (lambda: dl.layer_norm(dl.ones(2, 5, dtype=dl.int64), (5,)), NotImplementedError,
         "\"LayerNormKernelImpl\" not implemented for 'Long'"),
    ],
)
def test_layer_norm_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


@settings(max_examples=25, deadline=None)
@given(index_shape=shapes(max_dims=3), layout=layouts, dtype=st.sampled_from([np.int64, np.int32]), seed=seeds)
def test_embedding(index_shape, layout, dtype, seed):
    rng = np.random.default_rng(seed)
    weight, wa = make(rng, (6, 3), np.float32, layout)
    indices = rng.integers(0, 6, index_shape).astype(dtype)
    result = dl.embedding(weight, from_array(indices))
    assert result.shape == index_shape + (3,) and result.is_contiguous()
    assert_close(result, wa[indices])


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: dl.embedding(dl.ones(5, 3), dl.tensor([5])), IndexError, "index out of range in self"),
        (lambda: dl.embedding(dl.ones(5, 3), dl.tensor([-1])), IndexError, "index out of range in self"),
        (lambda: dl.embedding(dl.ones(5, 3), dl.ones(2)), RuntimeError,
         "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int"),
        (lambda: dl.embedding(dl.ones(5), dl.tensor([1])), RuntimeError, "'weight' must be 2-D"),
    ],
)
def test_embedding_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_dropout_in_eval_returns_the_input_itself():
    x = dl.ones(4)
    assert dl.dropout(x, 0.5, training=False) is x
    assert dl.dropout(x, 0.0) is x


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "channels_last"])
def test_dropout_scales_survivors_and_keeps_the_layout(layout):
    x, _ = make(np.random.default_rng(0), (4, 8, 16, 16), np.float32, layout)
    x = dl.ones_like(x)
    result = dl.dropout(x, 0.25)
    values = to_numpy(result)
    assert result.stride() == x.stride()
    assert set(np.unique(values)) <= {0.0, np.float32(1 / 0.75)}
    assert abs((values == 0).mean() - 0.25) < 0.02
    assert dl.dropout(x, 1.0).abs().sum().item() == 0.0


def test_dropout_is_reproducible_with_manual_seed():
    x = dl.ones(100)
    dl.manual_seed(7)
    first = to_numpy(dl.dropout(x, 0.5))
    dl.manual_seed(7)
    second = to_numpy(dl.dropout(x, 0.5))
    np.testing.assert_array_equal(first, second)
    generator = dl.Generator().manual_seed(3)
    third = to_numpy(dl.dropout(x, 0.5, generator=generator))
    generator.manual_seed(3)
    np.testing.assert_array_equal(third, to_numpy(dl.dropout(x, 0.5, generator=generator)))


def test_dropout_in_place_and_errors():
    x = dl.ones(50)
    version = x._version
    assert dl.dropout(x, 0.5, inplace=True) is x
    assert x._version == version + 1 and set(np.unique(x.numpy())) <= {0.0, 2.0}
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        dl.dropout(x, 1.5)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        dl.dropout(dl.arange(3), 0.5)
