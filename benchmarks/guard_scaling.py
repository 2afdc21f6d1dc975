"""How the per-call cost of a compiled model grows with its size: guards and dispatch vs N blocks.

Run from the repository root (single-threaded BLAS keeps the graph time steady):

    OPENBLAS_NUM_THREADS=1 python3 -m benchmarks.guard_scaling [--sizes 1,8,32,128] [--backend numpy]
        [--grad] [--clock cpu]

The model is a stack of N residual blocks ``x + relu(linear(x))`` (width 32, batch 4)
held in a ``ModuleList`` and run by a Python loop in ``forward``. For each N, timed in
interleaved rounds (medians, ``benchmarks/timing.py``):

- ``compiled``: a call of ``dl.compile(model)`` (guard check, dispatch, graph, outputs);
- ``graph``: the backend callable of that one graph, called directly with its inputs;
- ``overhead``: their difference, what the call costs outside the graph;
- ``stub overhead``: the same difference with a backend whose callable returns
  precomputed outputs, so the overhead is measured without the graph's noise;
- ``__getattr__/call``: ``Module.__getattr__`` calls made by one cached compiled call.

Everything runs under ``dl.no_grad()``, as inference does, unless ``--grad``: then each call
is a training forward (the compiled forward graph of the joint graph, its saved tensors,
one backward node with an edge per parameter), and ``graph`` is the compiled forward graph.

On a loaded machine, ``--clock cpu`` times this process's CPU time instead of wall time:
the difference of two medians of a long graph (``overhead`` at large N) is then not
swamped by time spent waiting for a core.

Targets: overhead at N=128 <= 40 us and <= 3x the overhead at N=1; zero
``Module.__getattr__`` calls on a cached call; with ``--grad``, overhead at N=384 (768
parameters) <= 200 us.
"""
from __future__ import annotations

import argparse
import sys
import time

import dynamo_lite as dl
from dynamo_lite import nn

from .timing import measure

WIDTH, BATCH = 32, 4
GRAD_TARGET_BLOCKS = 384
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


class ResidualBlock(nn.Module):
    """``x + relu(linear(x))``."""

    def __init__(self, width: int):
        super().__init__()
        self.linear = nn.Linear(width, width)

    def forward(self, x):
        return x + self.linear(x).relu()


class ResidualStack(nn.Module):
    """N residual blocks in a ModuleList, applied in order."""

    def __init__(self, blocks: int, width: int = WIDTH):
        super().__init__()
        self.blocks = nn.ModuleList([ResidualBlock(width) for _ in range(blocks)])

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


class CapturingBackend:
    """Wraps a backend and keeps the callable it returns and the inputs it was given.

    With ``stub=True`` the callable returned to dynamo_lite skips the graph and returns
    outputs computed once, isolating what the call costs outside the graph.
    """

    def __init__(self, backend: str, stub: bool = False):
        self.backend, self.stub = dl.backends.lookup_backend(backend), stub
        self.graph = self.inputs = None

    def __call__(self, gm, example_inputs):
        compiled = self.backend(gm, example_inputs)
        first = self.graph is None  # a training graph's forward comes first, then its backward
        if first:
            self.graph, self.inputs = compiled, list(example_inputs)
        if not self.stub:
            return compiled
        outputs = compiled(*example_inputs)

        def precomputed(*args):
            return outputs

        if first:
            self.graph = precomputed
        return precomputed


def getattr_calls_per_call(fn, calls: int = 20) -> float:
    """``Module.__getattr__`` calls per call of ``fn`` (counted by wrapping the method)."""
    original = nn.Module.__getattr__
    count = 0

    def counting(self, name):
        nonlocal count
        count += 1
        return original(self, name)

    nn.Module.__getattr__ = counting
    try:
        for _ in range(calls):
            fn()
    finally:
        nn.Module.__getattr__ = original
    return count / calls


def measure_size(blocks: int, backend: str, rounds: int, target_ms: float, clock=time.perf_counter) -> dict:
    """Timings (µs) and ``__getattr__`` count of one model size."""
    dl.manual_seed(0)
    model, x = ResidualStack(blocks), dl.randn(BATCH, WIDTH)
    row = {}
    variants = {}
    # One reset for both variants: a reset between them would make the first one compile
    # again on its next call, and ``graph`` would no longer be what ``compiled`` runs.
    dl.reset()
    for stub in (False, True):
        graphs = dl.stats().graph_count
        capture = CapturingBackend(backend, stub)
        compiled = dl.compile(model, backend=capture, fullgraph=True)
        compiled(x)
        assert dl.stats().graph_count == graphs + 1, "the stack must compile to one graph"
        graph, inputs = capture.graph, capture.inputs
        suffix = " stub" if stub else ""
        variants["compiled" + suffix] = lambda compiled=compiled: compiled(x)
        variants["graph" + suffix] = lambda graph=graph, inputs=inputs: graph(*inputs)
        if not stub:
            row["getattr_per_call"] = getattr_calls_per_call(lambda: compiled(x))
    graphs = dl.stats().graph_count
    us = {}
    # Each pair timed on its own: a long call right after a round of microsecond stub calls
    # runs on cold caches, and that penalty would land on whichever variant comes first.
    for pair in (("compiled", "graph"), ("compiled stub", "graph stub")):
        timings = measure({name: variants[name] for name in pair}, rounds=rounds,
                          target_seconds=target_ms / 1e3, clock=clock)
        us.update((name, t.median * 1e6) for name, t in timings.items())
    assert dl.stats().graph_count == graphs, "a timed call compiled again"
    row.update(compiled=us["compiled"], graph=us["graph"], overhead=us["compiled"] - us["graph"],
               stub_overhead=us["compiled stub"] - us["graph stub"])
    dl.reset()
    return row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,8,32,128", help="numbers of blocks (default: 1,8,32,128)")
    parser.add_argument("--backend", default="numpy", help="dynamo_lite backend (default: numpy)")
    parser.add_argument("--rounds", type=int, default=15, help="interleaved timing rounds (default: 15)")
    parser.add_argument("--target-ms", type=float, default=20.0, help="length of one timing in ms")
    parser.add_argument("--grad", action="store_true", help="training forwards: grad mode on, parameters require grad")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="wall",
                        help="wall time (default), or cpu: this process's CPU time, steadier on a loaded machine")
    args = parser.parse_args(argv)
    # Inference timings by default, as torch peers run under inference_mode.
    dl.set_grad_enabled(args.grad)
    sizes = [int(n) for n in args.sizes.split(",")]
    print(f"Python {sys.version.split()[0]}, backend {args.backend}, grad {'on' if args.grad else 'off'}, "
          f"{args.clock} clock; residual blocks width {WIDTH}, "
          f"batch {BATCH}; medians of {args.rounds} interleaved rounds, us per call")
    header = (f"{'N':>5}{'params':>8}{'compiled':>11}{'graph':>10}{'overhead':>10}{'stub overhead':>15}"
              f"{'__getattr__/call':>18}")
    print(header)
    print("-" * len(header))
    rows = {}
    for n in sizes:
        with dl.set_grad_enabled(args.grad):
            rows[n] = r = measure_size(n, args.backend, args.rounds, args.target_ms, CLOCKS[args.clock])
        print(f"{n:5d}{2 * n:8d}{r['compiled']:11.1f}{r['graph']:10.1f}{r['overhead']:10.1f}"
              f"{r['stub_overhead']:15.1f}{r['getattr_per_call']:18.0f}")
    first, last = rows[sizes[0]], rows[sizes[-1]]
    ratio = last["stub_overhead"] / first["stub_overhead"]
    print(f"\nstub overhead N={sizes[-1]}: {last['stub_overhead']:.1f} us (target <= 40); "
          f"{ratio:.1f}x N={sizes[0]} (target <= 3x); "
          f"__getattr__ calls per cached call: {max(r['getattr_per_call'] for r in rows.values()):.0f} (target 0)")
    if args.grad and GRAD_TARGET_BLOCKS in rows:
        row = rows[GRAD_TARGET_BLOCKS]
        print(f"grad overhead N={GRAD_TARGET_BLOCKS} ({2 * GRAD_TARGET_BLOCKS} parameters): {row['overhead']:.1f} us, "
              f"stub {row['stub_overhead']:.1f} us (target <= 200)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
