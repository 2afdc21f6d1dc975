"""Comparisons, logical and bitwise ops, where and clamp against NumPy."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import dynamo_lite as dl
from dynamo_lite.tensor.dtype import from_numpy_dtype, result_type
from dynamo_lite.tensor.tensor import from_array

from .oracle import NUMERIC_DTYPES, assert_close, layouts, make, seeds, to_numpy

pairs_of_shapes = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, max_side=4)

COMPARISONS = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal}
OPERATORS = {"eq": "__eq__", "ne": "__ne__", "lt": "__lt__", "le": "__le__", "gt": "__gt__", "ge": "__ge__"}
LOGICAL = {"logical_and": np.logical_and, "logical_or": np.logical_or, "logical_xor": np.logical_xor}


def _promoted(a, b):
    return result_type(*(dl.TensorMeta(x.shape, from_numpy_dtype(x.dtype)) for x in (a, b))).numpy


@settings(max_examples=30, deadline=None)
@given(name=st.sampled_from(sorted(COMPARISONS)), shapes=pairs_of_shapes, da=st.sampled_from(NUMERIC_DTYPES),
       db=st.sampled_from(NUMERIC_DTYPES), la=layouts, lb=layouts, seed=seeds, use_operator=st.booleans())
def test_comparisons_match_numpy(name, shapes, da, db, la, lb, seed, use_operator):
    rng = np.random.default_rng(seed)
    (sa, sb), _ = shapes
    x, a = make(rng, sa, da, la)
    y, b = make(rng, sb, db, lb)
    result = getattr(x, OPERATORS[name])(y) if use_operator else getattr(dl, name)(x, y)
    rt = _promoted(a, b)
    assert result.dtype is dl.bool
    assert_close(result, COMPARISONS[name](a.astype(rt), b.astype(rt)))


@settings(max_examples=25, deadline=None)
@given(name=st.sampled_from(sorted(LOGICAL)), shapes=pairs_of_shapes, da=st.sampled_from(NUMERIC_DTYPES),
       db=st.sampled_from(NUMERIC_DTYPES), la=layouts, seed=seeds)
def test_logical_ops_match_numpy(name, shapes, da, db, la, seed):
    rng = np.random.default_rng(seed)
    (sa, sb), _ = shapes
    x, a = make(rng, sa, da, la)
    y, b = make(rng, sb, db, "contiguous")
    assert_close(getattr(dl, name)(x, y), LOGICAL[name](a, b), dtype=np.bool_)
    assert_close(dl.logical_not(x), np.logical_not(a), dtype=np.bool_)


@settings(max_examples=25, deadline=None)
@given(shapes=pairs_of_shapes, da=st.sampled_from([np.int64, np.int32, np.uint8, np.bool_]),
       db=st.sampled_from([np.int64, np.int8, np.bool_]), la=layouts, seed=seeds)
def test_bitwise_ops_match_numpy(shapes, da, db, la, seed):
    rng = np.random.default_rng(seed)
    (sa, sb), _ = shapes
    x, a = make(rng, sa, da, la)
    y, b = make(rng, sb, db, "contiguous")
    rt = _promoted(a, b)
    for result, oracle in ((x & y, np.bitwise_and), (x | y, np.bitwise_or), (x ^ y, np.bitwise_xor)):
        assert result.dtype.numpy == rt
        assert_close(result, oracle(a.astype(rt), b.astype(rt)))
    assert_close(~x, np.invert(a))


def test_comparison_computes_in_the_promoted_type():
    half = from_array(np.array([0.1], np.float16))
    # float16 vs a float32 0-dim tensor compares in float16 (the 0-dim operand is demoted)
    assert (half == from_array(np.array(0.1, np.float32))).tolist() == [True]
    assert (dl.arange(4) < 2.5).tolist() == [True, True, True, False]
    assert (dl.tensor([1, 2]) == dl.tensor([1.0, 2.5])).tolist() == [True, False]


@settings(max_examples=25, deadline=None)
@given(shape=st.sampled_from([(3, 4), (2, 3, 4), (4,)]), dtype=st.sampled_from([np.float32, np.int64, np.float64]),
       layout=layouts, seed=seeds)
def test_where_matches_numpy(shape, dtype, layout, seed):
    rng = np.random.default_rng(seed)
    x, a = make(rng, shape, dtype, layout)
    y, b = make(rng, shape[-1:], np.float32, "contiguous")
    result = dl.where(x > 0, x, y)
    rt = _promoted(a, b)
    assert result.dtype.numpy == rt
    assert_close(result, np.where(a > 0, a, b).astype(rt))
    assert_close(dl.where(x > 0, x, 0), np.where(a > 0, a, 0).astype(dtype))
    assert x.where(x > 0, -1).tolist() == np.where(a > 0, a, -1).tolist()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_where_moves_exact_bits(dtype):
    # NaN payloads, signed zeros and infinities pass through unchanged; scalars are cast like copyto
    special = np.array([np.nan, -np.nan, -0.0, 0.0, np.inf, -np.inf, 1e-40, 3.5], dtype)
    special[0] = np.frombuffer(np.array(0x7FC00123 if dtype == np.float32 else 0x7FF8000000000123,
                                        np.int32 if dtype == np.float32 else np.int64).tobytes(), dtype)[0]
    other = special[::-1].copy()
    mask = np.array([True, False] * 4)
    x, y, cond = dl.from_numpy(special), dl.from_numpy(other), dl.from_numpy(mask)
    for b, expected_b in ((y, other), (0.0, np.zeros_like(other)), (-0.0, np.full_like(other, -0.0)), (0.1, np.full_like(other, 0.1))):
        got = dl.where(cond, x, b).numpy()
        expected = np.where(mask, special, expected_b)
        assert got.tobytes() == expected.tobytes()
    broadcast = dl.where(dl.tensor([[True], [False]]), x, 2.0).numpy()
    assert broadcast.tobytes() == np.where([[True], [False]], special, dtype(2.0)).tobytes()


def test_where_with_two_scalars_uses_default_dtypes():
    cond = dl.tensor([True, False])
    assert dl.where(cond, 1.0, 0).dtype is dl.float32
    assert dl.where(cond, 1, 0).dtype is dl.int64
    assert dl.where(cond, 1, 0).tolist() == [1, 0]


@settings(max_examples=25, deadline=None)
@given(shape=st.sampled_from([(3, 4), (2, 3, 4, 5), (5,)]), dtype=st.sampled_from([np.float32, np.int64, np.float16]),
       layout=layouts, seed=seeds, low=st.sampled_from([None, -1, -0.5]), high=st.sampled_from([None, 2, 0.5]))
def test_clamp_matches_numpy(shape, dtype, layout, seed, low, high):
    if low is None and high is None:
        return
    rng = np.random.default_rng(seed)
    x, a = make(rng, shape, dtype, layout)
    result = dl.clamp(x, low, high)
    rt = result_type(x, *(v for v in (low, high) if v is not None)).numpy
    assert result.dtype.numpy == rt
    expected = np.clip(a.astype(rt), -np.inf if low is None else low, np.inf if high is None else high)
    assert_close(result, expected.astype(rt))


def test_clamp_with_tensor_bounds_and_in_place():
    x = dl.tensor([[-2.0, 0.0, 2.0], [5.0, -5.0, 1.0]])
    low = dl.tensor([-1.0, 0.5, 0.0])
    assert dl.clamp(x, min=low).tolist() == [[-1.0, 0.5, 2.0], [5.0, 0.5, 1.0]]
    assert dl.clamp(x, 1.0, 0.0).tolist() == [[0.0] * 3] * 2  # min > max gives max, as in torch
    assert x.clamp_max(0.0).tolist() == [[-2.0, 0.0, 0.0], [0.0, -5.0, 0.0]]
    view = x.t()
    assert view.clamp_(-1, 1) is view
    assert x.tolist() == [[-1.0, 0.0, 1.0], [1.0, -1.0, 1.0]]
    assert dl.clamp(dl.tensor([float("nan")]), 0, 1).isnan().tolist() == [True]


def test_clamp_of_bool_tensors():
    mask = dl.tensor([True, False])
    assert dl.clamp(mask, min=2).tolist() == [2, 2] and dl.clamp(mask, max=0.5).dtype is dl.float32
    with pytest.raises(NotImplementedError, match="\"clamp_min_scalar_cpu\" not implemented for 'Bool'"):
        dl.clamp(mask, min=True)


def test_minimum_maximum_propagate_nan():
    a = dl.tensor([1.0, float("nan"), 3.0])
    b = dl.tensor([2.0, 0.0, float("nan")])
    assert np.isnan(to_numpy(dl.maximum(a, b))[1:]).all()
    assert dl.minimum(a, b).tolist()[0] == 1.0
    assert dl.max(a, b).tolist()[0] == 2.0  # max(a, b) is maximum


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: dl.where(dl.ones(2), dl.ones(2), dl.ones(2)), RuntimeError,
         "where expected condition to be a boolean tensor, but got a tensor with dtype Float"),
        (lambda: dl.clamp(dl.ones(2)), RuntimeError, "At least one of 'min' or 'max' must not be None"),
        (lambda: dl.arange(2).clamp_(0.5, 2.5), RuntimeError,
         "result type Float can't be cast"),
        (lambda: dl.ones(2) & dl.ones(2), NotImplementedError, "\"bitwise_and_cpu\" not implemented for 'Float'"),
        (lambda: ~dl.ones(2), TypeError, "only implemented on integer and Boolean-type tensors"),
        (lambda: dl.ones(2) < dl.ones(3), RuntimeError, "must match the size of tensor b"),
    ],
)
def test_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_inplace_bitwise_operators():
    mask = dl.tensor([True, False, True])
    alias = mask
    mask &= dl.tensor([True, True, False])
    mask |= dl.tensor([False, True, False])
    mask ^= True
    assert mask is alias and mask.tolist() == [False, False, True]
