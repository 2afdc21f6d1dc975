"""Dynamic shapes: per-call cost of a symbolic graph and compile time of a symbolic trace.

Run from the repository root:

    OPENBLAS_NUM_THREADS=1 python3 -m benchmarks.dynamic_shapes [--backend numpy] [--repeat 5]

Inference under ``dl.no_grad()`` (with grad mode on and parameters requiring grad, a
compiled graph runs op by op through autograd). For the zoo ``gpt`` and ``mlp``: (1) per-call time at one fixed size of the graph compiled
with ``dynamic=True`` versus ``dynamic=False``, timed interleaved (medians); (2) the
translation time of one frame (trace, guards, backend compile) with symbolic sizes
versus static ones, median over ``--repeat`` fresh compilations; (3) the sequence-length
sweep of the issue: compiles and total time with ``dynamic=None`` versus ``False``; (4) a
recurrent model (a GRU cell stepped by ``for t in range(x.size(1))``) over the lengths
``RECURRENT_LENGTHS``: compiles, total compile time and per-call time at one length,
``dynamic=None`` versus ``False``. Without a scan op the loop is unrolled, so its trip
count (the length) is specialized in both modes: one compile per length.
"""
from __future__ import annotations

import argparse
import statistics
import time
import types

import dynamo_lite as dl
from benchmarks.models import WORKLOADS
from benchmarks.timing import measure

SEQ_LENGTHS = [32, 31, 17, 8, 5, 3, 2, 24, 12, 9, 30, 29, 7]
RECURRENT_LENGTHS = [5, 9, 2, 17, 12, 7]
RECURRENT_BATCH, RECURRENT_INPUT, RECURRENT_HIDDEN = 8, 32, 64


def _compiled(name: str, dynamic, backend: str):
    workload = WORKLOADS[name]
    model, inputs = workload.make(), workload.make_inputs()
    return model, dl.compile(model, dynamic=dynamic, backend=backend), inputs


def per_call(name: str, backend: str) -> dict:
    """Median seconds per call of the static and the dynamic graph at the workload's size."""
    dl.reset()
    _, static, inputs = _compiled(name, False, backend)
    _, dynamic, _ = _compiled(name, True, backend)
    static(*inputs)
    dynamic(*inputs)
    medians = measure({"static": lambda: static(*inputs), "dynamic": lambda: dynamic(*inputs)}, rounds=15)
    return {k: v.median for k, v in medians.items()}


def translation_seconds(name: str, backend: str, repeat: int) -> dict:
    """Median translation time (``compile_time_s`` of the frame's entry) over fresh compiles,
    static (``dynamic=False``) and symbolic (``dynamic=True``) alternating."""
    samples: dict = {False: [], True: []}
    for _ in range(repeat):
        for dynamic in (False, True):
            dl.reset()
            model, compiled, inputs = _compiled(name, dynamic, backend)
            compiled(*inputs)
            forward = getattr(model, "forward", model)
            entry = dl.frames.api.default_hook.cache_for(forward).entries[0]
            samples[dynamic].append(entry.report.compile_time_s)
    return {dynamic: statistics.median(values) for dynamic, values in samples.items()}


def sweep(dynamic, backend: str) -> tuple:
    """(frames compiled, seconds) for the GPT over the issue's sequence lengths."""
    dl.reset()
    workload = WORKLOADS["gpt"]
    model, (idx,) = workload.make(), workload.make_inputs()
    compiled = dl.compile(model, dynamic=dynamic, backend=backend)
    start = time.perf_counter()
    for length in SEQ_LENGTHS:
        compiled(idx[:, :length].contiguous())
    return dl.stats().frames_compiled, time.perf_counter() - start


class SteppedGRU(dl.nn.Module):
    """A GRU cell stepped over time in Python, the last hidden state projected."""

    def __init__(self):
        super().__init__()
        self.cell = dl.nn.GRUCell(RECURRENT_INPUT, RECURRENT_HIDDEN)
        self.head = dl.nn.Linear(RECURRENT_HIDDEN, 4)

    def forward(self, x):
        h = dl.zeros(x.size(0), RECURRENT_HIDDEN)
        for t in range(x.size(1)):
            h = self.cell(x[:, t], h)
        return self.head(h)


def recurrent_sweep(backend: str) -> dict:
    """Per mode (None, False): compiles and seconds of the first calls over
    ``RECURRENT_LENGTHS`` for ``SteppedGRU``, then the median per-call seconds at the last
    length, both modes timed interleaved."""
    dl.reset()
    dl.manual_seed(0)
    inputs = {n: dl.randn(RECURRENT_BATCH, n, RECURRENT_INPUT) for n in RECURRENT_LENGTHS}
    runs, calls = {}, {}
    for mode in (None, False):
        model = SteppedGRU()
        # Each mode gets a forward code object of its own: entries are cached per code
        # object, so the two modes would otherwise share one cache (and its size limit).
        forward = SteppedGRU.forward
        code = forward.__code__.replace(co_name=f"forward_dynamic_{mode}")
        model.forward = types.MethodType(types.FunctionType(code, forward.__globals__), model)
        compiled = dl.compile(model, dynamic=mode, backend=backend)
        before = dl.stats().frames_compiled
        start = time.perf_counter()
        for n in RECURRENT_LENGTHS:
            compiled(inputs[n])
        runs[mode] = {"compiles": dl.stats().frames_compiled - before, "sweep_s": time.perf_counter() - start}
        calls[mode] = lambda compiled=compiled: compiled(inputs[RECURRENT_LENGTHS[-1]])
    for mode, timing in measure(calls, rounds=15).items():
        runs[mode]["call_s"] = timing.median
    return runs


def main(argv=None) -> None:
    with dl.no_grad():
        _report(argv)


def _report(argv) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="numpy")
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args(argv)
    print(f"backend {args.backend}")
    print(f"{'workload':10} {'static µs':>10} {'dynamic µs':>11} {'ratio':>6}   "
          f"{'static trace ms':>15} {'symbolic trace ms':>17} {'ratio':>6}")
    for name in ("mlp", "gpt"):
        calls = per_call(name, args.backend)
        trace = translation_seconds(name, args.backend, args.repeat)
        static_t, dynamic_t = trace[False], trace[True]
        print(f"{name:10} {calls['static'] * 1e6:10.1f} {calls['dynamic'] * 1e6:11.1f} "
              f"{calls['dynamic'] / calls['static']:6.2f}   {static_t * 1e3:15.1f} {dynamic_t * 1e3:17.1f} "
              f"{dynamic_t / static_t:6.2f}")
    for mode in (None, False):
        count, seconds = sweep(mode, args.backend)
        print(f"gpt sweep over {len(SEQ_LENGTHS)} lengths, dynamic={mode}: {count} compiles, {seconds:.2f} s")
    runs = recurrent_sweep(args.backend)
    for mode, run in runs.items():
        print(f"recurrent sweep over {len(RECURRENT_LENGTHS)} lengths, dynamic={mode}: {run['compiles']} compiles, "
              f"{run['sweep_s']:.2f} s; per call at length {RECURRENT_LENGTHS[-1]}: {run['call_s'] * 1e6:.0f} µs")
    print(f"recurrent ratios dynamic=None / False: sweep {runs[None]['sweep_s'] / runs[False]['sweep_s']:.2f}, "
          f"per call {runs[None]['call_s'] / runs[False]['call_s']:.2f}")


if __name__ == "__main__":
    main()
