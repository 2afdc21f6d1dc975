"""The native backend's float32 exp, tanh and erfc (backends/native/vmath.py) against float64: ulp error, specials."""
from __future__ import annotations

import ctypes
import math

import numpy as np
import pytest

import dynamo_lite as dl
import dynamo_lite.nn.functional as F
from dynamo_lite.backends.native.toolchain import build
from dynamo_lite.backends.native.vmath import EXP_NORMAL_LOW, VMATH_SOURCE
from tests.backends.native_cases import Recording, needs_compiler

pytestmark = needs_compiler

# The bounds NOTE: [native vmath] promises; a sweep of all 2**32 floats in C measured 0.98 (exp), 2.57
# (tanh) and 2.48 (sigmoid, eager's formula: 0 where float32 exp(-x) overflows) ulp with FMA hardware.
# erfc (exact gelu) is looser: its rational in float32 rounds at each of its steps (6.93 ulp over all
# floats, at 6.204); 8 ulp is still a third of torch's float32 rtol (1.3e-6), and eager's own float32
# erfc (NOTE: [erf]) is further off in the tail.
MAX_ULP = {"exp": 1.5, "tanh": 3.0, "sigmoid": 3.0, "erfc": 8.0}
EXP_OVERFLOW = float.fromhex("0x1.62e42ep+6")  # the largest float32 x whose exp is finite


def sigmoid_as_eager(x):
    """1 / (1 + exp(-x)) in float64, with float32's overflow of exp(-x) (eager's kernel gives +0 there)."""
    return np.where(x < -EXP_OVERFLOW, 0.0, 1.0 / (1.0 + np.exp(-x)))


FUNCTIONS = {"exp": ("dl_expf", np.exp), "tanh": ("dl_tanhf", np.tanh), "sigmoid": ("dl_sigmoidf", sigmoid_as_eager),
             "erfc": ("dl_erfcf", np.vectorize(math.erfc, otypes=[np.float64]))}
LOOP = """
void apply_{name}(int64_t n, const float* restrict x, float* restrict y) {{
  #pragma omp simd
  for (int64_t i = 0; i < n; i++) y[i] = {function}(x[i]);
}}
"""
EDGES = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1.1754942e-38, 3.4028235e38, -3.4028235e38,
         88.72283935546875, 88.72284, 88.7229, 89.0, -87.33654, -87.34, -103.972, -103.9721, -104.0, -150.0,
         9.010913, -9.010913, 0.625, 1e-8, -1e-8, 0.34657359, -0.34657359]


# Functions that hold only on part of the line (the callers check the domain), applied by the tests too.
PARTIAL = {"exp_normal": "dl_expf_normal"}


@pytest.fixture(scope="module")
def library():
    functions = {name: function for name, (function, _) in FUNCTIONS.items()} | PARTIAL
    source = "#include <stdint.h>\n#include <math.h>\n" + VMATH_SOURCE + "".join(
        LOOP.format(name=name, function=function) for name, function in functions.items())
    return build(source)


def apply(library, name: str, x: np.ndarray) -> np.ndarray:
    x = np.ascontiguousarray(x, dtype=np.float32)
    y = np.empty_like(x)
    function = getattr(library, f"apply_{name}")
    function.argtypes = [ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p]
    function(x.size, x.ctypes.data, y.ctypes.data)
    return y


def sweep() -> np.ndarray:
    """Every 997th float32 bit pattern (all signs, exponents, denormals) and the edges."""
    bits = np.arange(0, 2**32, 997, dtype=np.uint64).astype(np.uint32)
    return np.concatenate([bits.view(np.float32), np.array(EDGES, dtype=np.float32)])


def ulp_errors(actual: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """|actual - exact| in units of the float32 spacing at ``exact`` (finite, nonzero results)."""
    spacing = np.spacing(np.abs(exact.astype(np.float32)).astype(np.float32)).astype(np.float64)
    return np.abs(actual.astype(np.float64) - exact) / spacing


@pytest.mark.parametrize("name", FUNCTIONS)
def test_within_the_bound_and_specials_exact(library, name):
    x = sweep()
    with np.errstate(all="ignore"):
        exact = FUNCTIONS[name][1](x.astype(np.float64))
        rounded = exact.astype(np.float32)
    actual = apply(library, name, x)
    regular = np.isfinite(rounded) & (rounded != 0) & np.isfinite(x)
    errors = ulp_errors(actual[regular], exact[regular])
    worst = int(np.argmax(errors))
    print(f"{name}: max {errors[worst]:.3f} ulp at x={x[regular][worst]!r} over {regular.sum()} values")
    assert errors[worst] <= MAX_ULP[name], (name, x[regular][worst], actual[regular][worst], exact[regular][worst])
    # NaN, infinities, zeros (with their signs) and overflow come out exactly as rounding the exact value.
    special = ~regular
    np.testing.assert_array_equal(np.isnan(actual[special]), np.isnan(rounded[special]))
    both = special & ~np.isnan(rounded)
    assert np.array_equal(actual[both], rounded[both]), (x[both], actual[both], rounded[both])
    assert np.array_equal(np.signbit(actual[both]), np.signbit(rounded[both]))


def test_denormal_results_of_exp_are_rounded_once(library):
    x = np.linspace(-103.9, -87.4, 20001, dtype=np.float32)
    actual, exact = apply(library, "exp", x), np.exp(x.astype(np.float64))
    assert np.all(actual > 0) and np.all(actual < np.finfo(np.float32).tiny)
    # a denormal's spacing is 2**-149: one rounding is at most half of it, plus the polynomial's error
    assert np.max(np.abs(actual.astype(np.float64) - exact)) <= 2.0 ** -149


def test_compiled_ops_use_it_and_keep_specials():
    x = dl.tensor(np.array(EDGES + [1.0, -1.0, 20.0, -20.0], dtype=np.float32))

    def f(x):
        return x.exp(), x.tanh(), x.sigmoid(), dl.softmax(x.reshape(1, -1).nan_to_num(0.0), -1), F.gelu(x)

    recording = Recording()
    with np.errstate(all="ignore"):
        expected, actual = f(x), dl.compile(f, backend=recording)(x)
    assert all(f"{name}(" in recording.codes[0] for name in ("dl_expf", "dl_tanhf", "dl_sigmoidf", "dl_erfcf"))
    for a, e in zip(actual, expected):
        a, e = a.numpy(), e.numpy()
        np.testing.assert_array_equal(np.isnan(a), np.isnan(e))
        np.testing.assert_allclose(a, e, rtol=1.3e-6, atol=1e-30)


def test_exp_without_the_denormal_path_has_exps_bits_on_its_domain(library):
    # softmax's rows whose terms are all normal use it (row_ops._exp_terms): it must be dl_expf there.
    x = sweep()
    x = np.concatenate([x[(x >= EXP_NORMAL_LOW) & (x <= 88.72283)], np.float32([EXP_NORMAL_LOW, 0.0, -0.0])])
    np.testing.assert_array_equal(apply(library, "exp_normal", x), apply(library, "exp", x))
    assert apply(library, "exp_normal", np.float32([EXP_NORMAL_LOW]))[0] >= np.finfo(np.float32).tiny
