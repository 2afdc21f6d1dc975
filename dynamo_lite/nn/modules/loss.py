"""Loss modules: CrossEntropyLoss, NLLLoss, MSELoss, L1Loss, BCE(WithLogits)Loss, KLDivLoss, SmoothL1Loss,
HuberLoss, CTCLoss, the margin and embedding losses, PoissonNLLLoss and GaussianNLLLoss."""
from __future__ import annotations

from ..functional import loss as L
from ..module import Module
from ..functional.ctc import ctc_loss
from .. import functional as F


__all__ = [
    "BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "L1Loss", "MSELoss", "NLLLoss",
    "CosineEmbeddingLoss", "GaussianNLLLoss", "HingeEmbeddingLoss", "MarginRankingLoss",
    "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss", "PoissonNLLLoss",
    "SoftMarginLoss", "TripletMarginLoss",
]


class _Loss(Module):
    """A loss module: holds ``reduction`` (and, for weighted losses, a ``weight`` buffer)."""

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__()
        self.reduction = L.legacy_reduction(size_average, reduce, reduction)

    def extra_repr(self) -> str:
        return ""


class _WeightedLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class MSELoss(_Loss):
    """Mean squared error (see ``F.mse_loss``).

    Example:
        >>> nn.MSELoss()(dl.tensor([1.0, 2.0]), dl.zeros(2))
        tensor(2.5000)
    """

    def forward(self, input, target):
        return L.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """Mean absolute error (see ``F.l1_loss``).

    Example:
        >>> nn.L1Loss(reduction="sum")(dl.tensor([1.0, -2.0]), dl.zeros(2))
        tensor(3.)
    """

    def forward(self, input, target):
        return L.l1_loss(input, target, reduction=self.reduction)


class NLLLoss(_WeightedLoss):
    """Negative log-likelihood of target classes (see ``F.nll_loss``).

    Example:
        >>> nn.NLLLoss()(dl.tensor([[-1.0, -2.0]]), dl.tensor([1]))
        tensor(2.)
    """

    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean"):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return L.nll_loss(input, target, self.weight, ignore_index=self.ignore_index, reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    """Cross entropy of logits against class indices or probabilities (see ``F.cross_entropy``).

    Example:
        >>> loss = nn.CrossEntropyLoss(label_smoothing=0.1)
        >>> loss(dl.randn(4, 3, requires_grad=True), dl.tensor([0, 2, 1, 0])).backward()
    """

    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean", label_smoothing: float = 0.0):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return L.cross_entropy(input, target, self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class BCELoss(_WeightedLoss):
    """Binary cross entropy of probabilities (see ``F.binary_cross_entropy``).

    Example:
        >>> nn.BCELoss()(dl.tensor([0.5]), dl.tensor([1.0]))
        tensor(0.6931)
    """

    def forward(self, input, target):
        return L.binary_cross_entropy(input, target, self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross entropy of logits (see ``F.binary_cross_entropy_with_logits``).

    Example:
        >>> nn.BCEWithLogitsLoss(pos_weight=dl.tensor([2.0]))(dl.tensor([0.0]), dl.tensor([1.0]))
        tensor(1.3863)
    """

    def __init__(self, weight=None, size_average=None, reduce=None, reduction: str = "mean", pos_weight=None):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        return L.binary_cross_entropy_with_logits(input, target, self.weight, reduction=self.reduction,
                                                  pos_weight=self.pos_weight)


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
        return L.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


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
        return L.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


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
        return L.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class CTCLoss(Module):
    """The CTC loss as a module (see ``F.ctc_loss``).

    Example:
        >>> loss = dl.nn.CTCLoss(blank=0, zero_infinity=True)
        >>> loss(dl.randn(5, 2, 4).log_softmax(2), dl.tensor([[1, 2], [3, 3]]), [5, 5], [2, 2]).dim()
        0
    """

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False):
        super().__init__()
        self.blank, self.reduction, self.zero_infinity = blank, reduction, zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                        self.zero_infinity)


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
