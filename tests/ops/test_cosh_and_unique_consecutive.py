"""cosh/sinh (functions, methods, in-place, gradients) and unique_consecutive.

Expected values are worked by hand from the definitions (cosh 1 = (e + 1/e) / 2) and from
torch's documented unique_consecutive examples and semantics (runs along ``dim`` compare
whole slices; inverse maps each entry to its run; counts are the run lengths).
"""
import math

import pytest

import dynamo_lite as dl

COSH1 = (math.e + 1 / math.e) / 2
SINH1 = (math.e - 1 / math.e) / 2


def test_cosh_sinh_functions_methods_and_inplace():
    x = dl.tensor([0.0, 1.0, -1.0])
    assert dl.cosh(x).tolist() == pytest.approx([1.0, COSH1, COSH1])
    assert x.sinh().tolist() == pytest.approx([0.0, SINH1, -SINH1])
    assert dl.tensor([1, 0]).cosh().dtype == dl.float32  # integers give the default float dtype
    y = x.clone()
    assert y.cosh_() is y and y.tolist() == pytest.approx([1.0, COSH1, COSH1])
    with pytest.raises(RuntimeError, match="can't be cast"):
        dl.tensor([1, 2]).cosh_()


def test_cosh_sinh_gradients():
    x = dl.tensor([0.0, 1.0, -1.0], requires_grad=True)
    dl.cosh(x).sum().backward()
    assert x.grad.tolist() == pytest.approx([0.0, SINH1, -SINH1])
    x.grad = None
    dl.sinh(x).sum().backward()
    assert x.grad.tolist() == pytest.approx([1.0, COSH1, COSH1])


def test_unique_consecutive_flat():
    x = dl.tensor([1, 1, 2, 2, 3, 1, 1, 2])
    assert dl.unique_consecutive(x).tolist() == [1, 2, 3, 1, 2]
    out, inverse, counts = dl.unique_consecutive(x, return_inverse=True, return_counts=True)
    assert out.tolist() == [1, 2, 3, 1, 2]
    assert inverse.tolist() == [0, 0, 1, 1, 2, 3, 3, 4] and inverse.dtype == dl.int64
    assert counts.tolist() == [2, 2, 1, 2, 1] and counts.dtype == dl.int64
    out, counts = x.unique_consecutive(return_counts=True)
    assert counts.tolist() == [2, 2, 1, 2, 1]


def test_unique_consecutive_inverse_keeps_the_input_shape():
    out, inverse = dl.unique_consecutive(dl.tensor([[1, 1], [2, 2]]), return_inverse=True)
    assert out.tolist() == [1, 2] and inverse.tolist() == [[0, 0], [1, 1]]


def test_unique_consecutive_along_a_dim():
    m = dl.tensor([[1, 1, 2, 2], [3, 3, 4, 4], [3, 3, 4, 4], [1, 1, 1, 1]])
    out, inverse, counts = dl.unique_consecutive(m, dim=0, return_inverse=True, return_counts=True)
    assert out.tolist() == [[1, 1, 2, 2], [3, 3, 4, 4], [1, 1, 1, 1]]
    assert inverse.tolist() == [0, 1, 1, 2] and counts.tolist() == [1, 2, 1]
    out, inverse, counts = dl.unique_consecutive(m, dim=-1, return_inverse=True, return_counts=True)
    assert out.tolist() == [[1, 2], [3, 4], [3, 4], [1, 1]]
    assert inverse.tolist() == [0, 0, 1, 1] and counts.tolist() == [2, 2]


def test_unique_consecutive_edges():
    out, inverse, counts = dl.unique_consecutive(dl.tensor(5), return_inverse=True, return_counts=True)
    assert out.tolist() == [5] and inverse.tolist() == 0 and counts.tolist() == [1]
    out, counts = dl.unique_consecutive(dl.tensor([]), return_counts=True)
    assert out.shape == (0,) and counts.shape == (0,)
    nan = float("nan")
    assert dl.unique_consecutive(dl.tensor([nan, nan, 1.0]), return_counts=True)[1].tolist() == [1, 1, 1]



def test_cosh_sinh_compiled_match_eager(backend):
    from tests.helpers import assert_same

    def f(x, y):
        return (x.cosh() * 2 + y.sinh()).cosh() - x.sinh()

    assert_same(f, dl.randn(3, 4), dl.randn(3, 4), backend=backend)
