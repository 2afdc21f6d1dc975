"""Adamax, NAdam and RAdam: a compiled step updates parameters and state as the eager step does.

Compiled steps compute the bias corrections from the step counter as float64 tensors
(NOTE: [Adam's step counter when compiled]), equal to eager's doubles up to their last
bits, hence the float32-rounding tolerance.

Their trajectories against PyTorch are checked in test_optimizers_torch.py (recorded fixture).
"""
from __future__ import annotations

import copy

import numpy as np
import pytest

import dynamo_lite as dl
from dynamo_lite import nn, optim
from tests.helpers import assert_compiled

CONFIGS = [(optim.Adamax, {"weight_decay": 1e-2}), (optim.NAdam, {"weight_decay": 0.1, "decoupled_weight_decay": True}),
           (optim.RAdam, {"lr": 1e-2}), (optim.RAdam, {"betas": (0.9, 0.9), "maximize": True})]


@pytest.mark.parametrize("cls,kwargs", CONFIGS, ids=[f"{c.__name__}-{i}" for i, (c, _) in enumerate(CONFIGS)])
def test_compiled_step_equals_eager(cls, kwargs):
    dl.manual_seed(0)
    eager_model = nn.Linear(4, 3)
    compiled_model = copy.deepcopy(eager_model)
    eager_opt, compiled_opt = cls(eager_model.parameters(), **kwargs), cls(compiled_model.parameters(), **kwargs)
    compiled_step = dl.compile(compiled_opt.step)
    x = dl.randn(8, 4)
    before = dl.stats()
    for _ in range(8):  # RAdam switches from its plain to its rectified update at step 6 (beta2 = 0.9)
        for model, opt, step in ((eager_model, eager_opt, eager_opt.step), (compiled_model, compiled_opt, compiled_step)):
            opt.zero_grad()
            model(x).pow(2).sum().backward()
            step()
    assert_compiled(before, dl.stats())
    for a, b in zip(eager_model.parameters(), compiled_model.parameters()):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-7)
    for state_a, state_b in zip(eager_opt.state.values(), compiled_opt.state.values()):
        for key in state_a:
            np.testing.assert_allclose(state_a[key].numpy(), state_b[key].numpy(), rtol=1e-6, atol=1e-7, err_msg=key)
