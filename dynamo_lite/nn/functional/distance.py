"""nn.functional distances: cosine_similarity and pairwise_distance.

All are compositions of reductions and pointwise ops (see NOTE: [activations as
pointwise compositions]); statistics are biased (``correction=0``) for normalizing and
unbiased for the running variance, as torch keeps them. Running statistics are updated
in place, so a compiled graph carries the update as a mutation of the buffer.
"""
from __future__ import annotations

from ...ops.core import api as ops
from ...tensor.layout import broadcast_shapes

__all__ = ["cosine_similarity", "pairwise_distance"]


def cosine_similarity(x1, x2, dim: int = 1, eps: float = 1e-8):
    """Cosine of the angle between ``x1`` and ``x2`` along ``dim`` (broadcast together).

    Each side is divided by its norm (at least ``eps``) before the dot product, as torch does.

    Example:
        >>> F.cosine_similarity(dl.tensor([[1.0, 0.0]]), dl.tensor([[1.0, 1.0]])).tolist()
        [0.7071067...]
    """
    x1, x2 = _broadcast(x1, x2)
    x1_norm = ops.norm(x1, 2, dim, keepdim=True).clamp_min(eps)
    x2_norm = ops.norm(x2, 2, dim, keepdim=True).clamp_min(eps)
    return ((x1 / x1_norm) * (x2 / x2_norm)).sum(dim)


def _broadcast(x1, x2):
    shape = broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
    return x1.expand(shape), x2.expand(shape)


def pairwise_distance(x1, x2, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
    """The ``p``-norm of ``x1 - x2 + eps`` over the last dimension (inputs broadcast together).

    Example:
        >>> F.pairwise_distance(dl.tensor([[0.0, 0.0]]), dl.tensor([[3.0, 4.0]])).tolist()
        [4.99998...]
    """
    difference = x1 - x2 + eps
    return ops.norm(difference, p, max(difference.dim() - 1, 0) if difference.dim() else None, keepdim)
