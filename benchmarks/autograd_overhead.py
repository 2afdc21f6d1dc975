"""Eager cost of autograd: ``x + 1`` without grad (the fast path), with grad, and an MLP step.

Run from a checkout's root: ``OPENBLAS_NUM_THREADS=1 python3 benchmarks/autograd_overhead.py``.
Interleaved rounds, medians in microseconds. Without dl.autograd (an older checkout) only
the no-grad line is measured, which is how "before/after" is compared.
"""
from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path.cwd()))  # the checkout run from (so an older one can be compared)

import dynamo_lite as dl  # noqa: E402


def per_call_us(fn, repeat: int) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - start) / repeat * 1e6


def main(rounds: int = 15) -> None:
    x = dl.randn(16)
    cases = {"x + 1 (no grad)": (lambda: x + 1, 20000)}
    if hasattr(dl, "autograd"):
        w = dl.randn(16, requires_grad=True)
        cases["w + 1 (records AddBackward0)"] = (lambda: w + 1, 5000)
        dl.manual_seed(0)
        model = dl.nn.Sequential(dl.nn.Linear(32, 64), dl.nn.ReLU(), dl.nn.Linear(64, 10))
        data, target = dl.randn(64, 32), dl.randint(0, 10, (64,))

        def step():
            model.zero_grad()
            dl.nn.functional.cross_entropy(model(data), target).backward()

        cases["MLP 32-64-10 forward+backward (batch 64)"] = (step, 200)
    timings = {name: [] for name in cases}
    for _ in range(rounds):
        for name, (fn, repeat) in cases.items():
            timings[name].append(per_call_us(fn, repeat))
    for name, values in timings.items():
        print(f"{name:45s} {statistics.median(values):9.2f} us")


if __name__ == "__main__":
    main()
