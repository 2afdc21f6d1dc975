"""Fuzz the backends against eager: ``python3 -m tests.opfuzz --seeds 0:500 --backends numpy,native``.

Prints each finding (with the minimized program under ``--minimize``), then a summary: how
many programs ran, how long, how many compiled on each backend without a fallback, how
many native graphs got C kernels, and how often each op was drawn.
"""
from __future__ import annotations

import argparse
import collections
import sys
import time
import warnings

from .generator import generate
from .minimize import minimize
from .runner import backend_compilers, compare_runs, run


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m tests.opfuzz", description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", default="0:100", help="start:stop range of program seeds")
    parser.add_argument("--backends", default="numpy,native")
    parser.add_argument("--max-ops", type=int, default=15, help="statements per program: 3 to this")
    parser.add_argument("--minimize", action="store_true", help="shrink each failing program and print it")
    parser.add_argument("--coverage", action="store_true", help="print how often each op was drawn")
    args = parser.parse_args(argv)
    start, stop = (int(x) for x in args.seeds.split(":"))
    compilers = backend_compilers(args.backends.split(","))
    warnings.simplefilter("ignore")
    started, failing = time.perf_counter(), 0
    clean = collections.Counter()
    ops = collections.Counter()
    for seed in range(start, stop):
        program = generate(seed, max_ops=args.max_ops)
        ops.update(op.split("!")[0] for op in program.ops())
        expected = run(program)
        findings = []
        for name, compiler in compilers.items():
            actual = run(program, compiler)
            found = compare_runs(program, expected, actual, name)
            clean[name] += not any(f.kind in ("fallback", "no_graph") for f in found)
            findings += found
        if findings:
            failing += 1
            print(f"seed {seed}:", *(f"  {f}" for f in findings), sep="\n", flush=True)
            if args.minimize:
                first = findings[0]
                small = minimize(program, {first.backend: compilers[first.backend]}, (first.backend, first.kind))
                print(small.source(), flush=True)
    elapsed = time.perf_counter() - started
    count = stop - start
    print(f"\n{count} programs in {elapsed:.0f} s; {failing} with findings")
    for name, compiler in compilers.items():
        extra = (f"; {compiler.graphs_with_c_kernels}/{compiler.graphs} graphs with C kernels"
                 if hasattr(compiler, "graphs") else "")
        print(f"  {name}: {clean[name]}/{count} compiled without fallback{extra}")
    if args.coverage:
        print("op draws:", ", ".join(f"{name} {n}" for name, n in sorted(ops.items(), key=lambda x: -x[1])))
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
