"""nn.functional margin and embedding losses: margin_ranking, hinge_embedding, soft_margin, cosine_embedding,
triplet_margin, multi_margin, multilabel_margin, multilabel_soft_margin.

Each is a composition of differentiable ``dl.*`` functions in torch's order of
operations (autograd differentiates it, the compiler traces it into one graph); shapes
are checked first, with torch's exception types and messages.
"""
from __future__ import annotations

from ...ops.core import api as ops
from ...tensor.dtype import int64
from .activation import logsigmoid
from .loss import _checked_reduction, _reduce
from .distance import pairwise_distance

__all__ = [
    "cosine_embedding_loss", "hinge_embedding_loss", "margin_ranking_loss", "multi_margin_loss",
    "multilabel_margin_loss", "multilabel_soft_margin_loss", "soft_margin_loss", "triplet_margin_loss",
]

#: Added to the squared norms of cosine_embedding_loss (a zero vector has cosine 0, not NaN).
COSINE_EPSILON = 1e-12


def margin_ranking_loss(input1, input2, target, margin: float = 0, size_average=None, reduce=None,
                        reduction: str = "mean"):
    """``max(0, -target * (input1 - input2) + margin)``: ``target`` (+1/-1) says which input should rank higher.

    Example:
        >>> F.margin_ranking_loss(dl.tensor([1.0]), dl.tensor([2.0]), dl.tensor([1.0])).item()
        1.0
    """
    reduction = _checked_reduction(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} ")
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0), reduction)


def hinge_embedding_loss(input, target, margin: float = 1.0, size_average=None, reduce=None,
                         reduction: str = "mean"):
    """``input`` where ``target == 1``, ``max(0, margin - input)`` where ``target == -1``.

    Example:
        >>> F.hinge_embedding_loss(dl.tensor([0.3, 0.3]), dl.tensor([1.0, -1.0])).item()
        0.5
    """
    reduction = _checked_reduction(size_average, reduce, reduction)
    zeros = ops.zeros_like(input)
    margin_term = ops.where(target != 1, (margin - input).clamp_min(0), zeros)
    return _reduce(margin_term + ops.where(target != -1, input, zeros), reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction: str = "mean"):
    """Two-class logistic loss ``log(1 + exp(-target * input))``.

    Example:
        >>> round(F.soft_margin_loss(dl.tensor([0.0]), dl.tensor([1.0])).item(), 4)
        0.6931
    """
    reduction = _checked_reduction(size_average, reduce, reduction)
    return _reduce(ops.log1p(ops.exp(-input * target)), reduction)


def cosine_embedding_loss(input1, input2, target, margin: float = 0, size_average=None, reduce=None,
                          reduction: str = "mean"):
    """``1 - cos(x1, x2)`` where ``target == 1``, ``max(0, cos(x1, x2) - margin)`` where ``target == -1``.

    Args:
        input1, input2: ``(N, D)`` (with a ``(N,)`` target) or ``(D,)`` (with a 0-d target).

    Example:
        >>> F.cosine_embedding_loss(dl.tensor([[1.0, 0.0]]), dl.tensor([[0.0, 1.0]]), dl.tensor([1.0])).item()
        1.0
    """
    reduction = _checked_reduction(size_average, reduce, reduction)
    dim = target.dim()
    if dim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if input1.dim() != dim + 1 or input2.dim() != dim + 1:
        raise RuntimeError(f"{dim}D target tensor expects {dim + 1}D input tensors, but found inputs with sizes "
                           f"{list(input1.shape)} and {list(input2.shape)}.")
    dot = (input1 * input2).sum(dim)
    norms = ((input1 * input1).sum(dim) + COSINE_EPSILON) * ((input2 * input2).sum(dim) + COSINE_EPSILON)
    cos = dot / norms.sqrt()
    zeros = ops.zeros_like(cos)
    loss = ops.where(target == 1, 1 - cos, zeros) + ops.where(target == -1, (cos - margin).clamp_min(0), zeros)
    return _reduce(loss, reduction)


def triplet_margin_loss(anchor, positive, negative, margin: float = 1.0, p: float = 2, eps: float = 1e-6,
                        swap: bool = False, size_average=None, reduce=None, reduction: str = "mean"):
    """``max(0, margin + d(anchor, positive) - d(anchor, negative))`` with ``d`` the ``p``-norm distance.

    ``swap=True`` uses ``min(d(anchor, negative), d(positive, negative))`` as the negative distance.

    Example:
        >>> a, pos, neg = dl.zeros(1, 2), dl.zeros(1, 2), dl.ones(1, 2)
        >>> round(F.triplet_margin_loss(a, pos, neg, margin=2.0).item(), 4)
        0.5858
    """
    reduction = _checked_reduction(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    dims = (anchor.dim(), positive.dim(), negative.dim())
    if len(set(dims)) != 1:
        raise RuntimeError("The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {dims[0]}D, positive {dims[1]}D, and negative {dims[2]}D inputs")
    to_positive = pairwise_distance(anchor, positive, p, eps)
    to_negative = pairwise_distance(anchor, negative, p, eps)
    if swap:
        to_negative = ops.minimum(to_negative, pairwise_distance(positive, negative, p, eps))
    return _reduce((margin + to_positive - to_negative).clamp_min(0), reduction)


def _check_class_scores(input) -> None:
    if input.dim() > 2 or (input.dim() >= 1 and input.shape[-1] == 0):
        raise RuntimeError("Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(input.shape)}")


def multi_margin_loss(input, target, p: int = 1, margin: float = 1.0, weight=None, size_average=None,
                      reduce=None, reduction: str = "mean"):
    """Multi-class hinge loss: ``sum_{i != y} max(0, margin - x[y] + x[i]) ** p / C`` per sample.

    Args:
        input: scores ``(N, C)`` or ``(C,)``.
        target: class indices ``(N,)`` (or a 0-d/1-element tensor for a ``(C,)`` input).
        p: 1 or 2.
        weight: a per-class weight ``(C,)`` scaling each sample's terms by its target's weight.

    Example:
        >>> F.multi_margin_loss(dl.tensor([[0.1, 0.2, 0.4, 0.8]]), dl.tensor([3])).item()
        0.325...
    """
    reduction = _checked_reduction(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    _check_class_scores(input)
    scores = input.reshape(-1, input.shape[-1] if input.dim() else 1)
    samples, classes = scores.shape
    if target.dim() > 1 or target.numel() != samples:
        raise RuntimeError("multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
                           f"samples (batch size). Expected target size [{samples}], but got {list(target.shape)}. "
                           f"Input has shape {list(input.shape)}.")
    picked = target.reshape(samples, 1)
    terms = (margin - scores.gather(1, picked) + scores).clamp_min(0)
    if p == 2:
        terms = terms * terms
    if weight is not None:
        terms = terms * weight.index_select(0, picked.reshape(-1)).reshape(samples, 1)
    not_target = ops.arange(classes, device=input.device) != picked
    loss = (terms * not_target).sum(1) / classes
    if reduction == "none":
        return loss if input.dim() == 2 or target.dim() else loss.reshape(())
    return _reduce(loss, reduction)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction: str = "mean"):
    """Multi-label hinge loss: ``sum_j sum_{i not a target} max(0, 1 - (x[y_j] - x[i])) / C`` per sample.

    ``target`` has ``input``'s shape and holds each sample's target classes first,
    ended by the first ``-1`` (what follows it is ignored).

    Example:
        >>> F.multilabel_margin_loss(dl.tensor([[0.1, 0.2, 0.4, 0.8]]), dl.tensor([[3, 0, -1, 1]])).item()
        0.85
    """
    reduction = _checked_reduction(size_average, reduce, reduction)
    _check_class_scores(input)
    classes = input.shape[-1] if input.dim() else 1
    if input.dim() == 2:
        consistent = target.dim() == 2 and tuple(target.shape) == tuple(input.shape)
    else:
        consistent = target.dim() <= 1 and target.numel() == classes
    if not consistent:
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}")
    scores = input.reshape(-1, classes)
    labels = target.reshape(-1, classes)
    listed = (labels == -1).to(int64).cumsum(1) == 0  # positions before the first -1
    safe = ops.where(listed, labels, 0)
    is_target = ((safe.unsqueeze(2) == ops.arange(classes, device=input.device)) & listed.unsqueeze(2)).any(1)
    target_scores = scores.gather(1, safe)
    hinge = (1 - target_scores.unsqueeze(2) + scores.unsqueeze(1)).clamp_min(0)
    pairs = listed.unsqueeze(2) & ~is_target.unsqueeze(1)
    loss = (hinge * pairs).sum((1, 2)) / classes
    if reduction == "none":
        return loss if input.dim() == 2 else loss.reshape(())
    return _reduce(loss, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction: str = "mean"):
    """Multi-label one-versus-all logistic loss, averaged over the classes (last dim).

    Example:
        >>> round(F.multilabel_soft_margin_loss(dl.zeros(1, 2), dl.tensor([[1.0, 0.0]])).item(), 4)
        0.6931
    """
    if size_average is not None or reduce is not None:
        reduction = _checked_reduction(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(input.dim() - 1) / input.shape[input.dim() - 1]
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    return _reduce(loss, reduction)
