"""dl.nn.functional against NumPy oracles (benchmarks/numpy_reference.py building blocks)."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dynamo_lite as dl
from benchmarks import numpy_reference as ref
from dynamo_lite.nn import functional as F

RTOL, ATOL = 1e-5, 1e-5


def randn(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def t(array):
    return dl.from_numpy(np.ascontiguousarray(array))


def close(actual, expected, rtol=RTOL, atol=ATOL):
    np.testing.assert_allclose(actual.numpy(), expected, rtol=rtol, atol=atol)


# -- linear --------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(5, 4), (2, 3, 4), (4,)])
@pytest.mark.parametrize("with_bias", [True, False])
def test_linear(shape, with_bias):
    x, w, b = randn(*shape), randn(3, 4, seed=1), randn(3, seed=2)
    out = F.linear(t(x), t(w), t(b) if with_bias else None)
    close(out, ref.linear(x, w, b if with_bias else None))


def test_linear_shape_error():
    with pytest.raises(RuntimeError):
        F.linear(dl.ones(2, 3), dl.ones(4, 5))


# -- conv2d --------------------------------------------------------------------------
@settings(max_examples=30, deadline=None)
@given(
    n=st.integers(1, 2), groups=st.sampled_from([1, 2]), cin_per=st.integers(1, 2), cout_per=st.integers(1, 3),
    hw=st.tuples(st.integers(5, 9), st.integers(5, 9)), k=st.tuples(st.integers(1, 3), st.integers(1, 3)),
    stride=st.tuples(st.integers(1, 2), st.integers(1, 2)), padding=st.tuples(st.integers(0, 2), st.integers(0, 2)),
    dilation=st.tuples(st.integers(1, 2), st.integers(1, 2)), with_bias=st.booleans(),
    channels_last=st.booleans(),
)
def test_conv2d_matches_numpy(n, groups, cin_per, cout_per, hw, k, stride, padding, dilation, with_bias,
                              channels_last):
    cin, cout = groups * cin_per, groups * cout_per
    x, w, b = randn(n, cin, *hw), randn(cout, cin_per, *k, seed=1), randn(cout, seed=2)
    xt = t(x)
    if channels_last:
        xt = xt.contiguous(memory_format=dl.channels_last)
    out = F.conv2d(xt, t(w), t(b) if with_bias else None, stride, padding, dilation, groups)
    expected = ref.conv2d(x, w, b if with_bias else None, stride, padding, dilation, groups)
    close(out, expected, rtol=1e-4, atol=1e-4)


def test_conv2d_channels_last_propagates():
    x = t(randn(2, 3, 8, 8)).contiguous(memory_format=dl.channels_last)
    w = t(randn(4, 3, 3, 3, seed=1))
    out = F.conv2d(x, w, padding=1)
    assert out.is_contiguous(memory_format=dl.channels_last)
    close(out, ref.conv2d(x.numpy(), w.numpy(), padding=1), rtol=1e-4, atol=1e-4)


def test_conv2d_padding_strings():
    x, w = randn(1, 2, 7, 6), randn(3, 2, 3, 5, seed=1)
    close(F.conv2d(t(x), t(w), padding="same"), ref.conv2d(x, w, padding=(1, 2)), 1e-4, 1e-4)
    close(F.conv2d(t(x), t(w), padding="valid"), ref.conv2d(x, w), 1e-4, 1e-4)
    # An even kernel pads one more pixel after than before.
    w_even = randn(3, 2, 2, 4, seed=2)
    padded = np.pad(x, ((0, 0), (0, 0), (0, 1), (1, 2)))
    out = F.conv2d(t(x), t(w_even), padding="same")
    assert out.shape == (1, 3, 7, 6)
    close(out, ref.conv2d(padded, w_even), 1e-4, 1e-4)
    with pytest.raises(RuntimeError, match="strided"):
        F.conv2d(t(x), t(w), stride=2, padding="same")
    with pytest.raises(RuntimeError, match="Invalid padding string"):
        F.conv2d(t(x), t(w), padding="full")


def test_conv2d_channel_mismatch_is_an_error():
    with pytest.raises(RuntimeError):
        F.conv2d(dl.ones(1, 3, 5, 5), dl.ones(4, 2, 3, 3))


# -- pooling -------------------------------------------------------------------------
@settings(max_examples=30, deadline=None)
@given(
    hw=st.tuples(st.integers(5, 9), st.integers(5, 9)), k=st.tuples(st.integers(1, 3), st.integers(1, 3)),
    stride=st.one_of(st.none(), st.tuples(st.integers(1, 3), st.integers(1, 3))),
    dilation=st.integers(1, 2), channels_last=st.booleans(), data=st.data(),
)
def test_max_pool2d_matches_numpy(hw, k, stride, dilation, channels_last, data):
    padding = (data.draw(st.integers(0, k[0] // 2)), data.draw(st.integers(0, k[1] // 2)))
    x = randn(2, 3, *hw)
    xt = t(x)
    if channels_last:
        xt = xt.contiguous(memory_format=dl.channels_last)
    out = F.max_pool2d(xt, k, stride, padding, dilation)
    np.testing.assert_array_equal(out.numpy(), ref.max_pool2d(x, k, stride, padding, dilation))
    if channels_last:
        assert out.is_contiguous(memory_format=dl.channels_last)


def test_max_pool2d_ceil_mode():
    x = randn(1, 1, 5, 5)
    out = F.max_pool2d(t(x), 2, ceil_mode=True)
    assert out.shape == (1, 1, 3, 3)
    padded = np.pad(x, ((0, 0), (0, 0), (0, 1), (0, 1)), constant_values=-np.inf)
    np.testing.assert_array_equal(out.numpy(), ref.max_pool2d(padded, 2))


@pytest.mark.parametrize("kernel,stride,padding", [(2, None, 0), (3, 1, 1), ((2, 3), (1, 2), (1, 1))])
def test_avg_pool2d_matches_numpy(kernel, stride, padding):
    x = randn(2, 3, 6, 7)
    close(F.avg_pool2d(t(x), kernel, stride, padding), ref.avg_pool2d(x, kernel, stride, padding))


def test_avg_pool2d_count_include_pad_false():
    x = np.ones((1, 1, 4, 4), np.float32)
    out = F.avg_pool2d(t(x), 3, 1, 1, count_include_pad=False)
    np.testing.assert_allclose(out.numpy(), np.ones((1, 1, 4, 4)), rtol=1e-6)


# -- normalisation, embedding --------------------------------------------------------
@pytest.mark.parametrize("normalized_shape", [(6,), (5, 6), 6])
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm(normalized_shape, affine):
    x = randn(3, 5, 6) * 3 + 1
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else normalized_shape
    w, b = (randn(*shape, seed=1), randn(*shape, seed=2)) if affine else (None, None)
    out = F.layer_norm(t(x), normalized_shape, t(w) if affine else None, t(b) if affine else None, eps=1e-5)
    close(out, ref.layer_norm(x, shape, w, b, 1e-5), rtol=1e-4, atol=1e-5)


def test_layer_norm_shape_error():
    with pytest.raises(RuntimeError):
        F.layer_norm(dl.ones(2, 3), (4,))


def test_embedding():
    weight = randn(10, 4)
    idx = np.array([[1, 2, 4], [9, 0, 1]], dtype=np.int64)
    out = F.embedding(t(idx), t(weight))
    assert out.shape == (2, 3, 4)
    np.testing.assert_array_equal(out.numpy(), weight[idx])
    np.testing.assert_array_equal(F.embedding(t(idx), t(weight), padding_idx=-1).numpy(), weight[idx])
    with pytest.raises(IndexError):
        F.embedding(dl.tensor([10]), t(weight))


# -- dropout -------------------------------------------------------------------------
def test_dropout_eval_and_zero_p_return_input():
    x = dl.ones(100)
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.dropout(x, 1.5)


def test_dropout_training_zeroes_and_scales_reproducibly():
    x = dl.ones(20000)
    dl.manual_seed(3)
    a = F.dropout(x, 0.25).numpy()
    dl.manual_seed(3)
    b = F.dropout(x, 0.25).numpy()
    np.testing.assert_array_equal(a, b)
    assert set(np.unique(a).tolist()) <= {0.0, np.float32(1 / 0.75)}
    assert 0.22 < (a == 0).mean() < 0.28
    assert np.all(F.dropout(x, 1.0).numpy() == 0)
    y = dl.ones(1000)
    assert F.dropout(y, 0.5, inplace=True) is y and (y.numpy() == 0).any()


# -- activations ---------------------------------------------------------------------
ACTIVATIONS = {
    "relu": (F.relu, ref.relu),
    "sigmoid": (F.sigmoid, ref.sigmoid),
    "tanh": (F.tanh, np.tanh),
    "silu": (F.silu, ref.silu),
    "gelu": (F.gelu, ref.gelu),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), lambda x: ref.gelu(x, "tanh")),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation(name):
    fn, oracle = ACTIVATIONS[name]
    x = randn(4, 33) * 4
    close(fn(t(x)), oracle(x), rtol=1e-5, atol=1e-6)


def test_gelu_bad_approximate():
    with pytest.raises(RuntimeError):
        F.gelu(dl.ones(1), approximate="fast")


def test_gelu_exact_reference_values():
    x = dl.tensor([-1.0, 0.0, 1.0, 2.0])
    exact = [0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in (-1.0, 0.0, 1.0, 2.0)]
    np.testing.assert_allclose(F.gelu(x).numpy(), exact, rtol=1e-6, atol=1e-7)


def test_inplace_activations():
    x = t(randn(10))
    expected = ref.relu(x.numpy().copy())
    assert F.relu(x, inplace=True) is x
    np.testing.assert_array_equal(x.numpy(), expected)
    y = t(randn(10))
    expected = ref.silu(y.numpy().copy())
    assert F.silu(y, inplace=True) is y
    close(y, expected)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_and_log_softmax(dim):
    x = randn(3, 5) * 5
    close(F.softmax(t(x), dim=dim), ref.softmax(x, axis=dim))
    close(F.log_softmax(t(x), dim=dim), ref.log_softmax(x, axis=dim))


def test_softmax_dtype_and_implicit_dim():
    x = randn(2, 3)
    out = F.softmax(t(x), dim=1, dtype=dl.float64)
    assert out.dtype == dl.float64
    np.testing.assert_allclose(out.numpy(), ref.softmax(x.astype(np.float64), axis=1), rtol=1e-12)
    with pytest.warns(UserWarning, match="Implicit dimension"):
        implicit = F.softmax(t(x))
    close(implicit, ref.softmax(x, axis=1))


# -- one_hot, pad --------------------------------------------------------------------
def test_one_hot():
    idx = dl.tensor([[0, 2], [1, 0]])
    out = F.one_hot(idx, 3)
    assert out.dtype == dl.int64 and out.shape == (2, 2, 3)
    np.testing.assert_array_equal(out.numpy(), np.eye(3, dtype=np.int64)[idx.numpy()])
    assert F.one_hot(dl.tensor([0, 4])).shape == (2, 5)
    with pytest.raises(RuntimeError, match="LongTensor"):
        F.one_hot(dl.tensor([0.0]), 2)


def test_pad_constant():
    x = randn(2, 3, 4)
    out = F.pad(t(x), (1, 2, 0, 1), value=-1.0)
    np.testing.assert_array_equal(out.numpy(), np.pad(x, ((0, 0), (0, 1), (1, 2)), constant_values=-1.0))
    with pytest.raises(NotImplementedError):
        F.pad(t(x), (1, 1), mode="bogus")
