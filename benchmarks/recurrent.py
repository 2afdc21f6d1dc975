"""An LSTM layer written as a Python loop over time steps: compiled (one scan) vs dl eager (vs torch).

Run from a checkout's root, one BLAS thread:
``OPENBLAS_NUM_THREADS=1 python3 benchmarks/recurrent.py [--large] [--rounds N]``.
Input 128, hidden 128, batch 32, T 50 (``--large``: 512/512/64/100). Forward under
no_grad, and forward+backward (sum of the outputs). Interleaved rounds, medians in ms.
Backends ``--backends eager,numpy,native`` (default): numpy runs the scan body per step,
native the whole loop in C (NOTE: [native scan loops]).
torch eager / torch.jit.script / torch.compile run the same loop when torch is installed.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path.cwd()))

import dynamo_lite as dl  # noqa: E402
from benchmarks.timing import measure  # noqa: E402


def loop_lstm_class(lib):
    """The layer as a user writes it, for ``lib`` (``dl`` or ``torch``: the same code for both): the cell
    inline, a loop over ``range(x.size(0))``."""

    class LoopLSTM(lib.nn.Module):
        def __init__(self, input_size: int, hidden_size: int):
            super().__init__()
            self.ih = lib.nn.Linear(input_size, 4 * hidden_size)
            self.hh = lib.nn.Linear(hidden_size, 4 * hidden_size)

        def forward(self, x, h, c):
            outputs = []
            for t in range(x.size(0)):
                gates = self.ih(x[t]) + self.hh(h)
                i, f, g, o = gates.chunk(4, 1)
                c = lib.sigmoid(f) * c + lib.sigmoid(i) * lib.tanh(g)
                h = lib.sigmoid(o) * lib.tanh(c)
                outputs.append(h)
            return lib.stack(outputs), h, c

    return LoopLSTM


LoopLSTM = loop_lstm_class(dl)


def _dl_variants(sizes: tuple, backends: list) -> dict:
    input_size, hidden, batch, steps = sizes
    dl.manual_seed(0)
    model = LoopLSTM(input_size, hidden)
    x, h, c = dl.randn(steps, batch, input_size), dl.randn(batch, hidden), dl.randn(batch, hidden)

    def forward(fn):
        def run():
            with dl.no_grad():
                fn(x, h, c)
        return run

    def training(fn):
        def run():
            model.zero_grad()
            fn(x, h, c)[0].sum().backward()
        return run

    variants = {"dl eager forward": forward(model), "dl eager fwd+bwd": training(model)}
    for backend in backends:
        # static: the first compile of one length (the loop unrolled); scan: symbolic length
        # (what every later length gets under dynamic=None), one scan node.
        for label, dynamic in (("static", False), ("scan", True)):
            compiled = dl.compile(model, backend=backend, dynamic=dynamic)
            variants[f"dl {backend} {label} forward"] = forward(compiled)
            variants[f"dl {backend} {label} fwd+bwd"] = training(compiled)
    return variants


def _torch_variants(sizes: tuple) -> dict:
    try:
        import torch
    except ImportError:
        return {}
    torch.set_num_threads(1)
    input_size, hidden, batch, steps = sizes
    model = loop_lstm_class(torch)(input_size, hidden)
    x, h, c = torch.randn(steps, batch, input_size), torch.randn(batch, hidden), torch.randn(batch, hidden)
    variants = {}
    for name, fn in (("torch eager", model), ("torch.jit.script", torch.jit.script(model)),
                     ("torch.compile", torch.compile(model))):
        def forward(fn=fn):
            with torch.no_grad():
                fn(x, h, c)

        def training(fn=fn):
            model.zero_grad()
            fn(x, h, c)[0].sum().backward()

        variants[f"{name} forward"], variants[f"{name} fwd+bwd"] = forward, training
    return variants


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--large", action="store_true", help="512/512/64/100 instead of 128/128/32/50")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--backends", default="eager,numpy,native")
    args = parser.parse_args()
    dl.set_num_threads(1)
    # every variant compiles the same forward: a backend x static/scan x grad mode entry each
    dl.config.cache_size_limit = max(dl.config.cache_size_limit, 4 * len(args.backends.split(",")) + 4)
    sizes = (512, 512, 64, 100) if args.large else (128, 128, 32, 50)
    variants = {**_dl_variants(sizes, args.backends.split(",")), **_torch_variants(sizes)}
    before = dl.stats()
    medians = measure(variants, rounds=args.rounds, target_seconds=0.05)
    after = dl.stats()
    eager = {kind: medians[f"dl eager {kind}"].median for kind in ("forward", "fwd+bwd")}
    print(f"LSTM layer as a loop: input {sizes[0]}, hidden {sizes[1]}, batch {sizes[2]}, T {sizes[3]}; "
          f"1 thread; median of {args.rounds} interleaved rounds")
    print(f"{'variant':34} {'ms':>9} {'x dl eager':>10} {'spread':>7}")
    print("(static: the loop unrolled for this length; scan: one graph for every length)")
    for name, timing in medians.items():
        kind = "forward" if name.endswith("forward") else "fwd+bwd"
        print(f"{name:34} {timing.median * 1e3:9.2f} {timing.median / eager[kind]:10.2f} {timing.spread:7.2f}")
    print(f"frames compiled: {after.frames_compiled - before.frames_compiled}, "
          f"graph breaks: {after.graph_breaks - before.graph_breaks}, fallbacks: {len(after.fallbacks) - len(before.fallbacks)}")


if __name__ == "__main__":
    main()
