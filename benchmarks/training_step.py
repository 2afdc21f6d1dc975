"""Training step of zoo models: dynamo_lite eager vs ``dl.compile(train_step)``, and backward alone; PyTorch beside them.

Run from the repository root: ``OPENBLAS_NUM_THREADS=1 python3 -m benchmarks.training_step``.

A training step is forward, the loss ``mean(output ** 2)`` of the model's (first) output,
``loss.backward()``, ``AdamW.step()`` and ``zero_grad()``. Columns (milliseconds, medians
of interleaved rounds):

- ``eager`` / ``compiled``: the step run eagerly and through ``dl.compile(train_step,
  backend=--backend)`` (two copies of the model, trained side by side), ``ratio`` =
  compiled / eager (target <= 0.8, issue #13); the first losses of both runs are compared
  before timing. The default backend is ``auto``, what ``dl.compile`` uses: on CPU the
  numpy backend, switching to native C code once its build is done (timing starts after
  that build); ``--backend native`` / ``numpy`` / ``eager`` pins one. ``--cpu`` times the
  process's CPU time (every thread's) instead of wall time: on a machine shared with other
  jobs it moves far less between runs;
- ``bwd eager`` / ``bwd comp``: ``loss.backward(retain_graph=True)`` alone, the loss
  coming from the eager model or from ``dl.compile(model)``;
- ``torch`` / ``torch.compile``: the same step with torch eager and ``torch.compile``
  (default inductor backend), when torch is importable (see common setup notes: run with
  the torch venv's Python and the repository plus a ``bytecode`` link on ``PYTHONPATH``).
"""
from __future__ import annotations

import argparse
import copy
import threading
import time

import numpy as np

import dynamo_lite as dl

from .models import WORKLOADS
from .timing import measure

DEFAULT = "mlp,gpt,small_cnn"
LR = 1e-4


def _first(out):
    return out[0] if isinstance(out, tuple) else out


def dl_train_step(model):
    optimizer = dl.optim.AdamW(model.parameters(), lr=LR)

    def train_step(*inputs):
        out = _first(model(*inputs))
        loss = (out * out).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        return loss
    return train_step


def dl_backward(model, inputs):
    """``loss.backward`` of one forward of ``model`` (called again and again on that graph)."""
    out = _first(model(*inputs))
    return (out * out).mean()


def torch_train_step(peer, name, model, inputs, compiled: bool):
    import torch

    fn = peer.TORCH_WORKLOADS[name]
    params, t_inputs = peer.to_torch({k: v.detach().numpy() for k, v in model.state_dict().items()},
                                     [x.numpy() for x in inputs])
    trainable = {k for k, _ in model.named_parameters()}
    for key in trainable:
        params[key].requires_grad_()
    first_key = {}
    for key, value in model.state_dict(keep_vars=True).items():  # tied weights stay one tensor
        params[key] = params[first_key.setdefault(id(value), key)]
    optimizer = torch.optim.AdamW([params[k] for k in dict.fromkeys(first_key.values()) if k in trainable], lr=LR)

    def train_step():
        out = _first(fn(params, *t_inputs))
        loss = (out * out).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        return loss
    return torch.compile(train_step) if compiled else train_step


def _building() -> bool:
    return any(t.name.startswith("dynamo_lite ") and t.name.endswith(" build") for t in threading.enumerate())


def warm_up(call, calls: int = 10, seconds: float = 120.0) -> None:
    """Run ``call`` ``calls`` times, then on until no background build of the auto backend's upper tier runs."""
    deadline = time.monotonic() + seconds
    for _ in range(calls):
        call()
    while _building() and time.monotonic() < deadline:
        time.sleep(0.05)
        call()


def row(name: str, rounds: int, peer, backend: str = "auto", clock=time.perf_counter) -> str:
    # Each workload starts from an empty cache, as in a program of its own: the train steps of
    # all workloads share one code object, and the sizes of the previous workload's batch would
    # otherwise make this one's graphs symbolic on its first call (automatic dynamic shapes).
    dl.reset()
    workload = WORKLOADS[name]
    eager_model, inputs = workload.make(), workload.make_inputs()
    compiled_model = copy.deepcopy(eager_model)
    eager_step = dl_train_step(eager_model)
    compiled_step = dl.compile(dl_train_step(compiled_model), backend=backend)
    # Two calls each: the second compiled call recompiles the optimizer's graph (its state exists).
    losses = [[float(eager_step(*inputs)), float(compiled_step(*inputs))] for _ in range(2)]
    agree = "losses ok" if np.allclose(*zip(*losses), rtol=1e-5) else f"MISMATCH {losses}"
    before = dl.stats()
    variants = {"eager": lambda: eager_step(*inputs), "compiled": lambda: compiled_step(*inputs)}
    # Models of their own: the timed train steps update theirs in place, which would
    # invalidate the tensors a retained backward graph saved.
    loss_eager = dl_backward(workload.make(), inputs)
    loss_compiled = dl_backward(dl.compile(workload.make(), backend=backend), inputs)
    variants["bwd eager"] = lambda: loss_eager.backward(retain_graph=True)
    variants["bwd comp"] = lambda: loss_compiled.backward(retain_graph=True)
    for key in ("compiled", "bwd comp"):
        warm_up(variants[key])
    if peer is not None:
        variants["torch"] = torch_train_step(peer, name, eager_model, inputs, compiled=False)
        try:
            variants["torch.compile"] = torch_train_step(peer, name, eager_model, inputs, compiled=True)
            variants["torch.compile"]()  # compiles here, outside the timing
        except Exception as exc:  # inductor needs a working C++ toolchain
            print(f"  ({name}: torch.compile failed: {type(exc).__name__}: {exc})")
            del variants["torch.compile"]
    timings = measure(variants, rounds=rounds, target_seconds=0.05, clock=clock)
    after = dl.stats()
    ms = {k: v.median * 1e3 for k, v in timings.items()}
    cells = [f"{ms.get(k, float('nan')):>11.2f}" for k in ("eager", "compiled")]
    cells.append(f"{ms['compiled'] / ms['eager']:>7.2f}")
    cells += [f"{ms.get(k, float('nan')):>11.2f}" for k in ("bwd eager", "bwd comp", "torch", "torch.compile")]
    notes = f"{agree}; recompiles while timing: {after.recompiles - before.recompiles}"
    return f"{name:<12}" + "".join(cells) + f"  {notes}"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", default=DEFAULT)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--no-torch", action="store_true", help="leave the torch columns out")
    parser.add_argument("--backend", default="auto", help="dl.compile's backend (default auto: numpy, then native C)")
    parser.add_argument("--cpu", action="store_true",
                        help="time the process's CPU time (every thread) instead of wall time: steadier under load")
    args = parser.parse_args(argv)
    peer = None
    if not args.no_torch:
        try:
            from . import torch_peer as peer
        except ImportError:
            peer = None
    print(f"dl.compile(train_step, backend={args.backend!r})"
          + (": numpy code until each graph's native C build is done (timed after it)" if args.backend == "auto" else ""))
    print(f"{'workload':<12}{'eager':>11}{'compiled':>11}{'ratio':>7}{'bwd eager':>11}{'bwd comp':>11}"
          f"{'torch':>11}{'torch.comp':>11}  (ms{' of CPU' if args.cpu else ''}; ratio = compiled / eager)")
    for name in args.workloads.split(","):
        print(row(name, args.rounds, peer, args.backend, time.process_time if args.cpu else time.perf_counter),
              flush=True)


if __name__ == "__main__":
    main()
