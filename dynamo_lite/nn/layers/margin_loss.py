"""Loss modules over the margin, embedding and likelihood losses: MarginRankingLoss, HingeEmbeddingLoss,
SoftMarginLoss, CosineEmbeddingLoss, TripletMarginLoss, MultiMarginLoss, MultiLabelMarginLoss,
MultiLabelSoftMarginLoss, PoissonNLLLoss, GaussianNLLLoss."""
from __future__ import annotations

from .. import functional as F
from .loss import _Loss, _WeightedLoss


class MarginRankingLoss(_Loss):
    """Ranking hinge loss (see ``F.margin_ranking_loss``).

    Example:
        >>> nn.MarginRankingLoss(margin=0.5)(dl.tensor([1.0]), dl.tensor([1.0]), dl.tensor([1.0])).item()
        0.5
    """

    def __init__(self, margin: float = 0.0, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return F.margin_ranking_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    """Hinge loss of distances against +1/-1 labels (see ``F.hinge_embedding_loss``).

    Example:
        >>> nn.HingeEmbeddingLoss(margin=2.0)(dl.tensor([0.5]), dl.tensor([-1.0])).item()
        1.5
    """

    def __init__(self, margin: float = 1.0, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input, target):
        return F.hinge_embedding_loss(input, target, margin=self.margin, reduction=self.reduction)


class SoftMarginLoss(_Loss):
    """Two-class logistic loss (see ``F.soft_margin_loss``).

    Example:
        >>> round(nn.SoftMarginLoss()(dl.tensor([0.0]), dl.tensor([-1.0])).item(), 4)
        0.6931
    """

    def forward(self, input, target):
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class CosineEmbeddingLoss(_Loss):
    """Cosine-similarity embedding loss (see ``F.cosine_embedding_loss``).

    Example:
        >>> nn.CosineEmbeddingLoss()(dl.tensor([[1.0, 0.0]]), dl.tensor([[1.0, 0.0]]), dl.tensor([1.0])).item()
        0.0
    """

    def __init__(self, margin: float = 0.0, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return F.cosine_embedding_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class TripletMarginLoss(_Loss):
    """Triplet loss of anchor/positive/negative embeddings (see ``F.triplet_margin_loss``).

    Example:
        >>> loss = nn.TripletMarginLoss(margin=1.0, p=1.0)
        >>> round(loss(dl.zeros(1, 2), dl.zeros(1, 2), dl.ones(1, 2)).item(), 4)
        0.0
    """

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6, swap: bool = False,
                 size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginLoss: expected margin to be greater than 0, got {margin} instead")
        self.margin = margin
        self.p = p
        self.eps = eps
        self.swap = swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=self.p, eps=self.eps,
                                     swap=self.swap, reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    """Multi-class hinge loss (see ``F.multi_margin_loss``).

    Example:
        >>> nn.MultiMarginLoss()(dl.tensor([[0.1, 0.2, 0.4, 0.8]]), dl.tensor([3])).item()
        0.325...
    """

    def __init__(self, p: int = 1, margin: float = 1.0, weight=None, size_average=None, reduce=None,
                 reduction: str = "mean"):
        super().__init__(weight, size_average, reduce, reduction)
        if p != 1 and p != 2:
            raise ValueError("only p == 1 and p == 2 supported")
        if weight is not None and weight.dim() != 1:
            raise ValueError(f"MultiMarginLoss: expected weight to be None or 1D tensor, got {weight.dim()}D instead")
        self.p = p
        self.margin = margin

    def forward(self, input, target):
        return F.multi_margin_loss(input, target, p=self.p, margin=self.margin, weight=self.weight,
                                   reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    """Multi-label hinge loss (see ``F.multilabel_margin_loss``).

    Example:
        >>> nn.MultiLabelMarginLoss()(dl.tensor([[0.1, 0.2, 0.4, 0.8]]), dl.tensor([[3, 0, -1, 1]])).item()
        0.85
    """

    def forward(self, input, target):
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """Multi-label one-versus-all logistic loss (see ``F.multilabel_soft_margin_loss``).

    Example:
        >>> round(nn.MultiLabelSoftMarginLoss()(dl.zeros(1, 2), dl.tensor([[1.0, 0.0]])).item(), 4)
        0.6931
    """

    def forward(self, input, target):
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight, reduction=self.reduction)


class PoissonNLLLoss(_Loss):
    """Poisson negative log-likelihood (see ``F.poisson_nll_loss``).

    Example:
        >>> nn.PoissonNLLLoss()(dl.zeros(2), dl.ones(2)).item()
        1.0
    """

    def __init__(self, log_input: bool = True, full: bool = False, size_average=None, eps: float = 1e-8,
                 reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.log_input = log_input
        self.full = full
        self.eps = eps

    def forward(self, log_input, target):
        return F.poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full, eps=self.eps,
                                  reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    """Gaussian negative log-likelihood (see ``F.gaussian_nll_loss``).

    Example:
        >>> nn.GaussianNLLLoss()(dl.zeros(2), dl.zeros(2), dl.ones(2)).item()
        0.0
    """

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean"):
        super().__init__(None, None, reduction)
        self.full = full
        self.eps = eps

    def forward(self, input, target, var):
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps, reduction=self.reduction)


__all__ = ["CosineEmbeddingLoss", "GaussianNLLLoss", "HingeEmbeddingLoss", "MarginRankingLoss", "MultiLabelMarginLoss",
           "MultiLabelSoftMarginLoss", "MultiMarginLoss", "PoissonNLLLoss", "SoftMarginLoss", "TripletMarginLoss"]
