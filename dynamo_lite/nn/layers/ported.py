"""Layers for ported code: PReLU, KLDivLoss, SmoothL1Loss, HuberLoss, CosineSimilarity, PairwiseDistance."""
from __future__ import annotations

import dynamo_lite as dl

from .. import functional_norm, functional_ported as P
from ..module import Module
from ..parameter import Parameter
from .loss import _Loss


class PReLU(Module):
    """``x`` where positive, else a learnt slope times ``x`` (one slope, or one per channel).

    Example:
        >>> nn.PReLU(3)(dl.randn(2, 3, 4)).shape
        dl.Size([2, 3, 4])
    """

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(dl.full((num_parameters,), init, device=device, dtype=dtype))

    def forward(self, input):
        return P.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class KLDivLoss(_Loss):
    """Kullback-Leibler divergence loss (see ``F.kl_div``).

    Example:
        >>> nn.KLDivLoss(reduction="batchmean")(dl.log(dl.tensor([[0.5, 0.5]])), dl.tensor([[0.5, 0.5]])).item()
        0.0
    """

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean", log_target: bool = False):
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input, target):
        return P.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class SmoothL1Loss(_Loss):
    """Smooth L1 loss (see ``F.smooth_l1_loss``).

    Example:
        >>> nn.SmoothL1Loss(beta=0.5)(dl.tensor([2.0]), dl.zeros(1)).item()
        1.75
    """

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean", beta: float = 1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input, target):
        return P.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """Huber loss (see ``F.huber_loss``).

    Example:
        >>> nn.HuberLoss(delta=2.0)(dl.tensor([3.0]), dl.zeros(1)).item()
        4.0
    """

    def __init__(self, reduction: str = "mean", delta: float = 1.0):
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input, target):
        return P.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class CosineSimilarity(Module):
    """Cosine similarity along ``dim`` (see ``F.cosine_similarity``).

    Example:
        >>> nn.CosineSimilarity(dim=0)(dl.tensor([1.0, 0.0]), dl.tensor([1.0, 0.0])).item()
        1.0
    """

    def __init__(self, dim: int = 1, eps: float = 1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        return functional_norm.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """The ``p``-norm distance of matching rows (see ``F.pairwise_distance``).

    Example:
        >>> nn.PairwiseDistance()(dl.tensor([[0.0, 0.0]]), dl.tensor([[3.0, 4.0]])).tolist()
        [4.99998...]
    """

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2):
        return P.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
