"""lerp, hypot, atan2, fmod, frac, erfinv, nan_to_num, addcmul, addcdiv, isclose/allclose: NumPy and torch.

Error messages marked "torch 2.13" were recorded by calling the same function in
PyTorch 2.13.0 (CPU wheel) in a private venv; the erfinv values likewise
(``torch.erfinv`` on float64, printed with ``repr``).
"""
from __future__ import annotations

import numpy as np
import pytest

import dynamo_lite as dl
from dynamo_lite.tensor.tensor import from_array
from tests.helpers import assert_same

from .oracle import laid_out

RNG = np.random.default_rng(7)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def test_lerp_matches_formula_and_hits_the_ends_exactly():
    a, b, w = f32(3, 4), f32(3, 4), RNG.uniform(-0.5, 1.5, (3, 4)).astype(np.float32)
    result = dl.lerp(laid_out(a, "transposed"), from_array(b), from_array(w))
    np.testing.assert_allclose(result.numpy(), a + w * (b - a), rtol=1e-5, atol=1e-6)
    assert dl.lerp(from_array(a), from_array(b), 1.0).numpy().tolist() == b.tolist()
    assert dl.lerp(from_array(a), from_array(b), 0.0).numpy().tolist() == a.tolist()
    x = from_array(a.copy())
    assert x.lerp_(from_array(b), 0.25) is x
    np.testing.assert_allclose(x.numpy(), a + 0.25 * (b - a), rtol=1e-6)
    half = dl.lerp(dl.zeros(3, dtype=dl.float16), dl.ones(3, dtype=dl.float16), 0.3)
    assert half.dtype is dl.float16 and np.allclose(half.numpy(), 0.3, atol=1e-3)


@pytest.mark.parametrize("weight", [0.3, 0.7, -0.2, 1.5, 0.5, 0])
def test_lerp_with_a_number_computes_only_its_ends_formula(weight):
    a, b = f32(5, 6), f32(5, 6)
    a[0, :3] = [np.inf, np.nan, -0.0]
    for dtype in (np.float32, np.float64, np.float16):
        x, y = a.astype(dtype), b.astype(dtype)
        dt = np.float32 if dtype == np.float16 else dtype  # both formulas, then the one for this weight
        with np.errstate(all="ignore"):
            diff = np.subtract(y, x, dtype=dt)
            low = np.add(x, np.multiply(weight, diff, dtype=dt), dtype=dt)
            high = np.subtract(y, np.multiply(diff, np.subtract(1, weight, dtype=dt), dtype=dt), dtype=dt)
        expected = np.where(abs(weight) < 0.5, low, high).astype(dtype)
        assert dl.lerp(from_array(x), from_array(y), weight).numpy().tobytes() == expected.tobytes()


def test_lerp_errors_like_torch():  # torch 2.13
    with pytest.raises(RuntimeError, match="expected dtype float for `end` but got dtype double"):
        dl.lerp(dl.ones(2), dl.ones(2, dtype=dl.float64), 0.5)
    with pytest.raises(NotImplementedError, match="\"lerp_kernel_scalar\" not implemented for 'Long'"):
        dl.lerp(dl.ones(2, dtype=dl.int64), dl.ones(2, dtype=dl.int64), 0.5)
    with pytest.raises(TypeError, match="argument 'end' \\(position 2\\) must be Tensor, not int"):
        dl.lerp(dl.ones(2), 3, 0.5)


@pytest.mark.parametrize("name, oracle", [("hypot", np.hypot), ("atan2", np.arctan2), ("fmod", np.fmod)])
def test_binary_functions_match_numpy(name, oracle):
    a, b = f32(4, 5), f32(5)
    result = getattr(dl, name)(laid_out(a, "transposed"), from_array(b))
    np.testing.assert_allclose(result.numpy(), oracle(a, b), rtol=1e-6, atol=1e-7)
    x = from_array(a.copy())
    assert getattr(x, name + "_")(from_array(b)) is x
    np.testing.assert_allclose(x.numpy(), oracle(a, b), rtol=1e-6, atol=1e-7)


def test_binary_function_dtypes_and_errors():  # torch 2.13
    ints = dl.tensor([3, -4])
    assert dl.atan2(ints, ints).dtype is dl.float32
    assert dl.atan2(ints, dl.ones(2, dtype=dl.float64)).dtype is dl.float64
    assert dl.fmod(dl.tensor([-7, 7]), 3).tolist() == [-1, 1]
    assert dl.fmod(dl.tensor([-7.0, 7.0]), 3).tolist() == [-1.0, 1.0]
    with pytest.raises(NotImplementedError, match="\"hypot_cpu\" not implemented for 'Long'"):
        dl.hypot(ints, ints)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        dl.fmod(ints, 0)
    with pytest.raises(TypeError, match="hypot\\(\\): argument 'other' \\(position 2\\) must be Tensor, not int"):
        dl.hypot(dl.ones(2), 3)
    with pytest.raises(TypeError, match="atan2\\(\\): argument 'other' \\(position 2\\) must be Tensor, not int"):
        dl.atan2(dl.ones(2), 3)


def test_frac():
    a = f32(3, 4) * 10
    np.testing.assert_allclose(dl.frac(from_array(a)).numpy(), a - np.trunc(a), rtol=1e-6)
    with pytest.raises(NotImplementedError, match="\"frac_cpu\" not implemented for 'Long'"):  # torch 2.13
        dl.frac(dl.tensor([1, 2]))


# (y, torch.erfinv(y)) in float64, recorded from torch 2.13.
ERFINV_TORCH = [
    (0.0, 0.0), (0.5, 0.4769362762044699), (-0.9, -1.1630871536766743), (0.999999, 3.458910737275499),
    (0.999999999999, 5.042031898572696), (-0.999999999999999, -5.675915739744713), (1e-300, 8.86226925452758e-301),
    (0.25, 0.2253120550121781),
]


def test_erfinv_matches_torch_values_and_edges():
    y = dl.tensor([v for v, _ in ERFINV_TORCH], dtype=dl.float64)
    expected = np.array([x for _, x in ERFINV_TORCH])
    np.testing.assert_allclose(dl.erfinv(y).numpy(), expected, rtol=2e-9)
    edges = dl.erfinv(dl.tensor([1.0, -1.0, 1.5, float("nan")])).tolist()
    assert edges[:2] == [float("inf"), float("-inf")] and np.isnan(edges[2:]).all()
    assert dl.erfinv(dl.tensor([0, 1])).tolist() == [0.0, float("inf")]  # ints give float32, like torch
    # erfinv inverts erf across the range.
    grid = np.linspace(-0.999, 0.999, 401)
    back = dl.erf(dl.erfinv(dl.tensor(grid))).numpy()
    np.testing.assert_allclose(back, grid, rtol=1e-13, atol=1e-15)


def test_nan_to_num():
    special = [float("nan"), float("inf"), float("-inf"), 1.5]
    assert dl.nan_to_num(dl.tensor(special, dtype=dl.float16)).tolist() == [0.0, 65504.0, -65504.0, 1.5]
    got = dl.nan_to_num(dl.tensor(special), nan=1.0, posinf=2.0, neginf=-2.0).tolist()
    assert got == [1.0, 2.0, -2.0, 1.5]
    assert dl.nan_to_num(dl.tensor([1, 2])).tolist() == [1, 2]
    x = dl.tensor(special, dtype=dl.float64)
    assert x.nan_to_num_(posinf=9.0) is x and x.tolist()[:3] == [0.0, 9.0, np.finfo(np.float64).min]


def test_addcmul_addcdiv():
    a, b, c = f32(3, 4), f32(3, 4), np.abs(f32(4)) + 0.5
    got = dl.addcmul(from_array(a), laid_out(b, "transposed"), from_array(c), value=0.5)
    np.testing.assert_allclose(got.numpy(), a + 0.5 * b * c, rtol=1e-6)
    got = dl.addcdiv(from_array(a), from_array(b), from_array(c), value=-2)
    np.testing.assert_allclose(got.numpy(), a - 2 * b / c, rtol=1e-6)
    x = from_array(a.copy())
    assert x.addcdiv_(from_array(b), from_array(c)) is x
    np.testing.assert_allclose(x.numpy(), a + b / c, rtol=1e-6)
    ints = dl.ones(2, dtype=dl.int64)
    assert dl.addcmul(ints, ints, ints, value=2).tolist() == [3, 3]
    assert dl.addcmul(ints, ints, dl.ones(2), value=2).dtype is dl.float32  # torch 2.13


def test_addcdiv_rejects_integer_division():  # torch 2.13
    ints = dl.ones(2, dtype=dl.int64)
    with pytest.raises(RuntimeError, match="Integer division with addcdiv is no longer supported"):
        dl.addcdiv(dl.ones(2), ints, ints)


def test_isclose_and_allclose():
    a = dl.tensor([1.0, 2.0, float("nan"), float("inf")])
    b = dl.tensor([1.0 + 1e-7, 2.1, float("nan"), float("inf")])
    assert dl.isclose(a, b).tolist() == [True, False, False, True]
    assert dl.isclose(a, b, equal_nan=True).tolist() == [True, False, True, True]
    assert dl.allclose(a[:1], b[:1]) is True and dl.allclose(a, b, atol=0.2, equal_nan=True) is True
    assert dl.allclose(a, b) is False
    ints = dl.tensor([-(2**62), 5])
    assert dl.isclose(ints, dl.tensor([2**62, 5])).tolist() == [False, True]  # no wrap-around
    with pytest.raises(RuntimeError, match="Float did not match Double"):  # torch 2.13
        dl.isclose(dl.ones(2), dl.ones(2, dtype=dl.float64))


# -- compiled code ------------------------------------------------------------------------
def _pointwise_program(x, y, w):
    z = dl.lerp(x, y, w).hypot(y) + dl.atan2(x, y) * dl.fmod(x, 0.7).frac()
    return dl.addcdiv(z, x, y.abs() + 1, value=0.5).addcmul(x, y).nan_to_num() + dl.erfinv(w.clamp(-0.9, 0.9))


def test_pointwise_ops_compile_into_one_graph_and_fuse(backend):
    args = (dl.randn(6, 5), dl.randn(6, 5), dl.rand(6, 5))
    report = dl.explain(_pointwise_program)(*args)
    assert (report.graph_count, report.graph_break_count) == (1, 0)
    assert_same(_pointwise_program, *args, backend=backend)
    assert dl.stats().frames_compiled == 1


def test_numpy_backend_fuses_the_new_pointwise_ops():
    from tests.backends.test_numpy_backend import run_both

    args = (dl.randn(6, 5), dl.randn(6, 5), dl.rand(6, 5))
    expected, actual, rec = run_both(_pointwise_program, *args)
    np.testing.assert_allclose(actual.numpy(), expected.numpy(), rtol=1e-6)
    fused = {node.target.name for group in rec.programs[0].groups for node in group.group.nodes}
    assert {"lerp", "hypot", "atan2", "fmod", "frac", "addcdiv", "addcmul", "nan_to_num", "erfinv"} <= fused


def test_inplace_variants_compile(backend):
    def f(x, y):
        x.lerp_(y, 0.5).addcmul_(y, y, value=2).nan_to_num_()
        return x

    assert_same(f, dl.randn(4, 3), dl.randn(4, 3), backend=backend, copy_args=True)


def test_allclose_breaks_the_graph_on_the_data_it_reads(backend):
    def f(x, y):
        return x * 2 if dl.allclose(x, y) else x - 1

    report = dl.explain(f)(dl.ones(3), dl.ones(3))
    assert report.graph_break_count == 1
    assert "allclose() needs the value of a traced tensor" in report.break_reasons[0].reason
    assert_same(f, dl.ones(3), dl.ones(3), backend=backend, expect_breaks=1)
    assert_same(f, dl.ones(3), dl.zeros(3), backend=backend)
