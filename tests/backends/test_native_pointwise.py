"""Native C lowerings of bool producers (comparisons, logical ops, where, masked_fill) and optimizer-update ops.

Every case compares the compiled (native) results with eager bit for bit (dtype, NaN, signed zeros) and
checks that the graph compiled and that the ops ran inside the expected C kernels.
"""
from __future__ import annotations

import copy
import re

import numpy as np
import pytest

import dynamo_lite as dl
import dynamo_lite.nn as nn
from tests.backends.native_cases import Recording, needs_compiler
from tests.helpers import assert_compiled

pytestmark = needs_compiler

SPECIALS = [float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1.0, -1.0, 0.5, 1e-45, 3.4e38, 2.0, -3.0]


def assert_bits_equal(actual, expected) -> None:
    """Same dtype and the same bits (NaN where NaN, zeros with their signs)."""
    for a, e in zip(actual, expected):
        assert a.dtype == e.dtype, (a.dtype, e.dtype)
        a, e = a.numpy(), e.numpy()
        assert a.shape == e.shape
        if a.dtype.kind == "f":
            np.testing.assert_array_equal(np.isnan(a), np.isnan(e))
            assert np.array_equal(np.signbit(a), np.signbit(e))
        np.testing.assert_array_equal(a, e)


def kernel_members(codes: list) -> list:
    """The op names each C group kernel of the graphs' debug texts computes, one list per kernel."""
    return [line.split(": ", 1)[1].split(", ") for code in codes for line in code.splitlines()
            if "# native kernel dl_group" in line]


def numpy_calls(code: str) -> list:
    """The registry kernels and NumPy ufuncs a graph's generated function calls itself (outside C kernels)."""
    return re.findall(r"\b_(?:k|np)_\w+\(", code.split("/* C kernels")[0])


def run_both(fn, *args) -> Recording:
    """fn eagerly and compiled with the native backend: equal bits, compiled without a fallback or break,
    every op inside a C kernel."""
    recording = Recording()
    compiled = dl.compile(fn, backend=recording)
    before = dl.stats()
    with np.errstate(all="ignore"):
        expected, actual = fn(*args), compiled(*args)
    assert_compiled(before, dl.stats())
    assert_bits_equal(actual, expected)
    assert all(not numpy_calls(code) for code in recording.codes), [numpy_calls(c) for c in recording.codes]
    return recording


def special_pair(dtype):
    x = dl.tensor(SPECIALS * 2, dtype=dtype)
    y = dl.tensor(SPECIALS + list(reversed(SPECIALS)), dtype=dtype)
    return x, y


@pytest.mark.parametrize("dtype", [dl.float32, dl.float64])
def test_comparisons_with_tensors_scalars_and_0d_tensors(dtype):
    x, y = special_pair(dtype)
    threshold = dl.tensor(0.1, dtype=dl.float64)  # 0-d: compares in x's dtype, as eager

    def f(x, y, t):
        return (x == y, x != y, x < y, x <= 0.1, x > t, x >= -1, 0.5 < x, (x * 2) == (y + y))

    recording = run_both(f, x, y, threshold)
    assert sorted(map(tuple, kernel_members(recording.codes))) == [
        ("eq",), ("ge",), ("gt",), ("gt_1",), ("le",), ("lt",), ("mul", "add", "eq_1"), ("ne",)]


def test_integer_and_bool_comparisons_and_wrapped_scalars():
    i = dl.tensor([-3, 0, 7, 255, 2**40, -2**40], dtype=dl.int64)
    u = dl.tensor([0, 1, 254, 255, 3, 9], dtype=dl.uint8)
    b = dl.tensor([True, False, True, True, False, False])

    def f(i, u, b):
        # uint8 < -1 compares with -1 wrapped to 255; int vs 0.5 compares in float32; bool vs int in int64
        return i > 3, i == 2**40, u < -1, u >= 255, i < 0.5, b == 1, b != True  # noqa: E712

    recording = run_both(f, i, u, b)
    assert len(kernel_members(recording.codes)) == 7


@pytest.mark.parametrize("dtype", [dl.float32, dl.float64])
def test_logical_bitwise_where_and_masked_fill_as_one_kernel(dtype):
    x, y = special_pair(dtype)
    m = dl.tensor([True, False] * 12)

    def f(x, y, m):
        keep = ((x > 0.5) & (y <= x)) | ~m
        either = dl.logical_or(dl.logical_and(x, y), dl.logical_not(y)) ^ dl.logical_xor(x, 0.5)
        picked = dl.where(keep, x, y * 2)
        return keep, either, picked.masked_fill(either, -0.0), dl.where(keep, 0.0, picked), dl.where(m, keep, either)

    recording = run_both(f, x, y, m)
    (members,) = kernel_members(recording.codes)
    for name in ("gt", "le", "bitwise_and", "bitwise_not", "bitwise_or", "logical_and", "logical_not", "logical_or",
                 "logical_xor", "bitwise_xor", "where", "masked_fill", "where_1", "where_2"):
        assert name in members, members


def test_selections_convert_their_values_as_eager():
    x = dl.tensor([1.5, -2.0, float("nan"), 0.0], dtype=dl.float32)
    i = dl.tensor([3, -4, 5, 2**40], dtype=dl.int64)
    b = dl.tensor([True, False, True, False])
    value = dl.tensor(2.7, dtype=dl.float64)  # 0-d: rounded to float32 when written

    def f(x, i, b, value):
        # where's values and masked_fill's value are converted to the result dtype (bool: nonzero is true)
        return (dl.where(x > 0, x, i), dl.where(b, i, 0.25), x.masked_fill(b, value),
                b.masked_fill(x > 0, 0.5), dl.where(x > 0, b, x))

    recording = run_both(f, x, i, b, value)
    assert sum(map(len, kernel_members(recording.codes))) == 8


@pytest.mark.parametrize("dtype", [dl.float32, dl.float64])
def test_mixed_operand_dtypes_convert_first(dtype):
    x = dl.tensor(SPECIALS, dtype=dtype)
    i = dl.tensor([3, -4, 5, 2**40, 0, 1, 2, 3, 4, 5, 6, 7], dtype=dl.int64)
    b = dl.tensor([True, False] * 6)
    scale = dl.tensor(0.1, dtype=dl.float64)  # an optimizer's bias correction: a 0-d float64 tensor

    def f(x, i, b, scale):
        return x * i + b, (x - scale) / scale, dl.maximum(x, i), dl.minimum(b, x) * scale, x / i

    recording = run_both(f, x, i, b, scale)
    assert sum(map(len, kernel_members(recording.codes))) == 8


@pytest.mark.parametrize("dtype", [dl.float32, dl.float64])
def test_lerp_addcmul_addcdiv_and_alpha(dtype):
    x, y = special_pair(dtype)
    z = dl.tensor(list(reversed(SPECIALS)) * 2, dtype=dtype)

    def f(x, y, z):
        return (x.lerp(y, 0.1), x.lerp(y, 0.9), x.lerp(y, -0.5), x.lerp(y, 1), x.addcmul(y, z), x.addcmul(y, z, value=-0.3),
                x.addcdiv(y, z, value=2), x.add(y, alpha=0.7), x.sub(z, alpha=-3), x.add(2.5, alpha=0.1), x.sub(y, alpha=1),
                x.addcdiv(y, z, value=True))

    recording = run_both(f, x, y, z)
    assert sum(map(len, kernel_members(recording.codes))) == 12


@pytest.mark.parametrize("make", [
    lambda params: dl.optim.AdamW(params, lr=1e-2),
    lambda params: dl.optim.Adam(params, lr=1e-2, weight_decay=0.1),
    lambda params: dl.optim.SGD(params, lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-3),
    lambda params: dl.optim.SGD(params, lr=0.1, momentum=0.9, dampening=0.1),
], ids=["adamw", "adam", "sgd_nesterov", "sgd_dampening"])
def test_an_optimizer_step_is_one_kernel_per_parameter(make):
    dl.manual_seed(0)
    eager_model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    compiled_model = copy.deepcopy(eager_model)
    eager_opt, compiled_opt = make(eager_model.parameters()), make(compiled_model.parameters())
    recording = Recording()
    compiled_step = dl.compile(lambda: compiled_opt.step(), backend=recording)
    x = dl.randn(5, 8)
    before = dl.stats()
    for _ in range(3):  # the first step creates the state, the second recompiles with it
        for model in (eager_model, compiled_model):
            model.zero_grad()
            model(x).pow(2).mean().backward()
        eager_opt.step()
        compiled_step()
        assert_bits_equal([p.detach() for p in compiled_model.parameters()], [p.detach() for p in eager_model.parameters()])
    assert_compiled(before, dl.stats())
    # The graph of the last step (the state exists): each parameter's update is one kernel writing the
    # parameter and its state, and no op of it runs as NumPy code.
    last = recording.codes[-1]
    updates = [m for m in kernel_members([last]) if len(m) > 1]
    assert len(updates) == len(list(compiled_model.parameters())), updates
    # What stays NumPy code: the 0-d step counter's bias corrections (pow is not lowered) and float lr.
    assert {call for call in numpy_calls(last)} <= {"_k_pow(", "_k__to_copy(", "_np_subtract(", "_np_true_divide(",
                                                    "_np_negative(", "_np_multiply("}, numpy_calls(last)
