"""Vector loops of fused groups (NOTE: [vector loops]), AVX-512 and AVX2: the same bits as the scalar loop and as eager.

Each instruction set's tests skip on a CPU without it (NOTE: [vector ISA dispatch]); the
AVX2 ones run on every x86-64 CPU from Haswell on, AVX-512 machines included.
"""
from __future__ import annotations

import ctypes
import re
import subprocess

import numpy as np
import pytest

import dynamo_lite as dl
import dynamo_lite.backends.native as native
import dynamo_lite.nn.functional as F
from dynamo_lite.backends.native.c_ops import HELPERS
from dynamo_lite.backends.native.toolchain import build
from dynamo_lite.backends.native.vector_isa import AVX2, AVX512, VECTOR_ISAS
from dynamo_lite.backends.native.vector_math import VECTOR_MATH_SOURCE
from tests.backends.native_cases import Recording, needs_compiler
from tests.backends.test_native_math import EDGES, sweep
from tests.backends.test_native_pointwise import SPECIALS
from tests.helpers import assert_compiled

pytestmark = needs_compiler

PROBE = "#include <stdint.h>\n#include <math.h>\n" + HELPERS + VECTOR_MATH_SOURCE + """
int isa_level(void) {
#ifdef DL_VECTOR_LOOPS
  return dl_isa_level();
#else
  return 0;
#endif
}
"""
VECTOR_APPLY = """
#if {guard}
static {attribute} void vector_{isa}_{name}(int64_t n, const float* x, float* y) {{
  for (int64_t i = 0; i + {lanes} <= n; i += {lanes}) {prefix}_storeu_ps(y + i, {function}({prefix}_loadu_ps(x + i)));
}}
#endif
void vector_{isa}_{name}_call(int64_t n, const float* x, float* y) {{
#if {guard}
  vector_{isa}_{name}(n, x, y);
#endif
}}
"""
SCALAR_APPLY = """
void scalar_{name}(int64_t n, const float* x, float* y) {{
  for (int64_t i = 0; i < n; i++) y[i] = {scalar}(x[i]);
}}
"""
FUNCTIONS = {"exp": ("expf", "dl_expf"), "tanh": ("tanhf", "dl_tanhf"), "sigmoid": ("sigmoidf", "dl_sigmoidf")}
ISAS = [pytest.param(isa, id=isa.target.split(",")[0]) for isa in VECTOR_ISAS]
# What each width's test builds: AVX-512 as the CPU offers it, AVX2 with the AVX-512 functions left out.
ISA_DEFINES = {AVX512.name: "", AVX2.name: "#define DL_NO_AVX512 1\n"}


@pytest.fixture(scope="module")
def library():
    source = PROBE + "".join(VECTOR_APPLY.format(name=name, function=isa.function(vector), isa=isa.name,
                                                 guard=isa.guard, attribute=isa.attribute, lanes=isa.lanes,
                                                 prefix=isa.prefix)
                             for name, (vector, _) in FUNCTIONS.items() for isa in VECTOR_ISAS)
    source += "".join(SCALAR_APPLY.format(name=name, scalar=scalar) for name, (_, scalar) in FUNCTIONS.items())
    return build(source)


def needs_isa(library, isa):
    if library.isa_level() < isa.level:
        pytest.skip(f"this CPU (or compiler) has no {isa.target}: kernels run a narrower loop")


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


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("name", FUNCTIONS)
def test_vector_functions_give_the_scalar_bits(library, isa, name):
    needs_isa(library, isa)
    x = sweep()
    x = np.concatenate([x, np.zeros(-len(x) % 16, np.float32)])  # whole vectors
    vector = _apply(library, f"vector_{isa.name}_{name}_call", x)
    assert_same_bits_or_both_nan(vector, _apply(library, f"scalar_{name}", x))


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


def _compile_chain(monkeypatch, *, vector_loops: bool, isa=AVX512):
    define = ISA_DEFINES[isa.name] if vector_loops else "#define DL_NO_VECTOR_LOOPS 1\n"
    monkeypatch.setattr(native, "build", lambda source: build(define + source))
    recording = Recording()
    return dl.compile(chain, backend=recording), recording


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("cols", [64, 37, 5])  # whole vectors; a tail; only a tail
def test_a_fused_group_runs_the_vector_loop_with_the_scalar_loops_bits(library, monkeypatch, cols, isa):
    needs_isa(library, isa)
    inputs = special_inputs(6, cols)
    vector, vector_recording = _compile_chain(monkeypatch, vector_loops=True, isa=isa)
    before = dl.stats()
    with np.errstate(all="ignore"):
        from_vector = vector(*inputs)
    assert_compiled(before, dl.stats())
    code = vector_recording.codes[0]
    assert f"{isa.prefix}_loadu_ps" in code and f"{isa.function('tanhf')}(" in code and "dl_isa_level()" in code
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
    code = recording.codes[0]
    kernels = re.findall(r"\nvoid (dl_group\d+)\(", code)
    vectorized = [f"void {k}_v16(" in code and f"void {k}_v8(" in code for k in kernels]
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
    assert "dl_v16_expf" in recording.codes[0] and "dl_v8_expf" in recording.codes[0]
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
    assert "immintrin.h" not in recording.codes[0] and "dl_v8_expf" not in recording.codes[0]
    assert "immintrin.h" in vector_recording.codes[0]


def _kernel_source() -> str:
    recording = Recording()
    x = dl.randn(4, 40)
    dl.compile(lambda x, y: ((x * y + 1).sigmoid() * x.tanh() - y).relu(), backend=recording)(x, x + 1)
    code = recording.codes[0]
    return code[code.index("/* C kernels"):]


def test_without_x86_the_source_has_no_x86_intrinsics(tmp_path):
    # What an aarch64 gcc sees (NEON machines): x86 macros undefined, __aarch64__ defined. Headers are left
    # out (this machine has no aarch64 ones); every x86 line must sit behind DL_VECTOR_LOOPS.
    source = "\n".join(line for line in _kernel_source().splitlines() if not line.startswith("#include"))
    path = tmp_path / "kernel.c"
    path.write_text(source)
    compiler, _ = native.find_compiler()
    result = subprocess.run([compiler, "-E", "-P", "-undef", "-D__GNUC__=12", "-D__aarch64__=1", str(path)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr[-2000:]
    for token in ("_mm256", "_mm512", "__m256", "__m512", "__builtin_cpu", "target(", "dl_isa_level"):
        assert token not in result.stdout, token
    assert "dl_tanhf" in result.stdout and "#pragma omp" in result.stdout  # the scalar loop is all there


def test_a_library_built_for_baseline_x86_64_runs_the_vector_loop_the_cpu_has(tmp_path):
    # -march=x86-64 (SSE2 only): the AVX2 and AVX-512 functions are compiled by their target attributes and
    # chosen when the library runs (NOTE: [vector ISA dispatch]), not by the build's flags.
    source = _kernel_source() + "\nint isa_level(void) { return dl_isa_level(); }\n"
    path, library_path = tmp_path / "kernel.c", tmp_path / "kernel.so"
    path.write_text(source)
    compiler, _ = native.find_compiler()
    result = subprocess.run([compiler, "-O2", "-march=x86-64", "-fopenmp", "-fPIC", "-shared", "-std=gnu11",
                             "-ffp-contract=off", str(path), "-o", str(library_path), "-lm"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    library = ctypes.CDLL(str(library_path))
    level = library.isa_level()
    probe = build(PROBE)
    assert level == probe.isa_level() and level in (0, 1, 2)
