"""matmul / mm / bmm / addmm / linear against NumPy, with torch's shape rules and error messages."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dynamo_lite as dl
from dynamo_lite.tensor.tensor import from_array

from .oracle import assert_close, layouts, make, seeds

MATMUL_SHAPES = [
    ((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 5)), ((3, 4), (4, 5)), ((2, 3, 4), (4, 5)), ((2, 3, 4), (4,)),
    ((4,), (2, 4, 5)), ((3, 4), (2, 4, 5)), ((2, 1, 3, 4), (5, 4, 2)), ((2, 3, 4), (2, 4, 5)), ((1, 3, 4), (6, 4, 2)),
]


@settings(max_examples=30, deadline=None)
@given(shapes=st.sampled_from(MATMUL_SHAPES), dtype=st.sampled_from([np.float32, np.float64, np.int64]),
       la=layouts, lb=layouts, seed=seeds)
def test_matmul_matches_numpy(shapes, dtype, la, lb, seed):
    rng = np.random.default_rng(seed)
    x, a = make(rng, shapes[0], dtype, la)
    y, b = make(rng, shapes[1], dtype, lb)
    result = x @ y
    expected = np.matmul(a, b)
    assert result.dtype.numpy == dtype and result.shape == expected.shape
    assert result.is_contiguous()
    assert_close(result, expected, rtol=1e-4, atol=1e-4)


def test_matmul_of_half_accumulates_in_float32():
    a = np.full((1, 2048), 0.1, np.float16)
    b = np.ones((2048, 1), np.float16)
    result = from_array(a) @ from_array(b)
    assert result.dtype is dl.float16
    np.testing.assert_allclose(float(result.item()), 2048 * float(np.float16(0.1)), rtol=1e-3)


def test_mm_bmm_addmm():
    rng = np.random.default_rng(0)
    x, a = make(rng, (3, 4), np.float32, "transposed")
    y, b = make(rng, (4, 5), np.float32, "sliced")
    assert_close(dl.mm(x, y), a @ b)
    assert_close(x.mm(y), a @ b)
    p, pa = make(rng, (2, 3, 4), np.float32, "contiguous")
    q, qa = make(rng, (2, 4, 5), np.float32, "sliced")
    assert_close(dl.bmm(p, q), pa @ qa)
    bias, ba = make(rng, (5,), np.float32, "contiguous")
    assert_close(dl.addmm(bias, x, y), ba + a @ b)
    assert_close(dl.addmm(bias, x, y, beta=0.5, alpha=2), 0.5 * ba + 2 * (a @ b))
    nan_bias = dl.full((3, 5), float("nan"))
    assert_close(dl.addmm(nan_bias, x, y, beta=0), a @ b)  # beta=0 ignores the input, NaN included


@settings(max_examples=25, deadline=None)
@given(batch=st.sampled_from([(), (7,), (2, 3)]), layout=layouts, with_bias=st.booleans(), seed=seeds)
def test_linear(batch, layout, with_bias, seed):
    rng = np.random.default_rng(seed)
    x, a = make(rng, batch + (4,), np.float32, layout)
    w, wa = make(rng, (5, 4), np.float32, "contiguous")
    b, ba = make(rng, (5,), np.float32, "contiguous")
    result = dl.linear(x, w, b if with_bias else None)
    expected = a @ wa.T + (ba if with_bias else 0)
    assert result.is_contiguous()
    assert_close(result, expected, rtol=1e-4, atol=1e-5)


def test_linear_with_vector_weight():
    x = dl.ones(3, 4)
    assert dl.linear(x, dl.ones(4)).tolist() == [4.0, 4.0, 4.0]


def test_matmul_operators():
    x = dl.ones(2, 3)
    assert (x @ dl.ones(3)).tolist() == [3.0, 3.0]
    with pytest.raises(TypeError):
        x @ "a"
    assert x.matmul(dl.ones(3, 1)).shape == (2, 1)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: dl.ones(64, 512) @ dl.ones(256, 10), r"mat1 and mat2 shapes cannot be multiplied \(64x512 and 256x10\)"),
        (lambda: dl.ones(3) @ dl.ones(4), r"inconsistent tensor size, expected tensor \[3\] and src \[4\]"),
        (lambda: dl.ones(3, 4) @ dl.ones(5), r"size mismatch, got input \(3\), mat \(3x4\), vec \(5\)"),
        (lambda: dl.ones(5) @ dl.ones(3, 4), r"mat1 and mat2 shapes cannot be multiplied \(1x5 and 3x4\)"),
        (lambda: dl.ones(2, 3, 4) @ dl.ones(5, 6), r"mat1 and mat2 shapes cannot be multiplied \(6x4 and 5x6\)"),
        (lambda: dl.ones(2, 3, 4) @ dl.ones(2, 5, 6),
         r"Expected size for first two dimensions of batch2 tensor to be: \[2, 4\] but got: \[2, 5\]."),
        (lambda: dl.ones(2, 3, 4) @ dl.ones(3, 4, 5), r"The size of tensor a \(2\) must match the size of tensor b \(3\)"),
        (lambda: dl.matmul(dl.tensor(1.0), dl.ones(4)), "both arguments to matmul need to be at least 1D, but they are 0D and 1D"),
        (lambda: dl.ones(2, 3) @ dl.ones(3, 4, dtype=dl.float64),
         "expected m1 and m2 to have the same dtype, but got: float != double"),
        (lambda: dl.mm(dl.ones(2, 3, 4), dl.ones(4, 5)), "self must be a matrix"),
        (lambda: dl.mm(dl.ones(3, 4), dl.ones(2, 4, 5)), "mat2 must be a matrix"),
        (lambda: dl.bmm(dl.ones(3, 4), dl.ones(2, 4, 5)), "batch1 must be a 3D tensor"),
        (lambda: dl.bmm(dl.ones(2, 3, 4), dl.ones(3, 4, 5)),
         r"Expected size for first two dimensions of batch2 tensor to be: \[2, 4\] but got: \[3, 4\]."),
        (lambda: dl.bmm(dl.ones(2, 2, 3), dl.ones(2, 3, 4, dtype=dl.float64)), "expected scalar type Float but found Double"),
        (lambda: dl.addmm(dl.ones(4), dl.ones(2, 4), dl.ones(4, 3)),
         r"The expanded size of the tensor \(3\) must match the existing size \(4\) at non-singleton dimension 1"),
        (lambda: dl.linear(dl.ones(128, 20), dl.ones(40, 30)), r"mat1 and mat2 shapes cannot be multiplied \(128x20 and 30x40\)"),
        (lambda: dl.linear(dl.tensor(1.0), dl.ones(40, 20)), "both arguments to linear need to be at least 1D"),
        (lambda: dl.linear(dl.ones(128, 20), dl.ones(40, 20), dl.ones(30)),
         r"The expanded size of the tensor \(40\) must match the existing size \(30\)"),
    ],
)
def test_errors_match_torch(call, message):
    with pytest.raises(RuntimeError, match=message):
        call()


def test_bool_matmul_is_not_implemented():
    with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
        dl.ones(2, 2, dtype=dl.bool) @ dl.ones(2, 2, dtype=dl.bool)


def test_dot():
    assert dl.dot(dl.tensor([1.0, 2.0]), dl.tensor([3.0, 4.0])).item() == 11.0
    assert dl.tensor([1, 2]).dot(dl.tensor([3, 4])).shape == ()
    with pytest.raises(RuntimeError, match="1D tensors expected, but got 2D and 2D tensors"):
        dl.dot(dl.ones(2, 2), dl.ones(2, 2))
    with pytest.raises(RuntimeError, match="expected both vectors to have same dtype, but found Float and Double"):
        dl.dot(dl.ones(3), dl.ones(3, dtype=dl.float64))


@pytest.mark.parametrize("p", ["fro", 1, 2, 3, 0, float("inf"), float("-inf")])
@pytest.mark.parametrize("dim, keepdim", [(None, False), (0, True), ((0, 1), False), (-1, False)])
def test_norm_matches_numpy(p, dim, keepdim):
    x, a = make(np.random.default_rng(5), (3, 4), np.float64, "transposed")
    order = 2 if p == "fro" else p
    axis = dim if dim is None or isinstance(dim, tuple) else dim % 2
    if axis is None:
        expected = np.linalg.norm(a.ravel(), order)
    else:
        flat_axis = axis if isinstance(axis, int) else None
        expected = (np.linalg.norm(a, order, axis=flat_axis, keepdims=keepdim) if flat_axis is not None
                    else np.linalg.norm(a.ravel(), order))
    assert_close(dl.norm(x, p, dim, keepdim), expected, rtol=1e-10)
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor as input. Got Long"):
        dl.arange(3).norm()
