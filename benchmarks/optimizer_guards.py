"""What the guards of ``dl.compile(train_step)`` cost per step, and how they grow with the parameters.

Run from the repository root:

    OPENBLAS_NUM_THREADS=1 python3 -m benchmarks.optimizer_guards [--workloads mlp,gpt]

The train step is ``benchmarks/training_step.py``'s (forward, ``mean(out ** 2)``,
``backward()``, ``AdamW.step()``, ``zero_grad()``): two compiled frames (the forward, then the optimizer after the
``backward()`` break). For each workload:

- ``params``: the model's parameters;
- ``fwd checks`` / ``opt checks``: terms of the per-call guard function of each frame
  (loads and checks; a module or optimizer covered by a version tag counts one);
- ``guard us/step``: time spent in the guard functions of both frames per step, measured
  by wrapping each cache entry's guard during steady-state steps (median of rounds).

NOTE: [optimizer edit count] (optim/tracked.py) made the optimizer's structure, state and
hyper-parameters one comparison; what stays per parameter is its gradient.
"""
from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time

import dynamo_lite as dl
from dynamo_lite.frames.runtime.cache import CodeCache

from .models import WORKLOADS
from .training_step import dl_train_step


def _per_call_checks(guard_code: str) -> int:
    return guard_code.split("def __dl_full")[0].count(" and\n") + 1


class GuardTimer:
    """Wraps the guard of every cache entry (the frame's and its resume functions') and sums their time."""

    def __init__(self):
        self.seconds = 0.0
        self.calls = 0

    def wrap_all(self) -> None:
        for cache in (o for o in gc.get_objects() if type(o) is CodeCache):
            for entry in cache.entries:
                entry.guard = self._timed(entry.guard)

    def _timed(self, guard):
        def timed(values):
            start = time.perf_counter()
            try:
                return guard(values)
            finally:
                self.seconds += time.perf_counter() - start
                self.calls += 1
        return timed


def measure_workload(name: str, rounds: int, steps: int) -> dict:
    workload = WORKLOADS[name]
    dl.reset()
    model, inputs = workload.make(), workload.make_inputs()
    step = dl_train_step(model)
    step(*inputs)  # the optimizer state exists: the steady-state translation
    out = dl.explain(step)(*inputs)
    fwd, opt = (_per_call_checks(f.report.guard_code) for f in out.frames[:2])
    dl.reset()
    compiled = dl.compile(step)
    for _ in range(3):
        compiled(*inputs)
    timer = GuardTimer()
    timer.wrap_all()
    samples = []
    for _ in range(rounds):
        timer.seconds = 0.0
        for _ in range(steps):
            compiled(*inputs)
        samples.append(timer.seconds / steps * 1e6)
    dl.reset()
    return {"params": len(list(model.parameters())), "fwd": fwd, "opt": opt, "guard_us": statistics.median(samples),
            "guards_per_step": timer.calls / (rounds * steps)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", default="mlp,gpt")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args(argv)
    print(f"Python {sys.version.split()[0]}; AdamW train step, medians of {args.rounds} rounds of {args.steps} steps")
    header = f"{'workload':>10}{'params':>8}{'fwd checks':>12}{'opt checks':>12}{'guard us/step':>15}{'guards/step':>13}"
    print(header)
    print("-" * len(header))
    for name in args.workloads.split(","):
        r = measure_workload(name, args.rounds, args.steps)
        print(f"{name:>10}{r['params']:8d}{r['fwd']:12d}{r['opt']:12d}{r['guard_us']:15.1f}{r['guards_per_step']:13.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
