"""``out=`` on add, outer and mv: torch writes into ``out``, resizes an empty one, returns it.

Expected values are worked by hand from torch's documented out= semantics (resize of
a zero-element out is silent, a differently-shaped non-empty one warns, a result type
that cannot be cast to out's dtype raises, autograd refuses out=).
"""
import warnings

import pytest

import dynamo_lite as dl

CASES = [
    (lambda out: dl.add(dl.tensor([1.0, 2.0]), dl.tensor([3.0, 4.0]), alpha=2, out=out), [7.0, 10.0]),
    (lambda out: dl.outer(dl.tensor([1.0, 2.0]), dl.tensor([3.0, 4.0]), out=out), [[3.0, 4.0], [6.0, 8.0]]),
    (lambda out: dl.mv(dl.tensor([[1.0, 2.0], [3.0, 4.0]]), dl.tensor([1.0, 1.0]), out=out), [3.0, 7.0]),
]


@pytest.mark.parametrize("call,expected", CASES)
def test_empty_out_is_resized_and_returned(call, expected):
    out = dl.empty(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = call(out)
    assert result is out
    assert out.tolist() == expected


@pytest.mark.parametrize("call,expected", CASES)
def test_matching_out_keeps_its_storage(call, expected):
    import numpy as np
    shape = np.asarray(expected).shape
    out = dl.zeros(*shape)
    before = out.data_ptr()
    assert call(out) is out and out.tolist() == expected and out.data_ptr() == before


def test_wrong_shape_out_warns_and_resizes():
    out = dl.zeros(5)
    with pytest.warns(UserWarning, match="was resized"):
        dl.add(dl.ones(2), dl.ones(2), out=out)
    assert out.tolist() == [2.0, 2.0]


def test_out_dtype_rules():
    out = dl.zeros(2, dtype=dl.float64)
    dl.add(dl.tensor([1, 2]), 1, out=out)
    assert out.dtype == dl.float64 and out.tolist() == [2.0, 3.0]
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        dl.add(dl.ones(2), 1, out=dl.zeros(2, dtype=dl.int64))


def test_out_refuses_autograd():
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        dl.outer(dl.ones(2, requires_grad=True), dl.ones(2), out=dl.empty(0))
    with dl.no_grad():
        out = dl.empty(0)
        dl.outer(dl.ones(2, requires_grad=True), dl.ones(2), out=out)
    assert out.tolist() == [[1.0, 1.0], [1.0, 1.0]]
