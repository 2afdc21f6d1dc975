"""pointwise_chain on the native backend against its memory floor: AVX2 and AVX-512 loops, 1 and 2 threads.

Run from the repository root:

    OPENBLAS_NUM_THREADS=1 python3 -m benchmarks.pointwise_floor [--rounds 15] [--threads 1,2]

One process times, in interleaved rounds (``benchmarks/timing.py``, medians), the compiled
pointwise_chain (``benchmarks/models.py``: 2048 x 2048 float32, two inputs read and one output
written: 48 MiB per call) built twice, once capped at AVX2 (``DYNAMO_LITE_NATIVE_ISA=avx2``, NOTE:
[vector ISA dispatch]) and once for what the CPU has, each at every thread count; and the
memory floor, the time those 48 MiB take at the measured bandwidth of a plain add that moves the
same bytes: ``np.add(x, y, out=z)`` (one thread, the floor earlier measurements used) and the
native backend's own ``x + y`` kernel at the same thread count. It prints the CPU model and each
variant's time and its ratio to both floors. Then, robust to other processes on the machine, the
CPU time of one thread (``time.thread_time``: a one-thread kernel runs on the calling thread), in ns
per element.
"""
from __future__ import annotations

import argparse
import os
import sys
import itertools
import time
import types

import numpy as np

import dynamo_lite as dl
from dynamo_lite.backends.native.isa import ENV
from dynamo_lite.backends.native.toolchain import cpu_model

from .models import pointwise_chain, pointwise_chain_inputs
from .timing import measure

ISAS = ("avx2", "native")
_BUILDS = itertools.count()


def cpu_has_avx512() -> bool:
    try:
        with open("/proc/cpuinfo") as f:
            return any(line.startswith("flags") and " avx512f" in line for line in f)
    except OSError:
        return False


def _compiled(fn, isa: str, inputs: tuple):
    """``fn`` compiled with the native backend, its library built and first run under ``DYNAMO_LITE_NATIVE_ISA=isa``
    (the loop a library runs is chosen at its first call)."""
    before = os.environ.get(ENV)
    os.environ[ENV] = isa
    # a code object of its own: compiled code is cached per code object, and each build must be its own
    fresh = types.FunctionType(fn.__code__.replace(co_name=f"{fn.__name__}_{isa}_{next(_BUILDS)}"), fn.__globals__)
    try:
        compiled = dl.compile(fresh, backend="native")
        compiled(*inputs)
    finally:
        if before is None:
            os.environ.pop(ENV, None)
        else:
            os.environ[ENV] = before
    return compiled


def _add(x, y):
    return x + y


def _at_threads(fn, threads: int):
    def call():
        dl.set_num_threads(threads)
        return fn()
    return call


def variants(threads: list) -> tuple:
    """(name -> callable, bytes one call moves), every compiled result checked against eager first."""
    x, y = pointwise_chain_inputs()
    expected = pointwise_chain(x, y).numpy()
    xs, ys = x.numpy(), y.numpy()
    out = np.empty_like(xs)
    result = {"floor np.add 1t": lambda: np.add(xs, ys, out=out)}
    add = _compiled(_add, "native", (x, y))
    for isa in ISAS:
        chain = _compiled(pointwise_chain, isa, (x, y))
        np.testing.assert_allclose(chain(x, y).numpy(), expected, rtol=1e-5, atol=1e-6, err_msg=isa)
        for n in threads:
            result[f"{isa} {n}t"] = _at_threads(lambda chain=chain: chain(x, y), n)
    for n in threads:
        result[f"floor add {n}t"] = _at_threads(lambda: add(x, y), n)
    return result, 3 * xs.nbytes


def cpu_ns_per_element(rounds: int) -> dict:
    """variant -> ns of one thread's CPU time per element: np.add and both loops."""
    x, y = pointwise_chain_inputs()
    xs, ys = x.numpy(), y.numpy()
    out = np.empty_like(xs)
    calls = {"np.add": lambda: np.add(xs, ys, out=out)}
    for isa in ISAS:
        calls[isa] = _at_threads(lambda chain=_compiled(pointwise_chain, isa, (x, y)): chain(x, y), 1)
    timings = measure(calls, rounds=rounds, target_seconds=0.05, clock=time.thread_time)
    return {name: t.median * 1e9 / xs.size for name, t in timings.items()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--threads", default="1,2", help="comma list of thread counts")
    args = parser.parse_args(argv)
    threads = [int(t) for t in args.threads.split(",")]
    dl.set_grad_enabled(False)
    wide = "AVX-512" if cpu_has_avx512() else "no AVX-512 here: runs AVX2"
    print(f"CPU: {cpu_model()} ({os.cpu_count()} logical CPUs, {wide}); load average "
          f"{', '.join(f'{v:.2f}' for v in os.getloadavg())}")
    calls, moved = variants(threads)
    timings = measure(calls, rounds=args.rounds, target_seconds=0.05)
    ms = {name: t.median * 1e3 for name, t in timings.items()}
    one = ms["floor np.add 1t"]
    print(f"medians of {args.rounds} interleaved rounds, ms per call; {moved / 2**20:.0f} MiB moved per call; "
          f"floor np.add (1 thread) {one:.3f} ms = {moved / one / 1e6:.1f} GB/s")
    for n in threads:
        floor = ms[f"floor add {n}t"]
        print(f"{n} thread(s): floor (native add, {moved / floor / 1e6:.1f} GB/s) {floor:.3f} ms")
        for isa in ISAS:
            t = ms[f"{isa} {n}t"]
            label = "AVX2" if isa == "avx2" else "AVX-512" if cpu_has_avx512() else "native (AVX2)"
            print(f"  pointwise_chain {label:8s} {t:7.3f} ms  {t / one:5.2f}x np.add floor  "
                  f"{t / floor:5.2f}x native-add floor  (spread {timings[f'{isa} {n}t'].spread:.2f})")
    cpu = cpu_ns_per_element(args.rounds)
    cells = "  ".join(f"{name} {cpu[name]:.3f}" for name in ("np.add",) + ISAS)
    print(f"CPU time of one thread, ns per element: {cells}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
