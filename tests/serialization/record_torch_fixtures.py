"""Writes the torch.save fixtures of test_checkpoints.py (run once with a PyTorch install).

Run as: /work/venvs/torch/bin/python tests/serialization/record_torch_fixtures.py
(PyTorch 2.13.0 CPU wheel). The tests themselves never import torch: they compare
``dl.load`` against the values stored next to each fixture in ``expected.json``.
"""
from __future__ import annotations

import collections
import json
import os

import torch

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")


def state_dict_fixture():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 2))
    model.train()
    model(torch.randn(5, 3))  # running stats change, num_batches_tracked becomes 1
    return model.state_dict()


def mixed_fixture():
    base = torch.arange(12, dtype=torch.float64).reshape(3, 4)
    return {
        "float16": torch.tensor([1.5, -2.25], dtype=torch.float16),
        "int8": torch.tensor([-3, 7], dtype=torch.int8),
        "uint8": torch.tensor([0, 255], dtype=torch.uint8),
        "bool": torch.tensor([True, False]),
        "int32": torch.tensor([[1, 2], [3, 4]], dtype=torch.int32),
        "complex64": torch.tensor([1 + 2j, -3j], dtype=torch.complex64),
        "scalar": torch.tensor(2.5),
        "base": base,
        "view_t": base.t(),  # shares base's storage
        "view_row": base[1],  # shares it with an offset
        "parameter": torch.nn.Parameter(torch.ones(2, 2)),
        "list": [1, 2.5, "text", None, True, (3, 4)],
        "nested": collections.OrderedDict(a={"b": torch.zeros(2)}, c=[torch.ones(1, dtype=torch.int64)]),
        "size": torch.Size([2, 3]),
        "dtype": torch.float32,
        "bytes": b"\x00\x01",
        "set": {1, 2},
    }


def unsafe_fixture():
    return {"weights": torch.ones(2), "module": torch.nn.ReLU()}


def describe(value):
    """A JSON description of what dl.load must give back."""
    if isinstance(value, torch.Tensor):
        data = value.detach()
        if data.dtype == torch.bfloat16:
            data = data.float()
        items = data.tolist()
        if data.is_complex():
            items = [[c.real, c.imag] for c in data.reshape(-1).tolist()]
        return {"tensor": True, "dtype": str(value.dtype).replace("torch.", ""), "shape": list(value.shape),
                "stride": list(value.stride()), "offset": value.storage_offset(), "values": items,
                "parameter": isinstance(value, torch.nn.Parameter)}
    if isinstance(value, dict):
        return {"dict": [[k, describe(v)] for k, v in value.items()]}
    if isinstance(value, (list, tuple)):
        return {type(value).__name__: [describe(v) for v in value]}
    return {"repr": repr(value)}


def main():
    os.makedirs(HERE, exist_ok=True)
    expected = {}
    for name, make in [("state_dict", state_dict_fixture), ("mixed", mixed_fixture)]:
        obj = make()
        torch.save(obj, os.path.join(HERE, f"{name}.pt"))
        expected[name] = describe(obj)
    torch.save(unsafe_fixture(), os.path.join(HERE, "unsafe.pt"))
    torch.save({"w": torch.tensor([1.0, 3.140625], dtype=torch.bfloat16)}, os.path.join(HERE, "bfloat16.pt"))
    with open(os.path.join(HERE, "expected.json"), "w") as f:
        json.dump({"torch_version": torch.__version__, "fixtures": expected}, f, indent=1)


if __name__ == "__main__":
    main()
