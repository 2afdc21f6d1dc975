"""Benchmark the native backend on pointwise_chain: vs numpy backend, hand-written NumPy, memory floor, torch.

Run from the repository root (OPENBLAS_NUM_THREADS=1 as every benchmark here):

    python -m benchmarks.native [--rounds 15] [--threads N]

In one process, interleaved rounds (``benchmarks/timing.py``), medians in ms per call:
``native`` and ``numpy`` (dl.compile backends), ``numpy_hand`` (unfused NumPy),
``floor`` (one ``np.add(x, y, out=z)``: the memory traffic of reading two arrays and
writing one), and ``torch`` / ``torch.compile`` when torch is importable. Then the
first-call times of the native backend: ``cold`` (empty cache: C generation, compiler,
load) and ``warm`` (a new process, cache hit), each measured in a fresh subprocess.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

import dynamo_lite as dl

from .models import WORKLOADS, pointwise_chain
from .numpy_reference import REFERENCES
from .timing import measure

FIRST_CALL = """
import time, dynamo_lite as dl
from benchmarks.models import WORKLOADS
w = WORKLOADS["pointwise_chain"]
model, inputs = w.make(), w.make_inputs()
compiled = dl.compile(model, backend={backend!r})
start = time.perf_counter()
compiled(*inputs)
print(time.perf_counter() - start)
"""


def first_call_seconds(cache: str, backend: str = "native") -> float:
    """Seconds of the first compiled call in a new process using ``cache`` as the cache dir."""
    path = os.pathsep.join(p for p in (os.getcwd(), os.environ.get("PYTHONPATH")) if p)
    env = dict(os.environ, DYNAMO_LITE_CACHE_DIR=cache, PYTHONPATH=path)
    out = subprocess.run([sys.executable, "-c", FIRST_CALL.format(backend=backend)], env=env,
                         capture_output=True, text=True, check=True)
    return float(out.stdout.split()[-1])


def variants(peer_enabled: bool) -> dict:
    workload = WORKLOADS["pointwise_chain"]
    x, y = workload.make_inputs()
    expected = pointwise_chain(x, y)
    native = dl.compile(pointwise_chain, backend="native")
    numpy_backend = dl.compile(pointwise_chain, backend="numpy")
    for fn in (native, numpy_backend):
        np.testing.assert_allclose(fn(x, y).numpy(), expected.numpy(), rtol=1e-5, atol=1e-6)
    xa, ya = x.numpy(), y.numpy()
    out = np.empty_like(xa)
    result = {
        "native": lambda: native(x, y),
        "numpy": lambda: numpy_backend(x, y),
        "numpy_hand": lambda: REFERENCES["pointwise_chain"]({}, xa, ya),
        "floor": lambda: np.add(xa, ya, out=out),
    }
    if peer_enabled:
        try:
            import torch
        except ImportError:
            return result
        tx, ty = torch.from_numpy(xa), torch.from_numpy(ya)
        compiled = torch.compile(lambda a, b: ((a * b + 1).sigmoid() * a.tanh() - b).relu())
        compiled(tx, ty)
        result["torch"] = lambda: ((tx * ty + 1).sigmoid() * tx.tanh() - ty).relu()
        result["torch.compile"] = lambda: compiled(tx, ty)
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--threads", type=int, default=None, help="dl.set_num_threads (and torch's)")
    parser.add_argument("--no-torch", action="store_true")
    args = parser.parse_args(argv)
    dl.set_grad_enabled(False)
    if args.threads:
        dl.set_num_threads(args.threads)
        if "torch" in sys.modules or not args.no_torch:
            try:
                import torch
                torch.set_num_threads(args.threads)
            except ImportError:
                pass
    timings = measure(variants(not args.no_torch), rounds=args.rounds, target_seconds=0.05)
    ms = {k: v.median * 1e3 for k, v in timings.items()}
    print(f"pointwise_chain 2048x2048 float32, {dl.get_num_threads()} threads, medians of {args.rounds} rounds")
    for name, value in ms.items():
        print(f"  {name:14s} {value:8.2f} ms   native/{name}: {ms['native'] / value:5.2f}x")
    with tempfile.TemporaryDirectory() as cache:
        cold = first_call_seconds(cache)
        warm = first_call_seconds(cache)
    numpy_first = first_call_seconds(tempfile.gettempdir(), "numpy")
    print(f"first call: native cold {cold * 1e3:.0f} ms, native warm {warm * 1e3:.0f} ms, "
          f"numpy backend {numpy_first * 1e3:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
