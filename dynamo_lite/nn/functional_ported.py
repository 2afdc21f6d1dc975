"""nn.functional additions for ported code: prelu, kl_div, smooth_l1_loss, huber_loss, pairwise_distance.

Written with differentiable ``dl.*`` functions (autograd differentiates them, the compiler
traces them into the caller's graph), in torch's order of operations.
"""
from __future__ import annotations

import warnings

import dynamo_lite as dl

from . import functional_loss as L

__all__ = ["huber_loss", "kl_div", "pairwise_distance", "prelu", "smooth_l1_loss"]


def prelu(input, weight):
    """``input`` where positive, else ``weight * input``; ``weight`` holds one slope or one per channel (dim 1).

    Example:
        >>> F.prelu(dl.tensor([-2.0, 3.0]), dl.tensor([0.25])).tolist()
        [-0.5, 3.0]
    """
    channels = input.shape[1] if input.dim() >= 2 else 1
    if weight.numel() != 1 and weight.numel() != channels:
        raise RuntimeError("Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                           f"{weight.numel()} and channel size = {channels}.")
    slope = weight.reshape(()) if weight.numel() == 1 else weight.reshape((channels,) + (1,) * (input.dim() - 2))
    return dl.where(input > 0, input, slope * input)


def kl_div(input, target, size_average=None, reduce=None, reduction: str = "mean", log_target: bool = False):
    """Kullback-Leibler divergence of ``target`` from log-probabilities ``input``, pointwise then reduced.

    ``reduction="batchmean"`` divides the sum by the batch size (the mathematical KL
    divergence); ``log_target=True`` takes ``target`` as log-probabilities too.

    Example:
        >>> F.kl_div(dl.tensor([[-1.0, -0.5]]), dl.tensor([[0.5, 0.5]]), reduction="batchmean").item()
        0.0568...
    """
    reduction = L.legacy_reduction(size_average, reduce, reduction)
    if reduction not in L.REDUCTIONS + ("batchmean",):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                      "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                      "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                      UserWarning, stacklevel=2)
    if log_target:
        loss = dl.exp(target) * (target - input)
    else:  # target * log(target) is 0 where target is 0 (torch's xlogy), NaN where it is negative
        loss = target * dl.log(dl.where(target == 0, dl.ones_like(target), target)) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.dim() != 0 else loss.sum()
    return L._reduce(loss, reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction: str = "mean", beta: float = 1.0):
    """Squared error below ``beta`` (scaled by ``1/beta``), absolute error minus ``beta/2`` above it.

    Example:
        >>> F.smooth_l1_loss(dl.tensor([0.5, 3.0]), dl.zeros(2)).item()
        1.3125
    """
    reduction = L._checked_reduction(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    L._warn_broadcast(input, target)
    error = (input - target).abs()
    if beta == 0:
        return L._reduce(error, reduction)
    return L._reduce(dl.where(error < beta, 0.5 * error * error / beta, error - 0.5 * beta), reduction)


def huber_loss(input, target, reduction: str = "mean", delta: float = 1.0, weight=None):
    """Squared error below ``delta``, ``delta``-scaled absolute error above it (optionally weighted).

    Example:
        >>> F.huber_loss(dl.tensor([0.5, 3.0]), dl.zeros(2), delta=2.0).item()
        2.0625
    """
    if reduction not in L.REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    L._warn_broadcast(input, target)
    error = (input - target).abs()
    loss = dl.where(error < delta, 0.5 * error * error, delta * (error - 0.5 * delta))
    return L._reduce(loss if weight is None else loss * weight, reduction)


def pairwise_distance(x1, x2, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
    """The ``p``-norm of ``x1 - x2 + eps`` over the last dimension (inputs broadcast together).

    Example:
        >>> F.pairwise_distance(dl.tensor([[0.0, 0.0]]), dl.tensor([[3.0, 4.0]])).tolist()
        [4.99998...]
    """
    difference = x1 - x2 + eps
    return dl.norm(difference, p, max(difference.dim() - 1, 0) if difference.dim() else None, keepdim)
