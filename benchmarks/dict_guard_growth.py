"""Guard cost of a model that reads one entry of big dicts: does it grow with the dicts?

Run from the repository root:

    OPENBLAS_NUM_THREADS=1 python3 -m benchmarks.dict_guard_growth [--sizes 50,500]

The model holds N submodules in a ``ModuleDict``, the same N in a plain dict (a lookup
table, not registered), and a config dict of N floats; ``forward`` uses one entry of
each (``self.blocks["b0"]``, ``self.table["b1"]``, ``self.cfg["scale"]``). For each N it
prints the number of guards of the compiled entry and the time of one call of its guard
function (medians of interleaved rounds, ``benchmarks/timing.py``). A dict read key by
key (NOTE: [dicts read key by key]) is guarded on the keys read, so neither should grow.
"""
from __future__ import annotations

import argparse
import sys

import dynamo_lite as dl
from dynamo_lite import nn
from dynamo_lite.frames.api import default_hook

from .timing import measure

WIDTH = 8


class LookupModel(nn.Module):
    """Reads one submodule of a ModuleDict, one of a plain dict, one float of a config dict."""

    def __init__(self, n: int):
        super().__init__()
        self.blocks = nn.ModuleDict({f"b{i}": nn.Linear(WIDTH, WIDTH) for i in range(n)})
        self.table = {f"b{i}": block for i, block in enumerate(self.blocks.values())}
        self.cfg = {f"key{i}": float(i) for i in range(n)}
        self.cfg["scale"] = 0.5

    def forward(self, x):
        return self.blocks["b0"](x) + self.table["b1"](x) * self.cfg["scale"]


def measure_size(n: int, rounds: int, target_ms: float) -> dict:
    dl.reset()
    model, x = LookupModel(n), dl.randn(2, WIDTH)
    compiled = dl.compile(model, backend="eager")
    with dl.no_grad():
        compiled(x)
        entry = default_hook.cache_for(LookupModel.forward).entries[0]
        assert entry.run is not None, entry.report.fallback_reason
        values = (model, x)
        assert entry.guard(values)
        timings = measure({"guard": lambda: entry.guard(values)}, rounds=rounds, target_seconds=target_ms / 1e3)
    return {"guards": len(entry.report.guards.splitlines()), "guard_us": timings["guard"].median * 1e6}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="50,500", help="entries per dict (default: 50,500)")
    parser.add_argument("--rounds", type=int, default=15, help="interleaved timing rounds (default: 15)")
    parser.add_argument("--target-ms", type=float, default=20.0, help="length of one timing in ms")
    args = parser.parse_args(argv)
    print(f"Python {sys.version.split()[0]}; medians of {args.rounds} rounds")
    print(f"{'N':>6}{'guards':>8}{'guard check (us)':>18}")
    for n in (int(s) for s in args.sizes.split(",")):
        row = measure_size(n, args.rounds, args.target_ms)
        print(f"{n:6d}{row['guards']:8d}{row['guard_us']:18.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
