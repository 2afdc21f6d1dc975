"""Which orientation a gemm kernel runs ``C = A @ B`` in: eager's, or swapped (``C^T = B^T A^T``, then transposed).

NOTE: [gemm orientation] For a linear's ``x (M, K) @ W.T`` with few rows, OpenBLAS (0.3.31,
SkylakeX kernel, one thread) is much faster at the same product in the other orientation,
``W @ x.T``: the (N, M) row-major result, i.e. the (M, N) product in column-major order.
Swapping turns row-major ``gemm(transA, transB)`` into ``gemm(!transB, !transA)``: for
NT (a linear's, an ``x @ W.t()``) and TN it runs the same kernel variant with the operands'
roles exchanged, every element the same dot product over K in the same K blocks, and the
values are equal bit for bit (tests/backends/test_native_gemm.py: odd sizes, one row or
column, K past OpenBLAS's blocking (1000, 2500), leading dimensions past the sizes, one and
two threads; and 410 random (shape, layout) cases up to (300, 3000, 3000) at one and two
threads: none differed). NN and TT swap into each other, another kernel variant with
another summation order: float32 (2, 3, 64), (7, 13, 1000) and (8, 1000, 64) differ in the last bits, so
those never swap. float64 differs even in NT, at (16, 4099, 64) and (250, 600, 700): its
dgemm kernel sums tails differently; float64 never swaps (nor would it gain, below).
Where ``swap_threads`` allows, a gemm kernel computes the swapped product into a scratch
array, then writes ``out[m, n] = scratch[n, m] (+ addend)`` in eager's layout (NOTE:
[transposing epilogue]): eager's values, shape and strides. That pass over the output is
the cost the rule has to pay back.

Those equal bits are a property of the BLAS kernel, not of the swap: under OpenBLAS's Haswell
kernels (AVX2 CPUs, or ``OPENBLAS_CORETYPE=Haswell``) the swapped NT product differs from
eager's in the last bits (float32 (7, 13, 1000), (21, 40, 11)). So a swapped gemm promises
eager's values within a K-term dot product's rounding (``gamma_K * sum |a| |b|``, what
tests/backends/test_native_gemm.py checks), and eager's bits only where it runs eager's
orientation, which is eager's BLAS call.

Sweep, ms per gemm, medians of 5 interleaved rounds (the command:
``OPENBLAS_NUM_THREADS=1 python3 -m benchmarks.gemm_orientation [--dtype float64]``):

    float32  M    N     K     eager  swapped          float32  M     N     K     eager  swapped
             64   1024  512   0.91   0.73                      1024  256   1024  5.67   6.06
             64   1024  1024  1.93   1.44                      1024  16    1024  0.44   1.26
             64   2048  512   1.85   1.39                      256   256   256   0.35   0.35
             8    1024  1024  0.81   0.37                      128   256   256   0.19   0.18
             128  1024  1024  3.24   2.73                      64    1024  32    0.086  0.053
    float64  64   1024  1024  3.51   3.53                      8     3072  1024  3.10   3.40

So float32 swaps when the product is wide and short (N at least 4 M, M at most 128) and K
is large enough for the gemm to outweigh the transposing pass (K >= 128; at K = 32 the
gain was about what the first, scalar, transposing loop cost); square and tall products
stay as they are (tall ones lose up to 2.8x swapped). float64's dgemm kernel shows no
such pattern (short wide products 0.73-1.11, some tall ones 4x slower swapped): it never
swaps. The sweep ran at one thread (the benchmarks' setting); two threads could not be
measured on this loaded machine (a two-thread OpenBLAS call took 0.7 to 56 ms for the
same product), so at more threads than ``max_threads`` the kernel runs eager's
orientation (it compares its thread count with the limit at each call; the bits are
equal either way: OpenBLAS splits M and N among threads, never K).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .blas import NO_TRANS, TRANS


@dataclass(frozen=True)
class SwapRule:
    """When a dtype's gemm runs swapped (NOTE: [gemm orientation]): all four limits hold, and at most
    ``max_threads`` threads run it (the counts the sweep measured)."""

    max_m: int
    min_n: int
    n_per_m: int
    min_k: int
    max_threads: int

    def holds(self, m: int, n: int, k: int) -> bool:
        return m <= self.max_m and n >= self.min_n and n >= self.n_per_m * m and k >= self.min_k


SWAP_RULES = {np.dtype(np.float32): SwapRule(max_m=128, min_n=256, n_per_m=4, min_k=128, max_threads=1)}
# Per dtype, the (transA, transB) whose swapped gemm has eager's bits: NT and TN (see the NOTE).
BIT_EQUAL_WHEN_SWAPPED = {np.dtype(np.float32): {(NO_TRANS, TRANS), (TRANS, NO_TRANS)}}


def swap_threads(m: int, n: int, k: int, trans_a: int, trans_b: int, dtype) -> int:
    """The most threads at which a gemm kernel computes this product swapped (0: never): where it was
    measured faster so, and keeps eager's summation per element (eager's bits under SkylakeX kernels).

    Example:
        >>> swap_threads(64, 1024, 1024, NO_TRANS, TRANS, np.float32)  # short and wide: swapped at one thread
        1
        >>> swap_threads(1024, 256, 768, NO_TRANS, TRANS, np.float32)  # tall: never
        0
    """
    rule = SWAP_RULES.get(np.dtype(dtype))
    if rule is None or (trans_a, trans_b) not in BIT_EQUAL_WHEN_SWAPPED[np.dtype(dtype)] or not rule.holds(m, n, k):
        return 0
    return rule.max_threads
