"""sort/argsort/topk/searchsorted/bucketize, scatter family/index_fill, nonzero/masked_select/unique/bincount.

Expected values and error messages marked "torch 2.13" were recorded by making the same
call in PyTorch 2.13.0 (CPU wheel) in a private venv; the rest is checked against NumPy.
"""
from __future__ import annotations

import numpy as np
import pytest

import dynamo_lite as dl
from dynamo_lite.tensor.tensor import from_array
from tests.helpers import assert_same

from .oracle import laid_out

RNG = np.random.default_rng(11)
NAN = float("nan")


# -- sorting --------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.int8, np.bool_])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_is_stable_and_matches_numpy(dtype, descending):
    a = RNG.integers(-3, 4, (5, 7)).astype(dtype)  # many ties
    x = laid_out(a, "transposed")
    for dim in (0, 1, -1):
        values, indices = dl.sort(x, dim, descending=descending)
        key = -a.astype(np.int64) if descending else a
        expected = np.argsort(key, axis=dim, kind="stable")
        np.testing.assert_array_equal(indices.numpy(), expected)
        np.testing.assert_array_equal(values.numpy(), np.take_along_axis(a, expected, dim))
        assert dl.argsort(x, dim, descending=descending).tolist() == expected.tolist()


def test_sort_and_topk_with_nan_and_ties_like_torch():  # torch 2.13
    x = dl.tensor([[3.0, NAN, 1.0, 3.0], [2, 2, 0, -1]])
    values, indices = x.sort()
    assert indices.tolist() == [[2, 0, 3, 1], [3, 2, 0, 1]]
    assert dl.sort(x, descending=True, stable=True).indices.tolist() == [[1, 0, 3, 2], [0, 1, 2, 3]]
    top = x.topk(2)
    assert top.indices.tolist() == [[1, 3], [1, 0]] and np.isnan(top.values[0, 0].item())
    assert dl.topk(x, 2, largest=False).indices.tolist() == [[2, 3], [3, 2]]
    assert dl.topk(x, 2, dim=0).indices.tolist() == [[0, 0, 0, 0], [1, 1, 1, 1]]
    assert dl.sort(x.t(), dim=0).values.stride() == (1, 4)  # the input's layout, as torch
    assert dl.msort(x)[0].tolist() == [2.0, 2.0, 0.0, -1.0]
    scalar = dl.sort(dl.tensor(3.0))
    assert scalar.values.item() == 3.0 and scalar.indices.item() == 0
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        x.topk(5)
    with pytest.raises(IndexError, match="Dimension out of range"):
        dl.sort(x, 2)


def test_topk_matches_numpy_on_distinct_values():
    a = RNG.permutation(60).reshape(6, 10).astype(np.float32)
    values, indices = dl.topk(laid_out(a, "transposed"), 3, dim=1)
    expected = np.argsort(-a, axis=1)[:, :3]
    np.testing.assert_array_equal(indices.numpy(), expected)
    np.testing.assert_array_equal(values.numpy(), np.take_along_axis(a, expected, 1))


def test_searchsorted_and_bucketize():  # torch 2.13
    seq = dl.tensor([1, 3, 5, 7])
    assert dl.searchsorted(seq, dl.tensor([[3, 6], [9, 0]])).tolist() == [[1, 3], [4, 0]]
    assert dl.searchsorted(dl.tensor([[1, 3], [2, 4]]), dl.tensor([[3], [3]]), right=True).tolist() == [[2], [1]]
    assert dl.searchsorted(seq, dl.tensor([3]), side="right").tolist() == [2]
    assert dl.searchsorted(seq, dl.tensor([3]), out_int32=True).dtype is dl.int32
    assert dl.searchsorted(dl.tensor([5, 1, 3]), dl.tensor([4]), sorter=dl.tensor([1, 2, 0])).tolist() == [2]
    assert dl.bucketize(dl.tensor([[3, 6], [9, 0]]), seq, right=True).tolist() == [[2, 3], [4, 0]]
    cases = [
        (lambda: dl.searchsorted(dl.tensor([[1, 3], [2, 4]]), dl.tensor([3, 3])),
         "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries "
         "tensor and input value tensor must match, but we got boundaries tensor [2, 2] and input value tensor [2]"),
        (lambda: dl.searchsorted(seq, dl.tensor([3]), side="left", right=True),
         "torch.searchsorted(): side and right can't be set to opposites, got side of left while right was True"),
        (lambda: dl.bucketize(dl.tensor([3]), dl.tensor([[1, 3]])), "boundaries tensor must be 1 dimension, but got dim(2)"),
    ]
    for call, message in cases:
        with pytest.raises(RuntimeError) as info:
            call()
        assert str(info.value) == message


# -- scatter --------------------------------------------------------------------------------
X = dl.zeros(3, 4)
IDX = dl.tensor([[0, 1, 2, 0], [2, 0, 0, 1]])
SRC = dl.arange(8.0).view(2, 4)


def test_scatter_family_like_torch():  # torch 2.13
    assert dl.scatter(X, 0, IDX, SRC).tolist() == [[0, 5, 6, 3], [0, 1, 0, 7], [4, 0, 2, 0]]
    assert dl.scatter(X, 1, IDX[:, :2], value=2.5).tolist()[0] == [2.5, 2.5, 0, 0]
    assert dl.scatter_add(X, 0, IDX, SRC).tolist() == [[0, 5, 6, 3], [0, 1, 0, 7], [4, 0, 2, 0]]
    ones = X + 1
    assert dl.scatter_reduce(ones, 0, IDX, SRC, "amax").tolist() == [[1, 5, 6, 3], [1, 1, 1, 7], [4, 1, 2, 1]]
    assert dl.scatter_reduce(ones, 0, IDX, SRC, "mean", include_self=False).tolist() == [
        [0, 5, 6, 3], [1, 1, 1, 7], [4, 1, 2, 1]]
    assert dl.scatter_reduce(ones, 0, IDX, SRC, "mean").tolist() == [
        [0.5, 3, 3.5, 2], [1, 1, 1, 4], [2.5, 1, 1.5, 1]]
    ints = dl.scatter_reduce(dl.zeros(3, dtype=dl.int64), 0, dl.tensor([0, 0, 1]), dl.tensor([1, 2, 3]), "mean")
    assert ints.tolist() == [1, 1, 0]
    assert dl.scatter(X, 0, IDX, SRC, reduce="multiply").tolist() == [[0] * 4] * 3
    y = X.clone()
    assert y.scatter_(0, IDX, SRC) is y and y.tolist() == dl.scatter(X, 0, IDX, SRC).tolist()
    y.scatter_add_(0, IDX, SRC).scatter_reduce_(1, IDX[:, :2], SRC[:, :2], "prod")
    np.testing.assert_array_equal(y.numpy(), _numpy_scatter_chain())


def _numpy_scatter_chain():
    out = np.zeros((3, 4), np.float32)
    idx, src = IDX.numpy(), SRC.numpy()
    for i in range(2):
        for j in range(4):
            out[idx[i, j], j] = src[i, j]
    for i in range(2):
        for j in range(4):
            out[idx[i, j], j] += src[i, j]
    for i in range(2):
        for j in range(2):
            out[i, idx[i, j]] *= src[i, j]
    return out


def test_scatter_reduce_matches_a_loop_on_random_data():
    a = RNG.standard_normal((4, 6)).astype(np.float32)
    idx = RNG.integers(0, 4, (5, 6))
    src = RNG.standard_normal((5, 6)).astype(np.float32)
    reducers = {"sum": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum}
    for name, ufunc in reducers.items():
        expected = a.copy()
        for i in range(5):
            for j in range(6):
                expected[idx[i, j], j] = ufunc(expected[idx[i, j], j], src[i, j])
        got = dl.scatter_reduce(laid_out(a, "transposed"), 0, from_array(idx), from_array(src), name)
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-5)


def test_scatter_errors_like_torch():  # torch 2.13
    cases = [
        (lambda: dl.scatter(X, 0, IDX.float(), SRC), RuntimeError, "scatter(): Expected dtype int32/int64 for index"),
        (lambda: dl.scatter(X, 0, IDX, SRC.double()), RuntimeError,
         "scatter(): Expected self.dtype to be equal to src.dtype"),
        (lambda: dl.scatter(X, 0, IDX + 5, SRC), RuntimeError, "index 5 is out of bounds for dimension 0 with size 3"),
        (lambda: dl.scatter(X, 0, dl.zeros(2, 5, dtype=dl.int64), SRC), RuntimeError,
         "Expected index [2, 5] to be no larger than self [3, 4] apart from dimension 0 and to be no larger size "
         "than src [2, 4]"),
        (lambda: dl.scatter(X, 0, IDX[0], SRC), RuntimeError,
         "Index tensor must have the same number of dimensions as self tensor"),
        (lambda: dl.scatter_reduce(X, 0, IDX, SRC, "foo"), RuntimeError,
         "reduce argument must be either sum, prod, mean, amax or amin, got foo"),
        (lambda: dl.scatter(X, 0, IDX, SRC, reduce="foo"), RuntimeError, "reduce argument must be either add or multiply."),
        (lambda: dl.scatter_add(dl.zeros(3, dtype=dl.int64), 0, dl.tensor([0, 0, 1]), dl.tensor([1.0, 2, 3])),
         RuntimeError, "scatter(): Expected self.dtype to be equal to src.dtype"),
        (lambda: X.index_fill(0, dl.tensor([5]), -1), IndexError, "index 5 is out of bounds for dimension 0 with size 3"),
        (lambda: X.index_fill(0, dl.tensor([1.0]), -1), IndexError, "index_fill_(): Expected dtype int64 for index."),
        (lambda: X.index_fill(0, dl.tensor([[1]]), -1), RuntimeError, "Index has to be a vector/scalar"),
    ]
    for call, error, message in cases:
        with pytest.raises(error) as info:
            call()
        assert str(info.value) == message


def test_index_fill():  # torch 2.13
    assert dl.zeros(3, 4).index_fill_(1, dl.tensor([0, 2]), -1).tolist() == [[-1, 0, -1, 0]] * 3
    assert dl.zeros(3, 4, dtype=dl.int64).index_fill(0, dl.tensor([1]), 1.5).tolist()[1] == [1, 1, 1, 1]
    assert dl.zeros(3, 4).index_fill(0, dl.tensor([1]), dl.tensor(2.0)).tolist()[1] == [2.0] * 4


# -- data-dependent sizes -------------------------------------------------------------------
def test_nonzero_masked_select_unique_bincount_like_torch():  # torch 2.13
    m = dl.tensor([[0, 1], [2, 0]])
    assert dl.nonzero(m).tolist() == [[0, 1], [1, 0]]
    assert [t.tolist() for t in m.nonzero(as_tuple=True)] == [[0, 1], [1, 0]]
    assert dl.nonzero(dl.tensor(3)).shape == (1, 0) and dl.argwhere(dl.tensor([0, 1])).tolist() == [[1]]
    assert dl.masked_select(dl.arange(6).view(2, 3), dl.tensor([True, False, True])).tolist() == [0, 2, 3, 5]
    values, inverse, counts = dl.unique(dl.tensor([3, 1, 3, 2]), return_inverse=True, return_counts=True)
    assert (values.tolist(), inverse.tolist(), counts.tolist()) == ([1, 2, 3], [2, 0, 2, 1], [1, 1, 2])
    rows, counts = dl.unique(dl.tensor([[1, 2], [1, 2], [0, 5]]), dim=0, return_counts=True)
    assert (rows.tolist(), counts.tolist()) == ([[0, 5], [1, 2]], [1, 2])
    assert np.isnan(dl.unique(dl.tensor([3.0, NAN, NAN])).numpy()[1:]).all()  # every NaN is its own value
    assert dl.unique(dl.tensor([[3, 1], [3, 2]]), return_inverse=True)[1].tolist() == [[2, 0], [2, 1]]
    assert dl.bincount(dl.tensor([1, 1, 3])).tolist() == [0, 2, 0, 1]
    weighted = dl.bincount(dl.tensor([1, 1, 3]), dl.tensor([0.5, 1, 2]))
    assert weighted.tolist() == [0, 1.5, 0, 2] and weighted.dtype is dl.float32
    assert dl.bincount(dl.tensor([1, 2]), dl.tensor([1, 2])).dtype is dl.float64
    assert dl.bincount(dl.tensor([1, 1, 3]), minlength=6).tolist() == [0, 2, 0, 1, 0, 0]
    assert dl.count_nonzero(m, dim=0).tolist() == [1, 1]
    cases = [
        (lambda: dl.masked_select(m, dl.tensor([1, 0])), RuntimeError, "masked_select: expected BoolTensor for mask"),
        (lambda: dl.bincount(dl.tensor([-1])), RuntimeError, "bincount only supports 1-d non-negative integral inputs."),
        (lambda: dl.bincount(dl.tensor([[1]])), RuntimeError, "bincount only supports 1-d non-negative integral inputs."),
        (lambda: dl.bincount(dl.tensor([1.0])), NotImplementedError, "\"bincount_cpu\" not implemented for 'Float'"),
        (lambda: dl.bincount(dl.tensor([1, 2]), dl.tensor([1.0])), RuntimeError,
         "weights should be 1-d and have the same length as input"),
        (lambda: dl.bincount(dl.tensor([1]), minlength=-1), RuntimeError, "minlength should be >= 0"),
    ]
    for call, error, message in cases:
        with pytest.raises(error) as info:
            call()
        assert str(info.value) == message


# -- compiled code ----------------------------------------------------------------------------
def _sort_and_scatter(x, idx):
    values, order = x.sort(dim=1, descending=True)
    top = dl.topk(x, 2).values
    buckets = dl.bucketize(x, dl.tensor([-1.0, 0.0, 1.0]))
    placed = dl.zeros_like(x).scatter_(1, order, values * 2).scatter_add(0, idx, x)
    reduced = dl.scatter_reduce(x, 0, idx, x, "amax", include_self=False).index_fill(1, dl.tensor([0]), -1.0)
    return placed + reduced + buckets, top.sum(), dl.argsort(x, 0)


def test_sorting_and_scatter_compile_into_one_graph(backend):
    args = (dl.randn(4, 5), dl.randint(0, 4, (4, 5)))
    report = dl.explain(_sort_and_scatter)(*args)
    assert (report.graph_count, report.graph_break_count) == (1, 0), report.break_reasons
    assert_same(_sort_and_scatter, *args, backend=backend)
    assert dl.stats().frames_compiled == 1


@pytest.mark.parametrize("fn_name", ["nonzero", "masked_select", "unique", "unique_consecutive", "bincount"])
def test_data_dependent_ops_break_the_graph_and_match_eager(fn_name, backend):
    programs = {
        "nonzero": lambda x: dl.nonzero(x > 0).float().sum() + x.sum(),
        "masked_select": lambda x: dl.masked_select(x * 2, x > 0).sum() - 1,
        "unique": lambda x: dl.unique((x * 2).round(), return_counts=True)[1] + 1,
        "unique_consecutive": lambda x: dl.unique_consecutive((x * 2).round(), return_counts=True)[1] + 1,
        "bincount": lambda x: dl.bincount((x.abs() * 3).long().flatten()) * 2,
    }
    fn = programs[fn_name]
    x = dl.randn(4, 5)
    report = dl.explain(fn)(x)
    assert report.graph_break_count == 1
    assert f"{fn_name}() needs the value of a traced tensor" in report.break_reasons[0].reason
    assert report.graph_count == 2  # the work before the break and after it still compile
    assert_same(fn, x, backend=backend, expect_breaks=1)
