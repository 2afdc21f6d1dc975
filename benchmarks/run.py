"""Benchmark every zoo workload: dynamo_lite eager and compiled vs hand-written NumPy (and PyTorch).

Run from the repository root:

    python -m benchmarks.run [--workloads a,b] [--rounds 15] [--json benchmarks/results.json]
                             [--no-torch] [--no-torch-compile] [--backend numpy]

In one process, for each workload, every variant is timed in the same interleaved
rounds (``benchmarks/timing.py``) and the median per call is reported:

- ``eager``: the dynamo_lite model called directly.
- ``compiled``: ``dl.compile(model, backend=...)`` (the numpy backend by default).
- ``numpy``: the hand-written NumPy version (``benchmarks/numpy_reference.py``).
- ``torch`` / ``torch.compile``: the same computation in PyTorch, eager and compiled
  (only when ``torch`` is importable; skipped otherwise).

Every compiled result is checked against eager first. The ratios printed are against
``compiled``; the targets of the numpy backend are checked and printed at the end, and
everything (machine, versions, command, timings, ratios, targets) is written as JSON.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import numpy as np

import dynamo_lite as dl

from .models import WORKLOADS
from .numpy_reference import REFERENCES
from .timing import measure

ORDER = ("eager", "compiled", "numpy", "torch", "torch.compile")


def machine() -> dict:
    """What the numbers were measured on."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), cpu)
    except OSError:
        pass
    info = {"cpu": cpu, "cpus": os.cpu_count(), "python": sys.version.split()[0], "numpy": np.__version__,
            "platform": platform.platform()}
    if hasattr(os, "getloadavg"):
        info["load_average_at_start"] = [round(x, 2) for x in os.getloadavg()]
    return info


def torch_peer(enabled: bool):
    """The torch module of the peer, or None (not installed, or switched off)."""
    if not enabled:
        return None
    try:
        from . import torch_peer as peer
    except ImportError:
        return None
    return peer


def _as_tuple(value):
    return value if isinstance(value, tuple) else (value,)


def _params(model) -> dict:
    if isinstance(model, dl.nn.Module):
        return {name: value.numpy() for name, value in model.state_dict().items()}
    return {}


def _check(name, workload, expected, actual, what: str) -> None:
    for e, a in zip(_as_tuple(expected), _as_tuple(actual)):
        if e is None:  # an output that is None in eager (e.g. the GPT's loss without targets)
            assert a is None, f"{name}: {what} gives {a!r} where dynamo_lite eager gives None"
            continue
        a = a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)
        np.testing.assert_allclose(a, np.asarray(e), rtol=workload.rtol * 10, atol=workload.atol * 10,
                                   err_msg=f"{name}: {what} differs from dynamo_lite eager")


def variants_of(name: str, backend, peer, use_torch_compile: bool) -> tuple:
    """``(variants, compile_seconds)``: name -> zero-argument callable, checked against eager."""
    workload = WORKLOADS[name]
    model, inputs = workload.make(), workload.make_inputs()
    params, arrays = _params(model), [x.numpy() for x in inputs]
    expected = model(*inputs)
    dl.reset()
    compiled = dl.compile(model, backend=backend)
    start = time.perf_counter()
    _check(name, workload, expected, compiled(*inputs), "compiled")
    compile_seconds = {"compiled": time.perf_counter() - start}
    reference = REFERENCES[name]
    _check(name, workload, expected, reference(params, *arrays), "the NumPy version")
    variants = {
        "eager": lambda: model(*inputs),
        "compiled": lambda: compiled(*inputs),
        "numpy": lambda: reference(params, *arrays),
    }
    if peer is not None:
        import torch

        torch_fn = peer.TORCH_WORKLOADS[name]
        t_params, t_inputs = peer.to_torch(params, arrays)
        with torch.inference_mode():
            _check(name, workload, expected, torch_fn(t_params, *t_inputs), "torch")
        variants["torch"] = _inference(torch, lambda: torch_fn(t_params, *t_inputs))
        if use_torch_compile:
            def run(*xs):
                return torch_fn(t_params, *xs)

            torch_compiled = torch.compile(run)
            start = time.perf_counter()
            with torch.inference_mode():
                _check(name, workload, expected, torch_compiled(*t_inputs), "torch.compile")
            compile_seconds["torch.compile"] = time.perf_counter() - start
            variants["torch.compile"] = _inference(torch, lambda: torch_compiled(*t_inputs))
    return variants, compile_seconds


def _inference(torch, fn):
    def call():
        with torch.inference_mode():
            return fn()

    return call


def targets(results: dict) -> list:
    """``(description, measured, limit, passed)`` for each target of the numpy backend."""
    rows = []
    for name, r in results.items():
        t = r["median_ms"]
        if "numpy" in t:
            ratio = t["compiled"] / t["numpy"]
            rows.append((f"{name}: compiled / hand-written NumPy", ratio, "<= 1.25", ratio <= 1.25))
    chain = results.get("pointwise_chain")
    if chain:
        t = chain["median_ms"]
        speedup = t["numpy"] / t["compiled"]
        rows.append(("pointwise_chain: unfused NumPy / compiled", speedup, ">= 2", speedup >= 2))
        if "torch.compile" in t:
            ratio = t["compiled"] / t["torch.compile"]
            rows.append(("pointwise_chain: compiled / torch.compile", ratio, "<= 2", ratio <= 2))
    tiny = results.get("tiny_fn")
    if tiny:
        delta = (tiny["median_ms"]["compiled"] - tiny["median_ms"]["eager"]) * 1e3
        rows.append(("tiny_fn: compiled - eager (us)", delta, "<= 3", delta <= 3))
    return rows


def main(argv=None) -> int:
    # Inference timings, as torch peers run under inference_mode: with grad mode on, graphs whose
    # parameters require grad run op by op for autograd (docs/training.md, dl.compile and autograd).
    # A block, not a switch: a caller in the same process (a test) gets its grad mode back.
    with dl.no_grad():
        return _run(argv)


def _run(argv) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", default="", help="comma-separated workload names (default: all)")
    parser.add_argument("--rounds", type=int, default=15, help="interleaved timing rounds (default: 15)")
    parser.add_argument("--target-ms", type=float, default=25.0, help="length of one timing in ms (default: 25)")
    parser.add_argument("--backend", default="numpy", help="dynamo_lite backend for 'compiled' (default: numpy)")
    parser.add_argument("--json", default="benchmarks/results.json", help="where to write the results ('' for nowhere)")
    parser.add_argument("--no-torch", action="store_true", help="skip the PyTorch peer even if installed")
    parser.add_argument("--no-torch-compile", action="store_true", help="time PyTorch eager but not torch.compile")
    args = parser.parse_args(argv)

    names = args.workloads.split(",") if args.workloads else list(WORKLOADS)
    peer = torch_peer(not args.no_torch)
    info = machine()
    if peer is not None:
        info.update(peer.versions())
    print(f"{info['cpu']}, {info['cpus']} CPUs; Python {info['python']}, NumPy {info['numpy']}"
          + (f", torch {info['torch']} ({info['torch_threads']} threads)" if peer
             else ", torch skipped" if args.no_torch else ", torch not installed"))
    print(f"medians of {args.rounds} interleaved rounds; times in ms per call\n")
    columns = [c for c in ORDER if c in ("eager", "compiled", "numpy") or peer is not None]
    if args.no_torch_compile and "torch.compile" in columns:
        columns.remove("torch.compile")
    header = f"{'workload':26s}" + "".join(f"{c:>14s}" for c in columns) + f"{'c/eager':>9s}{'c/numpy':>9s}"
    header += f"{'c/t.comp':>9s}" if "torch.compile" in columns else ""
    print(header)
    print("-" * len(header))
    results = {}
    for name in names:
        variants, compile_seconds = variants_of(name, args.backend, peer, not args.no_torch_compile)
        timings = measure(variants, rounds=args.rounds, target_seconds=args.target_ms / 1e3)
        ms = {k: v.median * 1e3 for k, v in timings.items()}
        ratios = {"compiled/eager": ms["compiled"] / ms["eager"], "compiled/numpy": ms["compiled"] / ms["numpy"]}
        if "torch.compile" in ms:
            ratios["compiled/torch.compile"] = ms["compiled"] / ms["torch.compile"]
        if "torch" in ms:
            ratios["compiled/torch"] = ms["compiled"] / ms["torch"]
        results[name] = {
            "description": WORKLOADS[name].description, "median_ms": ms, "ratios": ratios,
            "spread": {k: round(v.spread, 3) for k, v in timings.items()},
            "calls_per_round": {k: v.number for k, v in timings.items()},
            "compile_s": compile_seconds,
        }
        row = f"{name:26s}" + "".join(f"{ms[c]:14.4f}" for c in columns)
        row += f"{ratios['compiled/eager']:9.2f}{ratios['compiled/numpy']:9.2f}"
        row += f"{ratios['compiled/torch.compile']:9.2f}" if "compiled/torch.compile" in ratios else ""
        print(row)
    dl.reset()
    print("\ntargets:")
    rows = targets(results)
    for description, measured, limit, passed in rows:
        print(f"  {'PASS' if passed else 'MISS'}  {description:46s} {measured:8.2f}  (target {limit})")
    if args.json:
        payload = {"command": "python -m benchmarks.run " + " ".join(argv if argv is not None else sys.argv[1:]),
                   "machine": info, "rounds": args.rounds, "backend": args.backend, "results": results,
                   "targets": [{"target": d, "measured": m, "limit": lim, "passed": p} for d, m, lim, p in rows]}
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump(payload, f, indent=2)
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
