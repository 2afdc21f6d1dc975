"""Real-model shapes side by side: dl eager vs dl.compile (backend auto), torch eager and torch.compile if importable.

Run from the repository root:

    python3 -m benchmarks.real_models [--threads 1,2] [--rounds 5] [--only resnet18,unet] [--tiers] [--clock cpu]

The models are ``benchmarks/real_model_zoo.py``'s (ResNet-18, U-Net, MobileNetV2,
ShuffleNetV2, a style-transfer net, minGPT, a makemore MLP, a TCN, CLIP's ViT and ResNet
towers), inference under ``no_grad`` in eval mode. For each thread count (``dl.set_num_threads``:
native kernels and NumPy's BLAS; ``torch.set_num_threads`` for the peer) every model is
compiled afresh and called until ``auto`` has built its upper tier and chosen, per graph,
what runs (NOTE: [tier choice by measurement]); then each variant is timed in interleaved
rounds (``benchmarks/timing.py``), medians in ms. Results are checked against dl eager
first. The last columns are the ratios the targets are about: auto / dl eager (<= 1.0) and,
with torch, auto / torch.compile; and what auto chose for the graphs. ``--tiers`` adds each
tier compiled alone (``backend="numpy"``, ``backend="native"``), so auto's choice can be checked
against both; ``--clock cpu`` times process CPU time instead of wall time (steadier on a machine
busier than its cores; at more than one thread it adds up every thread's time).
"""
from __future__ import annotations

import argparse
import collections
import math
import os
import sys
import time

import numpy as np

import dynamo_lite as dl
from dynamo_lite.backends.registry import AUTO
from dynamo_lite.backends.native.toolchain import cpu_model
from dynamo_lite.backends.tiered import TieredFunction

from .real_model_zoo import MODELS, copy_weights
from .timing import measure

TIERS = ("numpy", "native")  # the tiers ``--tiers`` times alone
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


class TrackingAuto:
    """``backend="auto"``, keeping every function it returns (to wait until each graph has chosen)."""

    symbolic_shapes = True

    def __init__(self):
        self.functions = []

    def __call__(self, gm, example_inputs):
        function = AUTO(gm, example_inputs)
        self.functions.append(function)
        return function

    def settled(self) -> bool:
        return all(f.decided for f in self.functions if isinstance(f, TieredFunction))

    def choices(self) -> str:
        counts = collections.Counter(getattr(f, "backend_name", "numpy") for f in self.functions)
        return " ".join(f"{name}:{n}" for name, n in sorted(counts.items()))


def warm_until_chosen(call, tracker: TrackingAuto, seconds: float = 300.0) -> float:
    """Call until every graph's tiers are built and measured; the seconds it took."""
    start = time.perf_counter()
    call()
    while time.perf_counter() - start < seconds:
        for f in tracker.functions:
            if isinstance(f, TieredFunction):
                f.wait(timeout=0.05)
        call()
        if tracker.settled():
            break
    return time.perf_counter() - start


def _first(output):
    return output[0] if isinstance(output, (tuple, list)) else output


def run_model(name: str, threads: int, rounds: int, torch, tiers: bool = False, clock=time.perf_counter) -> dict:
    dl.reset()
    dl.manual_seed(0)
    model, inputs = MODELS[name](dl)
    model.eval()
    tracker = TrackingAuto()
    compiled = dl.compile(model, backend=tracker)
    variants = {}
    with dl.no_grad():
        expected = _first(model(*inputs)).numpy()
        warm = warm_until_chosen(lambda: compiled(*inputs), tracker)
        actual = _first(compiled(*inputs)).numpy()
        scale = max(1.0, float(np.abs(expected).max()))
        error = float(np.abs(actual - expected).max()) / scale
        assert error < 1e-3, f"{name}: auto differs from eager by {error:.2e}"
        variants["dl eager"] = lambda: model(*inputs)
        variants["dl auto"] = lambda: compiled(*inputs)
        for tier in TIERS if tiers else ():
            alone = dl.compile(model, backend=tier)
            alone(*inputs)
            variants[f"dl {tier}"] = lambda alone=alone: alone(*inputs)
        if torch is not None:
            torch.manual_seed(0)
            twin, _ = MODELS[name](torch)
            copy_weights(model, twin, torch)
            twin.eval()
            t_inputs = [torch.from_numpy(np.array(x.numpy())) for x in inputs]
            t_compiled = torch.compile(twin)
            with torch.no_grad():
                t_compiled(*t_inputs)
            variants["torch eager"] = lambda: _no_grad(torch, twin, t_inputs)
            variants["torch.compile"] = lambda: _no_grad(torch, t_compiled, t_inputs)
        timings = measure(variants, rounds=rounds, target_seconds=0.0, clock=clock)
    row = {k: v.median * 1e3 for k, v in timings.items()}
    row.update(warm=warm, choices=tracker.choices(), graphs=len(tracker.functions))
    return row


def _no_grad(torch, fn, inputs):
    with torch.no_grad():
        return fn(*inputs)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", default="1,2", help="thread counts (default 1,2)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved timing rounds (default 5)")
    parser.add_argument("--only", default=",".join(MODELS), help="comma-separated model names")
    parser.add_argument("--no-torch", action="store_true", help="leave torch out even if importable")
    parser.add_argument("--tiers", action="store_true", help="also time each tier compiled alone (numpy, native)")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="wall", help="wall time (default) or process CPU time")
    args = parser.parse_args(argv)
    torch = None
    if not args.no_torch:
        try:
            import torch
        except ImportError:
            torch = None
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"CPU {cpu_model()} ({os.cpu_count()} CPUs, load {load:.1f}), Python {sys.version.split()[0]}, "
          f"torch {torch.__version__ if torch else 'not importable'}; medians of {args.rounds} interleaved rounds, ms "
          f"of {args.clock} time")
    names = args.only.split(",")
    for threads in (int(t) for t in args.threads.split(",")):
        dl.set_num_threads(threads)
        if torch is not None:
            torch.set_num_threads(threads)
        print(f"\n{threads} thread{'s' if threads > 1 else ''}")
        columns = ["dl eager", "dl auto"] + ([f"dl {tier}" for tier in TIERS] if args.tiers else []) \
            + (["torch eager", "torch.compile"] if torch else [])
        print(f"{'model':15s}" + "".join(f"{c:>14s}" for c in columns) + f"{'auto/eager':>12s}"
              + (f"{'auto/t.compile':>16s}" if torch else "") + "  graphs on (warm-up s)")
        ratios, peer = [], []
        for name in names:
            row = run_model(name, threads, args.rounds, torch, args.tiers, CLOCKS[args.clock])
            ratio = row["dl auto"] / row["dl eager"]
            ratios.append(ratio)
            line = f"{name:15s}" + "".join(f"{row[c]:14.2f}" for c in columns) + f"{ratio:12.2f}"
            if torch:
                peer.append(row["dl auto"] / row["torch.compile"])
                line += f"{peer[-1]:16.2f}"
            print(line + f"  {row['choices']} ({row['warm']:.0f})", flush=True)
        geomean = math.exp(sum(map(math.log, ratios)) / len(ratios))
        summary = f"auto/eager: geomean {geomean:.2f}, worst {max(ratios):.2f}"
        if torch:
            summary += f"; auto/torch.compile: geomean {math.exp(sum(map(math.log, peer)) / len(peer)):.2f}"
        print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
