"""KL divergences between distributions, looked up in a registry keyed by the pair of types.

Example:
    >>> from dynamo_lite.distributions import Normal, kl_divergence
    >>> round(kl_divergence(Normal(0.0, 1.0), Normal(1.0, 1.0)).item(), 4)
    0.5
"""
from __future__ import annotations

import warnings

from ..nn import functional as F
from ..ops.linalg.matrix_solve import OPS as SOLVE_OPS
from .discrete import Bernoulli, Categorical, OneHotCategorical
from .distribution import Distribution, ExponentialFamily
from .independent import Independent
from .multivariate_normal import MultivariateNormal
from .continuous import Normal, Uniform
from .utils import sum_rightmost

__all__ = ["kl_divergence", "register_kl"]

#: ``(type of p, type of q, kl(p, q))`` in registration order. Module-level because registrations are
#: declarations; a list rather than a dict keyed by types because the compiler traces a lookup in it.
KL_REGISTRY: list = []


def register_kl(type_p, type_q):
    """Decorator registering ``fn(p, q)`` as KL(p || q) for ``p``, ``q`` instances of these types (or subclasses).

    Example:
        >>> @register_kl(MyDistribution, MyDistribution)
        ... def _kl_mine(p, q):
        ...     return (p.rate - q.rate).abs()
    """
    for name, type_ in (("type_p", type_p), ("type_q", type_q)):
        if not (isinstance(type_, type) and issubclass(type_, Distribution)):
            raise TypeError(f"Expected {name} to be a Distribution subclass but got {type_}")

    def decorator(fn):
        KL_REGISTRY[:] = [entry for entry in KL_REGISTRY if entry[:2] != (type_p, type_q)] + [(type_p, type_q, fn)]
        return fn

    return decorator


def _nearest(entries, rank):
    """The entry of lowest rank (the first of equals): ``min`` with a key, in a loop the compiler folds."""
    best = entries[0]
    for entry in entries[1:]:
        if rank(entry) < rank(best):
            best = entry
    return best


def _lookup(type_p, type_q):
    """The function of the registered pair closest to ``(type_p, type_q)``: nearest in p's MRO first,
    then in q's (a warning when the nearest in q's MRO first is another function)."""
    matches = [entry for entry in KL_REGISTRY if issubclass(type_p, entry[0]) and issubclass(type_q, entry[1])]
    if not matches:
        return None
    left = _nearest(matches, lambda entry: (type_p.__mro__.index(entry[0]), type_q.__mro__.index(entry[1])))
    right = _nearest(matches, lambda entry: (type_q.__mro__.index(entry[1]), type_p.__mro__.index(entry[0])))
    if left[2] is not right[2]:
        warnings.warn(f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). "
                      f"Please register_kl({left[0].__name__}, {right[1].__name__})", RuntimeWarning, stacklevel=3)
    return left[2]


def kl_divergence(p, q):
    """KL(p || q) per batch element, from the most specific registered pair of types.

    Raises:
        NotImplementedError: no registered pair matches.
    """
    fn = _lookup(type(p), type(q))
    if fn is None:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type {type(p).__name__} "
                                  f"and q type {type(q).__name__}")
    return fn(p, q)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    variance_ratio = (p.scale / q.scale).pow(2)
    shift = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (variance_ratio + shift - 1 - variance_ratio.log())


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    """Infinite where q excludes a value p can take; 0 terms where p cannot take it."""
    inf = float("inf")
    ones = p.probs * (F.softplus(-q.logits) - F.softplus(-p.logits))
    ones = ones.masked_fill(q.probs == 0, inf).masked_fill(p.probs == 0, 0.0)
    zeros = (1 - p.probs) * (F.softplus(q.logits) - F.softplus(p.logits))
    zeros = zeros.masked_fill(q.probs == 1, inf).masked_fill(p.probs == 1, 0.0)
    return ones + zeros


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    terms = p.probs * (p.logits - q.logits)
    terms = terms.masked_fill((q.probs == 0).expand_as(terms), float("inf"))
    terms = terms.masked_fill((p.probs == 0).expand_as(terms), 0.0)
    return terms.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return result.masked_fill((q.low > p.low) | (q.high < p.high), float("inf"))


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    """0.5 (tr(Sq^-1 Sp) + |Lq^-1 (mq - mp)|^2 - k + log det Sq - log det Sp), with the Cholesky factors."""
    if p._event_shape != q._event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with different event shapes cannot be "
                         "computed")
    solve = SOLVE_OPS["linalg_solve"]
    k = p._event_shape[0]
    trace = solve(q._unbroadcasted_scale_tril, p._unbroadcasted_scale_tril).pow(2).sum((-2, -1))
    shift = solve(q._unbroadcasted_scale_tril, (q.loc - p.loc).unsqueeze(-1)).squeeze(-1).pow(2).sum(-1)
    return q._half_log_det() - p._half_log_det() + 0.5 * (trace + shift - k)


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    raise NotImplementedError("The cross KL-divergence between different exponential families cannot "
                              "                            be computed using Bregman divergences")
