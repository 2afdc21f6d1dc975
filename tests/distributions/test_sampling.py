"""Draws of dl.distributions: shapes, dtypes, reproducibility under dl.manual_seed, moments,
and gradients through rsample (the reparameterization)."""
from __future__ import annotations

import numpy as np
import pytest

import dynamo_lite as dl

D = dl.distributions
N = 20000


def _distributions():
    cov = dl.tensor([[2.0, 0.6], [0.6, 1.0]])
    return {
        "normal": D.Normal(dl.tensor([0.0, 3.0]), dl.tensor([1.0, 0.5])),
        "uniform": D.Uniform(dl.tensor([0.0, -2.0]), dl.tensor([1.0, 2.0])),
        "bernoulli": D.Bernoulli(probs=dl.tensor([0.2, 0.7])),
        "categorical": D.Categorical(probs=dl.tensor([[0.1, 0.6, 0.3], [0.5, 0.25, 0.25]])),
        "one_hot": D.OneHotCategorical(probs=dl.tensor([0.1, 0.6, 0.3])),
        "independent": D.Independent(D.Normal(dl.tensor([0.0, 3.0]), dl.tensor([1.0, 0.5])), 1),
        "mvn": D.MultivariateNormal(dl.tensor([1.0, -1.0]), covariance_matrix=cov),
    }


@pytest.mark.parametrize("name", sorted(_distributions()))
def test_sample_shape_dtype_and_reproducibility(name):
    d = _distributions()[name]
    dl.manual_seed(3)
    first = d.sample((5, 2))
    dl.manual_seed(3)
    again = d.sample((5, 2))
    assert tuple(first.shape) == (5, 2) + tuple(d.batch_shape) + tuple(d.event_shape)
    assert first.dtype == (dl.int64 if name == "categorical" else dl.float32)
    assert first.requires_grad is False
    np.testing.assert_array_equal(first.numpy(), again.numpy())
    assert bool(d.support.check(first).all())
    assert tuple(d.sample().shape) == tuple(d.batch_shape) + tuple(d.event_shape)


@pytest.mark.parametrize("name", sorted(_distributions()))
def test_sample_moments(name):
    d = _distributions()[name]
    dl.manual_seed(0)
    draws = d.sample((N,)).double()
    if name == "categorical":
        counts = np.stack([(draws.numpy() == k).mean(0) for k in range(3)], -1)
        np.testing.assert_allclose(counts, d.probs.numpy(), atol=0.02)
        return
    np.testing.assert_allclose(draws.mean(0).numpy(), d.mean.numpy(), atol=0.05)
    np.testing.assert_allclose(draws.var(0).numpy(), d.variance.numpy(), atol=0.06)


def test_mvn_sample_covariance():
    d = _distributions()["mvn"]
    dl.manual_seed(1)
    draws = d.sample((N,)).numpy().astype(np.float64)
    np.testing.assert_allclose(np.cov(draws.T), d.covariance_matrix.numpy(), atol=0.06)


def test_normal_rsample_carries_the_reparameterization_gradient():
    loc = dl.tensor([0.5, -1.0], requires_grad=True)
    scale = dl.tensor([2.0, 0.5], requires_grad=True)
    draws = D.Normal(loc, scale).rsample((3,))
    draws.sum().backward()
    noise = (draws.detach() - loc.detach()) / scale.detach()
    np.testing.assert_allclose(loc.grad.numpy(), [3.0, 3.0])
    np.testing.assert_allclose(scale.grad.numpy(), noise.sum(0).numpy(), rtol=1e-5)


def test_mvn_and_uniform_rsample_gradients():
    loc = dl.tensor([0.5, -1.0], requires_grad=True)
    tril = dl.tensor([[1.0, 0.0], [0.5, 2.0]], requires_grad=True)
    draws = D.MultivariateNormal(loc, scale_tril=tril).rsample((4,))
    draws.sum().backward()
    noise = dl.linalg.solve(tril.detach(), (draws.detach() - loc.detach()).mT).mT
    np.testing.assert_allclose(loc.grad.numpy(), [4.0, 4.0])
    np.testing.assert_allclose(tril.grad.numpy(), np.ones((2, 1)) @ noise.sum(0, keepdim=True).numpy(),
                               rtol=1e-4, atol=1e-5)
    high = dl.tensor(3.0, requires_grad=True)
    draws = D.Uniform(1.0, high).rsample((6,))
    draws.sum().backward()
    np.testing.assert_allclose(high.grad.item(), ((draws.detach() - 1.0) / 2.0).sum().item(), rtol=1e-5)


def test_sample_is_detached_and_rsample_is_not():
    loc = dl.zeros(2, requires_grad=True)
    d = D.Normal(loc, 1.0)
    assert d.sample().requires_grad is False and d.rsample().requires_grad is True
    assert D.Normal(0.0, 1.0).has_rsample and not D.Categorical(dl.ones(2)).has_rsample
    with pytest.raises(NotImplementedError):
        D.Categorical(dl.ones(2)).rsample()


def test_expand_shares_parameters_and_keeps_validation():
    d = D.Categorical(logits=dl.zeros(3), validate_args=False)
    wide = d.expand((4, 2))
    assert tuple(wide.batch_shape) == (4, 2) and tuple(wide.sample((5,)).shape) == (5, 4, 2)
    assert wide._validate_args is False
    assert wide.logits.stride()[:2] == (0, 0)  # a view of the one row of logits, not a copy
    np.testing.assert_array_equal(wide.log_prob(dl.tensor(1)).numpy(), np.full((4, 2), np.log(1 / 3), np.float32))
