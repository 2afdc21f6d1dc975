"""Compile latency per zoo workload and per-call dispatch overhead of a compiled function.

Run from the repository root:

    python3 -m benchmarks.compile_latency [--backend eager] [--repeat 5]

For each workload: the first compiled call (translation, guards, backend compile, one
run) minus a steady-state compiled call, as the median over ``--repeat`` fresh
compilations. Then, for ``tiny_fn`` (``x + 1`` on 10 elements): a compiled call versus
calling its compiled graph directly, i.e. what guard check + dispatch cost per call.
"""
from __future__ import annotations

import argparse
import statistics
import time
import timeit

import dynamo_lite as dl
from benchmarks.models import WORKLOADS


def first_call_ms(workload, backend: str, repeat: int) -> tuple:
    """(median compile ms, graphs) over ``repeat`` fresh compilations."""
    samples, graphs = [], 0
    for _ in range(repeat):
        dl.reset()
        model, inputs = workload.make(), workload.make_inputs()
        compiled = dl.compile(model, backend=backend)
        start = time.perf_counter()
        compiled(*inputs)
        first = time.perf_counter() - start
        start = time.perf_counter()
        compiled(*inputs)
        steady = time.perf_counter() - start
        samples.append((first - steady) * 1000)
        graphs = dl.stats().graph_count
    return statistics.median(samples), graphs


def dispatch_overhead_us(backend: str) -> tuple:
    """(compiled call µs, direct graph call µs) for tiny_fn."""
    dl.reset()
    workload = WORKLOADS["tiny_fn"]
    fn, (x,) = workload.make(), workload.make_inputs()
    captured = {}

    def capture(gm, example_inputs):
        compiled_graph = dl.backends.lookup_backend(backend)(gm, example_inputs)
        captured["graph"] = compiled_graph
        return compiled_graph

    compiled = dl.compile(fn, backend=capture)
    compiled(x)
    graph = captured["graph"]
    number = 20000
    compiled_us = min(timeit.repeat(lambda: compiled(x), number=number, repeat=7)) / number * 1e6
    direct_us = min(timeit.repeat(lambda: graph(x), number=number, repeat=7)) / number * 1e6
    return compiled_us, direct_us


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="eager")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    print(f"{'workload':<26}{'graphs':>7}{'compile ms':>12}")
    for name, workload in WORKLOADS.items():
        ms, graphs = first_call_ms(workload, args.backend, args.repeat)
        print(f"{name:<26}{graphs:>7}{ms:>12.2f}")
    compiled_us, direct_us = dispatch_overhead_us(args.backend)
    print(f"\ntiny_fn per call: compiled {compiled_us:.2f} µs, graph alone {direct_us:.2f} µs, "
          f"guard check + dispatch {compiled_us - direct_us:.2f} µs")


if __name__ == "__main__":
    main()
