"""F.grid_sample (bilinear/nearest x zeros/border/reflection x align_corners) and F.affine_grid against
torch: outputs and gradients (input and grid, theta), errors; compiled equal to eager.

``fixtures/grid.npz`` / ``fixtures/grid_errors.json`` were written by ``fixtures/record_grid.py``
with PyTorch 2.13 (CPU), float64, from ``grid_cases.py``.
"""
from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import dynamo_lite as dl
from tests.helpers import assert_same

from . import grid_cases as C

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
RECORDED = np.load(FIXTURES / "grid.npz")
ERRORS = json.loads((FIXTURES / "grid_errors.json").read_text())
F = dl.nn.functional
TOLERANCE = {"rtol": 1e-9, "atol": 1e-10}


@pytest.mark.parametrize("name,input_shape,grid_shape,kwargs", C.SAMPLE_CASES, ids=[c[0] for c in C.SAMPLE_CASES])
def test_grid_sample_matches_torch(name, input_shape, grid_shape, kwargs):
    x = dl.tensor(RECORDED[f"{name}/input"]).requires_grad_()
    grid = dl.tensor(RECORDED[f"{name}/grid"]).requires_grad_()
    out = F.grid_sample(x, grid, **kwargs)
    np.testing.assert_allclose(out.detach().numpy(), RECORDED[f"{name}/out"], **TOLERANCE)
    (out * dl.cos(dl.arange(out.numel(), dtype=dl.float64)).reshape(out.shape)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), RECORDED[f"{name}/grad_input"], **TOLERANCE)
    if kwargs["mode"] == "nearest":  # piecewise constant in the grid: torch gives zeros, dynamo_lite no gradient
        assert grid.grad is None and not RECORDED[f"{name}/grad_grid"].any()
    else:
        np.testing.assert_allclose(grid.grad.numpy(), RECORDED[f"{name}/grad_grid"], **TOLERANCE)


@pytest.mark.parametrize("name,input_shape,grid_shape,kwargs", C.SAMPLE_CASES, ids=[c[0] for c in C.SAMPLE_CASES])
def test_grid_sample_compiled_matches_eager(name, input_shape, grid_shape, kwargs):
    assert_same(lambda x, g: F.grid_sample(x, g, **kwargs), dl.tensor(RECORDED[f"{name}/input"]),
                dl.tensor(RECORDED[f"{name}/grid"]), backend="numpy")


@pytest.mark.parametrize("name,size,aligned", C.AFFINE_CASES, ids=[c[0] for c in C.AFFINE_CASES])
def test_affine_grid_matches_torch(name, size, aligned):
    theta = dl.tensor(RECORDED[f"{name}/theta"]).requires_grad_()
    grid = F.affine_grid(theta, size, align_corners=aligned)
    np.testing.assert_allclose(grid.detach().numpy(), RECORDED[f"{name}/out"], **TOLERANCE)
    grid.sum().backward()
    np.testing.assert_allclose(theta.grad.numpy(), RECORDED[f"{name}/grad"], **TOLERANCE)
    assert_same(lambda t: F.affine_grid(t, size, align_corners=aligned), theta.detach(), backend="numpy")


@pytest.mark.parametrize("name,kwargs", C.ERROR_CASES, ids=[c[0] for c in C.ERROR_CASES])
def test_errors_match_torch(name, kwargs):
    error_type, message = ERRORS[name]
    with pytest.raises(ValueError) as caught:
        F.grid_sample(dl.zeros(1, 1, 2, 2), dl.zeros(1, 1, 1, 2), **kwargs)
    assert type(caught.value).__name__ == error_type and str(caught.value) == message


def test_spatial_transformer_trains_compiled_like_eager():
    """affine_grid + grid_sample in a model: compiled training steps equal eager ones."""
    def step(theta, image):
        return F.grid_sample(image, F.affine_grid(theta, image.shape, align_corners=False), align_corners=False)

    rng = np.random.default_rng(4)
    image = dl.tensor(rng.standard_normal((2, 3, 5, 6)))
    theta0 = dl.tensor(np.tile(np.eye(2, 3), (2, 1, 1)) + 0.1 * rng.standard_normal((2, 2, 3)))
    grads = []
    for run in (step, dl.compile(step, backend="numpy")):
        theta = theta0.clone().requires_grad_()
        run(theta, image).square().sum().backward()
        grads.append(theta.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-10)
