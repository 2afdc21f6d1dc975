"""Record PyTorch's weights, inputs and outputs of every model in torch_src/ (needs PyTorch).

Run once from the repository root with a PyTorch interpreter:
    /work/venvs/torch/bin/python tests/models/record_torch.py [name ...]
Writes fixtures/<name>.npz: ``state/<key>`` (the state dict before the call), ``in<i>``,
``out<i>`` (outputs flattened in order) and ``after/<key>`` (the state dict after the call).
The fixtures in the repository were made with PyTorch 2.13 (CPU), seed 0.
"""
import importlib.util
import pathlib
import sys

import numpy as np
import torch

HERE = pathlib.Path(__file__).parent
MODELS = sorted(p.stem for p in (HERE / "torch_src").glob("*.py"))


def load(name):
    spec = importlib.util.spec_from_file_location(f"torch_{name}", HERE / "torch_src" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def flat(value):
    if value is None:
        return []
    if isinstance(value, torch.Tensor):
        return [value.detach().numpy().copy()]
    return [a for v in value for a in flat(v)]


def record(name):
    module = load(name)
    torch.manual_seed(0)
    model = module.build()
    store = {f"state/{k}": v.numpy().copy() for k, v in model.state_dict().items()}
    inputs = module.example_inputs(np.random.default_rng(0))
    for i, array in enumerate(inputs):
        store[f"in{i}"] = array
    tensors = [torch.from_numpy(a.copy()) for a in inputs]
    with torch.no_grad():
        torch.manual_seed(0)
        outputs = module.run(model, *tensors) if hasattr(module, "run") else model(*tensors)
    for i, array in enumerate(flat(outputs)):
        store[f"out{i}"] = array
    store.update({f"after/{k}": v.numpy().copy() for k, v in model.state_dict().items()})
    np.savez_compressed(HERE / "fixtures" / f"{name}.npz", **store)
    print(f"{name}: {len(store)} arrays")


if __name__ == "__main__":
    for model_name in sys.argv[1:] or MODELS:
        record(model_name)
