"""Record PyTorch's float64 answers for torch_cases.py into fixtures/torch_grads.json.

Run once, from the repository root, with an interpreter that has PyTorch (never needed by
the tests): ``/work/venvs/torch/bin/python tests/autograd/record_torch_fixtures.py``.
Inputs are drawn with NumPy (seed 0) and stored with the answers, so the test rebuilds
exactly the same tensors without torch.
"""
from __future__ import annotations

import json
import pathlib
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from torch_cases import CASES, HELPERS, MODULE_CASES  # noqa: E402


def make_input(rng, shape, kind):
    if kind in ("x", "c"):
        return rng.standard_normal(shape)
    if kind == "p":
        return rng.uniform(0.05, 0.95, shape)
    if kind == "q":
        values = rng.uniform(0.0, 1.0, shape)
        return values / values.sum(axis=-1, keepdims=True) if len(shape) > 1 else values
    if kind == "w":
        return rng.uniform(0.5, 2.0, shape)
    return rng.integers(0, int(kind[1:]), shape)


def main() -> None:
    rng = np.random.default_rng(0)
    torch.set_default_dtype(torch.float64)
    out = {}
    for name, (specs, expression) in CASES.items():
        arrays = {arg: make_input(rng, shape, kind) for arg, shape, kind in specs}
        tensors = {}
        for arg, _, kind in specs:
            value = torch.tensor(arrays[arg])
            if kind in ("x", "p"):
                value.requires_grad_()
            tensors[arg] = value
        env = dict(tensors, lib=torch, F=F, nn=nn, **HELPERS)
        result = eval(expression, env)
        extras = []
        if isinstance(result, tuple):
            result, *extras = result
        result.backward()
        out[name] = {
            "inputs": {arg: [np.asarray(a).tolist(), str(np.asarray(a).dtype)] for arg, a in arrays.items()},
            "loss": result.item(),
            "grads": {arg: t.grad.tolist() for arg, t in tensors.items() if t.grad is not None},
            "extras": [e.detach().tolist() for e in extras],
        }
    for name, (constructor, specs, expression) in MODULE_CASES.items():
        torch.manual_seed(0)
        module = eval(constructor, {"lib": torch})
        state = {k: v.detach().tolist() for k, v in module.state_dict().items()}
        arrays = {arg: make_input(rng, shape, kind) for arg, shape, kind in specs}
        tensors = {arg: torch.tensor(a).requires_grad_() for arg, a in arrays.items()}
        loss = eval(expression, dict(tensors, lib=torch, m=module))
        loss.backward()
        out["module:" + name] = {
            "inputs": {arg: [a.tolist(), str(a.dtype)] for arg, a in arrays.items()},
            "state": state,
            "loss": loss.item(),
            "grads": {arg: t.grad.tolist() for arg, t in tensors.items()},
            "param_grads": {k: p.grad.tolist() for k, p in module.named_parameters()},
            "buffers_after": {k: b.tolist() for k, b in module.named_buffers()},
        }
    path = pathlib.Path(__file__).parent / "fixtures" / "torch_grads.json"
    path.write_text(json.dumps(out, indent=1))
    print(f"wrote {len(out)} cases to {path}")


if __name__ == "__main__":
    main()
