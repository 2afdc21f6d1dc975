"""Native gemm kernels in either orientation (NOTE: [gemm orientation]): eager's values, layout and strides.

Eager's orientation is eager's BLAS call, so its bits are eager's by construction. The swapped
orientation runs another BLAS call whose summation order depends on the BLAS kernel the CPU
gets (the same bits under OpenBLAS's SkylakeX kernel, not under its Haswell one): it is checked
against the rounding bound of a K-term dot product, ``|c - fl(c)| <= gamma_K * sum_k |a_ik| |b_kj|``
with ``gamma_K = K u / (1 - K u)``, ``u = eps / 2``, on both sides (eager's and the swapped
result each within it of the exact value), never against what one CPU happened to compute.
"""
from __future__ import annotations

import contextlib

import numpy as np
import pytest

import dynamo_lite as dl
from dynamo_lite.backends.native import gemm_orientation
from dynamo_lite.backends.native.blas import NO_TRANS, ROW_MAJOR, TRANS, gemm_function
from tests.backends.native_cases import Recording, needs_compiler
from tests.helpers import assert_equal_values

F = dl.nn.functional
# (M, N, K): odd sizes, K past OpenBLAS's K blocking (1000, 2500), one row or column, wide and tall.
SHAPES = [(2, 3, 5), (7, 13, 1000), (1, 300, 129), (300, 1, 129), (64, 1024, 1024), (3, 517, 2500),
          (129, 33, 257), (16, 4099, 64), (1000, 17, 31), (97, 97, 2500), (8, 2, 1), (250, 600, 700)]


@contextlib.contextmanager
def num_threads(n: int):
    """``dl.set_num_threads(n)`` (C kernels and NumPy's BLAS) inside the block."""
    before = dl.get_num_threads()
    dl.set_num_threads(n)
    try:
        yield
    finally:
        dl.set_num_threads(before)


def rounding_bound(abs_product, k: int, dtype):
    """How far two K-term float dot products may lie apart: twice gamma_K times ``sum |a| |b|`` (+ an addend's ulp)."""
    u = np.finfo(dtype).eps / 2
    gamma = (k + 1) * u / (1 - (k + 1) * u)  # K products and sums, one more rounding for an addend
    return 2 * gamma * np.asarray(abs_product, dtype=np.float64)


def assert_within_rounding(actual, expected, bound):
    """Non-finite elements equal (same NaNs, same infinities); finite ones within ``bound``."""
    actual, expected = np.asarray(actual, np.float64), np.asarray(expected, np.float64)
    finite = np.isfinite(expected)
    assert np.array_equal(actual[~finite], expected[~finite], equal_nan=True)
    excess = np.abs(actual[finite] - expected[finite]) - bound[finite]
    assert excess.size == 0 or excess.max() <= 0, f"off by {excess.max():.3g} past the rounding bound"


def _gemm_both_ways(gemm, dtype, m, n, k, a_transposed, b_transposed, pad):
    """Eager's gemm of ``a (m, k) @ b (k, n)``, the swapped one's result transposed back, and ``|a| @ |b|``."""
    rng = np.random.default_rng(m * 1009 + n * 31 + k)
    # Stored transposed or not, with leading dimensions ``pad`` past the sizes.
    a_store = rng.standard_normal((k, m + pad) if a_transposed else (m, k + pad)).astype(dtype)
    b_store = rng.standard_normal((n, k + pad) if b_transposed else (k, n + pad)).astype(dtype)
    a_store.flat[:: 7] = rng.standard_normal(a_store.flat[:: 7].size).astype(dtype) * 1e6  # wide exponent range
    lda, ldb = a_store.shape[1], b_store.shape[1]
    ta, tb = (TRANS if a_transposed else NO_TRANS), (TRANS if b_transposed else NO_TRANS)
    out, out_t = np.empty((m, n), dtype), np.empty((n, m), dtype)
    a, b = a_store.ctypes.data, b_store.ctypes.data
    gemm(ROW_MAJOR, ta, tb, m, n, k, 1, a, lda, b, ldb, 0, out.ctypes.data, n)
    gemm(ROW_MAJOR, NO_TRANS + TRANS - tb, NO_TRANS + TRANS - ta, n, m, k, 1, b, ldb, a, lda, 0, out_t.ctypes.data, m)
    a_matrix = a_store[:, :m].T if a_transposed else a_store[:, :k]
    b_matrix = b_store[:, :k].T if b_transposed else b_store[:, :n]
    return out, out_t.T, np.abs(a_matrix.astype(np.float64)) @ np.abs(b_matrix.astype(np.float64))


@pytest.mark.parametrize("threads", [1, 2])
def test_swapped_gemm_is_within_rounding_of_eagers(threads):
    # Every (dtype, transposes) the kernels swap: NOTE: [gemm orientation] says why NN, TT and float64 never do.
    with num_threads(threads):  # NumPy's BLAS too
        for dtype, layouts in gemm_orientation.BIT_EQUAL_WHEN_SWAPPED.items():
            gemm = gemm_function(dtype)
            for (m, n, k), pad in zip(SHAPES, [0, 3, 1] * len(SHAPES)):
                for trans_a, trans_b in layouts:
                    eager, swapped, magnitude = _gemm_both_ways(gemm, dtype, m, n, k, trans_a == TRANS,
                                                                trans_b == TRANS, pad)
                    assert swapped.shape == eager.shape == (m, n)
                    assert_within_rounding(swapped, eager, rounding_bound(magnitude, k, dtype))


@pytest.fixture
def always_swapped(monkeypatch):
    """Every gemm kernel whose swap keeps eager's bits swaps, at any thread count; records the products swapped."""
    done, swap_threads = set(), gemm_orientation.swap_threads

    def recorded(*geometry):
        threads = swap_threads(*geometry)
        if threads:
            done.add(geometry[:3])
        return threads

    everywhere = gemm_orientation.SwapRule(max_m=2 ** 62, min_n=0, n_per_m=0, min_k=0, max_threads=64)
    monkeypatch.setitem(gemm_orientation.SWAP_RULES, np.dtype(np.float32), everywhere)
    monkeypatch.setattr(gemm_orientation, "swap_threads", recorded)
    return done


def products(x, w, b, a3, b3, c):
    """Every product the gemm kernel takes: linear, mm, bmm, matmul, addmm, strided and transposed operands."""
    rows = x[:, :, 1:]  # evenly strided rows, lda > K
    return (F.linear(rows, w, b), F.linear(rows, w, b[:1]), F.linear(rows * 2, w[:, :]), rows[0].mm(w.t()),
            w.mm(rows[1].t()), dl.bmm(a3, b3), a3.transpose(1, 2) @ c, dl.addmm(b, rows[0], w.t()),
            dl.addmm(c[0, :, :1], rows[1].t().t(), w.t()), dl.addmm(rows[0] @ w.t(), rows[1], w.t()))


def product_inputs(dtype, m=5, n=9, k=11):
    dl.manual_seed(0)
    x = dl.randn(2, m, k + 1, dtype=dtype)
    x[1, 2, 3] = float("nan")
    w, b = dl.randn(n, k, dtype=dtype), dl.randn(n, dtype=dtype)
    w[4, 5] = float("inf")
    return x, w, b, dl.randn(3, m, k, dtype=dtype), dl.randn(3, k, n, dtype=dtype), dl.randn(3, m, n, dtype=dtype)


@needs_compiler
@pytest.mark.parametrize("dtype", [dl.float32, dl.float64])
@pytest.mark.parametrize("m, n, k, threads", [(5, 9, 11, 1), (21, 40, 11, 1), (21, 40, 11, 2)])  # edges; 8 x 8 tiles
def test_swapped_kernels_equal_eager(always_swapped, dtype, m, n, k, threads):
    args = product_inputs(dtype, m, n, k)
    recording = Recording()
    with num_threads(threads), np.errstate(all="ignore"):
        expected, actual = products(*args), dl.compile(products, backend=recording)(*args)
        magnitudes = products(*[arg.abs().double() for arg in args])  # sum |a| |b| (+ |addend|) per element
    for a, e, size in zip(actual, expected, magnitudes):
        assert a.stride() == e.stride() and a.dtype == e.dtype and a.shape == e.shape
        if dtype is dl.float64:  # never swapped: eager's BLAS call, eager's bits
            assert_equal_values(a, e, rtol=0, atol=0)
        else:
            assert_within_rounding(a.numpy(), e.numpy(), rounding_bound(size.numpy(), 2 * k, np.float32))
    assert recording.count("gemm") == 11, recording.codes  # products, and the matmul inside the last addmm
    # float32's NT and TN products swap (linear, mm, addmm, the transposed matmul; bmm's NN does not), float64's never.
    swapped = {(2 * m, n, k), (m, n, k), (n, m, k), (k, n, m)} if dtype is dl.float32 else set()
    assert always_swapped == swapped


@needs_compiler
def test_sizes_read_at_run_time_choose_their_orientation(monkeypatch):
    # One graph with symbolic sizes: a short wide product swaps, a tall one does not; both eager's values.
    def f(x, w, b):
        return F.linear(x, w, b).relu()

    chosen, swap_threads = {}, gemm_orientation.swap_threads
    monkeypatch.setattr(gemm_orientation, "swap_threads", lambda *g: chosen.setdefault(g[:3], swap_threads(*g)))

    recording = Recording()
    compiled = dl.compile(f, backend=recording, dynamic=True)
    dl.manual_seed(3)
    with num_threads(1):  # the rule's swaps run at one thread
        for m, n, k in [(8, 1024, 256), (600, 64, 128), (17, 300, 1000)]:
            x, w, b = dl.randn(m, k), dl.randn(n, k), dl.randn(n)
            actual, expected = compiled(x, w, b), f(x, w, b)
            assert actual.shape == expected.shape and actual.stride() == expected.stride()
            magnitude = F.linear(x.abs().double(), w.abs().double(), b.abs().double()).numpy()
            assert_within_rounding(actual.numpy(), expected.numpy(), rounding_bound(magnitude, k, np.float32))
    assert len(recording.codes) == 1 and recording.count("gemm") == 1, recording.codes
    assert chosen == {(8, 1024, 256): 1, (600, 64, 128): 0, (17, 300, 1000): 1}


def test_the_rule_swaps_short_wide_float32_products_at_one_thread():
    nt, nn, swap_threads = (NO_TRANS, TRANS), (NO_TRANS, NO_TRANS), gemm_orientation.swap_threads
    assert swap_threads(64, 1024, 1024, *nt, np.float32) == 1  # mlp's hidden layer
    assert swap_threads(64, 2048, 512, *nt, np.float32) == 1  # lstm_cell's gates
    assert swap_threads(64, 2048, 512, *nn, np.float32) == 0  # NN: other bits swapped
    assert swap_threads(1024, 768, 256, *nt, np.float32) == 0  # tall: slower swapped
    assert swap_threads(64, 1024, 32, *nt, np.float32) == 0  # small K: the transpose eats the gain
    assert swap_threads(64, 1024, 1024, *nt, np.float64) == 0


@needs_compiler
def test_linear_broadcasts_a_one_element_bias():
    # A (1,) bias broadcasts over the output's columns (the kernel read it as N elements before).
    def f(x, w, b):
        return F.linear(x, w, b)

    dl.manual_seed(2)
    x, w, b = dl.randn(4, 8), dl.randn(6, 8), dl.randn(1)
    recording = Recording()
    assert_equal_values(dl.compile(f, backend=recording)(x, w, b), f(x, w, b), rtol=0, atol=0)
    assert recording.count("gemm") == 1
