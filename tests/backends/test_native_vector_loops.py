"""AVX-512 loops of fused float32 groups (NOTE: [vector loops]): the same bits as the scalar loop and as eager.

On a CPU without AVX-512 the kernels have no vector loop, and the tests comparing the two loops skip.
"""
from __future__ import annotations

import ctypes
import re

import numpy as np
import pytest

import dynamo_lite as dl
import dynamo_lite.backends.native as native
import dynamo_lite.nn.functional as F
from dynamo_lite.backends.native.c_ops import HELPERS
from dynamo_lite.backends.native.toolchain import build
from dynamo_lite.backends.native.vector_math import VECTOR_MATH_SOURCE
from tests.backends.native_cases import Recording, needs_compiler
from tests.backends.test_native_math import EDGES, sweep
from tests.backends.test_native_pointwise import SPECIALS
from tests.helpers import assert_compiled

pytestmark = needs_compiler

PROBE = "#include <stdint.h>\n#include <math.h>\n" + HELPERS + VECTOR_MATH_SOURCE + """
int has_vector_loops(void) {
#ifdef DL_VECTOR_LOOPS
  return 1;
#else
  return 0;
#endif
}
"""
VECTOR_APPLY = """
#ifdef DL_VECTOR_LOOPS
void vector_{name}(int64_t n, const float* x, float* y) {{
  for (int64_t i = 0; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, {function}(_mm512_loadu_ps(x + i)));
}}
#endif
void scalar_{name}(int64_t n, const float* x, float* y) {{
  for (int64_t i = 0; i < n; i++) y[i] = {scalar}(x[i]);
}}
"""
FUNCTIONS = {"exp": ("dl_v_expf", "dl_expf"), "tanh": ("dl_v_tanhf", "dl_tanhf"),
             "sigmoid": ("dl_v_sigmoidf", "dl_sigmoidf")}


@pytest.fixture(scope="module")
def library():
    source = PROBE + "".join(VECTOR_APPLY.format(name=name, function=vector, scalar=scalar)
                             for name, (vector, scalar) in FUNCTIONS.items())
    library = build(source)
    if not library.has_vector_loops():
        pytest.skip("the compiler does not target AVX-512 here: kernels have no vector loops")
    return library


def _apply(library, symbol: str, x: np.ndarray) -> np.ndarray:
    y = np.empty_like(x)
    function = getattr(library, symbol)
    function.argtypes = [ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p]
    function(x.size, x.ctypes.data, y.ctypes.data)
    return y


def assert_same_bits_or_both_nan(actual: np.ndarray, expected: np.ndarray) -> None:
    """NaN where NaN (of either sign: NOTE: [vector loops]), the same bits (signed zeros too) elsewhere."""
    nan = np.isnan(expected)
    np.testing.assert_array_equal(np.isnan(actual), nan)
    assert np.array_equal(actual[~nan].view(np.uint32), expected[~nan].view(np.uint32))


@pytest.mark.parametrize("name", FUNCTIONS)
def test_vector_functions_give_the_scalar_bits(library, name):
    x = sweep()
    x = np.concatenate([x, np.zeros(-len(x) % 16, np.float32)])  # whole vectors
    assert_same_bits_or_both_nan(_apply(library, f"vector_{name}", x), _apply(library, f"scalar_{name}", x))


def chain(x, y, row):
    """Every op with a vector form, tensor and scalar operands, a row broadcast along the inner dim."""
    a = (x * y + 1.5).sigmoid() * x.tanh() - y
    b = dl.add(a, y, alpha=0.5) - dl.sub(x, row, alpha=2.0) / (y.abs() + 0.25)
    c = dl.maximum(b, x).neg() + dl.minimum(a, row).square() + (x.abs() + 1.0).sqrt() + (y.abs() + 1.0).rsqrt()
    d = F.silu(c) + F.relu(-c) + F.gelu(b, approximate="tanh") + (x * 0.5).exp() + (y + 3.0).reciprocal()
    e = dl.lerp(d, x, 0.25) + dl.lerp(d, y, 0.75) + dl.addcmul(a, x, y, value=0.5) + dl.addcdiv(b, x, y.abs() + 1.0)
    return a, e


def special_inputs(rows: int, cols: int):
    rng = np.random.default_rng(7)
    pool = np.array(SPECIALS + [-88.73, -89.0, 88.72, 9.6, -9.6, 0.06, 1e-40], np.float32)
    x = np.where(rng.random((rows, cols)) < 0.3, rng.choice(pool, (rows, cols)), rng.normal(0, 4, (rows, cols)))
    y = np.where(rng.random((rows, cols)) < 0.3, rng.choice(pool, (rows, cols)), rng.normal(0, 4, (rows, cols)))
    row = rng.normal(0, 2, cols)
    return [dl.tensor(v.astype(np.float32)) for v in (x, y, row)]


def _compile_chain(monkeypatch, *, vector_loops: bool):
    if not vector_loops:
        monkeypatch.setattr(native, "build", lambda source: build("#define DL_NO_VECTOR_LOOPS 1\n" + source))
    recording = Recording()
    return dl.compile(chain, backend=recording), recording


@pytest.mark.parametrize("cols", [64, 37, 5])  # whole vectors; a tail; only a tail
def test_a_fused_group_runs_the_vector_loop_with_the_scalar_loops_bits(library, monkeypatch, cols):
    inputs = special_inputs(6, cols)
    vector, vector_recording = _compile_chain(monkeypatch, vector_loops=True)
    before = dl.stats()
    with np.errstate(all="ignore"):
        from_vector = vector(*inputs)
    assert_compiled(before, dl.stats())
    assert "_mm512_loadu_ps" in vector_recording.codes[0] and "dl_v_tanhf" in vector_recording.codes[0]
    dl.reset()
    scalar, _ = _compile_chain(monkeypatch, vector_loops=False)
    with np.errstate(all="ignore"):
        from_scalar, expected = scalar(*inputs), chain(*inputs)
    for a, b in zip(from_vector, from_scalar):
        assert_same_bits_or_both_nan(a.numpy(), b.numpy())
    # against eager: arithmetic only (a's sigmoid and tanh are within ulps of eager's, so compare a loosely)
    for actual, wanted in zip(from_vector, expected):
        actual, wanted = actual.numpy(), wanted.numpy()
        np.testing.assert_array_equal(np.isnan(actual), np.isnan(wanted))
        np.testing.assert_allclose(actual, wanted, rtol=1e-5, atol=1e-6)


def test_groups_without_a_vector_form_keep_the_scalar_loop(library):
    def f(x, y):
        return (x * y + 1.0).tanh(), (x.double() * 2.0).exp(), dl.where(x > y, x, y) * 2.0

    recording = Recording()
    x, y = dl.randn(8, 40), dl.randn(8, 40)
    before = dl.stats()
    actual, expected = dl.compile(f, backend=recording)(x, y), f(x, y)
    assert_compiled(before, dl.stats())
    kernels = re.split(r"\nvoid dl_group\d+\(", recording.codes[0])[1:]
    vectorized = ["_mm512_loadu_ps" in kernel for kernel in kernels]
    assert vectorized.count(True) == 1 and len(kernels) == 3, vectorized  # float64 and a bool operand: scalar
    for a, e in zip(actual, expected):
        np.testing.assert_allclose(a.numpy(), e.numpy(), rtol=1e-5)


def test_edges_through_a_compiled_kernel(library):
    x = dl.tensor(np.array(EDGES * 3, dtype=np.float32))

    def f(x):
        return x.exp(), x.tanh(), x.sigmoid()

    recording = Recording()
    with np.errstate(all="ignore"):
        actual, expected = dl.compile(f, backend=recording)(x), f(x)
    assert "dl_v_expf" in recording.codes[0]
    for a, e in zip(actual, expected):
        a, e = a.numpy(), e.numpy()
        np.testing.assert_array_equal(np.isnan(a), np.isnan(e))
        np.testing.assert_allclose(a, e, rtol=1.3e-6, atol=1e-30)
        assert np.array_equal(np.signbit(a[~np.isnan(a)]), np.signbit(e[~np.isnan(e)]))


def test_a_library_without_vector_loops_does_not_include_the_intrinsics_header(library):
    # <immintrin.h> costs gcc a few tenths of a second per library: only libraries with a vector loop pay it
    def f(x):
        return (x * 2.0).exp() + 1.0

    recording, vector_recording = Recording(), Recording()
    dl.compile(f, backend=recording)(dl.randn(4, 8, dtype=dl.float64))
    dl.compile(lambda x: f(x), backend=vector_recording)(dl.randn(4, 8))
    assert "immintrin.h" not in recording.codes[0] and "dl_v_expf" not in recording.codes[0]
    assert "immintrin.h" in vector_recording.codes[0]
