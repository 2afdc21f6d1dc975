"""Binary arithmetic ops against NumPy: broadcasting, promotion, layouts, in place, operators, errors."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import dynamo_lite as dl
from dynamo_lite.tensor.dtype import from_numpy_dtype, result_type
from dynamo_lite.tensor.tensor import from_array

from tests.helpers import assert_same

from .oracle import NUMERIC_DTYPES, assert_close, laid_out, layouts, make, seeds, to_numpy

pairs_of_shapes = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, max_side=4)
dtypes = st.sampled_from(NUMERIC_DTYPES)


def _result_dtype(a, b):
    """torch's result type of two tensors (both with dims) as a NumPy dtype."""
    return result_type(*(dl.TensorMeta(x.shape, from_numpy_dtype(x.dtype)) for x in (a, b))).numpy


def _nonzero(arr):
    return np.where(arr == 0, np.ones_like(arr), arr)


# op -> (dl function, NumPy oracle computed in the result dtype, which (result, a, b) dtypes it accepts)
ARITHMETIC = {
    "add": (dl.add, np.add, lambda rt, a, b: True),
    "sub": (dl.sub, np.subtract, lambda rt, a, b: "b" not in (a.kind, b.kind)),  # no bool operand at all
    "mul": (dl.mul, np.multiply, lambda rt, a, b: True),
    "floor_divide": (dl.floor_divide, np.floor_divide, lambda rt, a, b: rt.kind != "b"),
    "remainder": (dl.remainder, np.remainder, lambda rt, a, b: rt.kind != "b"),
    "maximum": (dl.maximum, np.maximum, lambda rt, a, b: True),
    "minimum": (dl.minimum, np.minimum, lambda rt, a, b: True),
}


@settings(max_examples=30, deadline=None)
@given(op=st.sampled_from(sorted(ARITHMETIC)), shapes=pairs_of_shapes, da=dtypes, db=dtypes,
       la=layouts, lb=layouts, seed=seeds)
def test_binary_arithmetic_matches_numpy(op, shapes, da, db, la, lb, seed):
    fn, oracle, accepts = ARITHMETIC[op]
    rng = np.random.default_rng(seed)
    (sa, sb), _ = shapes
    x, a = make(rng, sa, da, la)
    y, b = make(rng, sb, db, lb)
    rt = _result_dtype(a, b)
    if not accepts(np.dtype(rt), a.dtype, b.dtype):
        with pytest.raises((RuntimeError, NotImplementedError)):
            fn(x, y)
        return
    if op in ("floor_divide", "remainder"):
        b = _nonzero(b)
        y = laid_out(b, lb)
    with np.errstate(all="ignore"):
        expected = oracle(a.astype(rt), b.astype(rt))
    result = fn(x, y)
    assert result.dtype.numpy == rt
    assert_close(result, expected.astype(rt))


@settings(max_examples=25, deadline=None)
@given(shapes=pairs_of_shapes, da=dtypes, db=dtypes, la=layouts, lb=layouts, seed=seeds)
def test_true_division_gives_floats(shapes, da, db, la, lb, seed):
    rng = np.random.default_rng(seed)
    (sa, sb), _ = shapes
    x, a = make(rng, sa, da, la)
    y, b = make(rng, sb, db, lb)
    rt = np.dtype(_result_dtype(a, b))
    ft = rt if rt.kind == "f" else np.dtype(np.float32)
    with np.errstate(all="ignore"):
        expected = np.true_divide(a.astype(ft), b.astype(ft))
    result = x / y
    assert result.dtype.numpy == ft
    assert_close(result, expected)


@pytest.mark.parametrize("scalar", [2, 2.5, True, -3])
@pytest.mark.parametrize("dtype", NUMERIC_DTYPES)
def test_scalar_operands_promote_like_torch(dtype, scalar):
    rng = np.random.default_rng(1)
    x, a = make(rng, (3, 4), dtype, "transposed")
    result = x * scalar
    assert result.dtype is result_type(x, scalar)
    rt = result.dtype.numpy
    expected = np.multiply(a.astype(rt), np.array(scalar).astype(rt))  # ints wrap into the type, as in C
    assert_close(result, expected)


@pytest.mark.parametrize(
    "a, b, expected",
    [
        ((dl.int32, (3,)), 2.5, dl.float32),          # int tensor with float scalar: default float
        ((dl.float32, (3,)), 2.5, dl.float32),        # a Python float does not upcast float32
        ((dl.float16, (3,)), (dl.float32, ()), dl.float16),  # 0-dim tensors rank below dim tensors
        ((dl.int8, (3,)), (dl.int64, ()), dl.int8),
        ((dl.uint8, (3,)), (dl.int8, (3,)), dl.int16),
        ((dl.bool, (3,)), 1, dl.int64),
        ((dl.bool, (3,)), (dl.bool, (3,)), dl.bool),
        ((dl.int64, (3,)), (dl.float16, ()), dl.float16),  # a higher category wins outright
        ((dl.int32, (3,)), (dl.int64, (3,)), dl.int64),
    ],
)
def test_promotion_table(a, b, expected):
    def build(spec):
        if isinstance(spec, tuple):
            return dl.zeros(spec[1], dtype=spec[0])
        return spec

    assert (build(a) + build(b)).dtype is expected


# -- output strides (values checked against torch on the same inputs) ------------------------
def _t(shape, layout="contiguous"):
    return laid_out(np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape), layout)


STRIDE_CASES = {
    "transposed + contiguous keeps the first operand's order": (lambda: _t((6, 4), "transposed") + _t((6, 4)), (1, 6)),
    "contiguous + transposed": (lambda: _t((6, 4)) + _t((6, 4), "transposed"), (4, 1)),
    "broadcast size-1 dims order first": (lambda: _t((4, 1), "contiguous").t() + _t((3, 1, 4)), (4, 1, 1)),
    "channels_last + contiguous": (lambda: _t((2, 3, 4, 5), "channels_last") + _t((2, 3, 4, 5)), (60, 1, 15, 3)),
    "contiguous + channels_last": (lambda: _t((2, 3, 4, 5)) + _t((2, 3, 4, 5), "channels_last"), (60, 20, 5, 1)),
    "broadcast + channels_last": (lambda: _t((3, 1, 1)) + _t((2, 3, 4, 5), "channels_last"), (60, 1, 15, 3)),
    "channels_last with scalar": (lambda: _t((2, 3, 4, 5), "channels_last") * 2, (60, 1, 15, 3)),
    "stepped slice is compacted": (lambda: _t((4, 6))[:, ::2] + 1, (3, 1)),
    "transposed stepped slice": (lambda: _t((4, 6))[:, ::2].t() + 1, (1, 3)),
    "permuted": (lambda: _t((2, 3, 4)).permute(2, 0, 1) + 1, (1, 12, 4)),
    "two permutations: the first decides": (
        lambda: _t((2, 4, 3)).permute(1, 0, 2) + _t((2, 3, 4)).permute(2, 0, 1), (3, 12, 1)),
    "expanded input gives a contiguous output": (lambda: _t((4, 1)).t().expand(3, 4) + 1, (4, 1)),
    "size-1 channels_last slice": (lambda: _t((2, 3, 4, 5), "channels_last")[:, :, :1, :1] + 1, (3, 1, 3, 3)),
    "0-dim tensor operand": (lambda: dl.tensor(1.0) + _t((3, 4), "transposed"), (1, 3)),
    "unary keeps channels_last": (lambda: dl.exp(_t((2, 3, 4, 5), "channels_last")), (60, 1, 15, 3)),
    # an operand of another dtype votes with the dense layout of its converted copy
    "converted operand": (lambda: dl.empty_strided((3, 1), (3, 2), dtype=dl.int32).fill_(1)
                          + _t((3, 3, 3, 1), "transposed").half(), (1, 3, 9, 27)),
    "converted transposed slice": (lambda: dl.arange(12, dtype=dl.int32).view(3, 4)[:, ::2].t().exp(), (1, 2)),
    # a scalar exponent is a kernel argument (the same-shape fast path applies), a scalar addend is not
    "pow with a scalar exponent": (lambda: dl.empty_strided((1, 4, 1, 3), (12, 1, 4, 4)).fill_(2) ** 2, (12, 1, 12, 4)),
    "square": (lambda: dl.empty_strided((1, 4, 1, 3), (12, 1, 4, 4)).fill_(2).square(), (12, 1, 12, 4)),
    "add of a scalar": (lambda: dl.empty_strided((1, 4, 1, 3), (12, 1, 4, 4)).fill_(2) + 2, (12, 1, 4, 4)),
}


@pytest.mark.parametrize("case", sorted(STRIDE_CASES))
def test_output_strides_follow_torch(case):
    make_result, strides = STRIDE_CASES[case]
    assert make_result().stride() == strides


# -- in-place ------------------------------------------------------------------------------
def test_inplace_writes_through_views_and_bumps_the_version():
    base = dl.zeros(3, 4)
    column = base[:, 1]
    row_view = base.t()
    version = base._version
    result = column.add_(dl.tensor([1.0, 2.0, 3.0]))
    assert result is column
    np.testing.assert_array_equal(to_numpy(base)[:, 1], [1, 2, 3])
    np.testing.assert_array_equal(to_numpy(row_view)[1], [1, 2, 3])
    assert base._version == row_view._version == version + 1
    column.mul_(2).sub_(1, alpha=2)
    np.testing.assert_array_equal(base.numpy()[:, 1], [0, 2, 4])
    assert base._version == version + 3


def test_augmented_assignment_is_in_place():
    x = dl.ones(2, 2)
    alias = x
    storage = x.untyped_storage()
    x += 1
    x *= dl.tensor([1.0, 3.0])
    x -= 0.5
    x /= 2
    assert x is alias and x.untyped_storage() is storage
    np.testing.assert_allclose(x.numpy(), [[0.75, 2.75], [0.75, 2.75]])
    n = dl.tensor([7, -7])
    n //= 2
    n %= 3
    n **= 2
    assert n.dtype is dl.int64 and n.tolist() == [0, 4]  # [3, -4] % 3 == [0, 2]


def test_inplace_computes_in_the_promoted_type_then_casts():
    x = from_array(np.array([1.0, 2.0], np.float32))
    y = from_array(np.array([1e-8, 0.1], np.float64))
    x.add_(y)
    assert x.dtype is dl.float32
    np.testing.assert_array_equal(x.numpy(), (np.array([1.0, 2.0]) + np.array([1e-8, 0.1])).astype(np.float32))
    u = from_array(np.array([250, 3], np.uint8))
    u.add_(from_array(np.array([10, -5], np.int8)))  # int16 math, wrapped into uint8
    assert u.tolist() == [4, 254]


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: dl.arange(3).add_(1.5), RuntimeError, "result type Float can't be cast to the desired output type Long"),
        (lambda: dl.arange(3).mul_(dl.tensor(2.0)), RuntimeError, "result type Float can't be cast"),
        (lambda: dl.ones(2, dtype=dl.bool).add_(2), RuntimeError, "result type Long can't be cast to the desired output type Bool"),
        (lambda: dl.ones(3).add_(dl.ones(2, 3)), RuntimeError, r"output with shape \[3\] doesn't match the broadcast shape \[2, 3\]"),
        (lambda: dl.ones(4, 1).expand(4, 5).add_(1), RuntimeError, "more than one element of the written-to tensor"),
        (lambda: dl.arange(3).div_(2), RuntimeError, "result type Float can't be cast"),
    ],
)
def test_inplace_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


# -- operators -----------------------------------------------------------------------------
def test_reflected_operators_with_scalars():
    x = dl.tensor([1, 2, 4])
    assert (1 - x).tolist() == [0, -1, -3]
    assert (2 ** x).tolist() == [2, 4, 16]
    assert (2.0 ** x).dtype is dl.float32
    assert (8 / x).tolist() == [8.0, 4.0, 2.0]
    assert (7 // x).tolist() == [7, 3, 1]
    assert (7 % x).tolist() == [0, 1, 3]
    assert (3 + x).tolist() == [4, 5, 7] and (3 * x).tolist() == [3, 6, 12]
    assert (np.int64(2) * x).tolist() == [2, 4, 8]


def test_operators_reject_unknown_operands():
    x = dl.ones(2)
    with pytest.raises(TypeError):
        x + "a"
    with pytest.raises(TypeError):
        [1] * x  # noqa: B018
    assert (x == None) is False  # noqa: E711
    assert (x != "a") is True


def test_python_style_division_and_remainder():
    a = from_array(np.array([-7, 7, -7, 7]))
    b = from_array(np.array([2, 2, -2, -2]))
    assert (a // b).tolist() == [-4, 3, 3, -4]
    assert (a % b).tolist() == [1, 1, -1, -1]
    assert dl.div(a, b, rounding_mode="trunc").tolist() == [-3, 3, 3, -3]
    f = from_array(np.array([-7.5, 7.5]))
    assert (f // 2).tolist() == [-4.0, 3.0]
    assert (f % -2).tolist() == [-1.5, -0.5]
    assert dl.div(f, 2, rounding_mode="trunc").tolist() == [-3.0, 3.0]


def test_alpha_scales_the_second_operand():
    x, y = dl.tensor([1.0, 2.0]), dl.tensor([10.0, 20.0])
    assert dl.add(x, y, alpha=0.5).tolist() == [6.0, 12.0]
    assert dl.sub(x, y, alpha=2).tolist() == [-19.0, -38.0]
    assert dl.rsub(x, 10).tolist() == [9.0, 8.0]
    with pytest.raises(RuntimeError, match="alpha must not be a floating point"):
        dl.add(dl.arange(2), dl.arange(2), alpha=0.5)


def test_bool_powers_and_wrapped_scalars():
    mask = dl.tensor([True, False])
    assert (mask ** True).tolist() == [True, False] and (mask ** False).tolist() == [True, True]
    assert (mask ** 2).dtype is dl.int64
    with pytest.raises(NotImplementedError, match="\"pow\" not implemented for 'Bool'"):
        mask ** mask
    u = from_array(np.array([0, 200], np.uint8))
    assert (u < -1).tolist() == [True, True]  # -1 is wrapped to 255 in uint8 math, as torch does
    assert (u - 1).tolist() == [255, 199] and (u * -1).tolist() == [0, 56]
    empty = dl.ones(2, 0, 3, dtype=dl.int64)
    assert (empty % dl.zeros(2, 1, 3, dtype=dl.int64)).shape == (2, 0, 3)  # nothing is divided


def test_integer_powers():
    assert (dl.tensor([2, 1, -1, 0]) ** dl.tensor([-1, -1, -1, -2])).tolist() == [0, 1, -1, 0]
    assert (dl.tensor([-1, -1]) ** dl.tensor([-2, -3])).tolist() == [1, -1]
    with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed."):
        dl.tensor([2]) ** -1
    assert (dl.tensor([4.0]) ** -1).tolist() == [0.25]


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: dl.ones(2, 3) + dl.ones(4), RuntimeError,
         r"The size of tensor a \(3\) must match the size of tensor b \(4\) at non-singleton dimension 1"),
        (lambda: dl.ones(2, dtype=dl.bool) - dl.ones(2, dtype=dl.bool), RuntimeError, "Subtraction, the `-` operator, with two bool"),
        (lambda: dl.ones(2, dtype=dl.bool) - True, RuntimeError, "Subtraction, the `-` operator, with two bool"),
        (lambda: dl.div(dl.ones(2), 2, rounding_mode="x"), RuntimeError, "div expected rounding_mode to be one of None"),
        (lambda: dl.arange(3) // 0, RuntimeError, "ZeroDivisionError"),
        (lambda: dl.arange(3) % dl.zeros(3, dtype=dl.int64), RuntimeError, "ZeroDivisionError"),
        (lambda: dl.ones(2, dtype=dl.bool) // dl.ones(2, dtype=dl.bool), NotImplementedError, "div_floor"),
    ],
)
def test_errors_match_torch(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_float_specials_are_silent_like_torch():
    x = dl.tensor([1.0, -1.0, 0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = (x / 0).tolist()
        floor = (x // 0).tolist()
        rem = (x % 0).tolist()
    assert result[:2] == [float("inf"), float("-inf")] and np.isnan(result[2])
    assert np.isnan(rem).all() and floor[0] == float("inf")


def test_overflow_gives_inf_without_numpy_warnings(backend):
    # torch 2.13: 3e38 * 3e38 in float32 is inf, silently (as are +, -, @, prod and polar of inf).
    def overflowing(x, w):
        return x * x, x + x, x - (-x), (x * 2 + x) * x, x @ w, x.prod(), dl.polar(x, x)

    x = dl.tensor([3e38, float("inf")])
    w = dl.tensor([[3e38], [1.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        eager = overflowing(x, w)
        assert_same(overflowing, x, w, backend=backend)
    assert [t.tolist()[:1] if t.ndim else [t.item()] for t in eager[:6]] == [[float("inf")]] * 6


@pytest.mark.parametrize("dtype", [dl.float32, dl.int64, dl.uint8])
def test_int_operand_beyond_64_bits_raises_overflow_error(dtype):
    # torch 2.13 takes ints in [-2**63, 2**64 - 1] as operands and raises OverflowError beyond.
    x = dl.ones(3, dtype=dtype)
    assert (x + (2**64 - 1)).dtype is dtype and (x * -2**63).dtype is dtype
    with pytest.raises(OverflowError, match="^int too big to convert$"):
        x + 2**64
    with pytest.raises(OverflowError, match="^can't convert negative int to unsigned$"):
        x + -(10**400)


def test_compiled_loop_raises_where_an_int_operand_outgrows_64_bits(backend):
    # A traced while loop squaring an int stops at the same `y + n` eager code raises at.
    def grow(y, n):
        while n > 0:
            y = y + n
            n = n * n + 7
        return y

    with pytest.raises(OverflowError, match="int too big to convert"):
        grow(dl.ones(2), 3)
    compiled = dl.compile(grow, backend=backend)
    dl.reset()
    with pytest.raises(OverflowError, match="int too big to convert"):
        compiled(dl.ones(2), 3)
    stats = dl.stats()  # the iterations before the overflow compiled: one graph, then the raising break
    assert (stats.graph_count, stats.graph_breaks, stats.fallbacks) == (1, 1, ())
