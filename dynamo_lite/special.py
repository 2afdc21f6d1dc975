"""dl.special: torch.special's names, as aliases and small compositions of dl's ops.

Example:
    >>> dl.special.expit(dl.tensor([0.0])).tolist()
    [0.5]
"""
from __future__ import annotations

import math

from .ops.core import api as _api

__all__ = ["erf", "erfc", "erfinv", "exp2", "expit", "expm1", "log1p", "log_softmax", "logit", "logsumexp", "ndtr",
           "softmax", "xlogy"]

erf, erfc, erfinv, expm1, log1p = _api.erf, _api.erfc, _api.erfinv, _api.expm1, _api.log1p
expit = _api.sigmoid
logsumexp = _api.logsumexp


def softmax(input, dim, *, dtype=None):
    """``dl.softmax`` (torch.special's keyword-only ``dtype``)."""
    return _api.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    """``dl.log_softmax`` (torch.special's keyword-only ``dtype``)."""
    return _api.log_softmax(input, dim, dtype=dtype)


def exp2(input):
    """``2 ** input``.

    Example:
        >>> dl.special.exp2(dl.tensor([3.0])).tolist()
        [8.0]
    """
    return _api.pow(2.0, input if input.dtype.is_floating_point else input.float())


def logit(input, eps=None):
    """``log(p / (1 - p))``, with ``p`` clamped to ``[eps, 1 - eps]`` when ``eps`` is given.

    Example:
        >>> dl.special.logit(dl.tensor([0.5])).tolist()
        [0.0]
    """
    p = input if eps is None else input.clamp(eps, 1 - eps)
    return _api.log(p / (1 - p))


def ndtr(input):
    """The standard normal distribution function ``P(Z <= input)``.

    Example:
        >>> dl.special.ndtr(dl.tensor([0.0])).tolist()
        [0.5]
    """
    return 0.5 * _api.erfc(input * (-1 / math.sqrt(2)))


def xlogy(input, other):
    """``input * log(other)``, 0 where ``input`` is 0 (even where ``other`` is 0), NaN where ``other`` is NaN.

    Example:
        >>> dl.special.xlogy(dl.tensor([0.0, 2.0]), dl.tensor([0.0, 1.0])).tolist()
        [0.0, 0.0]
    """
    product = input * _api.log(other)
    return _api.where((input == 0) & ~_api.isnan(other), _api.zeros_like(product), product)
