"""Optimizers and gradient clipping against PyTorch-recorded trajectories.

The fixture tests/optim/fixtures/optim_mlp.npz was recorded by
tests/optim/fixtures/record_optim.py with PyTorch 2.13 CPU (foreach=False, the
single-tensor update): a Linear(8,16)-Tanh-Linear(16,4) MLP, its initial weights, 32
fixed samples, 20 steps of cross_entropy per optimizer configuration (losses, final
weights, the state after 10 steps), and clip_grad_norm_ results. No torch here.
"""
from __future__ import annotations

import copy
import json
import pathlib

import numpy as np
import pytest

import dynamo_lite as dl
from dynamo_lite import nn, optim

FIXTURE = np.load(pathlib.Path(__file__).parent / "fixtures" / "optim_mlp.npz")
CONFIGS = json.loads(str(FIXTURE["configs"]))
STEPS = 20


def make_mlp():
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 4))
    model.load_state_dict({key[len("init/"):]: dl.from_numpy(FIXTURE[key].copy())
                           for key in FIXTURE.files if key.startswith("init/")})
    return model


def make_optimizer(name: str, model):
    cls, kwargs = CONFIGS[name]
    if "betas" in kwargs:
        kwargs = {**kwargs, "betas": tuple(kwargs["betas"])}
    return getattr(optim, cls)(model.parameters(), **kwargs)


def train_step(model, opt) -> float:
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(dl.from_numpy(FIXTURE["x"])), dl.from_numpy(FIXTURE["y"]))
    loss.backward()
    opt.step()
    return loss.item()


def trained(name: str, steps: int) -> tuple:
    """The fixture's MLP and the named optimizer after ``steps`` training steps."""
    model = make_mlp()
    opt = make_optimizer(name, model)
    for _ in range(steps):
        train_step(model, opt)
    return model, opt


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_twenty_steps_match_torch(name):
    model = make_mlp()
    opt = make_optimizer(name, model)
    losses = [train_step(model, opt) for _ in range(STEPS)]
    np.testing.assert_allclose(losses, FIXTURE[f"{name}/losses"], rtol=1e-5, atol=1e-6)
    for key, value in model.state_dict().items():
        np.testing.assert_allclose(value.numpy(), FIXTURE[f"{name}/final/{key}"], rtol=1e-5, atol=1e-5)
    assert losses[0] != losses[-1]  # the optimizer moved the weights


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_state_after_ten_steps_matches_torch_layout_and_values(name):
    model, opt = trained(name, steps=10)
    state = opt.state_dict()["state"]
    expected = {tuple(key.split("/")[2:]) for key in FIXTURE.files if key.startswith(f"{name}/state10/")}
    actual = {(str(index), field) for index, fields in state.items() for field in fields}
    assert actual == expected
    for index, field in expected:
        assert_close_normwise(np.asarray(state[int(index)][field].numpy()), FIXTURE[f"{name}/state10/{index}/{field}"])


def assert_close_normwise(actual, expected, rtol=1e-5, atol=1e-6):
    """``max|actual - expected| <= rtol * max|expected| + atol``: the error of float32 state built from dot products.

    A dot product's rounding error is bounded by ``K * eps * sum|a_i b_i|``, relative to the size of its terms,
    not of its result; the summation order (the BLAS kernel's blocking) differs from machine to machine, so a
    state element far smaller than its tensor's largest (centered RMSprop divides by ``sqrt(v - g**2)``, which
    cancels) carries the absolute error of the large ones. Ten steps of K <= 32 term sums in float32
    (eps 1.2e-7) stay well inside 1e-5 of the tensor's largest element.
    """
    assert actual.shape == expected.shape
    error, scale = float(np.max(np.abs(actual - expected), initial=0.0)), float(np.max(np.abs(expected), initial=0.0))
    assert error <= rtol * scale + atol, f"max error {error:.3g} over {rtol} * {scale:.3g} + {atol}"


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_state_dict_resume_continues_identically(name):
    model, opt = trained(name, steps=10)
    saved_opt = copy.deepcopy(opt.state_dict())  # state_dict holds the live tensors, as torch's
    saved_model = {key: value.clone() for key, value in model.state_dict().items()}
    continued = [train_step(model, opt) for _ in range(10)]

    fresh_model = make_mlp()
    fresh_model.load_state_dict(saved_model)
    fresh_opt = make_optimizer(name, fresh_model)
    fresh_opt.load_state_dict(saved_opt)
    resumed = [train_step(fresh_model, fresh_opt) for _ in range(10)]
    assert resumed == continued  # bit for bit
    np.testing.assert_allclose(resumed, FIXTURE[f"{name}/losses"][10:], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf")])
def test_clip_grad_norm_matches_torch(norm_type):
    params = []
    for index in range(4):
        param = nn.Parameter(dl.zeros(FIXTURE[f"clip/grad{index}"].shape))
        param.grad = dl.from_numpy(FIXTURE[f"clip/grad{index}"].copy())
        params.append(param)
    total = nn.utils.clip_grad_norm_(params, max_norm=0.5, norm_type=norm_type)
    assert isinstance(total, dl.Tensor) and total.shape == ()
    np.testing.assert_allclose(total.numpy(), FIXTURE[f"clip/{norm_type}/total"], rtol=1e-5)
    for index, param in enumerate(params):
        np.testing.assert_allclose(param.grad.numpy(), FIXTURE[f"clip/{norm_type}/grad{index}"], rtol=1e-5, atol=1e-7)
