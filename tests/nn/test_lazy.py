"""Lazy modules against torch: the class they become, their state_dict, their outputs; then trained compiled.

``fixtures/lazy.npz`` / ``fixtures/lazy.json`` were written by ``fixtures/record_lazy.py`` with
PyTorch 2.13 (CPU), float64, from ``lazy_cases.py``. Random initial weights differ between the
libraries, so the weights torch drew are loaded before outputs are compared (BatchNorm starts
deterministic: its first call's output and running statistics are compared directly).
"""
from __future__ import annotations

import builtins
import copy
import json
import pathlib

import numpy as np
import pytest

import dynamo_lite as dl
from tests.helpers import assert_compiled

from . import lazy_cases as C

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
RECORDED = np.load(FIXTURES / "lazy.npz")
FACTS = json.loads((FIXTURES / "lazy.json").read_text())


def _state(name):
    prefix = f"{name}/state/"
    return {k[len(prefix):]: RECORDED[k] for k in RECORDED.files if k.startswith(prefix)}


@pytest.mark.parametrize("name,build,shape", C.CASES, ids=[c[0] for c in C.CASES])
def test_matches_torch(name, build, shape):
    dl.set_default_dtype(dl.float64)
    try:
        module = build(dl)
    finally:
        dl.set_default_dtype(dl.float32)
    assert type(module).__name__.startswith("Lazy") and module.has_uninitialized_params()
    assert all(isinstance(p, dl.nn.UninitializedParameter) for p in module.parameters())
    x = dl.tensor(RECORDED[f"{name}/x"])
    output = module(x)
    facts, torch_state = FACTS["facts"][name], _state(name)
    assert type(module).__name__ == facts["class"] and type(module) is getattr(dl.nn, facts["class"])
    assert not module._forward_pre_hooks and not hasattr(module, "_initialize_hook")
    assert all(type(p) is dl.nn.Parameter for p in module.parameters())
    assert all(type(b) is dl.Tensor for b in module.buffers())
    state = module.state_dict()
    assert list(state) == facts["state_keys"]
    for key, value in state.items():
        assert tuple(value.shape) == torch_state[key].shape and value.dtype == dl.tensor(torch_state[key]).dtype, key
    if "batchnorm" in name:  # deterministic start: the first call itself agrees, running stats included
        for key, value in state.items():
            np.testing.assert_allclose(value.numpy(), torch_state[key], rtol=1e-12, atol=1e-12, err_msg=key)
    else:
        module.load_state_dict({k: dl.tensor(v) for k, v in torch_state.items()})
        output = module(x)
    np.testing.assert_allclose(output.detach().numpy(), RECORDED[f"{name}/out"], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name,build,shape", C.ERROR_CASES, ids=[c[0] for c in C.ERROR_CASES])
def test_errors_match_torch(name, build, shape):
    error_type, message = FACTS["errors"][name]
    with pytest.raises(getattr(builtins, error_type)) as caught:
        build(dl)(dl.zeros(shape))
    assert str(caught.value) == message.replace("torch.Size", "dl.Size")


def test_load_state_dict_materializes():
    module = dl.nn.LazyLinear(3)
    source = dl.nn.Linear(4, 3)
    module.load_state_dict(source.state_dict())
    assert not module.has_uninitialized_params() and tuple(module.weight.shape) == (3, 4)
    x = dl.randn(2, 4)
    assert dl.equal(module(x), source(x)) and type(module) is dl.nn.Linear


def test_uninitialized_parameter_refuses_its_shape():
    parameter = dl.nn.UninitializedParameter()
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized parameter"):
        parameter.shape
    parameter.materialize((2, 3))
    assert type(parameter) is dl.nn.Parameter and parameter.shape == (2, 3) and parameter.requires_grad


def _net():
    return dl.nn.Sequential(dl.nn.LazyConv2d(4, 3), dl.nn.LazyBatchNorm2d(), dl.nn.ReLU(), dl.nn.Flatten(),
                            dl.nn.LazyLinear(2))


def test_optimizer_after_dry_run_trains_compiled_like_eager():
    dl.manual_seed(0)
    eager = _net()
    x, target = dl.randn(3, 2, 6, 6), dl.randn(3, 2)
    eager(x)  # the dry run: shapes inferred, classes concrete
    assert [type(m).__name__ for m in eager] == ["Conv2d", "BatchNorm2d", "ReLU", "Flatten", "Linear"]
    twin = copy.deepcopy(eager)
    compiled = dl.compile(twin, backend="numpy")
    before = dl.stats()
    for module, run in ((eager, eager), (twin, compiled)):
        optimizer = dl.optim.Adam(module.parameters(), lr=0.01)
        for _ in range(3):
            optimizer.zero_grad()
            ((run(x) - target) ** 2).mean().backward()
            optimizer.step()
    assert_compiled(before, dl.stats())
    for (key, a), (_, b) in zip(eager.state_dict().items(), twin.state_dict().items()):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-5, atol=1e-6, err_msg=key)
