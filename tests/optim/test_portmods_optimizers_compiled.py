"""Adadelta, Rprop and ASGD: a compiled step updates parameters and state exactly as the eager step does,
with no graph break (ASGD's scalars, read with ``item()`` eagerly, are float64 tensors in the graph).

Their trajectories against PyTorch are checked in test_optimizers_torch.py (recorded fixture).
"""
from __future__ import annotations

import copy

import numpy as np
import pytest

import dynamo_lite as dl
from dynamo_lite import nn, optim
from tests.helpers import assert_compiled

CONFIGS = [
    (optim.Adadelta, {"weight_decay": 1e-2}),
    (optim.Adadelta, {"lr": 0.5, "maximize": True}),
    (optim.Rprop, {"lr": 0.05}),
    (optim.Rprop, {"etas": (0.3, 1.5), "step_sizes": (1e-3, 0.1), "maximize": True}),
    (optim.ASGD, {"lr": 0.1, "lambd": 1e-2, "t0": 2, "weight_decay": 1e-3}),  # averaging from step 3 on
    (optim.ASGD, {"maximize": True}),
]


def _run(cls, kwargs, compile_step: bool):
    dl.manual_seed(0)
    model = nn.Linear(4, 3)
    opt = cls(model.parameters(), **kwargs)
    step = dl.compile(opt.step) if compile_step else opt.step
    x = dl.randn(8, 4)
    for _ in range(6):
        opt.zero_grad()
        model(x).pow(2).sum().backward()
        step()
    return model, opt


@pytest.mark.parametrize("cls,kwargs", CONFIGS, ids=[f"{c.__name__}-{i}" for i, (c, _) in enumerate(CONFIGS)])
def test_compiled_step_equals_eager(cls, kwargs):
    eager_model, eager_opt = _run(cls, kwargs, compile_step=False)
    before = dl.stats()
    compiled_model, compiled_opt = _run(cls, kwargs, compile_step=True)
    assert_compiled(before, dl.stats())
    for a, b in zip(eager_model.parameters(), compiled_model.parameters()):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    for state_a, state_b in zip(eager_opt.state.values(), compiled_opt.state.values()):
        assert sorted(state_a) == sorted(state_b)
        for key in state_a:
            np.testing.assert_array_equal(state_a[key].numpy(), state_b[key].numpy(), err_msg=key)


@pytest.mark.parametrize("make,message", [
    (lambda p: optim.Adadelta(p, rho=1.5), "Invalid rho value: 1.5"),
    (lambda p: optim.Adadelta(p, lr=-1.0), "Invalid learning rate: -1.0"),
    (lambda p: optim.Rprop(p, etas=(1.5, 1.2)), "Invalid eta values: 1.5, 1.2"),
    (lambda p: optim.ASGD(p, weight_decay=-1.0), "Invalid weight_decay value: -1.0"),
])
def test_invalid_hyperparameters_raise_torchs_errors(make, message):
    with pytest.raises(ValueError) as caught:
        make(nn.Linear(2, 2).parameters())
    assert str(caught.value) == message


def test_parameters_to_vector_and_back():
    # Values as torch.nn.utils gives them for the same layer: weights row-major, then the bias.
    layer = nn.Linear(3, 2)
    vector = dl.nn.utils.parameters_to_vector(layer.parameters())
    expected = np.concatenate([layer.weight.detach().numpy().ravel(), layer.bias.detach().numpy()])
    np.testing.assert_array_equal(vector.detach().numpy(), expected)
    vector.pow(2).sum().backward()  # differentiable: the gradient reaches every parameter
    np.testing.assert_allclose(layer.bias.grad.numpy(), 2 * layer.bias.detach().numpy())
    dl.nn.utils.vector_to_parameters(dl.arange(8.0), layer.parameters())
    assert layer.weight.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] and layer.bias.tolist() == [6.0, 7.0]
    assert isinstance(layer.weight, nn.Parameter)
    with pytest.raises(TypeError, match="^expected torch.Tensor, but got: list$"):
        dl.nn.utils.vector_to_parameters([1.0], layer.parameters())
