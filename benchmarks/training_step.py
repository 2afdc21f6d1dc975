"""Eager training step (forward, a loss, backward) of zoo models: dynamo_lite vs PyTorch eager.

Run from the repository root: ``OPENBLAS_NUM_THREADS=1 python3 -m benchmarks.training_step``.
The loss is ``mean(output ** 2)`` of the model's (first) output; the parameter gradients of
both libraries are compared before timing. Interleaved rounds, medians; the torch column
appears when torch is installed.
"""
from __future__ import annotations

import argparse
import numpy as np

import dynamo_lite as dl

from .models import WORKLOADS
from .timing import measure

DEFAULT = "mlp,gpt,attention_block,small_cnn"


def _first(out):
    return out[0] if isinstance(out, tuple) else out


def dl_step(model, inputs):
    def step():
        model.zero_grad()
        out = _first(model(*inputs))
        (out * out).mean().backward()
    return step


def torch_step(peer, name, model, inputs):
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

    def step():
        for key in trainable:
            params[key].grad = None
        out = _first(fn(params, *t_inputs))
        (out * out).mean().backward()
    return step, params, trainable


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", default=DEFAULT)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args(argv)
    try:
        from . import torch_peer as peer
    except ImportError:
        peer = None
    print(f"{'workload':<18}{'dl eager ms':>13}{'torch ms':>11}{'dl/torch':>10}  max grad rel. diff")
    for name in args.workloads.split(","):
        workload = WORKLOADS[name]
        model, inputs = workload.make(), workload.make_inputs()
        steps = {"dl": dl_step(model, inputs)}
        diff = ""
        if peer is not None:
            steps["torch"], params, trainable = torch_step(peer, name, model, inputs)
            steps["dl"]()
            steps["torch"]()
            grads = dict(model.named_parameters())
            diff = max(float(np.abs(grads[k].grad.numpy() - params[k].grad.numpy()).max()
                             / (np.abs(params[k].grad.numpy()).max() + 1e-12)) for k in trainable)
            diff = f"{diff:.1e}"
        timings = measure(steps, rounds=args.rounds, target_seconds=0.05)
        dl_ms = timings["dl"].median * 1e3
        torch_ms = timings["torch"].median * 1e3 if "torch" in timings else float("nan")
        print(f"{name:<18}{dl_ms:>13.2f}{torch_ms:>11.2f}{dl_ms / torch_ms:>10.2f}  {diff}")


if __name__ == "__main__":
    main()
