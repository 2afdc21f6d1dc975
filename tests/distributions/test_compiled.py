"""dl.distributions in compiled code: equal to eager, with the graph breaks counted.

Without validation a distribution's construction, log_prob, entropy, KL and draws trace into
one graph; validation reads tensor values (NOTE: [distribution validation]), so each check is
a graph break.
"""
from __future__ import annotations

import copy

import numpy as np
import pytest

import dynamo_lite as dl
from tests.helpers import assert_compiled, assert_same

D = dl.distributions


def normal_terms(loc, scale, x):
    d = D.Normal(loc, scale, validate_args=False)
    return d.log_prob(x), d.entropy(), d.cdf(x), d.icdf(dl.sigmoid(x)), d.mean, d.stddev


def categorical_terms(logits, actions):
    d = D.Categorical(logits=logits, validate_args=False)
    return d.log_prob(actions), d.entropy(), d.probs, d.mode


def bernoulli_terms(probs, x):
    d = D.Bernoulli(probs=probs, validate_args=False)
    return d.log_prob(x), d.entropy(), d.logits, d.variance


def mvn_terms(loc, cov, x):
    d = D.MultivariateNormal(loc, covariance_matrix=cov, validate_args=False)
    return d.log_prob(x), d.entropy(), d.variance


def independent_terms(loc, scale, x):
    d = D.Independent(D.Normal(loc, scale, validate_args=False), 1)
    return d.log_prob(x), d.entropy()


def kl_terms(logits_p, logits_q, loc):
    categorical = D.kl_divergence(D.Categorical(logits=logits_p, validate_args=False),
                                  D.Categorical(logits=logits_q, validate_args=False))
    normal = D.kl_divergence(D.Normal(loc, 1.0, validate_args=False), D.Normal(0.0, 2.0, validate_args=False))
    return categorical, normal


def validated_normal(loc, scale, x):
    return D.Normal(loc, scale).log_prob(x)


def _args():
    dl.manual_seed(0)
    cov = dl.tensor([[2.0, 0.3, 0.0], [0.3, 1.0, 0.2], [0.0, 0.2, 0.5]])
    return {
        normal_terms: (dl.randn(4), dl.rand(4) + 0.5, dl.randn(3, 4)),
        categorical_terms: (dl.randn(2, 5), dl.tensor([[1, 4], [0, 2], [3, 3]])),
        bernoulli_terms: (dl.rand(3) * 0.8 + 0.1, dl.tensor([1.0, 0.0, 1.0])),
        mvn_terms: (dl.randn(3), cov, dl.randn(4, 3)),
        independent_terms: (dl.randn(2, 3), dl.rand(2, 3) + 0.5, dl.randn(2, 3)),
        kl_terms: (dl.randn(3, 4), dl.randn(4), dl.randn(2)),
    }


@pytest.mark.parametrize("fn", list(_args()), ids=lambda fn: fn.__name__)
def test_one_graph_without_validation(fn):
    assert_same(fn, *_args()[fn], backend="numpy")


def test_validation_breaks_the_graph_and_raises_the_same_error():
    loc, scale, x = dl.randn(3), dl.rand(3) + 0.5, dl.randn(3)
    assert_same(validated_normal, loc, scale, x, backend="numpy", expect_breaks=2)  # as dl.explain counts them
    assert_same(validated_normal, loc, -scale, x, backend="numpy", expect_breaks=1, expect_graphs=False)


def test_compiled_draws_equal_eager_draws_under_manual_seed():
    def draw(loc):
        return (D.Normal(loc, 1.0, validate_args=False).rsample((3,)),
                D.Categorical(logits=loc, validate_args=False).sample((4,)))

    compiled = dl.compile(draw, backend="numpy")
    loc = dl.randn(5)
    before = dl.stats()
    for seed in (1, 2):
        dl.manual_seed(seed)
        expected = draw(loc)
        dl.manual_seed(seed)
        actual = compiled(loc)
        for got, want in zip(actual, expected):
            np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert_compiled(before, dl.stats())


def test_port_reinforce_step_compiled_equals_eager():
    """A REINFORCE update as written for torch: Categorical policy, log_prob * return, entropy bonus."""
    dl.manual_seed(0)
    policy = dl.nn.Sequential(dl.nn.Linear(4, 16), dl.nn.Tanh(), dl.nn.Linear(16, 3))
    twin = copy.deepcopy(policy)

    def make_step(model):
        optimizer = dl.optim.SGD(model.parameters(), lr=0.1)

        def step(obs, actions, returns):
            dist = D.Categorical(logits=model(obs))
            loss = -(dist.log_prob(actions) * returns).mean() - 0.01 * dist.entropy().mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            return loss

        return step

    eager_step, compiled_step = make_step(policy), dl.compile(make_step(twin), backend="numpy")
    before = dl.stats()
    for _ in range(3):
        obs = dl.randn(8, 4)
        with dl.no_grad():
            actions = D.Categorical(logits=policy(obs)).sample()
        returns = dl.randn(8)
        np.testing.assert_allclose(compiled_step(obs, actions, returns).item(), eager_step(obs, actions, returns).item(),
                                   rtol=1e-5)
    for p, q in zip(policy.parameters(), twin.parameters()):
        np.testing.assert_allclose(q.detach().numpy(), p.detach().numpy(), rtol=1e-5, atol=1e-6)
    # validation (parameters, then the actions) and backward() are the graph breaks
    assert_compiled(before, dl.stats(), expect_breaks=dl.stats().graph_breaks - before.graph_breaks)
    assert dl.stats().graph_breaks - before.graph_breaks > 0
