"""Programs covering every C rule of the cupy backend, per dtype family (shared by the
NVRTC compile test and the host-emulation test)."""
from __future__ import annotations

import numpy as np

import dynamo_lite as dl

FLOATS = (dl.float16, dl.float32, dl.float64)
INTS = (dl.int8, dl.int16, dl.int32, dl.int64, dl.uint8)


def float_inputs(dtype, seed=0):
    """x (3, 5) with NaN/inf/-inf/0 in its first row, y (5,) broadcasting, z (3, 5) transposed."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((3, 5)) * 2
    x[0, :] = [np.nan, np.inf, -np.inf, 0.0, 0.1]  # 0.1: compared with the scalar 0.1 below
    y = rng.standard_normal(5) + 0.5
    z = rng.standard_normal((5, 3))
    as_t = lambda a: dl.from_numpy(np.ascontiguousarray(a.astype(dtype.numpy)))  # noqa: E731
    return as_t(x), as_t(y), as_t(z).t()


def int_inputs(dtype, seed=0):
    rng = np.random.default_rng(seed)
    low = 0 if dtype is dl.uint8 else -9
    x = rng.integers(low, 10, (3, 5)).astype(dtype.numpy)
    y = rng.integers(1, 5, 5).astype(dtype.numpy)  # nonzero, positive
    z = rng.integers(low, 10, (5, 3)).astype(dtype.numpy)
    return dl.from_numpy(x), dl.from_numpy(y), dl.from_numpy(z).t()


def bool_inputs(dtype=None, seed=0):
    rng = np.random.default_rng(seed)
    return (dl.from_numpy(rng.random((3, 5)) > 0.5), dl.from_numpy(rng.random(5) > 0.5),
            dl.from_numpy(rng.random((5, 3)) > 0.5).t())


# -- float programs --------------------------------------------------------------------
def float_arith(x, y, z):
    return (x + y, dl.sub(x, y, alpha=2.5), x * z, x / y, dl.div(x, y, rounding_mode="trunc"),
            dl.div(x, y, rounding_mode="floor"), dl.floor_divide(x, y), dl.remainder(x, y),
            dl.pow(x.abs(), y), x ** 2, 1.5 - x, x + 1)


def float_unary(x, y, z):
    return (-x, x.abs(), x.sign(), x.square(), x.exp(), x.log(), x.log1p(), x.log2(), x.expm1(),
            x.sqrt(), x.rsqrt(), x.sin(), x.cos(), x.tan(), x.tanh(), x.sigmoid(), dl.erf(x),
            x.reciprocal(), x.floor(), x.ceil(), x.round(), x.trunc(), x.relu(), dl.nn.functional.gelu(x),
            dl.nn.functional.gelu(x, approximate="tanh"), dl.nn.functional.silu(x), x.isnan(), x.isinf(),
            x.isfinite())


def float_logic(x, y, z):
    return (x == y, x != z, x < y, x <= 0.5, x == 0.1, x > z, x >= y, dl.logical_and(x, y), dl.logical_or(x, z),
            dl.logical_xor(x, y), dl.logical_not(x), dl.where(x > 0, x, y), dl.clamp(x, -0.5, 0.5),
            dl.clamp(x, min=y), dl.clamp(x, max=z), dl.minimum(x, y), dl.maximum(x, z),
            dl.masked_fill(x, x > 0, 1.5), x.to(dl.int32), x.to(dl.float64), x.clone())


def float_reductions(x, y, z):
    w = dl.where(x.isfinite(), x, 0.0)
    return (w.sum(), w.sum(1), w.sum(0, keepdim=True), (w * 2 + y).mean(1), w.prod(0), x.amax(1), z.amin(0),
            x.max(), z.min(), (w > 0).all(1), (z > 0).any(0), w.sum(dtype=dl.float64), (w * z).sum((0, 1)))


def float_normalization(x, y, z):
    w = dl.where(x.isfinite(), x, 0.0)
    return (dl.softmax(w, 1), dl.softmax(z, 0), dl.log_softmax(w * 0.5, -1),
            dl.layer_norm(w, (5,)), dl.layer_norm(w + z, (5,), y, y * 2), dl.layer_norm(z, (3, 5), eps=1e-3),
            dl.layer_norm(w * y, (5,), y, y))  # y feeds the prologue and is weight and bias


# -- integer and bool programs ------------------------------------------------------------
def int_arith(x, y, z):
    return (x + y, x - z, x * 3, x * y, -x, x.abs(), x.sign(), x.square(), x / y, x.exp(),
            x & y, x | z, x ^ y, ~x, dl.minimum(x, z), dl.maximum(x, y), x.relu(), x.floor())


def int_logic(x, y, z):
    return (x == y, x < z, x >= 3, dl.where(x > y, x, z), dl.clamp(x, 1, 5), x.float(), x.to(dl.int64),
            dl.logical_not(x), dl.logical_and(x, z), x.isnan(), x.isfinite())


def int_reductions(x, y, z):
    return (x.sum(), x.sum(1), z.sum(0, keepdim=True), x.prod(1), x.amax(0), z.amin(1), x.max(), (x > 0).any(1),
            x.all(1), z.any())


def bool_programs(x, y, z):
    return (x & y, x | z, x ^ y, ~x, dl.logical_and(x, y), dl.logical_xor(x, z), x == z, dl.where(x, y, z),
            x.sum(), x.sum(1), x.all(0), z.any(), x.to(dl.float32) * 2, x + y, x * z)


# name -> (program, input builder, dtypes)
CASES = {
    "float_arith": (float_arith, float_inputs, FLOATS),
    "float_unary": (float_unary, float_inputs, FLOATS),
    "float_logic": (float_logic, float_inputs, FLOATS),
    "float_reductions": (float_reductions, float_inputs, FLOATS),
    "float_normalization": (float_normalization, float_inputs, FLOATS),
    "int_arith": (int_arith, int_inputs, INTS),
    "int_logic": (int_logic, int_inputs, INTS),
    "int_reductions": (int_reductions, int_inputs, INTS),
    "bool": (bool_programs, bool_inputs, (dl.bool,)),
}


def case_params():
    """``(case name, dtype)`` pairs for pytest.mark.parametrize."""
    return [(name, dtype) for name, (_, _, dtypes) in CASES.items() for dtype in dtypes]
