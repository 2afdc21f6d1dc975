"""Cost of the frame hook per call: plain call vs instrumented-but-inactive vs compiled dispatch.

Run from the repository root:

    OPENBLAS_NUM_THREADS=1 python3 -m benchmarks.dispatch_overhead [--number 1000000] [--repeat 7]
                                                                   [--workloads tiny_fn,gpt]

Every row calls a function ``f(x)`` whose body is ``return x`` on a 10-element tensor,
so the numbers are the call machinery alone. Rows:

- plain: the uninstrumented function.
- instrumented, inactive: the function with the dispatch prologue, no compile active
  (what every instrumented function costs outside ``dl.compile``).
- dispatch, trivial entry: inside one active config, a cache hit whose guard checks the
  argument's type and whose entry returns it (prologue + dispatcher + guard + entry).
- dl.compile wrapper, trivial entry: the same through the wrapper ``dl.compile``
  returns (activates the config around each call).
- dl.compile wrapper, eager-fallback entry: the cached decision "run the original body".

The times are the minimum over repeats of ns per call, with the empty loop subtracted.

Then, for real zoo workloads compiled with the numpy backend and run under
``dl.no_grad()`` (inference: with grad mode on, graphs over parameters that require grad
run op by op so autograd can record them), the pieces of one cached call (medians of interleaved rounds, ``benchmarks/timing.py``), each timed alone:

The graph is replaced by a stub returning outputs computed once, so each piece is a
difference of small numbers; the graph itself is timed alone.

- wrapper: what ``dl.compile``'s wrapper adds (config activation; for a module,
  ``Module.__call__`` and the bound ``forward``): the compiled call minus the dispatched one;
- prologue + dispatch: the argument tuple, the dispatcher's cache loop and config
  comparison: the dispatched call minus the guard and the entry;
- guard: the entry's guard function on the call's values;
- entry - graph: the transformed code around the graph (loading the graph's inputs,
  rebuilding the return value);
- outside the graph: the compiled call minus the stubbed graph (all of the above);
- graph: the backend callable alone; eager call: the model called directly.
"""
from __future__ import annotations

import argparse
import os
import sys
import timeit

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import dynamo_lite as dl  # noqa: E402
from benchmarks.models import WORKLOADS  # noqa: E402
from benchmarks.timing import measure  # noqa: E402
from dynamo_lite.frames.api import compiled_function, default_hook  # noqa: E402
from dynamo_lite.frames.runtime.cache import CacheEntry, fallback_entry  # noqa: E402
from dynamo_lite.frames.runtime.context import CompileConfig  # noqa: E402
from dynamo_lite.frames.runtime.hook import FrameHook  # noqa: E402
from dynamo_lite.tensor.tensor import Tensor, from_array  # noqa: E402


def _make_function():
    def f(x):
        return x
    return f


def _trivial_entry(request):
    def guard(values):
        return type(values[0]) is Tensor

    def run(x):
        return x

    return CacheEntry(guard, run, lambda values: None, request.config)


def _eager_entry(request):
    return fallback_entry(request.config, "benchmark")


def measure_rows(rows, namespace, number: int, repeat: int) -> dict:
    """Minimum ns per execution of each row's statement.

    Rows are interleaved within each round, so a burst of load on the machine hits every
    row alike instead of one.
    """
    best = {name: float("inf") for name, _, _ in rows}
    for _ in range(repeat):
        for name, stmt, config_hook in rows:
            timer = timeit.Timer(stmt, globals=namespace)
            if config_hook is None:
                elapsed = timer.timeit(number)
            else:
                hook, config = config_hook
                with hook.activate(config):
                    elapsed = timer.timeit(number)
            best[name] = min(best[name], elapsed / number * 1e9)
    return best


class _Capture:
    """A numpy backend whose callable returns outputs computed once (the graph stubbed out).

    ``graph`` keeps the real compiled graph and ``inputs`` its example inputs, so the
    graph is timed on its own and everything else is timed without the graph's noise.
    """

    def __init__(self):
        self.backend = dl.backends.lookup_backend("numpy")
        self.graph = self.inputs = self.stub = None

    def __call__(self, gm, example_inputs):
        self.graph, self.inputs = self.backend(gm, example_inputs), list(example_inputs)
        outputs = self.graph(*self.inputs)

        def stub(*args):
            return outputs

        self.stub = stub
        return stub


def call_pieces(name: str, rounds: int = 25) -> dict:
    """µs per piece of one cached compiled call of zoo workload ``name`` (see the module doc)."""
    dl.reset()
    workload = WORKLOADS[name]
    model, inputs = workload.make(), workload.make_inputs()
    capture = _Capture()
    compiled = dl.compile(model, backend=capture, fullgraph=True)
    compiled(*inputs)
    target = model.forward if isinstance(model, dl.nn.Module) else model
    cache = default_hook.cache_for(target)
    (entry,) = cache.entries
    config = entry.config
    n_args = len(cache.names) - cache.n_free
    defaults = getattr(target, "__defaults__", None) or ()
    bound = ((model,) if isinstance(model, dl.nn.Module) else ()) + tuple(inputs)
    values = bound + tuple(defaults[len(defaults) - (n_args - len(bound)):]) if n_args > len(bound) else bound
    assert entry.guard(values), f"{name}: the guard must accept the call it was compiled for"
    graph, graph_inputs, stub = capture.graph, capture.inputs, capture.stub

    def dispatched():
        with default_hook.activate(config):
            return model(*inputs)

    def activation_only():
        with default_hook.activate(config):
            pass

    variants = {
        "compiled call": lambda: compiled(*inputs),
        "dispatched": dispatched,
        "activation": activation_only,
        "guard": lambda: entry.guard(values),
        "entry": lambda: entry.run(*values),
        "stub": lambda: stub(*graph_inputs),
    }
    us = {k: t.median * 1e6 for k, t in measure(variants, rounds=rounds, target_seconds=0.01).items()}
    timings = measure({"graph": lambda: graph(*graph_inputs), "eager call": lambda: model(*inputs)},
                      rounds=max(5, rounds // 3), target_seconds=0.05)
    us.update({k: t.median * 1e6 for k, t in timings.items()})
    dl.reset()
    dispatched_alone = us["dispatched"] - us["activation"]
    outside = us["compiled call"] - us["stub"]
    return {
        "wrapper": us["compiled call"] - dispatched_alone,
        "prologue + dispatch": dispatched_alone - us["guard"] - us["entry"],
        "guard": us["guard"],
        "entry - graph": us["entry"] - us["stub"],
        "outside the graph": outside,
        "graph": us["graph"],
        "eager call": us["eager call"],
        "outside share": 100 * outside / (outside + us["graph"]),
    }


def print_call_pieces(names) -> None:
    print("\npieces of one cached compiled call (numpy backend; graph stubbed out, timed alone), median us:")
    with dl.no_grad():
        rows = {name: call_pieces(name) for name in names}
    columns = list(next(iter(rows.values())))
    print(f"{'':22s}" + "".join(f"{name:>16s}" for name in rows))
    for column in columns:
        print(f"{column:22s}" + "".join(f"{rows[name][column]:16.2f}" for name in rows))
    print("(outside share: % of graph + outside spent outside the graph; target <= 10%)")


def main(argv=None) -> None:
    # Inference timings, as torch peers run under inference_mode: with grad mode on, graphs whose
    # parameters require grad run op by op for autograd (docs/training.md, dl.compile and autograd).
    dl.set_grad_enabled(False)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=1_000_000, help="calls per timing")
    parser.add_argument("--repeat", type=int, default=7, help="timings per row (the minimum is kept)")
    parser.add_argument("--workloads", default="tiny_fn,gpt", help="zoo workloads whose call is split in pieces")
    args = parser.parse_args(argv)

    x = from_array(np.arange(10, dtype=np.float32))
    config = CompileConfig(backend=lambda gm, example_inputs: gm.forward, backend_name="benchmark")

    plain = _make_function()

    hook = FrameHook(translate=_trivial_entry)
    inactive = _make_function()
    hook.instrument(inactive)
    dispatched = _make_function()
    hook.instrument(dispatched)
    target = _make_function()
    compiled = compiled_function(target, target, config, hook)  # what dl.compile(target) returns

    eager_hook = FrameHook(translate=_eager_entry)
    eager_target = _make_function()
    fallback = compiled_function(eager_target, eager_target, config, eager_hook)

    for fn in (compiled, fallback):
        assert fn(x) is x  # warm the caches: every timed call below is a hit
    with hook.activate(config):
        assert dispatched(x) is x

    ns = {"x": x, "plain": plain, "inactive": inactive, "dispatched": dispatched,
          "compiled": compiled, "fallback": fallback}
    rows = [
        ("empty loop", "pass", None),
        ("plain call", "plain(x)", None),
        ("instrumented, inactive", "inactive(x)", None),
        ("dispatch, trivial entry", "dispatched(x)", (hook, config)),
        ("dl.compile wrapper, trivial entry", "compiled(x)", None),
        ("dl.compile wrapper, eager fallback", "fallback(x)", None),
    ]
    best = measure_rows(rows, ns, args.number, args.repeat)
    loop = best.pop("empty loop")
    print(f"Python {sys.version.split()[0]}; f(x) = x on a 10-element tensor; ns/call (empty loop subtracted)")
    base = best["plain call"] - loop
    for name, value in best.items():
        value -= loop
        print(f"  {name:38s} {value:8.1f} ns   (+{value - base:.1f} ns over a plain call)")
    hook.reset()
    eager_hook.reset()
    if args.workloads:
        print_call_pieces(args.workloads.split(","))


if __name__ == "__main__":
    main()
