"""nn.functional negative log-likelihood losses of distributions: poisson_nll_loss, gaussian_nll_loss."""
from __future__ import annotations

import math

import dynamo_lite as dl

from .functional_loss import _checked_reduction, _reduce

__all__ = ["gaussian_nll_loss", "poisson_nll_loss"]


def poisson_nll_loss(input, target, log_input: bool = True, full: bool = False, size_average=None,
                     eps: float = 1e-8, reduce=None, reduction: str = "mean"):
    """Poisson negative log-likelihood of ``target`` given the rate ``input`` (or its log with ``log_input``).

    Args:
        log_input: ``input`` is the log-rate: the loss is ``exp(input) - target * input``;
            else ``input - target * log(input + eps)``.
        full: add Stirling's approximation of ``log(target!)`` (where ``target > 1``).

    Example:
        >>> F.poisson_nll_loss(dl.zeros(2), dl.ones(2)).item()
        1.0
    """
    reduction = _checked_reduction(size_average, reduce, reduction)
    if log_input:
        loss = dl.exp(input) - target * input
    else:
        loss = input - target * dl.log(input + eps)
    if full:
        stirling = target * dl.log(target) - target + 0.5 * dl.log(2 * math.pi * target)
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _reduce(loss, reduction)


def _broadcastable_variance(input, var):
    """``var`` shaped to broadcast against ``input`` (one variance per row is allowed), or ValueError."""
    if tuple(var.shape) == tuple(input.shape):
        return var
    if tuple(input.shape[:-1]) == tuple(var.shape):
        return var.unsqueeze(-1)
    if input.dim() == var.dim() and sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1:
        return var
    raise ValueError("var is of incorrect size")


def gaussian_nll_loss(input, target, var, full: bool = False, eps: float = 1e-6, reduction: str = "mean"):
    """Gaussian negative log-likelihood ``0.5 * (log(var) + (input - target) ** 2 / var)`` (+ a constant when ``full``).

    Args:
        input: the expectations.
        target: the samples.
        var: the variances: ``input``'s shape, one per row (``input``'s shape without the
            last dim, or with it 1), or a float for all. Values below ``eps`` count as
            ``eps`` (the gradient still reaches ``var``).

    Example:
        >>> F.gaussian_nll_loss(dl.zeros(2), dl.zeros(2), dl.ones(2)).item()
        0.0
    """
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * dl.ones_like(input)
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    var = _broadcastable_variance(input, var)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var + (var.clamp_min(eps) - var).detach()  # clamped values, the identity's gradient
    loss = 0.5 * (dl.log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)
