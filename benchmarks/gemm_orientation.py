"""Sweep the two orientations of a linear's gemm: ``x @ W.T`` row-major vs ``W @ x.T`` (the same product, transposed).

Run from the repository root, one BLAS thread as every benchmark here:

    OPENBLAS_NUM_THREADS=1 python3 -m benchmarks.gemm_orientation [--rounds 7] [--dtype float32] [--shapes M,N,K;...]

For each ``(M, N, K)`` it calls NumPy's own ``cblas_?gemm`` (NOTE: [gemm from C]) as eager
does, ``gemm(RowMajor, NoTrans, Trans, M, N, K, x, K, W, K, out, N)``, and swapped,
``gemm(RowMajor, NoTrans, Trans, N, M, K, W, K, x, K, out_t, M)``; checks the two products
are equal bit for bit, and prints the medians of interleaved rounds in ms and their ratio
(swapped / eager's: below 1 the swap is faster). NOTE: [gemm orientation] in
backends/native/gemm_orientation.py quotes the numbers this printed.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from dynamo_lite.backends.native.blas import NO_TRANS, ROW_MAJOR, TRANS, gemm_function

DEFAULT_SHAPES = [(m, n, k) for m in (1, 8, 16, 32, 64, 128, 256, 512, 1024) for n in (16, 64, 256, 1024, 3072)
                  for k in (32, 256, 1024)]


def sweep_one(gemm, m: int, n: int, k: int, dtype, rounds: int) -> tuple:
    """``(eager ms, swapped ms, bits equal)`` for one shape."""
    rng = np.random.default_rng(m * 7919 + n * 31 + k)
    x, w = rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((n, k)).astype(dtype)
    out, out_t = np.empty((m, n), dtype), np.empty((n, m), dtype)
    calls = {
        "eager": lambda: gemm(ROW_MAJOR, NO_TRANS, TRANS, m, n, k, 1, x.ctypes.data, k, w.ctypes.data, k, 0,
                              out.ctypes.data, n),
        "swapped": lambda: gemm(ROW_MAJOR, NO_TRANS, TRANS, n, m, k, 1, w.ctypes.data, k, x.ctypes.data, k, 0,
                                out_t.ctypes.data, m),
    }
    repeat = max(1, int(2e7 // max(1, m * n * k)))  # ~10 ms of work per timing
    times = {name: [] for name in calls}
    for _ in range(rounds):
        for name, call in calls.items():
            call()
            start = time.perf_counter()
            for _ in range(repeat):
                call()
            times[name].append((time.perf_counter() - start) / repeat * 1e3)
    return float(np.median(times["eager"])), float(np.median(times["swapped"])), np.array_equal(out, out_t.T)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--shapes", default=None, help="M,N,K;M,N,K;...")
    args = parser.parse_args(argv)
    shapes = DEFAULT_SHAPES
    if args.shapes is not None:
        shapes = [tuple(int(v) for v in shape.split(",")) for shape in args.shapes.split(";")]
    gemm = gemm_function(args.dtype)
    print(f"{'M':>6} {'N':>6} {'K':>6} {'eager ms':>10} {'swapped ms':>11} {'ratio':>6} equal")
    for m, n, k in shapes:
        eager, swapped, equal = sweep_one(gemm, m, n, k, np.dtype(args.dtype), args.rounds)
        print(f"{m:>6} {n:>6} {k:>6} {eager:>10.4f} {swapped:>11.4f} {swapped / eager:>6.2f} {equal}", flush=True)


if __name__ == "__main__":
    main()
