"""Cost of the frame hook per call: plain call vs instrumented-but-inactive vs compiled dispatch.

Run from the repository root:

    python3 benchmarks/dispatch_overhead.py [--number 1000000] [--repeat 7]

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
"""
from __future__ import annotations

import argparse
import os
import sys
import timeit

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from dynamo_lite.frames.api import compiled_function  # noqa: E402
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


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=1_000_000, help="calls per timing")
    parser.add_argument("--repeat", type=int, default=7, help="timings per row (the minimum is kept)")
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


if __name__ == "__main__":
    main()
