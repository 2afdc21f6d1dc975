"""dl.distributions: probability distributions with sampling (reparameterized where possible),
log densities, entropies and KL divergences, as torch.distributions.

Example:
    >>> d = dl.distributions.Categorical(logits=dl.zeros(4))
    >>> round(d.entropy().item(), 4)
    1.3863
"""
from . import constraints
from .discrete import Bernoulli, Categorical, OneHotCategorical
from .distribution import Distribution, ExponentialFamily
from .independent import Independent
from .kl import kl_divergence, register_kl
from .multivariate_normal import MultivariateNormal
from .continuous import Normal, Uniform

__all__ = [
    "Bernoulli", "Categorical", "Distribution", "ExponentialFamily", "Independent", "MultivariateNormal", "Normal",
    "OneHotCategorical", "Uniform", "constraints", "kl_divergence", "register_kl",
]
