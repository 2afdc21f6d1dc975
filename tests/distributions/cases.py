"""Distribution cases written once against the torch API: each takes the library (``torch`` or
``dynamo_lite``) and returns tensors, so the same function records torch's answers and tests ours.

Deterministic quantities only (log_prob, entropy, cdf, mean, variance, KL, gradients): sampling
draws from each library's own generator, so draws are tested for shape and statistics instead.
"""
from __future__ import annotations

import numpy as np

_RNG = np.random.default_rng(7)
LOC = _RNG.normal(size=(2, 3)).round(3).tolist()
SCALE = (_RNG.uniform(0.5, 2.0, size=(2, 3))).round(3).tolist()
VALUE = _RNG.normal(size=(4, 2, 3)).round(3).tolist()
PROBS = _RNG.uniform(0.05, 0.95, size=(2, 3)).round(3).tolist()
LOGITS = _RNG.normal(size=(2, 4)).round(3).tolist()
WEIGHTS = _RNG.uniform(0.1, 1.0, size=(2, 4)).round(3).tolist()
_A = _RNG.normal(size=(2, 3, 3))
COVARIANCE = (_A @ _A.transpose(0, 2, 1) + np.eye(3)).round(3).tolist()
MV_VALUE = _RNG.normal(size=(5, 2, 3)).round(3).tolist()


def _normal(t, **kw):
    return t.distributions.Normal(t.tensor(LOC), t.tensor(SCALE), **kw)


def normal_stats(t):
    d = _normal(t)
    return d.log_prob(t.tensor(VALUE)), d.entropy(), d.cdf(t.tensor(VALUE)), d.mean, d.variance, d.stddev, d.mode


def normal_icdf_scalar(t):
    d = t.distributions.Normal(1.5, 2.0)
    return d.icdf(t.tensor([0.1, 0.5, 0.9])), d.log_prob(t.tensor(0.3)), d.entropy(), d.perplexity()


def normal_log_prob_grad(t):
    loc = t.tensor(LOC, dtype=t.float64, requires_grad=True)
    scale = t.tensor(SCALE, dtype=t.float64, requires_grad=True)
    lp = t.distributions.Normal(loc, scale).log_prob(t.tensor(VALUE, dtype=t.float64)).sum()
    return t.autograd.grad(lp, (loc, scale))


def normal_expand(t):
    d = t.distributions.Normal(t.tensor(LOC[0]), 1.0).expand((2, 3))
    return d.log_prob(t.tensor(VALUE)), d.loc, d.scale


def bernoulli_probs(t):
    d = t.distributions.Bernoulli(probs=t.tensor(PROBS))
    value = t.tensor([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]])
    return d.log_prob(value), d.entropy(), d.mean, d.variance, d.logits, d.mode, d.enumerate_support()


def bernoulli_logits(t):
    d = t.distributions.Bernoulli(logits=t.tensor(LOC))
    return d.log_prob(t.tensor([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]])), d.entropy(), d.probs, d.variance


def bernoulli_logits_grad(t):
    logits = t.tensor(LOC, dtype=t.float64, requires_grad=True)
    d = t.distributions.Bernoulli(logits=logits)
    total = d.log_prob(t.tensor([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]], dtype=t.float64)).sum() + d.entropy().sum()
    return t.autograd.grad(total, logits)


def categorical_probs(t):
    d = t.distributions.Categorical(probs=t.tensor(WEIGHTS))
    value = t.tensor([[0, 3], [2, 1], [3, 3]])
    return d.log_prob(value), d.entropy(), d.probs, d.logits, d.mode, d.mean, d.enumerate_support()


def categorical_logits(t):
    d = t.distributions.Categorical(logits=t.tensor(LOGITS))
    return d.log_prob(t.tensor([1, 2])), d.entropy(), d.probs, d.logits


def categorical_logits_grad(t):
    logits = t.tensor(LOGITS, dtype=t.float64, requires_grad=True)
    d = t.distributions.Categorical(logits=logits)
    return t.autograd.grad(d.log_prob(t.tensor([1, 3])).sum() * 2 + d.entropy().sum(), logits)


def categorical_expand(t):
    d = t.distributions.Categorical(logits=t.tensor(LOGITS[0])).expand((3,))
    return d.log_prob(t.tensor([0, 1, 2])), d.logits, d.entropy()


def one_hot_categorical(t):
    d = t.distributions.OneHotCategorical(probs=t.tensor(WEIGHTS))
    value = t.tensor([[0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]])
    return d.log_prob(value), d.entropy(), d.mean, d.variance, d.mode, d.enumerate_support()


def uniform_stats(t):
    d = t.distributions.Uniform(t.tensor([0.0, -1.0, 2.0]), t.tensor([1.0, 3.0, 2.5]))
    value = t.tensor([0.5, 3.5, 2.2])
    return (t.distributions.Uniform(t.tensor([0.0, -1.0, 2.0]), t.tensor([1.0, 3.0, 2.5]),
                                    validate_args=False).log_prob(value),
            d.log_prob(t.tensor([0.5, 0.0, 2.2])), d.entropy(), d.mean, d.variance, d.stddev,
            d.cdf(t.tensor([0.5, 0.0, 2.2])), d.icdf(t.tensor([0.5, 0.25, 1.0])))


def independent_normal(t):
    d = t.distributions.Independent(_normal(t), 1)
    return d.log_prob(t.tensor(VALUE)), d.entropy(), d.mean, d.variance


def independent_expand(t):
    d = t.distributions.Independent(t.distributions.Normal(t.tensor(LOC[0]), 1.0), 1).expand((2,))
    return d.log_prob(t.tensor(VALUE)), d.base_dist.loc


def mvn_covariance(t):
    d = t.distributions.MultivariateNormal(t.tensor(LOC), covariance_matrix=t.tensor(COVARIANCE))
    return d.log_prob(t.tensor(MV_VALUE)), d.entropy(), d.scale_tril, d.variance, d.mean, d.precision_matrix


def mvn_scale_tril_broadcast(t):
    tril = t.linalg.cholesky(t.tensor(COVARIANCE[0]))
    d = t.distributions.MultivariateNormal(t.tensor(LOC), scale_tril=tril)
    return d.log_prob(t.tensor(MV_VALUE)), d.entropy(), d.covariance_matrix


def mvn_precision(t):
    precision = t.linalg.inv(t.tensor(COVARIANCE, dtype=t.float64))
    d = t.distributions.MultivariateNormal(t.tensor(LOC, dtype=t.float64), precision_matrix=precision)
    return d.log_prob(t.tensor(MV_VALUE, dtype=t.float64)), d.covariance_matrix


def mvn_grad(t):
    loc = t.tensor(LOC, dtype=t.float64, requires_grad=True)
    cov = t.tensor(COVARIANCE, dtype=t.float64, requires_grad=True)
    d = t.distributions.MultivariateNormal(loc, covariance_matrix=cov)
    return t.autograd.grad(d.log_prob(t.tensor(MV_VALUE, dtype=t.float64)).sum() + d.entropy().sum(), (loc, cov))


def cholesky_values(t):
    a = t.tensor(COVARIANCE, dtype=t.float64)
    return t.linalg.cholesky(a), t.linalg.cholesky(a, upper=True), t.linalg.cholesky(a[0].float())


def cholesky_grad(t):
    a = t.tensor(COVARIANCE, dtype=t.float64, requires_grad=True)
    weights = t.tensor(np.arange(18.0).reshape(2, 3, 3).tolist(), dtype=t.float64)
    return t.autograd.grad((t.linalg.cholesky(a) * weights).sum() + t.linalg.cholesky(a, upper=True).sum(), a)


def kl_normal(t):
    p = _normal(t)
    q = t.distributions.Normal(t.tensor(LOC[1]), t.tensor(SCALE[0]))
    return t.distributions.kl_divergence(p, q), t.distributions.kl_divergence(q, p)


def kl_bernoulli(t):
    p = t.distributions.Bernoulli(probs=t.tensor([0.3, 0.0, 1.0, 0.5, 0.2]))
    q = t.distributions.Bernoulli(probs=t.tensor([0.6, 0.5, 0.5, 0.0, 1.0]))
    return t.distributions.kl_divergence(p, q), t.distributions.kl_divergence(q, p)


def kl_categorical(t):
    p = t.distributions.Categorical(probs=t.tensor(WEIGHTS))
    q = t.distributions.Categorical(logits=t.tensor(LOGITS))
    zero = t.distributions.Categorical(probs=t.tensor([0.5, 0.0, 0.5, 0.0]))
    return (t.distributions.kl_divergence(p, q), t.distributions.kl_divergence(zero, p),
            t.distributions.kl_divergence(p, zero))


def kl_other_pairs(t):
    D = t.distributions
    ind_p, ind_q = D.Independent(_normal(t), 1), D.Independent(D.Normal(t.tensor(LOC[1]), 1.0).expand((2, 3)), 1)
    mvn_p = D.MultivariateNormal(t.tensor(LOC), covariance_matrix=t.tensor(COVARIANCE))
    mvn_q = D.MultivariateNormal(t.tensor(LOC[1]), covariance_matrix=t.tensor(COVARIANCE[0]))
    uni_p, uni_q = D.Uniform(t.tensor([0.0, 0.0]), t.tensor([1.0, 2.0])), D.Uniform(-1.0, 1.5)
    onehot_p = D.OneHotCategorical(probs=t.tensor(WEIGHTS))
    onehot_q = D.OneHotCategorical(logits=t.tensor(LOGITS))
    return (D.kl_divergence(ind_p, ind_q), D.kl_divergence(mvn_p, mvn_q), D.kl_divergence(uni_p, uni_q),
            D.kl_divergence(onehot_p, onehot_q))


VALUE_CASES = [
    normal_stats, normal_icdf_scalar, normal_log_prob_grad, normal_expand, bernoulli_probs, bernoulli_logits,
    bernoulli_logits_grad, categorical_probs, categorical_logits, categorical_logits_grad, categorical_expand,
    one_hot_categorical, uniform_stats, independent_normal, independent_expand, mvn_covariance,
    mvn_scale_tril_broadcast, mvn_precision, mvn_grad, cholesky_values, cholesky_grad, kl_normal, kl_bernoulli,
    kl_categorical, kl_other_pairs,
]

#: name -> a call that raises (the same exception type and message are expected from both libraries).
ERROR_CASES = {
    "normal_negative_scale": lambda t: t.distributions.Normal(t.tensor([0.0, 1.0]), t.tensor([1.0, -1.0])),
    "normal_nan_loc": lambda t: t.distributions.Normal(t.tensor(float("nan")), 1.0),
    "normal_bad_event_broadcast": lambda t: t.distributions.Normal(t.zeros(3), 1.0).log_prob(t.zeros(2)),
    "normal_not_a_tensor": lambda t: t.distributions.Normal(0.0, 1.0).log_prob(0.5),
    "bernoulli_both": lambda t: t.distributions.Bernoulli(probs=t.tensor(0.5), logits=t.tensor(0.0)),
    "bernoulli_neither": lambda t: t.distributions.Bernoulli(),
    "bernoulli_prob_above_one": lambda t: t.distributions.Bernoulli(probs=t.tensor([0.5, 1.5])),
    "bernoulli_value_outside_support": lambda t: t.distributions.Bernoulli(t.tensor([0.5])).log_prob(t.tensor([0.3])),
    "categorical_scalar_probs": lambda t: t.distributions.Categorical(probs=t.tensor(0.5)),
    "categorical_scalar_logits": lambda t: t.distributions.Categorical(logits=t.tensor(0.5)),
    "categorical_negative_probs": lambda t: t.distributions.Categorical(probs=t.tensor([0.5, -0.5, 1.0])),
    "categorical_value_out_of_range": lambda t: t.distributions.Categorical(t.ones(3)).log_prob(t.tensor(3)),
    "one_hot_value_not_one_hot": lambda t: t.distributions.OneHotCategorical(t.ones(2)).log_prob(t.tensor([1.0, 1.0])),
    "uniform_low_above_high": lambda t: t.distributions.Uniform(t.tensor([0.0, 2.0]), t.tensor([1.0, 1.0])),
    "uniform_value_outside": lambda t: t.distributions.Uniform(0.0, 1.0).log_prob(t.tensor(1.5)),
    "independent_too_many_dims": lambda t: t.distributions.Independent(t.distributions.Normal(t.zeros(3), 1.0), 2),
    "mvn_scalar_loc": lambda t: t.distributions.MultivariateNormal(t.tensor(0.0), t.eye(1)),
    "mvn_two_matrices": lambda t: t.distributions.MultivariateNormal(t.zeros(2), t.eye(2), scale_tril=t.eye(2)),
    "mvn_vector_covariance": lambda t: t.distributions.MultivariateNormal(t.zeros(2), t.ones(2)),
    "mvn_vector_scale_tril": lambda t: t.distributions.MultivariateNormal(t.zeros(2), scale_tril=t.ones(2)),
    "mvn_not_positive_definite": lambda t: t.distributions.MultivariateNormal(
        t.zeros(2), t.tensor([[1.0, 2.0], [2.0, 1.0]])),
    "mvn_upper_scale_tril": lambda t: t.distributions.MultivariateNormal(
        t.zeros(2), scale_tril=t.tensor([[1.0, 2.0], [0.0, 1.0]])),
    "kl_unregistered": lambda t: t.distributions.kl_divergence(
        t.distributions.Categorical(t.ones(2)), t.distributions.Normal(0.0, 1.0)),
    "kl_different_families": lambda t: t.distributions.kl_divergence(
        t.distributions.Normal(0.0, 1.0), t.distributions.Bernoulli(0.3)),
    "cholesky_not_positive_definite": lambda t: t.linalg.cholesky(t.tensor([[1.0, 2.0], [2.0, 1.0]])),
    "cholesky_batch_element": lambda t: t.linalg.cholesky(t.tensor([[[4.0, 0.0], [0.0, 1.0]], [[1.0, 0.0], [0.0, -1.0]]])),
    "cholesky_not_square": lambda t: t.linalg.cholesky(t.ones(2, 3)),
    "cholesky_vector": lambda t: t.linalg.cholesky(t.ones(3)),
    "cholesky_integer": lambda t: t.linalg.cholesky(t.ones(2, 2, dtype=t.long)),
}
