"""Record PyTorch's complex128 gradients for complex_cases.py into fixtures/torch_complex_grads.json.

Run once, from the repository root, with an interpreter that has PyTorch (never needed by
the tests): ``/work/venvs/torch/bin/python tests/autograd/record_complex_fixtures.py``.
Inputs and loss weights are drawn with NumPy (seed 0) and stored with the answers.
"""
from __future__ import annotations

import json
import pathlib
import sys

import numpy as np
import torch

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from complex_cases import CASES  # noqa: E402


def draw(rng, shape, kind):
    values = rng.standard_normal(shape)
    return values + 1j * rng.standard_normal(shape) if kind == "c" else values


def pairs(array):
    """A JSON-able form: complex arrays as [..., 2] real pairs."""
    array = np.asarray(array)
    return np.stack([array.real, array.imag], -1).tolist() if np.iscomplexobj(array) else array.tolist()


def main() -> None:
    rng = np.random.default_rng(0)
    out = {}
    for name, (specs, expression) in CASES.items():
        arrays = {arg: draw(rng, shape, kind) for arg, (shape, kind) in specs.items()}
        tensors = {arg: torch.tensor(a).requires_grad_() for arg, a in arrays.items()}
        result = eval(expression, dict(tensors, lib=torch))
        parts = torch.view_as_real(result) if result.is_complex() else result
        weights = rng.standard_normal(tuple(parts.shape))
        (parts * torch.tensor(weights)).sum().backward()
        out[name] = {
            "inputs": {arg: pairs(a) for arg, a in arrays.items()},
            "weights": weights.tolist(),
            "grads": {arg: pairs(t.grad) for arg, t in tensors.items()},
        }
    path = pathlib.Path(__file__).parent / "fixtures" / "torch_complex_grads.json"
    path.write_text(json.dumps(out))
    print(f"wrote {len(out)} cases to {path}")


if __name__ == "__main__":
    main()
