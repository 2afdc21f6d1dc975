"""Benchmark the native backend: vs the numpy backend, hand-written NumPy, torch eager and torch.compile.

Run from the repository root (OPENBLAS_NUM_THREADS=1 as every benchmark here); with the
torch venv for the peer columns (``PYTHONPATH`` holding the checkout and a directory with
a ``bytecode`` symlink):

    python -m benchmarks.native [--rounds 9] [--threads N] [--only softmax,layer_norm] [--no-torch]

Per workload, in one process, interleaved rounds (``benchmarks/timing.py``), medians in
ms per call: ``native`` and ``numpy`` (dl.compile backends), ``numpy_hand`` (the
hand-written NumPy version), ``torch`` and ``torch.compile`` when torch is importable,
and for ``pointwise_chain`` the memory floor (one ``np.add(x, y, out=z)``: the traffic of
reading two arrays and writing one). Then first-call times, each in a new process:
native ``cold`` (empty cache: C generation, compiler, load), ``warm`` (cache hit),
``numpy`` and ``tiered`` (``backend="auto"``: the numpy first call, then how long until
the background build is done and every graph has measured its tiers and chosen one).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

import dynamo_lite as dl
import dynamo_lite.nn.functional as F

from . import numpy_reference as ref
from .models import WORKLOADS, Workload
from .numpy_reference import REFERENCES
from .timing import measure

ROWS, WIDTH = 8 * 128, 1024


def softmax_fn(x):
    return dl.softmax(x, -1)


def layer_norm_fn(x, w, b):
    return F.layer_norm(x, (WIDTH,), w, b)


def _row_inputs(*extra):
    def make():
        dl.manual_seed(1)
        return (dl.randn(ROWS, WIDTH),) + tuple(dl.randn(WIDTH) for _ in range(extra[0] if extra else 0))
    return make


ROW_WORKLOADS = {
    "softmax": Workload("softmax", lambda: softmax_fn, _row_inputs(), f"softmax over rows, ({ROWS}, {WIDTH}) float32"),
    "layer_norm": Workload("layer_norm", lambda: layer_norm_fn, _row_inputs(2),
                           f"layer_norm with weight and bias, ({ROWS}, {WIDTH}) float32"),
}
HAND = {"softmax": lambda p, x: ref.softmax(x), "layer_norm": lambda p, x, w, b: ref.layer_norm(x, (WIDTH,), w, b)}
TORCH_ROWS = {"softmax": lambda torch: (lambda p, x: torch.softmax(x, -1)),
              "layer_norm": lambda torch: (lambda p, x, w, b: torch.nn.functional.layer_norm(x, (WIDTH,), w, b))}
DEFAULT = ("pointwise_chain", "softmax", "layer_norm", "mlp", "lstm_cell", "attention_block", "small_cnn",
           "small_cnn_channels_last", "gpt")

FIRST_CALL = """
import time, dynamo_lite as dl
from dynamo_lite.backends.registry import AUTO
from benchmarks.models import WORKLOADS
w = WORKLOADS[{workload!r}]
model, inputs = w.make(), w.make_inputs()
AUTO.tier_up_seconds = 0.0
compiled = dl.compile(model, backend={backend!r})
start = time.perf_counter()
compiled(*inputs)
first = time.perf_counter() - start
switched = float("nan")
if {backend!r} == "auto":
    from dynamo_lite.backends.tiered import TieredFunction
    import gc
    tiered = [o for o in gc.get_objects() if isinstance(o, TieredFunction)]
    for t in tiered:
        t.wait()
    while not all(t.decided for t in tiered):
        compiled(*inputs)
    switched = time.perf_counter() - start
    print("chose", ", ".join(t.measurement() or t.backend_name for t in tiered))
print(first, switched)
"""


def first_call_seconds(cache: str, backend: str, workload: str) -> tuple:
    """``(first call, seconds until every graph runs native)`` of ``backend`` in a new process."""
    path = os.pathsep.join(p for p in (os.getcwd(), os.environ.get("PYTHONPATH")) if p)
    env = dict(os.environ, DYNAMO_LITE_CACHE_DIR=cache, PYTHONPATH=path)
    out = subprocess.run([sys.executable, "-c", FIRST_CALL.format(backend=backend, workload=workload)], env=env,
                         capture_output=True, text=True, check=True)
    for line in out.stdout.splitlines():
        if line.startswith("chose "):
            print(f"  {workload}: auto {line}")
    first, switched = out.stdout.split()[-2:]
    return float(first), float(switched)


def variants(name: str, torch) -> dict:
    """name -> zero-argument callable for one workload, each checked against eager first."""
    workload = ROW_WORKLOADS.get(name) or WORKLOADS[name]
    model, inputs = workload.make(), workload.make_inputs()
    params = {k: v.numpy() for k, v in model.state_dict().items()} if hasattr(model, "state_dict") else {}
    arrays = [x.numpy() for x in inputs]
    expected = model(*inputs)
    expected = expected[0] if isinstance(expected, tuple) else expected
    native, numpy_backend = dl.compile(model, backend="native"), dl.compile(model, backend="numpy")
    hand = HAND.get(name) or REFERENCES[name]
    checked = {"native": native(*inputs), "numpy": numpy_backend(*inputs), "numpy_hand": hand(params, *arrays)}
    for what, value in checked.items():
        value = value[0] if isinstance(value, tuple) else value
        np.testing.assert_allclose(np.asarray(value), expected.numpy(), rtol=1e-4, atol=1e-4, err_msg=what)
    result = {"native": lambda: native(*inputs), "numpy": lambda: numpy_backend(*inputs),
              "numpy_hand": lambda: hand(params, *arrays)}
    if name == "pointwise_chain":
        out = np.empty_like(arrays[0])
        result["floor"] = lambda: np.add(arrays[0], arrays[1], out=out)
    if torch is not None:
        from . import torch_peer
        fn = TORCH_ROWS[name](torch) if name in TORCH_ROWS else torch_peer.TORCH_WORKLOADS[name]
        t_params, t_inputs = torch_peer.to_torch(params, arrays)
        torch._dynamo.reset()  # every workload's lambda shares one code object: past 8, torch runs it eagerly
        compiled = torch.compile(lambda *xs: fn(t_params, *xs))
        with torch.inference_mode():
            compiled(*t_inputs)
        result["torch"] = _inference(torch, lambda: fn(t_params, *t_inputs))
        result["torch.compile"] = _inference(torch, lambda: compiled(*t_inputs))
    return result


def _inference(torch, fn):
    def call():
        with torch.inference_mode():
            return fn()
    return call


def _torch(enabled: bool, threads: int):
    if not enabled:
        return None
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(threads)
    return torch


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--threads", type=int, default=None, help="dl.set_num_threads (and torch's)")
    parser.add_argument("--only", default=",".join(DEFAULT), help="comma list of workloads")
    parser.add_argument("--no-torch", action="store_true")
    parser.add_argument("--no-first-call", action="store_true")
    args = parser.parse_args(argv)
    dl.set_grad_enabled(False)
    if args.threads:
        dl.set_num_threads(args.threads)
    torch = _torch(not args.no_torch, dl.get_num_threads())
    print(f"{dl.get_num_threads()} threads, medians of {args.rounds} interleaved rounds, ms per call")
    for name in args.only.split(","):
        timings = measure(variants(name, torch), rounds=args.rounds, target_seconds=0.05)
        ms = {k: v.median * 1e3 for k, v in timings.items()}
        cells = "  ".join(f"{k} {v:8.3f}" for k, v in ms.items())
        ratios = "  ".join(f"native/{k} {ms['native'] / v:5.2f}x" for k, v in ms.items() if k != "native")
        print(f"{name:16s} {cells}\n{'':16s} {ratios}")
    if not args.no_first_call:
        for workload in ("pointwise_chain", "gpt"):
            with tempfile.TemporaryDirectory() as cache:
                cold, _ = first_call_seconds(cache, "native", workload)
                warm, _ = first_call_seconds(cache, "native", workload)
            with tempfile.TemporaryDirectory() as cache:
                numpy_first, _ = first_call_seconds(cache, "numpy", workload)
                tiered, switched = first_call_seconds(cache, "auto", workload)
            print(f"first call {workload}: native cold {cold * 1e3:.0f} ms, warm {warm * 1e3:.0f} ms; numpy "
                  f"{numpy_first * 1e3:.0f} ms; auto (tiered) {tiered * 1e3:.0f} ms, every graph measured and decided after "
                  f"{switched * 1e3:.0f} ms (cold cache)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
