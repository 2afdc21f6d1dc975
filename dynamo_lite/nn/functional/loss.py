"""nn.functional losses: cross_entropy, nll_loss, mse_loss, l1_loss, binary_cross_entropy(_with_logits),
kl_div, huber, and the likelihood losses poisson_nll_loss and gaussian_nll_loss.

Each is written with differentiable ``dl.*`` functions (so autograd differentiates them
and the compiler traces them into one graph), in torch's order of operations.
"""
from __future__ import annotations

import warnings

from ...ops.core import api as ops
from ...ops.autocast.policy import float32_function
from ...ops.nn.class_targets import nll_class_targets
from ...ops.core.meta_rules import TYPE_NAMES

import math


__all__ = [
    "gaussian_nll_loss", "poisson_nll_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
    "cross_entropy", "huber_loss", "kl_div", "l1_loss", "mse_loss", "nll_loss", "smooth_l1_loss",
]

REDUCTIONS = ("none", "mean", "sum")


def legacy_reduction(size_average, reduce, reduction: str, stacklevel: int = 3) -> str:
    """The ``reduction`` the deprecated ``size_average``/``reduce`` arguments ask for (their
    warning names the frame ``stacklevel`` up: the caller of the function calling this)."""
    if size_average is None and reduce is None:
        return reduction
    warnings.warn("size_average and reduce args will be deprecated, please use reduction='"
                  f"{'sum' if size_average is False else 'mean'}' instead.", UserWarning, stacklevel=stacklevel)
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if not reduce:
        return "none"
    return "mean" if size_average else "sum"


def _reduce(loss, reduction: str):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _checked_reduction(size_average, reduce, reduction: str) -> str:
    """The reduction a loss function was asked for (legacy arguments included), validated."""
    reduction = legacy_reduction(size_average, reduce, reduction, stacklevel=4)
    if reduction not in REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _warn_broadcast(input, target) -> None:
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
            "This will likely lead to incorrect results due to broadcasting. Please ensure they have the same size.",
            UserWarning, stacklevel=3,
        )


@float32_function  # in float32 under dl.autocast, as torch
def mse_loss(input, target, size_average=None, reduce=None, reduction: str = "mean", weight=None):
    """Mean squared error ``(input - target) ** 2``, reduced.

    Example:
        >>> F.mse_loss(dl.tensor([1.0, 2.0]), dl.tensor([0.0, 0.0]))
        tensor(2.5000)
    """
    reduction = _checked_reduction(size_average, reduce, reduction)
    _warn_broadcast(input, target)
    diff = input - target
    loss = diff * diff
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


@float32_function  # in float32 under dl.autocast, as torch
def l1_loss(input, target, size_average=None, reduce=None, reduction: str = "mean", weight=None):
    """Mean absolute error ``|input - target|``, reduced.

    Example:
        >>> F.l1_loss(dl.tensor([1.0, -2.0]), dl.tensor([0.0, 0.0]))
        tensor(1.5000)
    """
    reduction = _checked_reduction(size_average, reduce, reduction)
    _warn_broadcast(input, target)
    loss = (input - target).abs()
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def _class_dim(input) -> int:
    return 0 if input.dim() == 1 else 1


def _check_batch(input, target) -> None:
    if input.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.dim()})")
    expected = tuple(input.shape[:1]) + tuple(input.shape[2:]) if input.dim() > 1 else ()
    if input.dim() > 1 and target.dim() >= 1 and target.shape[0] != input.shape[0]:
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                         f"({target.shape[0]}).")
    if tuple(target.shape) != expected:
        raise RuntimeError(f"Expected target size {list(expected)}, got {list(target.shape)}")


def _picked_weights(weight, safe_target, keep):
    """The weight of each element's target class (0 where ignored)."""
    mask = keep.to(safe_target.dtype if weight is None else weight.dtype)
    if weight is None:
        return mask
    return weight.index_select(0, safe_target.reshape(-1)).reshape(safe_target.shape) * mask


@float32_function  # in float32 under dl.autocast, as torch
def nll_loss(input, target, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
             reduction: str = "mean"):
    """Negative log-likelihood of the target classes given log-probabilities ``input`` (N, C, ...).

    Args:
        input: log-probabilities, class dim 1 (or 0 for an unbatched ``(C,)`` input).
        target: class indices, ``input``'s shape without the class dim.
        weight: a per-class rescaling ``(C,)``.
        ignore_index: a target value that contributes nothing (nor to the mean's denominator).
        reduction: ``"none"``, ``"mean"`` (weighted by the targets' class weights) or ``"sum"``.

    Example:
        >>> F.nll_loss(dl.tensor([[-1.0, -2.0]]), dl.tensor([1]))
        tensor(2.)
    """
    reduction = _checked_reduction(size_average, reduce, reduction)
    if target.dtype.is_floating_point:
        raise RuntimeError(f"expected scalar type Long but found {TYPE_NAMES[target.dtype]}")
    _check_batch(input, target)
    dim = _class_dim(input)
    keep = target != ignore_index
    safe = nll_class_targets(target, input.shape[dim], ignore_index)  # NOTE: [loss target bounds]
    picked = input.gather(dim, safe.unsqueeze(dim)).squeeze(dim)
    weights = _picked_weights(weight, safe, keep).to(input.dtype)
    loss = -(picked * weights)
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / weights.sum()


@float32_function  # in float32 under dl.autocast, as torch
def cross_entropy(input, target, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                  reduction: str = "mean", label_smoothing: float = 0.0):
    """Cross entropy between ``softmax(input)`` and class indices or class probabilities.

    Args:
        input: unnormalized logits, class dim 1 (or 0 for an unbatched ``(C,)`` input).
        target: class indices (integer, ``input``'s shape without the class dim) or class
            probabilities (floating, ``input``'s shape).
        weight: a per-class rescaling ``(C,)``.
        ignore_index: with class indices, a target value that contributes nothing.
        reduction: ``"none"``, ``"mean"`` or ``"sum"``.
        label_smoothing: in [0, 1]: mixes the target with the uniform distribution.

    Example:
        >>> logits = dl.tensor([[2.0, 0.5, -1.0]])
        >>> F.cross_entropy(logits, dl.tensor([0]))
        tensor(0.2413)
    """
    reduction = _checked_reduction(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    dim = _class_dim(input)
    log_probs = input.log_softmax(dim)
    classes = input.shape[dim]
    class_shape = [1] * input.dim()
    class_shape[dim] = classes
    weights = None if weight is None else weight.reshape(class_shape)
    if target.dtype.is_floating_point:
        if tuple(target.shape) != tuple(input.shape):
            raise RuntimeError(f"Expected target size {list(input.shape)}, got {list(target.shape)}")
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / classes
        terms = log_probs * target if weights is None else log_probs * target * weights
        loss = -terms.sum(dim)
        if reduction == "mean":
            return loss.sum() / (input.numel() // classes)
        return loss.sum() if reduction == "sum" else loss
    loss = nll_loss(log_probs, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing <= 0:
        return loss
    keep = target != ignore_index
    smooth = -(log_probs if weights is None else log_probs * weights).sum(dim)
    smooth = smooth.masked_fill(~keep, 0.0)
    if reduction == "mean":
        safe = ops.where(keep, target, 0)
        denominator = _picked_weights(weight, safe, keep).to(input.dtype).sum()
        smooth = smooth.sum() / denominator
    elif reduction == "sum":
        smooth = smooth.sum()
    return loss * (1 - label_smoothing) + smooth * (label_smoothing / classes)


@float32_function  # in float32 under dl.autocast, as torch
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction: str = "mean"):
    """``-(target * log(input) + (1 - target) * log(1 - input))``, logs clamped at -100 as torch does.

    Example:
        >>> F.binary_cross_entropy(dl.tensor([0.5]), dl.tensor([1.0]))
        tensor(0.6931)
    """
    reduction = _checked_reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}) "
                         "is deprecated. Please ensure they have the same size.")
    log_p = input.log().clamp(min=-100)
    log_not_p = (1 - input).log().clamp(min=-100)
    loss = -(target * log_p + (1 - target) * log_not_p)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


@float32_function  # in float32 under dl.autocast, as torch
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction: str = "mean", pos_weight=None):
    """Binary cross entropy of ``sigmoid(input)``, computed stably from the logits.

    Args:
        input: logits.
        target: probabilities, ``input``'s shape.
        weight: a rescaling broadcast against the loss.
        pos_weight: a weight of the positive term, broadcast along the last dim (classes).

    Example:
        >>> F.binary_cross_entropy_with_logits(dl.tensor([0.0]), dl.tensor([1.0]))
        tensor(0.6931)
    """
    reduction = _checked_reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    max_val = (-input).clamp(min=0)
    log_terms = ((-max_val).exp() + (-input - max_val).exp()).log()
    if pos_weight is not None:
        log_weight = (pos_weight - 1) * target + 1
        loss = (1 - target) * input + log_weight * (log_terms + max_val)
    else:
        loss = (1 - target) * input + max_val + log_terms
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


@float32_function  # in float32 under dl.autocast, as torch
def kl_div(input, target, size_average=None, reduce=None, reduction: str = "mean", log_target: bool = False):
    """Kullback-Leibler divergence of ``target`` from log-probabilities ``input``, pointwise then reduced.

    ``reduction="batchmean"`` divides the sum by the batch size (the mathematical KL
    divergence); ``log_target=True`` takes ``target`` as log-probabilities too.

    Example:
        >>> F.kl_div(dl.tensor([[-1.0, -0.5]]), dl.tensor([[0.5, 0.5]]), reduction="batchmean").item()
        0.0568...
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    if reduction not in REDUCTIONS + ("batchmean",):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                      "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                      "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                      UserWarning, stacklevel=2)
    if log_target:
        loss = ops.exp(target) * (target - input)
    else:  # target * log(target) is 0 where target is 0 (torch's xlogy), NaN where it is negative
        loss = target * ops.log(ops.where(target == 0, ops.ones_like(target), target)) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.dim() != 0 else loss.sum()
    return _reduce(loss, reduction)


@float32_function  # in float32 under dl.autocast, as torch
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction: str = "mean", beta: float = 1.0):
    """Squared error below ``beta`` (scaled by ``1/beta``), absolute error minus ``beta/2`` above it.

    Example:
        >>> F.smooth_l1_loss(dl.tensor([0.5, 3.0]), dl.zeros(2)).item()
        1.3125
    """
    reduction = _checked_reduction(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    _warn_broadcast(input, target)
    error = (input - target).abs()
    if beta == 0:
        return _reduce(error, reduction)
    return _reduce(ops.where(error < beta, 0.5 * error * error / beta, error - 0.5 * beta), reduction)


@float32_function  # in float32 under dl.autocast, as torch
def huber_loss(input, target, reduction: str = "mean", delta: float = 1.0, weight=None):
    """Squared error below ``delta``, ``delta``-scaled absolute error above it (optionally weighted).

    Example:
        >>> F.huber_loss(dl.tensor([0.5, 3.0]), dl.zeros(2), delta=2.0).item()
        2.0625
    """
    if reduction not in REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    _warn_broadcast(input, target)
    error = (input - target).abs()
    loss = ops.where(error < delta, 0.5 * error * error, delta * (error - 0.5 * delta))
    return _reduce(loss if weight is None else loss * weight, reduction)


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
        loss = ops.exp(input) - target * input
    else:
        loss = input - target * ops.log(input + eps)
    if full:
        stirling = target * ops.log(target) - target + 0.5 * ops.log(2 * math.pi * target)
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
        var = var * ops.ones_like(input)
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    var = _broadcastable_variance(input, var)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var + (var.clamp_min(eps) - var).detach()  # clamped values, the identity's gradient
    loss = 0.5 * (ops.log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)
